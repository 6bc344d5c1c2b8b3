/**
 * Fetch for KafkaConsumer (Kafka's Fetcher / AbstractFetch / FetchCollector):
 * one request per leader of the fetchable partitions that have nothing
 * buffered, answers kept as CompletedFetch per partition, and poll() drains
 * up to max.poll.records from them, moving each partition's position.
 *
 * Deviation: no fetch sessions (KIP-227). Every request is a full one
 * (SessionId 0, SessionEpoch -1, FINAL_EPOCH: "no session"), which Kafka's
 * brokers accept and our broker is the only kind it serves; incremental
 * fetches only save bytes for consumers of many partitions.
 * Not done: fetch position validation with OffsetForLeaderEpoch after a
 * leader change (Kafka's OffsetsForLeaderEpochUtils); a truncated log shows
 * as OFFSET_OUT_OF_RANGE and goes through auto.offset.reset.
 */
import { FetchRequest, FetchResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { groupBy, sleep, type ClusterClient } from '../cluster.js';
import { errorFromCode, Errors, UnsupportedVersionError } from '../errors.js';
import { CompletedFetch } from './completed-fetch.js';
import type { ResolvedConsumerConfig } from './config.js';
import type { ConsumerRecord } from './consumer-record.js';
import type { SubscriptionState, TopicPartitionState } from './subscription-state.js';
import { topicPartitionKey } from './topic-partition.js';

/** Errors that mean the metadata is stale: refresh it and fetch again (Kafka's FetchCollector.handleInitializeErrors). */
const STALE_METADATA_ERRORS: ReadonlySet<number> = new Set([
  Errors.NOT_LEADER_OR_FOLLOWER,
  Errors.UNKNOWN_TOPIC_OR_PARTITION,
  Errors.UNKNOWN_TOPIC_ID,
  Errors.INCONSISTENT_TOPIC_ID,
  Errors.FENCED_LEADER_EPOCH,
  Errors.UNKNOWN_LEADER_EPOCH,
  Errors.KAFKA_STORAGE_ERROR,
  Errors.OFFSET_NOT_AVAILABLE,
  Errors.REPLICA_NOT_AVAILABLE,
]);

/** Thrown from poll() when a partition is out of range and auto.offset.reset is 'none' (Kafka's OffsetOutOfRangeException). */
export class OffsetOutOfRangeError extends Error {
  constructor(readonly partitions: Map<string, bigint>) {
    super(`fetch positions out of range with no reset policy (autoOffsetReset 'none'): ${[...partitions].map(([k, o]) => `${k}@${o}`).join(', ')}`);
    this.name = 'OffsetOutOfRangeError';
  }
}

export class Fetcher {
  private readonly buffered = new Map<string, CompletedFetch>();

  constructor(
    private readonly cluster: ClusterClient,
    private readonly subscriptions: SubscriptionState,
    private readonly config: ResolvedConsumerConfig,
  ) {}

  hasBufferedRecords(): boolean {
    for (const fetch of this.buffered.values()) if (!fetch.isConsumed) return true;
    return false;
  }

  /** Drops what is buffered for partitions (seek, revocation): the next fetch starts from the new position. */
  clearBuffered(keep: (key: string) => boolean = () => false): void {
    for (const key of [...this.buffered.keys()]) if (!keep(key)) this.buffered.delete(key);
  }

  /**
   * Up to max.poll.records from the buffer, in partition order; a partition's
   * answer is used only if it was fetched for its current position and the
   * partition is still assigned and not paused (Kafka's FetchCollector.collectFetch).
   */
  collect(): ConsumerRecord[] {
    const out: ConsumerRecord[] = [];
    for (const [key, fetch] of this.buffered) {
      if (out.length >= this.config.maxPollRecords) break;
      const state = this.subscriptions.state(fetch.tp);
      if (!state || state.position !== fetch.fetchOffset) {
        this.buffered.delete(key);
        continue;
      }
      if (state.paused) continue;
      const taken = fetch.take(this.config.maxPollRecords - out.length);
      out.push(...taken.records);
      state.position = taken.position;
      if (taken.leaderEpoch !== null) state.leaderEpoch = taken.leaderEpoch;
      // The fetch offset of what is left is the new position.
      if (fetch.isConsumed) this.buffered.delete(key);
      else fetch.fetchOffset = state.position;
    }
    return out;
  }

  /** One Fetch to each leader of the partitions to fetch, waiting at most `maxWaitMs` on the broker. */
  async sendFetches(maxWaitMs: number): Promise<void> {
    const wanted = this.subscriptions.fetchablePartitions().filter((s) => !this.buffered.has(topicPartitionKey(s.tp)));
    if (wanted.length === 0) return;
    const withLeader: Array<{ state: TopicPartitionState; leader: number; topicId: string }> = [];
    let missing = false;
    for (const state of wanted) {
      const topic = this.cluster.cachedTopic(state.tp.topic);
      const leader = topic?.partitions.find((p) => p.partition === state.tp.partition)?.leader ?? -1;
      if (!topic || leader < 0) missing = true;
      else withLeader.push({ state, leader, topicId: topic.topicId });
    }
    if (missing) {
      const topics = [...new Set(wanted.map((s) => s.tp.topic))];
      await this.cluster.refreshMetadata(topics, Date.now() + this.cluster.requestTimeoutMs).catch(() => {});
      if (withLeader.length === 0) return;
    }
    const byNode = groupBy(withLeader, (p) => p.leader);
    await Promise.all([...byNode].map(([nodeId, parts]) => this.fetchFrom(nodeId, parts, maxWaitMs)));
  }

  /** The leaders moved (or the node is gone): fetch their metadata again before the next Fetch (Kafka's requestUpdate). */
  private async refreshLeaders(topics: string[]): Promise<void> {
    this.cluster.invalidateMetadata();
    await this.cluster.refreshMetadata(topics, Date.now() + this.cluster.requestTimeoutMs).catch(() => {});
  }

  private async fetchFrom(nodeId: number, parts: Array<{ state: TopicPartitionState; leader: number; topicId: string }>, maxWaitMs: number): Promise<void> {
    const sentAt = new Map(parts.map((p) => [topicPartitionKey(p.state.tp), p.state.position!]));
    const byTopic = groupBy(parts, (p) => p.state.tp.topic);
    let response: FetchResponse;
    let version: number;
    try {
      ({ response, version } = await this.cluster.send(
        nodeId,
        FetchRequest,
        FetchResponse,
        () =>
          FetchRequest.create({
            replicaId: -1,
            maxWaitMs,
            minBytes: this.config.fetchMinBytes,
            maxBytes: this.config.fetchMaxBytes,
            isolationLevel: this.config.isolationLevel === 'read_committed' ? 1 : 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [...byTopic].map(([topic, list]) => ({
              topic,
              topicId: list[0]!.topicId,
              partitions: list.map(({ state }) => ({
                partition: state.tp.partition,
                currentLeaderEpoch: -1,
                fetchOffset: state.position!,
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: this.config.maxPartitionFetchBytes,
              })),
            })),
            forgottenTopicsData: [],
            rackId: this.config.clientRack ?? '',
          }),
        { timeoutMs: this.cluster.requestTimeoutMs + maxWaitMs },
      ));
    } catch (error) {
      if (error instanceof UnsupportedVersionError) throw error;
      if (!(error instanceof NetworkError)) this.cluster.logger.warn(`Fetch to ${this.cluster.describeNode(nodeId)} failed: ${(error as Error).message}`);
      await sleep(this.cluster.backoff(1), this.cluster.closeSignal);
      await this.refreshLeaders([...byTopic.keys()]);
      return;
    }
    if (response.errorCode !== Errors.NONE) {
      this.cluster.logger.warn(`Fetch to ${this.cluster.describeNode(nodeId)}: ${errorFromCode(response.errorCode, 'Fetch').message}`);
      await sleep(this.cluster.backoff(1), this.cluster.closeSignal);
      return;
    }
    let stale = false;
    const outOfRange = new Map<string, bigint>();
    for (const topicResponse of response.responses) {
      const topic = version >= 13 ? this.cluster.topicById(topicResponse.topicId)?.name : topicResponse.topic;
      if (topic === undefined) continue;
      for (const part of topicResponse.partitions) {
        const tp = { topic, partition: part.partitionIndex };
        const key = topicPartitionKey(tp);
        const state = this.subscriptions.state(tp);
        const fetchOffset = sentAt.get(key);
        // Reassigned or moved (seek) while the request was out: the answer is for a position no longer wanted.
        if (!state || fetchOffset === undefined || state.position !== fetchOffset) continue;
        if (part.errorCode === Errors.NONE) {
          if (part.highWatermark >= 0n) state.highWatermark = part.highWatermark;
          if (part.lastStableOffset >= 0n) state.lastStableOffset = part.lastStableOffset;
          this.buffered.set(key, new CompletedFetch(tp, fetchOffset, part.records, this.config.isolationLevel, part.abortedTransactions));
        } else if (part.errorCode === Errors.OFFSET_OUT_OF_RANGE) {
          // Kafka's FetchCollector.handleInitializeErrors: reset by policy, or fail poll() when there is none.
          if (this.config.autoOffsetReset === 'none') outOfRange.set(key, fetchOffset);
          else this.subscriptions.requestOffsetReset(tp, this.config.autoOffsetReset);
        } else if (STALE_METADATA_ERRORS.has(part.errorCode)) {
          stale = true;
        } else {
          throw errorFromCode(part.errorCode, `Fetch ${key}`);
        }
      }
    }
    if (stale) await this.refreshLeaders([...byTopic.keys()]);
    if (outOfRange.size > 0) throw new OffsetOutOfRangeError(outOfRange);
  }
}
