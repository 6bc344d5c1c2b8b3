/**
 * ListOffsets for the consumer (Kafka's OffsetFetcher): the earliest or
 * latest offset of partitions, for auto.offset.reset, seekToBeginning /
 * seekToEnd and beginningOffsets / endOffsets. Under read_committed "latest"
 * is the last stable offset, as the broker answers for IsolationLevel 1.
 */
import { ListOffsetsRequest, ListOffsetsResponse } from '../../generated/index.js';
import { groupBy, type ClusterClient } from '../cluster.js';
import { errorFromCode, Errors, isRetriableCode, KafkaError } from '../errors.js';
import type { IsolationLevel } from './config.js';
import type { OffsetResetStrategy } from './subscription-state.js';
import { topicPartitionKey, type TopicPartition } from './topic-partition.js';

/** ListOffsets' special timestamps (Kafka's ListOffsetsRequest.EARLIEST_TIMESTAMP / LATEST_TIMESTAMP). */
export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;

export function timestampFor(strategy: OffsetResetStrategy): bigint {
  return strategy === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP;
}

/** One partition's answer: the offset, the timestamp of its record (-1 for the special timestamps) and the leader epoch (-1 when none). */
export interface ListedOffset {
  offset: bigint;
  timestamp: bigint;
  leaderEpoch: number;
}

/**
 * The offset for `timestamp` of each partition, keyed `topic-partition`,
 * retried (metadata refreshed) through leader moves until `deadline`.
 */
export async function listOffsets(
  cluster: ClusterClient,
  partitions: readonly TopicPartition[],
  timestamp: bigint,
  isolation: IsolationLevel,
  deadline: number,
): Promise<Map<string, bigint>> {
  const listed = await listOffsetsByTimes(
    cluster,
    partitions.map((tp) => ({ tp, timestamp })),
    isolation,
    deadline,
  );
  return new Map([...listed].map(([key, l]) => [key, l.offset]));
}

/**
 * ListOffsets with a timestamp per partition (Kafka's OffsetFetcher.fetchOffsetsByTimes):
 * each partition's answer keyed `topic-partition`, retried through leader moves until `deadline`.
 */
export async function listOffsetsByTimes(
  cluster: ClusterClient,
  searches: ReadonlyArray<{ tp: TopicPartition; timestamp: bigint }>,
  isolation: IsolationLevel,
  deadline: number,
): Promise<Map<string, ListedOffset>> {
  const result = new Map<string, ListedOffset>();
  let left = [...searches];
  await cluster.retry('ListOffsets', deadline, async () => {
    const located: Array<{ tp: TopicPartition; timestamp: bigint; leader: number }> = [];
    for (const { tp, timestamp } of left) {
      const topic = await cluster.topic(tp.topic, deadline);
      const info = topic.partitions.find((p) => p.partition === tp.partition);
      if (!info) throw new KafkaError(`ListOffsets: topic ${tp.topic} has no partition ${tp.partition}`, { code: Errors.UNKNOWN_TOPIC_OR_PARTITION });
      if (info.leader < 0) throw new KafkaError(`ListOffsets: ${topicPartitionKey(tp)} has no leader`, { retriable: true });
      located.push({ tp, timestamp, leader: info.leader });
    }
    const retry: Array<{ tp: TopicPartition; timestamp: bigint }> = [];
    let lastError: KafkaError | null = null;
    await Promise.all(
      [...groupBy(located, (l) => l.leader)].map(async ([nodeId, list]) => {
        const { response } = await cluster.send(
          nodeId,
          ListOffsetsRequest,
          ListOffsetsResponse,
          () =>
            ListOffsetsRequest.create({
              replicaId: -1,
              isolationLevel: isolation === 'read_committed' ? 1 : 0,
              topics: [...groupBy(list, (l) => l.tp.topic)].map(([name, parts]) => ({
                name,
                partitions: parts.map((p) => ({ partitionIndex: p.tp.partition, currentLeaderEpoch: -1, timestamp: p.timestamp })),
              })),
            }),
          { deadline },
        );
        for (const topic of response.topics) {
          for (const part of topic.partitions) {
            const tp = { topic: topic.name, partition: part.partitionIndex };
            if (part.errorCode === Errors.NONE)
              result.set(topicPartitionKey(tp), { offset: part.offset, timestamp: part.timestamp, leaderEpoch: part.leaderEpoch });
            else if (isRetriableCode(part.errorCode)) {
              const asked = list.find((l) => topicPartitionKey(l.tp) === topicPartitionKey(tp));
              if (asked) retry.push({ tp, timestamp: asked.timestamp });
              lastError = errorFromCode(part.errorCode, `ListOffsets ${topicPartitionKey(tp)}`);
            } else throw errorFromCode(part.errorCode, `ListOffsets ${topicPartitionKey(tp)}`);
          }
        }
      }),
    );
    left = retry;
    if (retry.length > 0) {
      cluster.invalidateMetadata();
      throw lastError ?? new KafkaError('ListOffsets: partitions left unanswered', { retriable: true });
    }
  });
  return result;
}
