/**
 * Protocol facts of the transaction RPCs, each written once for every part of
 * the client (the transaction manager, the producer's Sender and completeTransaction,
 * ClusterClient.coordinatorRequest; the share consumer can take them from here):
 * which error codes mean "look the coordinator up again", "wait and retry" or
 * "the coordinator moved past this producer", and the version limits of each
 * transaction protocol. Kafka keeps these in its handlers
 * (clients/.../producer/internals/TransactionManager.java, the
 * TxnRequestHandler subclasses) and in ApiKeys' version ranges.
 */
import { Errors } from './errors.js';

/**
 * The coordinator answering is not (or no longer) the one for the key: find it
 * again, then resend (Kafka's handlers: lookupCoordinator + reenqueue).
 */
export const COORDINATOR_MOVED_CODES: ReadonlySet<number> = new Set([Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE]);

/**
 * The right coordinator, busy: it is still loading its state, or a state
 * change of this transactional id is being written. Resend to the same one
 * after the backoff.
 */
export const COORDINATOR_BUSY_CODES: ReadonlySet<number> = new Set([Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.CONCURRENT_TRANSACTIONS]);

/**
 * Partition-level codes of an add request (AddPartitionsToTxn,
 * AddShareAcksToTxn) that resend the whole request after the backoff: the
 * coordinator is busy, or has not yet seen the topic's metadata.
 */
export const ADD_RETRIABLE_PARTITION_CODES: ReadonlySet<number> = new Set([
  Errors.CONCURRENT_TRANSACTIONS,
  Errors.COORDINATOR_LOAD_IN_PROGRESS,
  Errors.UNKNOWN_TOPIC_OR_PARTITION,
]);

/** TxnShareAcknowledge reached a share coordinator that does not serve the share-partition key: find it again. */
export const SHARE_COORDINATOR_MOVED_CODES: ReadonlySet<number> = new Set([
  Errors.NOT_COORDINATOR,
  Errors.COORDINATOR_NOT_AVAILABLE,
  Errors.NOT_LEADER_OR_FOLLOWER,
]);

/** A newer epoch of this transactional id exists: the producer is fenced (Kafka treats INVALID_PRODUCER_EPOCH from an old coordinator as PRODUCER_FENCED). */
export const FENCED_CODES: ReadonlySet<number> = new Set([Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED]);

/**
 * Answers by which the transaction coordinator says it has moved past the
 * transaction: fenced, or no mapping for the producer id any more. Recovery
 * of a prepared transaction (KIP-939) then asks with InitProducerId.
 */
export const MOVED_PAST_CODES: ReadonlySet<number> = new Set([...FENCED_CODES, Errors.INVALID_PRODUCER_ID_MAPPING]);

/**
 * Answers that end a transaction from the coordinator's side: fenced,
 * abortable, or not open any more. After transaction.timeout.ms they mean the
 * coordinator's timeout aborted it (counted by the share-transaction metrics).
 */
export const BROKER_ABORT_CODES: ReadonlySet<number> = new Set([...FENCED_CODES, Errors.TRANSACTION_ABORTABLE, Errors.INVALID_TXN_STATE]);

/** The highest versions of the classic protocol (transaction.version 1): the producer adds partitions and groups itself. */
export const TV1_MAX_VERSIONS = { endTxn: 4, initProducerId: 5, addPartitionsToTxn: 3, txnOffsetCommit: 4, addOffsetsToTxn: 4, produce: 11 } as const;

/**
 * The lowest versions of Transactions V2 (KIP-890 part 2): Produce v12+ makes
 * the partition leader add the partition, TxnOffsetCommit v5+ makes the group
 * coordinator add the group, EndTxn v5+ returns the bumped epoch.
 */
export const TV2_MIN_VERSIONS = { endTxn: 5, txnOffsetCommit: 5, produce: 12 } as const;

/** The highest Produce version a transactional producer sends under Transactions V2. */
export const TV2_PRODUCE_MAX_VERSION = 13;

/**
 * TxnOffsetCommit names topics by id from v6, which this client's request does
 * not carry: under Transactions V2 it sends exactly v5.
 */
export const TV2_TXN_OFFSET_COMMIT_VERSION = 5;

/** InitProducerId v6 carries KIP-939's enable2Pc and keepPreparedTxn. */
export const INIT_PRODUCER_ID_2PC_VERSION = 6;

/** InitProducerId v3+ takes the current producer id and epoch, to bump the epoch instead of fencing (KIP-360). */
export const INIT_PRODUCER_ID_BUMP_MIN_VERSION = 3;

/** TxnShareAcknowledge v1 (KIP-1289) carries the member id and generation; v0 does not. */
export const TXN_SHARE_ACKNOWLEDGE_MEMBER_VERSION = 1;
