/**
 * KafkaConsumer: Kafka's consumer with `subscribe` (a group assigns the
 * partitions: the classic protocol or KIP-848, consumer/membership.ts) or
 * `assign` (the application picks them). The public face over consumer/, as
 * Kafka's ClassicKafkaConsumer is over its parts: SubscriptionState
 * (positions, pauses), the Fetcher (Fetch per leader, read_committed through
 * the abort index), the offset lookups (committed offsets, ListOffsets) and
 * OffsetCommit. poll() drives everything: the membership's rebalances,
 * auto-commit, positions, fetching.
 */
import { ClusterClient } from './cluster.js';
import { ClientClosedError, ConfigError, IllegalStateError, KafkaError } from './errors.js';
import { resolveConsumerConfig, type ConsumerConfig, type ResolvedConsumerConfig } from './consumer/config.js';
import { ConsumerRecords } from './consumer/consumer-record.js';
import { updateFetchPositions } from './consumer/fetch-positions.js';
import { Fetcher } from './consumer/fetcher.js';
import type { ConsumerMembership, MembershipHooks } from './consumer/membership.js';
import { createMembership } from './consumer/membership-factory.js';
import { commitOffsets, fetchCommittedOffsets, type OffsetAndMetadata, type PartitionOffset } from './consumer/offset-commits.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets } from './consumer/offset-fetcher.js';
import { SubscriptionState } from './consumer/subscription-state.js';
import { topicPartitionKey, type TopicPartition } from './consumer/topic-partition.js';
import type { ConsumerGroupMetadata } from './transactions/offsets.js';

export type { ConsumerConfig } from './consumer/config.js';
export type { ConsumerRecord } from './consumer/consumer-record.js';
export { ConsumerRecords } from './consumer/consumer-record.js';
export type { OffsetAndMetadata, PartitionOffset } from './consumer/offset-commits.js';
export type { TopicPartition } from './consumer/topic-partition.js';

/** Kafka's ConsumerRebalanceListener; each callback may be async and is awaited inside poll(). */
export interface ConsumerRebalanceListener {
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsAssigned?(partitions: TopicPartition[]): void | Promise<void>;
  /** Default: onPartitionsRevoked, as Kafka's. */
  onPartitionsLost?(partitions: TopicPartition[]): void | Promise<void>;
}

export type OffsetCommitCallback = (offsets: Map<string, OffsetAndMetadata>, error: Error | null) => void;

/** Thrown from a blocking call after wakeup() (Kafka's WakeupException). */
export class WakeupError extends KafkaError {
  constructor() {
    super('the consumer was woken up (wakeup())');
    this.name = 'WakeupError';
  }
}

export class KafkaConsumer {
  private readonly config: ResolvedConsumerConfig;
  private readonly cluster: ClusterClient;
  private readonly subscriptions = new SubscriptionState();
  private readonly fetcher: Fetcher;
  private membership: ConsumerMembership | null = null;
  private listener: ConsumerRebalanceListener | null = null;
  private nextAutoCommit = 0;
  private pendingAsyncCommits = new Set<Promise<void>>();
  private polling = false;
  private wakeupRequested = false;
  private closed = false;

  constructor(config: ConsumerConfig) {
    this.config = resolveConsumerConfig(config);
    this.cluster = new ClusterClient(config, `consumer-${this.config.groupId ?? 'standalone'}`);
    this.fetcher = new Fetcher(this.cluster, this.subscriptions, this.config);
    this.nextAutoCommit = Date.now() + this.config.autoCommitIntervalMs;
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientClosedError(`consumer ${this.cluster.clientId}`);
  }

  private checkWakeup(): void {
    if (this.wakeupRequested) {
      this.wakeupRequested = false;
      throw new WakeupError();
    }
  }

  // -------------------------------------------------------------------------
  // Subscription and assignment

  /** Joins the group for `topics` (replacing an earlier subscription); the listener hears of every change of assignment. */
  subscribe(topics: readonly string[], listener?: ConsumerRebalanceListener): void {
    this.checkOpen();
    if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string' || t === '')) throw new ConfigError('subscribe() takes a list of topic names');
    if (topics.length === 0) return void this.unsubscribe().catch((e: Error) => this.cluster.logger.warn(`unsubscribe: ${e.message}`));
    if (this.config.groupId === null) throw new ConfigError('subscribe() needs a groupId in the consumer config (assign() works without one)');
    this.subscriptions.subscribe(topics);
    this.listener = listener ?? null;
    this.membership ??= createMembership({ cluster: this.cluster, config: this.config, hooks: this.hooks() });
    this.membership.subscribe(this.subscriptions.subscription());
  }

  /** Reads exactly these partitions, without a group's assignment (Kafka's assign; commits still go to groupId). */
  assign(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    if (
      !Array.isArray(partitions) ||
      partitions.some((p) => typeof p?.topic !== 'string' || p.topic === '' || !Number.isInteger(p.partition) || p.partition < 0)
    ) {
      throw new ConfigError('assign() takes a list of { topic, partition }');
    }
    if (partitions.length === 0) return void this.unsubscribe().catch((e: Error) => this.cluster.logger.warn(`unsubscribe: ${e.message}`));
    this.subscriptions.assignFromUser(partitions);
    this.fetcher.clearBuffered((key) => partitions.some((p) => topicPartitionKey(p) === key));
  }

  /**
   * Leaves the subscription or the assignment. A group member gives its
   * partitions up through the listener (committing first under auto-commit)
   * and leaves the group, as Kafka's unsubscribe does; await it for that.
   */
  async unsubscribe(): Promise<void> {
    this.checkOpen();
    if (this.membership && this.subscriptions.subscriptionType === 'AUTO_TOPICS') {
      // The revocation (and its auto-commit) needs the positions: they go after it.
      this.membership.subscribe([]);
      await this.membership.poll(Date.now());
    }
    this.subscriptions.unsubscribe();
    this.fetcher.clearBuffered();
  }

  subscription(): string[] {
    return [...this.subscriptions.subscription()];
  }

  assignment(): TopicPartition[] {
    return this.subscriptions.assignedPartitions();
  }

  /** For KafkaProducer.sendOffsetsToTransaction: the coordinator fences a commit from an older generation (KIP-447). */
  groupMetadata(): Required<ConsumerGroupMetadata> {
    this.checkOpen();
    if (this.config.groupId === null) throw new IllegalStateError('groupMetadata() needs a groupId in the consumer config');
    return this.membership?.groupMetadata() ?? { groupId: this.config.groupId, generationId: -1, memberId: '', groupInstanceId: this.config.groupInstanceId };
  }

  /** What the membership calls around a change of assignment (consumer/membership.ts). */
  private hooks(): MembershipHooks {
    return {
      onPartitionsRevoked: async (partitions) => {
        // Kafka's ConsumerCoordinator.onJoinPrepare: commit what was consumed before giving partitions up.
        if (this.config.enableAutoCommit) await this.commitSync().catch((e: Error) => this.cluster.logger.warn(`auto-commit before revocation: ${e.message}`));
        try {
          if (partitions.length > 0) await this.listener?.onPartitionsRevoked?.([...partitions]);
        } finally {
          this.subscriptions.removePartitions(partitions);
          this.fetcher.clearBuffered((key) => this.subscriptions.assignedPartitions().some((p) => topicPartitionKey(p) === key));
        }
      },
      onPartitionsAssigned: async (partitions) => {
        this.subscriptions.addPartitions(partitions);
        await this.listener?.onPartitionsAssigned?.([...partitions]);
      },
      onPartitionsLost: async (partitions) => {
        try {
          if (partitions.length > 0) {
            if (this.listener?.onPartitionsLost) await this.listener.onPartitionsLost([...partitions]);
            else await this.listener?.onPartitionsRevoked?.([...partitions]);
          }
        } finally {
          this.subscriptions.removePartitions(partitions);
          this.fetcher.clearBuffered((key) => this.subscriptions.assignedPartitions().some((p) => topicPartitionKey(p) === key));
        }
      },
    };
  }

  // -------------------------------------------------------------------------
  // poll

  /**
   * Records from the assigned partitions, waiting up to `timeoutMs` for some;
   * with a subscription it first takes part in the group (joins, rebalances,
   * runs the listener), and commits when auto-commit is due.
   */
  async poll(timeoutMs: number): Promise<ConsumerRecords> {
    this.checkOpen();
    if (this.subscriptions.subscriptionType === 'NONE')
      throw new IllegalStateError('poll() needs a subscription or an assignment: call subscribe() or assign() first');
    if (this.polling) throw new IllegalStateError('poll() is already running on this consumer; a KafkaConsumer is not safe for concurrent use');
    this.polling = true;
    try {
      const deadline = Date.now() + Math.max(0, timeoutMs);
      for (;;) {
        this.checkWakeup();
        if (this.membership) await this.membership.poll(deadline);
        this.maybeAutoCommit();
        if (this.subscriptions.assignedPartitions().length > 0) {
          await updateFetchPositions(this.cluster, this.subscriptions, this.config, Math.max(deadline, Date.now() + this.cluster.requestTimeoutMs));
          let records = this.fetcher.collect();
          if (records.length === 0) {
            await this.fetcher.sendFetches(Math.max(0, Math.min(this.config.fetchMaxWaitMs, deadline - Date.now())));
            records = this.fetcher.collect();
          }
          if (records.length > 0) return new ConsumerRecords(records);
        } else if (Date.now() < deadline) {
          // A member waiting for its assignment: the membership's next poll brings it.
          await new Promise((resolve) => setTimeout(resolve, Math.min(100, deadline - Date.now())));
        }
        if (Date.now() >= deadline || this.closed) return new ConsumerRecords([]);
      }
    } finally {
      this.polling = false;
    }
  }

  /** Makes the running (or next) poll() throw WakeupError (Kafka's wakeup; checked between fetches). */
  wakeup(): void {
    this.wakeupRequested = true;
  }

  // -------------------------------------------------------------------------
  // Commits

  private requireGroup(call: string): string {
    if (this.config.groupId === null) throw new IllegalStateError(`${call} needs a groupId in the consumer config`);
    return this.config.groupId;
  }

  private consumedOffsets(): PartitionOffset[] {
    return [...this.subscriptions.allConsumed().values()].map((c) => ({ ...c.tp, offset: c.offset, leaderEpoch: c.leaderEpoch }));
  }

  private toList(offsets: readonly PartitionOffset[] | undefined): PartitionOffset[] {
    return offsets === undefined ? this.consumedOffsets() : [...offsets];
  }

  /**
   * Commits `offsets` (default: the position of every assigned partition,
   * i.e. everything poll() returned) with the member's generation; a
   * rebalance since makes it fail with CommitFailedError.
   */
  async commitSync(offsets?: readonly PartitionOffset[], timeoutMs = this.cluster.requestTimeoutMs): Promise<void> {
    this.checkOpen();
    this.requireGroup('commitSync()');
    await commitOffsets(this.cluster, this.groupMetadata(), this.toList(offsets), Date.now() + timeoutMs);
  }

  /** Like commitSync without waiting; the callback gets the outcome. */
  commitAsync(offsets?: readonly PartitionOffset[], callback?: OffsetCommitCallback): void {
    this.checkOpen();
    this.requireGroup('commitAsync()');
    const list = this.toList(offsets);
    const map = new Map(list.map((o) => [topicPartitionKey(o), { offset: o.offset, metadata: o.metadata ?? null, leaderEpoch: o.leaderEpoch ?? null }]));
    const done = commitOffsets(this.cluster, this.groupMetadata(), list, Date.now() + this.cluster.requestTimeoutMs).then(
      () => callback?.(map, null),
      (error: Error) => {
        if (callback) callback(map, error);
        else this.cluster.logger.warn(`commitAsync: ${error.message}`);
      },
    );
    this.pendingAsyncCommits.add(done);
    void done.finally(() => this.pendingAsyncCommits.delete(done));
  }

  /** Kafka's maybeAutoCommitOffsetsAsync: every autoCommitIntervalMs, the positions reached. */
  private maybeAutoCommit(): void {
    if (!this.config.enableAutoCommit || Date.now() < this.nextAutoCommit) return;
    this.nextAutoCommit = Date.now() + this.config.autoCommitIntervalMs;
    if (this.subscriptions.allConsumed().size > 0)
      this.commitAsync(undefined, (_, error) => error && this.cluster.logger.warn(`auto-commit: ${error.message}`));
  }

  /** The group's committed offsets of `partitions`, keyed `topic-partition`; absent when none. */
  async committed(partitions: readonly TopicPartition[], timeoutMs = this.cluster.requestTimeoutMs): Promise<Map<string, OffsetAndMetadata>> {
    this.checkOpen();
    return fetchCommittedOffsets(this.cluster, this.requireGroup('committed()'), partitions, Date.now() + timeoutMs);
  }

  // -------------------------------------------------------------------------
  // Positions

  seek(partition: TopicPartition, offset: bigint | OffsetAndMetadata): void {
    this.checkOpen();
    const target = typeof offset === 'bigint' ? { offset } : offset;
    if (typeof target.offset !== 'bigint' || target.offset < 0n)
      throw new ConfigError(`seek(): the offset must be a bigint >= 0, got ${String(target.offset)}`);
    this.subscriptions.seek(partition, target.offset, target.leaderEpoch ?? null);
  }

  /** Moves to the first offset of the partitions (all assigned when none given), looked up on the next poll or position(). */
  seekToBeginning(partitions: readonly TopicPartition[] = this.assignment()): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.requestOffsetReset(tp, 'earliest', 'seekToBeginning()');
  }

  /** Moves to the end (the last stable offset under read_committed). */
  seekToEnd(partitions: readonly TopicPartition[] = this.assignment()): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.requestOffsetReset(tp, 'latest', 'seekToEnd()');
  }

  /** The offset of the next record poll() returns for `partition`, finding it first if it is not known. */
  async position(partition: TopicPartition, timeoutMs = this.cluster.requestTimeoutMs): Promise<bigint> {
    this.checkOpen();
    if (!this.subscriptions.isAssigned(partition)) throw new IllegalStateError(`position(): ${topicPartitionKey(partition)} is not assigned to this consumer`);
    await updateFetchPositions(this.cluster, this.subscriptions, this.config, Date.now() + timeoutMs);
    return this.subscriptions.state(partition)!.position!;
  }

  beginningOffsets(partitions: readonly TopicPartition[], timeoutMs = this.cluster.requestTimeoutMs): Promise<Map<string, bigint>> {
    this.checkOpen();
    return listOffsets(this.cluster, partitions, EARLIEST_TIMESTAMP, this.config.isolationLevel, Date.now() + timeoutMs);
  }

  /** The end offsets: the high watermark, or the last stable offset under read_committed. */
  endOffsets(partitions: readonly TopicPartition[], timeoutMs = this.cluster.requestTimeoutMs): Promise<Map<string, bigint>> {
    this.checkOpen();
    return listOffsets(this.cluster, partitions, LATEST_TIMESTAMP, this.config.isolationLevel, Date.now() + timeoutMs);
  }

  /** The partitions of `topic` with their leaders (Kafka's partitionsFor), from the metadata. */
  async partitionsFor(topic: string, timeoutMs = this.cluster.requestTimeoutMs): Promise<Array<{ topic: string; partition: number; leader: number }>> {
    this.checkOpen();
    const meta = await this.cluster.topic(topic, Date.now() + timeoutMs);
    return meta.partitions.map((p) => ({ topic, partition: p.partition, leader: p.leader }));
  }

  pause(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.pause(tp);
  }

  resume(partitions: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of partitions) this.subscriptions.resume(tp);
  }

  paused(): TopicPartition[] {
    return this.subscriptions.pausedPartitions();
  }

  // -------------------------------------------------------------------------
  // close

  /** Commits (auto-commit), leaves the group (revoking through the listener) and closes the connections. */
  async close(timeoutMs = this.cluster.requestTimeoutMs): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + timeoutMs;
    try {
      await Promise.allSettled([...this.pendingAsyncCommits]);
      if (this.config.enableAutoCommit && this.membership === null && this.subscriptions.allConsumed().size > 0) {
        await this.commitSync(undefined, Math.max(0, deadline - Date.now())).catch((e: Error) =>
          this.cluster.logger.warn(`auto-commit on close: ${e.message}`),
        );
      }
      // The membership revokes (and with auto-commit, commits) through the hooks before it leaves.
      await this.membership?.close(deadline);
    } finally {
      this.closed = true;
      await this.cluster.close();
    }
  }
}
