/**
 * What the consumer reads and where (Kafka's SubscriptionState): the
 * subscription (topics, for the group to assign) or a user's assignment, and
 * per assigned partition its position (the next offset to fetch), whether it
 * is paused, and whether its position must be found first — from the
 * committed offset or by auto.offset.reset (OffsetFetcher) — before it can be
 * fetched.
 */
import { IllegalStateError } from '../errors.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from './topic-partition.js';

export type OffsetResetStrategy = 'earliest' | 'latest';

export interface TopicPartitionState {
  readonly tp: TopicPartition;
  /** The next offset to fetch, or null while it is unknown. */
  position: bigint | null;
  /** The leader epoch of the last record consumed (for commits), or null. */
  leaderEpoch: number | null;
  paused: boolean;
  /** A reset asked for (seekToBeginning/End, out of range, no committed offset): looked up by ListOffsets. */
  resetStrategy: OffsetResetStrategy | null;
  highWatermark: bigint;
  lastStableOffset: bigint;
}

export type SubscriptionType = 'NONE' | 'AUTO_TOPICS' | 'AUTO_PATTERN' | 'USER_ASSIGNED';

export class SubscriptionState {
  private type: SubscriptionType = 'NONE';
  private topics: string[] = [];
  /** subscribe(RegExp): the pattern, anchored to match whole topic names as Java's Matcher.matches does. */
  private pattern: RegExp | null = null;
  private readonly assigned = new Map<string, TopicPartitionState>();

  get subscriptionType(): SubscriptionType {
    return this.type;
  }

  /** Kafka allows one way at a time: subscribe or assign, not both. */
  private setType(type: SubscriptionType): void {
    if (this.type !== 'NONE' && this.type !== type) {
      throw new IllegalStateError('subscribe() and assign() are mutually exclusive: call unsubscribe() first (Kafka: SUBSCRIPTION_EXCEPTION_MESSAGE)');
    }
    this.type = type;
  }

  subscribe(topics: readonly string[]): boolean {
    this.setType('AUTO_TOPICS');
    const next = [...new Set(topics)].sort();
    const changed = next.join('\0') !== this.topics.join('\0');
    this.topics = next;
    return changed;
  }

  /** subscribe(RegExp) (Kafka's SubscriptionState.subscribe(Pattern)): the topics follow from the metadata, see subscribeFromPattern. */
  subscribePattern(pattern: RegExp): void {
    this.setType('AUTO_PATTERN');
    this.pattern = new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace(/[gy]/g, ''));
  }

  /** The subscribed pattern, or null when not subscribed by one. */
  subscribedPattern(): RegExp | null {
    return this.pattern;
  }

  /** Whether a topic name matches the whole subscribed pattern (Kafka's matchesSubscribedPattern). */
  matchesSubscribedPattern(topic: string): boolean {
    return this.pattern !== null && this.pattern.test(topic);
  }

  /** The topics the pattern matches now; whether they changed (Kafka's subscribeFromPattern). */
  subscribeFromPattern(topics: readonly string[]): boolean {
    if (this.type !== 'AUTO_PATTERN') throw new IllegalStateError('subscribeFromPattern() outside a pattern subscription');
    const next = [...new Set(topics)].sort();
    const changed = next.join('\0') !== this.topics.join('\0');
    this.topics = next;
    return changed;
  }

  /** Subscribed by names or by a pattern: the group assigns the partitions. */
  hasAutoAssignedPartitions(): boolean {
    return this.type === 'AUTO_TOPICS' || this.type === 'AUTO_PATTERN';
  }

  subscription(): readonly string[] {
    return this.topics;
  }

  /** assign(): the user's partitions; positions of partitions kept stay (Kafka's assignFromUser). */
  assignFromUser(partitions: readonly TopicPartition[]): void {
    this.setType('USER_ASSIGNED');
    this.replaceAssignment(partitions);
  }

  /** The group's assignment (Kafka's assignFromSubscribed): positions of partitions kept stay. */
  assignFromSubscribed(partitions: readonly TopicPartition[]): void {
    if (!this.hasAutoAssignedPartitions()) return;
    this.replaceAssignment(partitions);
  }

  private replaceAssignment(partitions: readonly TopicPartition[]): void {
    const wanted = new Map(partitions.map((tp) => [topicPartitionKey(tp), tp]));
    for (const key of [...this.assigned.keys()]) if (!wanted.has(key)) this.assigned.delete(key);
    for (const [key, tp] of wanted) {
      if (!this.assigned.has(key)) {
        this.assigned.set(key, {
          tp: { topic: tp.topic, partition: tp.partition },
          position: null,
          leaderEpoch: null,
          paused: false,
          resetStrategy: null,
          highWatermark: -1n,
          lastStableOffset: -1n,
        });
      }
    }
  }

  /** Partitions the group gave (incremental, cooperative); no position yet. */
  addPartitions(partitions: readonly TopicPartition[]): void {
    this.replaceAssignment([...this.assignedPartitions(), ...partitions]);
  }

  /** Partitions given up (revoked or lost): their positions go with them. */
  removePartitions(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) this.assigned.delete(topicPartitionKey(tp));
  }

  unsubscribe(): void {
    this.type = 'NONE';
    this.topics = [];
    this.pattern = null;
    this.assigned.clear();
  }

  assignedPartitions(): TopicPartition[] {
    return [...this.assigned.values()].map((s) => ({ ...s.tp })).sort(compareTopicPartitions);
  }

  isAssigned(tp: TopicPartition): boolean {
    return this.assigned.has(topicPartitionKey(tp));
  }

  state(tp: TopicPartition): TopicPartitionState | undefined {
    return this.assigned.get(topicPartitionKey(tp));
  }

  private required(tp: TopicPartition, call: string): TopicPartitionState {
    const state = this.state(tp);
    if (!state) throw new IllegalStateError(`${call}: ${topicPartitionKey(tp)} is not assigned to this consumer`);
    return state;
  }

  seek(tp: TopicPartition, offset: bigint, leaderEpoch: number | null = null): void {
    const state = this.required(tp, 'seek()');
    state.position = offset;
    state.leaderEpoch = leaderEpoch;
    state.resetStrategy = null;
  }

  requestOffsetReset(tp: TopicPartition, strategy: OffsetResetStrategy, call = 'reset'): void {
    const state = this.required(tp, call);
    state.resetStrategy = strategy;
    state.position = null;
  }

  pause(tp: TopicPartition): void {
    this.required(tp, 'pause()').paused = true;
  }

  resume(tp: TopicPartition): void {
    this.required(tp, 'resume()').paused = false;
  }

  pausedPartitions(): TopicPartition[] {
    return [...this.assigned.values()].filter((s) => s.paused).map((s) => ({ ...s.tp }));
  }

  /** Partitions whose position is unknown and no reset asked: the committed offset decides (Kafka's initializingPartitions). */
  partitionsNeedingPosition(): TopicPartition[] {
    return [...this.assigned.values()].filter((s) => s.position === null && s.resetStrategy === null).map((s) => s.tp);
  }

  partitionsNeedingReset(): TopicPartitionState[] {
    return [...this.assigned.values()].filter((s) => s.position === null && s.resetStrategy !== null);
  }

  hasAllFetchPositions(): boolean {
    return [...this.assigned.values()].every((s) => s.position !== null);
  }

  /** Partitions to fetch now: assigned, not paused, with a position (Kafka's fetchablePartitions). */
  fetchablePartitions(): TopicPartitionState[] {
    return [...this.assigned.values()].filter((s) => !s.paused && s.position !== null);
  }

  /** Every assigned partition with a position: what a commit of "all consumed" sends (Kafka's allConsumed). */
  allConsumed(): Map<string, { tp: TopicPartition; offset: bigint; leaderEpoch: number | null }> {
    const out = new Map<string, { tp: TopicPartition; offset: bigint; leaderEpoch: number | null }>();
    for (const [key, s] of this.assigned) if (s.position !== null) out.set(key, { tp: s.tp, offset: s.position, leaderEpoch: s.leaderEpoch });
    return out;
  }
}
