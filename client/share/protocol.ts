/**
 * The share protocol's facts the share consumer acts on, each defined once:
 * the epochs with a meaning, the protocol versions it needs, the AcknowledgeType
 * code for a gap, and which error codes end a session, lose the membership or
 * make the partition metadata stale. Retriability itself is runtime's one
 * table (errors.ts isRetriableCode).
 */
import { ApiKey } from '../../generated/index.js';
import { Errors } from '../errors.js';

/** A share session starts with epoch 0 (Kafka's ShareRequestMetadata.INITIAL_EPOCH). */
export const INITIAL_SHARE_SESSION_EPOCH = 0;
/** The request that closes a share session carries epoch −1 (ShareRequestMetadata.FINAL_EPOCH). */
export const FINAL_SHARE_SESSION_EPOCH = -1;
/** Epochs wrap from Integer.MAX_VALUE back to 1 (ShareRequestMetadata.nextEpoch). */
export const MAX_SHARE_SESSION_EPOCH = 2 ** 31 - 1;

/** A heartbeat with member epoch 0 joins (ShareGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH). */
export const JOIN_GROUP_MEMBER_EPOCH = 0;
/** A heartbeat with member epoch −1 leaves (ShareGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH). */
export const LEAVE_GROUP_MEMBER_EPOCH = -1;

/**
 * acknowledgementMode 'transactional' needs TxnShareAcknowledge (KIP-1289)
 * from every partition leader; any version of it will do.
 */
export const TRANSACTIONAL_ACKNOWLEDGE = { apiKey: ApiKey.TxnShareAcknowledge, minVersion: 0 } as const;

/**
 * AcknowledgeType 0: an acquired offset that holds no record (a control
 * record, a record removed by compaction). Only the consumer sends it; the
 * application's types are ACKNOWLEDGE_TYPE_CODES (acknowledgements.ts).
 */
export const GAP_ACKNOWLEDGE_TYPE = 0;

/**
 * Errors after which the broker has no share session for this member: the
 * next request opens a new one (epoch 0). Kafka's ShareSessionHandler.handleResponse
 * resets on SHARE_SESSION_NOT_FOUND and INVALID_SHARE_SESSION_EPOCH; UNKNOWN_MEMBER_ID
 * too here, because the broker drops the sessions of a member the group coordinator
 * expired (ours and Kafka's SharePartitionManager alike).
 */
export const SESSION_ENDING_ERRORS: ReadonlySet<number> = new Set([
  Errors.SHARE_SESSION_NOT_FOUND,
  Errors.INVALID_SHARE_SESSION_EPOCH,
  Errors.UNKNOWN_MEMBER_ID,
]);

/**
 * A heartbeat answer after which the member is out of the group and joins
 * again with the same member id (Kafka's ShareMembershipManager via
 * AbstractMembershipManager.transitionToFenced: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH).
 */
export const MEMBERSHIP_LOST_ERRORS: ReadonlySet<number> = new Set([Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_MEMBER_EPOCH]);

/**
 * A partition error of a ShareFetch that means our metadata is stale (leader
 * moved, topic gone or recreated): refresh it. Kafka's ShareFetchCollector.initialize
 * requests a metadata update on these and on errors our broker does not send
 * (REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH, OFFSET_NOT_AVAILABLE,
 * INCONSISTENT_TOPIC_ID); other partition errors are logged here.
 */
export const STALE_METADATA_ERRORS: ReadonlySet<number> = new Set([Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID]);
