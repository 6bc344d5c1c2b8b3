/**
 * Finding where each assigned partition is read from before it is fetched
 * (Kafka's ConsumerCoordinator.initWithCommittedOffsetsIfNeeded and
 * OffsetFetcher.resetPositionsIfNeeded): the group's committed offset when
 * there is one, else auto.offset.reset by ListOffsets; with 'none' and no
 * committed offset poll() fails (Kafka's NoOffsetForPartitionException).
 */
import type { ClusterClient } from '../cluster.js';
import { KafkaError } from '../errors.js';
import type { ResolvedConsumerConfig } from './config.js';
import { listOffsets, timestampFor } from './offset-fetcher.js';
import { fetchCommittedOffsets } from './offset-commits.js';
import type { OffsetResetStrategy, SubscriptionState } from './subscription-state.js';
import { topicPartitionKey, type TopicPartition } from './topic-partition.js';

export class NoOffsetForPartitionError extends KafkaError {
  constructor(readonly partitions: readonly TopicPartition[]) {
    super(
      `no committed offset and no reset policy (autoOffsetReset 'none') for ${partitions.map(topicPartitionKey).join(', ')}: seek() them, or set autoOffsetReset`,
    );
    this.name = 'NoOffsetForPartitionError';
  }
}

export async function updateFetchPositions(
  cluster: ClusterClient,
  subscriptions: SubscriptionState,
  config: ResolvedConsumerConfig,
  deadline: number,
): Promise<void> {
  const initializing = subscriptions.partitionsNeedingPosition();
  if (initializing.length > 0) {
    const committed = config.groupId !== null ? await fetchCommittedOffsets(cluster, config.groupId, initializing, deadline) : new Map();
    const noPolicy: TopicPartition[] = [];
    for (const tp of initializing) {
      const state = subscriptions.state(tp);
      // Seeked or reassigned while the committed offsets were asked for.
      if (!state || state.position !== null || state.resetStrategy !== null) continue;
      const offset = committed.get(topicPartitionKey(tp));
      if (offset) subscriptions.seek(tp, offset.offset, offset.leaderEpoch ?? null);
      else if (config.autoOffsetReset === 'none') noPolicy.push(tp);
      else subscriptions.requestOffsetReset(tp, config.autoOffsetReset);
    }
    if (noPolicy.length > 0) throw new NoOffsetForPartitionError(noPolicy);
  }
  const resetting = subscriptions.partitionsNeedingReset();
  if (resetting.length === 0) return;
  const byStrategy = new Map<OffsetResetStrategy, TopicPartition[]>();
  for (const state of resetting) {
    const list = byStrategy.get(state.resetStrategy!) ?? [];
    list.push(state.tp);
    byStrategy.set(state.resetStrategy!, list);
  }
  for (const [strategy, partitions] of byStrategy) {
    const offsets = await listOffsets(cluster, partitions, timestampFor(strategy), config.isolationLevel, deadline);
    for (const tp of partitions) {
      const state = subscriptions.state(tp);
      const offset = offsets.get(topicPartitionKey(tp));
      // Only if nothing else (a seek) decided meanwhile.
      if (state && state.resetStrategy === strategy && offset !== undefined) subscriptions.seek(tp, offset);
    }
  }
}
