/**
 * The consumer group membership a KafkaConsumer with `subscribe` relies on, in
 * one of Kafka's two protocols: `classic` (JoinGroup / SyncGroup / Heartbeat /
 * LeaveGroup with a client-side assignor, Kafka's ConsumerCoordinator) or
 * `consumer` (KIP-848's ConsumerGroupHeartbeat with the assignment made by the
 * broker, Kafka's ConsumerMembershipManager). The consumer drives it from
 * poll(); heartbeats run in the background between polls, as Kafka's
 * heartbeat thread does.
 */
import type { ConsumerGroupMetadata } from '../transactions/offsets.js';
import type { TopicPartition } from './topic-partition.js';

/** What the consumer does around a change of assignment (Kafka's ConsumerRebalanceListener, after the consumer's own work). */
export interface MembershipHooks {
  /** Before partitions are given up: the consumer commits their offsets (auto-commit) and calls the user's onPartitionsRevoked. */
  onPartitionsRevoked(partitions: readonly TopicPartition[]): Promise<void>;
  /** After partitions are received: the consumer resets their positions and calls the user's onPartitionsAssigned. */
  onPartitionsAssigned(partitions: readonly TopicPartition[]): Promise<void>;
  /** Partitions lost without a chance to commit (fenced, session timed out): the user's onPartitionsLost. */
  onPartitionsLost(partitions: readonly TopicPartition[]): Promise<void>;
}

export interface ConsumerMembership {
  readonly protocol: 'classic' | 'consumer';
  /** Sets the subscription (topic names); the next poll() joins or rejoins when it changed. An empty list leaves the group. */
  subscribe(topics: readonly string[]): void;
  /** KIP-848 only: a regular expression the broker resolves (ConsumerGroupHeartbeat's SubscribedTopicRegex). */
  subscribePattern?(regex: string): void;
  /** Classic only: rejoin at the next poll (Kafka's AbstractCoordinator.requestRejoin). */
  requestRejoin?(reason: string): void;
  /**
   * Called from each KafkaConsumer.poll(): joins or rejoins when due, runs the
   * hooks around an assignment change, and resolves with the partitions owned
   * now. Rejects with a fatal error (e.g. group authorization failed, fenced
   * static member).
   */
  poll(deadline: number): Promise<readonly TopicPartition[]>;
  /** The partitions owned now (empty before the first assignment). */
  assignment(): readonly TopicPartition[];
  /** Kafka's ConsumerGroupMetadata, what sendOffsetsToTransaction needs to fence a zombie. */
  groupMetadata(): Required<ConsumerGroupMetadata>;
  /** Leaves the group (LeaveGroup, or a heartbeat with epoch -1) after revoking through the hooks; stops the heartbeats. */
  close(deadline: number): Promise<void>;
}
