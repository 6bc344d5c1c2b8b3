/**
 * What AddPartitionsToTxn and AddShareAcksToTxn check before the transaction
 * coordinator adds partitions to a transaction: that the partitions exist, and
 * which errors concern the whole transaction rather than one partition.
 */
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';

/** A topic and some of its partitions, as the requests name them. */
export interface TopicPartitions {
  readonly name: string;
  readonly partitions: readonly number[];
}

/** The key of one partition in the set unknownPartitions returns. */
export const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * The partitions that do not exist (or are internal, which a client may not add),
 * keyed by partitionKey; null when all exist. Kafka answers them
 * UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, adding none
 * (TransactionCoordinator.handleAddPartitionsToTransaction via KafkaApis).
 */
export function unknownPartitions(cluster: Cluster, topics: readonly TopicPartitions[]): Set<string> | null {
  const unknown = new Set<string>();
  for (const t of topics) {
    const info = cluster.topicByName(t.name);
    for (const p of t.partitions) if (info === undefined || info.internal || p < 0 || p >= info.partitions) unknown.add(partitionKey(t.name, p));
  }
  return unknown.size > 0 ? unknown : null;
}

/** Errors that concern the whole transaction rather than one partition. */
export function isTransactionLevel(code: number): boolean {
  return code !== ErrorCode.NONE && code !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && code !== ErrorCode.OPERATION_NOT_ATTEMPTED;
}
