/** What KafkaConsumer answers about partitions: Kafka's PartitionInfo (nodes by id) and OffsetAndTimestamp. */
import type { PartitionInfo as ClusterPartitionInfo } from '../cluster.js';

/** Kafka's OffsetAndTimestamp: the first offset at or after a searched timestamp, with its record's timestamp. */
export interface OffsetAndTimestamp {
  offset: bigint;
  timestamp: bigint;
  /** null when the broker gave none. */
  leaderEpoch: number | null;
}

/** Kafka's PartitionInfo, nodes by id: the leader (-1 when none), every replica, the in-sync ones and the offline ones. */
export interface PartitionInfo {
  topic: string;
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export function partitionInfo(topic: string, p: ClusterPartitionInfo): PartitionInfo {
  return { topic, partition: p.partition, leader: p.leader, replicas: [...p.replicas], isr: [...p.isr], offlineReplicas: [...p.offlineReplicas] };
}
