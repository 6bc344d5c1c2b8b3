/**
 * currentLag()'s background look-up (Kafka's ClassicKafkaConsumer.currentLag
 * with SubscriptionState.requestPartitionEndOffset): when the end of a
 * partition is unknown, one ListOffsets for it is sent without waiting, and
 * its answer fills the end a later currentLag() reads, unless a fetch told it
 * first.
 */
import type { ClusterClient } from '../cluster.js';
import type { IsolationLevel } from './config.js';
import { LATEST_TIMESTAMP, listOffsets } from './offset-fetcher.js';
import type { SubscriptionState } from './subscription-state.js';
import { topicPartitionKey, type TopicPartition } from './topic-partition.js';

export class EndOffsetRequests {
  /** Partitions asked for whose answer has not come back yet. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly cluster: ClusterClient,
    private readonly subscriptions: SubscriptionState,
  ) {}

  request(tp: TopicPartition, isolation: IsolationLevel): void {
    const key = topicPartitionKey(tp);
    if (this.inFlight.has(key)) return;
    this.inFlight.add(key);
    void listOffsets(this.cluster, [tp], LATEST_TIMESTAMP, isolation, Date.now() + this.cluster.requestTimeoutMs)
      .then((ends) => {
        const state = this.subscriptions.state(tp);
        const end = ends.get(key);
        // A fetch's answer since is newer than this one.
        if (!state || end === undefined) return;
        if (isolation === 'read_committed') state.lastStableOffset = state.lastStableOffset < 0n ? end : state.lastStableOffset;
        else state.highWatermark = state.highWatermark < 0n ? end : state.highWatermark;
      })
      .catch((e: Error) => this.cluster.logger.warn(`currentLag(): end offset of ${key}: ${e.message}`))
      .finally(() => this.inFlight.delete(key));
  }
}
