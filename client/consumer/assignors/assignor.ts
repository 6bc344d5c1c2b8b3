/**
 * A client-side partition assignor for the classic group protocol, as Kafka's
 * ConsumerPartitionAssignor: the group leader collects every member's
 * subscription (JoinGroup), computes the assignment, and hands it out through
 * SyncGroup. The bytes on the wire are the consumer protocol's
 * Subscription/Assignment; this interface deals in their decoded form.
 */
import type { TopicPartition } from '../topic-partition.js';

/** One member's subscription, as the leader sees it (Kafka's ConsumerPartitionAssignor.Subscription). */
export interface MemberSubscription {
  topics: readonly string[];
  /** The assignor's own bytes (`subscriptionUserData`), or null. */
  userData: Uint8Array | null;
  /** What the member owns now (consumer protocol v1+); cooperative assignors rely on it. */
  ownedPartitions: readonly TopicPartition[];
  groupInstanceId: string | null;
  /** The generation the owned partitions belong to (v2+), -1 when unknown. */
  generationId: number;
  rackId: string | null;
}

/** One member's share of the assignment (Kafka's ConsumerPartitionAssignor.Assignment). */
export interface MemberAssignment {
  partitions: TopicPartition[];
  userData: Uint8Array | null;
}

export type RebalanceProtocol = 'EAGER' | 'COOPERATIVE';

export interface PartitionAssignor {
  /** The name the group agrees on in JoinGroup's protocols (`range`, `cooperative-sticky`, …). */
  readonly name: string;
  /** The protocols it supports, the preferred first (Kafka's supportedProtocols). */
  readonly supportedProtocols: readonly RebalanceProtocol[];
  /** Bytes this member adds to its subscription (Kafka's subscriptionUserData); null for none. */
  subscriptionUserData(topics: ReadonlySet<string>): Uint8Array | null;
  /**
   * The leader's work: every member's partitions, from the partition count of
   * each subscribed topic (topics the metadata does not know are left out) and
   * every member's subscription, keyed by member id.
   */
  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment>;
  /** Told to every member after SyncGroup, with its assignment and the generation (Kafka's onAssignment). */
  onAssignment?(assignment: MemberAssignment, generationId: number): void;
}
