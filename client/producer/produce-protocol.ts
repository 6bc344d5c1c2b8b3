/**
 * What the producer relies on in the Produce API, named once: the versions it
 * sends and the answers that mean its metadata is stale.
 */
import { Errors } from '../errors.js';
import { TV1_MAX_VERSIONS } from '../transaction-protocol.js';

/**
 * The highest Produce version of a producer without a transactional id: the
 * last of the classic transaction protocol (Kafka's
 * ProduceRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2; from v12 the
 * partition leader adds a transactional batch's partition to the transaction
 * itself, KIP-890 part 2). A transactional producer's limits come from its
 * TransactionManager (produceMinVersion, produceMaxVersion). Kafka's producer
 * without a transactional id sends the latest version; kipgen's stays at this one.
 */
export const PRODUCE_MAX_VERSION_BEFORE_TV2 = TV1_MAX_VERSIONS.produce;

/** From this Produce version a topic is named by its id alone, its name sent empty (KIP-516). */
export const PRODUCE_TOPIC_ID_VERSION = 13;

/**
 * Partition errors of a Produce answer after which the producer fetches
 * metadata again before its retry: the leader moved, or the partition is not
 * (yet) known where the batch went. Kafka's Sender.completeBatch refreshes on
 * every InvalidMetadataException, a larger family (FENCED_LEADER_EPOCH,
 * KAFKA_STORAGE_ERROR, ...); kipgen's producer has always refreshed on these
 * three, and a network failure.
 */
export const STALE_METADATA_ERRORS: ReadonlySet<number> = new Set([
  Errors.NOT_LEADER_OR_FOLLOWER,
  Errors.UNKNOWN_TOPIC_OR_PARTITION,
  Errors.LEADER_NOT_AVAILABLE,
]);
