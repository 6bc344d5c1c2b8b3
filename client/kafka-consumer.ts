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
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, listOffsets, listOffsetsByTimes } from './consumer/offset-fetcher.js';
import { updatePatternSubscription } from './consumer/pattern-subscription.js';
import { EndOffsetRequests } from './consumer/end-offset-requests.js';
import { partitionInfo, type OffsetAndTimestamp, type PartitionInfo } from './consumer/partition-info.js';
import { SubscriptionState } from './consumer/subscription-state.js';
import { topicPartitionKey, type TopicPartition } from './consumer/topic-partition.js';
import type { ConsumerGroupMetadata } from './transactions/offsets.js';

export type { ConsumerConfig } from './consumer/config.js';
export type { ConsumerRecord } from './consumer/consumer-record.js';
export { ConsumerRecords } from './consumer/consumer-record.js';
export type { OffsetAndMetadata, PartitionOffset } from './consumer/offset-commits.js';
export type { TopicPartition } from './consumer/topic-partition.js';
export type { OffsetAndTimestamp, PartitionInfo } from './consumer/partition-info.js';

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
  /** When the classic pattern subscription is resolved again against the metadata (0: at the next poll). */
  private nextPatternUpdate = 0;
  private readonly endOffsetRequests: EndOffsetRequests;
  private wakeupRequested = false;
  private closed = false;

  constructor(config: ConsumerConfig) {
    this.config = resolveConsumerConfig(config);
    this.cluster = new ClusterClient(config, `consumer-${this.config.groupId ?? 'standalone'}`);
    this.fetcher = new Fetcher(this.cluster, this.subscriptions, this.config);
    this.endOffsetRequests = new EndOffsetRequests(this.cluster, this.subscriptions);
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

  /**
   * Joins the group for `topics` (replacing an earlier subscription), or for
   * the topics whose whole name matches a RegExp; the listener hears of every
   * change of assignment.
   */
  subscribe(topics: readonly string[] | RegExp, listener?: ConsumerRebalanceListener): void {
    this.checkOpen();
    if (topics instanceof RegExp) return this.subscribePattern(topics, listener);
    if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string' || t === ''))
      throw new ConfigError('subscribe() takes a list of topic names or a RegExp');
    if (topics.length === 0) return void this.unsubscribe().catch((e: Error) => this.cluster.logger.warn(`unsubscribe: ${e.message}`));
    if (this.config.groupId === null) throw new ConfigError('subscribe() needs a groupId in the consumer config (assign() works without one)');
    this.subscriptions.subscribe(topics);
    this.listener = listener ?? null;
    this.membership ??= createMembership({ cluster: this.cluster, config: this.config, hooks: this.hooks() });
    this.membership.subscribe(this.subscriptions.subscription());
  }

  /**
   * subscribe(RegExp). With groupProtocol 'consumer' the broker resolves the
   * pattern (KIP-848's SubscribedTopicRegex, as Kafka's AsyncKafkaConsumer
   * does for subscribe(SubscriptionPattern)); deviation: Kafka's new consumer
   * matches a java.util.regex.Pattern client-side and sends only RE2J
   * SubscriptionPatterns, we send the RegExp's source, which our broker
   * matches as a JavaScript RegExp. With 'classic' the client matches the
   * topic names from the metadata at each refresh (pattern-subscription.ts).
   */
  private subscribePattern(pattern: RegExp, listener: ConsumerRebalanceListener | undefined): void {
    // Kafka's ClassicKafkaConsumer.subscribeInternal(Pattern): a group and a non-empty pattern.
    if (this.config.groupId === null) throw new ConfigError('subscribe() needs a groupId in the consumer config (assign() works without one)');
    if (pattern.source === '' || pattern.source === '(?:)') throw new ConfigError('subscribe(): the topic pattern must not be empty');
    if (this.config.groupProtocol === 'consumer' && pattern.flags.replace(/[gy]/g, '') !== '')
      throw new ConfigError(
        `subscribe(): groupProtocol 'consumer' sends the pattern to the broker, which takes no RegExp flags (got /${pattern.source}/${pattern.flags})`,
      );
    this.subscriptions.subscribePattern(pattern);
    this.listener = listener ?? null;
    this.membership ??= createMembership({ cluster: this.cluster, config: this.config, hooks: this.hooks() });
    if (this.membership.subscribePattern) this.membership.subscribePattern(pattern.source);
    else this.nextPatternUpdate = 0;
  }

  /** The classic pattern subscription, resolved again when the metadata is due (Kafka's ConsumerCoordinator.poll → updatePatternSubscription). */
  private async maybeUpdatePatternSubscription(deadline: number): Promise<void> {
    if (this.subscriptions.subscriptionType !== 'AUTO_PATTERN' || this.membership?.subscribePattern || Date.now() < this.nextPatternUpdate) return;
    try {
      const changed = await updatePatternSubscription(this.cluster, this.subscriptions, Math.max(deadline, Date.now() + this.cluster.requestTimeoutMs));
      if (changed) this.membership?.subscribe(changed);
      this.nextPatternUpdate = Date.now() + this.cluster.metadataMaxAgeMs;
    } catch (e) {
      // As a failed metadata refresh in Kafka: logged, tried again at the next poll.
      this.cluster.logger.warn(`pattern subscription: ${(e as Error).message}`);
    }
  }

  /**
   * Asks the group for a rebalance at the next poll (Kafka's enforceRebalance).
   * Under groupProtocol 'consumer' it does nothing but log, as Kafka's
   * AsyncKafkaConsumer.enforceRebalance: the broker decides assignments there.
   */
  enforceRebalance(reason?: string): void {
    this.checkOpen();
    // Kafka's ClassicKafkaConsumer: no coordinator without a group.id.
    if (this.config.groupId === null) throw new IllegalStateError('enforceRebalance() needs a groupId in the consumer config: the consumer has no group');
    if (this.config.groupProtocol === 'consumer')
      return void this.cluster.logger.warn('enforceRebalance(): not supported by the consumer group protocol (KIP-848)');
    this.membership?.requestRejoin?.(reason || 'rebalance enforced by user');
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
    if (this.membership && this.subscriptions.hasAutoAssignedPartitions()) {
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
        await this.maybeUpdatePatternSubscription(deadline);
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

  /**
   * The first offset whose timestamp is at or after the one searched, per
   * partition keyed `topic-partition`; null where there is none (Kafka's
   * offsetsForTimes over OffsetFetcher: the broker answers offset -1).
   */
  async offsetsForTimes(
    timestampsToSearch: ReadonlyArray<TopicPartition & { timestamp: bigint }>,
    timeoutMs = this.cluster.requestTimeoutMs,
  ): Promise<Map<string, OffsetAndTimestamp | null>> {
    this.checkOpen();
    for (const s of timestampsToSearch) {
      // Kafka's ClassicKafkaConsumer.offsetsForTimes: the special timestamps (-1, -2) have their own calls.
      if (typeof s.timestamp !== 'bigint' || s.timestamp < 0n)
        throw new ConfigError(`offsetsForTimes(): the target time for ${topicPartitionKey(s)} is ${String(s.timestamp)}; it must be a bigint >= 0`);
    }
    const searches = timestampsToSearch.map((s) => ({ tp: { topic: s.topic, partition: s.partition }, timestamp: s.timestamp }));
    const found = await listOffsetsByTimes(this.cluster, searches, this.config.isolationLevel, Date.now() + timeoutMs);
    const result = new Map<string, OffsetAndTimestamp | null>();
    for (const { tp } of searches) {
      const f = found.get(topicPartitionKey(tp));
      result.set(
        topicPartitionKey(tp),
        f && f.offset >= 0n ? { offset: f.offset, timestamp: f.timestamp, leaderEpoch: f.leaderEpoch < 0 ? null : f.leaderEpoch } : null,
      );
    }
    return result;
  }

  /**
   * The partitions of `topic` with leader, replicas and in-sync replicas
   * (Kafka's partitionsFor); empty for a topic the cluster does not have, as
   * Kafka's TopicMetadataFetcher leaves an unknown topic out rather than wait.
   */
  async partitionsFor(topic: string, timeoutMs = this.cluster.requestTimeoutMs): Promise<PartitionInfo[]> {
    this.checkOpen();
    const deadline = Date.now() + timeoutMs;
    await this.cluster.refreshMetadata([topic], deadline);
    if (this.cluster.saidAbsent(topic)) return [];
    const meta = await this.cluster.topic(topic, deadline);
    return meta.partitions.map((p) => partitionInfo(topic, p));
  }

  /** Every topic of the cluster with its partitions (Kafka's listTopics: a Metadata request for all topics, internal ones included). */
  async listTopics(timeoutMs = this.cluster.requestTimeoutMs): Promise<Map<string, PartitionInfo[]>> {
    this.checkOpen();
    const topics = await this.cluster.allTopics(Date.now() + timeoutMs);
    return new Map(topics.map((t) => [t.name, t.partitions.map((p) => partitionInfo(t.name, p))]));
  }

  /**
   * How far `partition`'s position is behind the end the last fetch saw: the
   * high watermark, or the last stable offset under read_committed (Kafka's
   * SubscriptionState.partitionLag). undefined while the position or that end
   * is unknown; then, as Kafka's ClassicKafkaConsumer.currentLag, the end is
   * looked up in the background for a later call.
   */
  currentLag(partition: TopicPartition): bigint | undefined {
    this.checkOpen();
    const state = this.subscriptions.state(partition);
    if (!state) throw new IllegalStateError(`currentLag(): ${topicPartitionKey(partition)} is not assigned to this consumer`);
    const readCommitted = this.config.isolationLevel === 'read_committed';
    const end = readCommitted ? state.lastStableOffset : state.highWatermark;
    if (state.position !== null && end >= 0n) return end - state.position;
    if (end < 0n) this.endOffsetRequests.request(partition, this.config.isolationLevel);
    return undefined;
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
