/**
 * ListOffsets (key 2): EARLIEST (-2) and EARLIEST_LOCAL (-4) → log start offset;
 * LATEST (-1) → high watermark, or the last stable offset for read_committed;
 * MAX_TIMESTAMP (-3) → the record with the largest timestamp; a timestamp ≥ 0 →
 * the first record at or after it.
 *
 * Kafka: KafkaApis.handleListOffsetRequest, ReplicaManager.fetchOffset,
 * UnifiedLog.fetchOffsetByTimestamp.
 * - Other special values (-5, tiered storage) answer offset -1, as Kafka does
 *   without tiered storage.
 * - A partition named twice is answered once, with INVALID_REQUEST.
 * - v4+ carries the leader epoch (0: kipgen's leaders never change).
 * Rule: DESCRIBE on each topic; a denied one is answered TOPIC_AUTHORIZATION_FAILED
 * per partition.
 */
import { ListOffsetsRequest, type ListOffsetsPartition, type ListOffsetsTopic } from '../../generated/ListOffsetsRequest.js';
import {
  createListOffsetsPartitionResponse,
  createListOffsetsTopicResponse,
  ListOffsetsResponse,
  type ListOffsetsPartitionResponseInit,
} from '../../generated/ListOffsetsResponse.js';
import { AclOperation as Op } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { resolveTopic } from '../resolve-topic.js';
import { defineApi } from './define.js';

/**
 * The partitions a request names more than once. Kafka answers such a
 * partition once, with INVALID_REQUEST, instead of once per mention
 * (ListOffsetsRequest.duplicatePartitions; ReplicaManager.fetchOffset keys
 * its answers by partition).
 */
function duplicatePartitions(topics: readonly ListOffsetsTopic[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const t of topics) {
    for (const p of t.partitions) {
      const key = `${t.name}\u0000${p.partitionIndex}`;
      if (seen.has(key)) twice.add(key);
      seen.add(key);
    }
  }
  return twice;
}

export default defineApi({
  request: ListOffsetsRequest,
  response: ListOffsetsResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.DESCRIBE),
      keep: (topics) => ({ ...request, topics }),
      empty: () => ListOffsetsResponse.create(),
      answerDenied: (response, denied) =>
        response.topics.push(
          ...denied.map((t) =>
            createListOffsetsTopicResponse({
              name: t.name,
              partitions: t.partitions.map((p) =>
                createListOffsetsPartitionResponse({
                  partitionIndex: p.partitionIndex,
                  errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                  timestamp: -1n,
                  offset: -1n,
                }),
              ),
            }),
          ),
        ),
    }),
  handler:
    ({ cluster, logs }) =>
    async (request, ctx) => {
      const answerFor = (topic: ListOffsetsTopic, p: ListOffsetsPartition): ListOffsetsPartitionResponseInit => {
        const answer = (errorCode: number, offset = -1n, timestamp = -1n): ListOffsetsPartitionResponseInit => ({
          partitionIndex: p.partitionIndex,
          errorCode,
          timestamp,
          offset,
          leaderEpoch: errorCode === 0 && ctx.apiVersion >= 4 ? 0 : -1,
        });
        const resolved = resolveTopic(cluster, { name: topic.name }, p.partitionIndex);
        if ('error' in resolved) return answer(resolved.error);
        const log = logs.get(resolved.info.name, p.partitionIndex);
        if (log === undefined) return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const ts = p.timestamp;
        if (ts === -2n || ts === -4n) return answer(ErrorCode.NONE, log.logStartOffset());
        if (ts === -1n) return answer(ErrorCode.NONE, request.isolationLevel === 1 ? log.lastStableOffset() : log.highWatermark());
        if (ts === -3n) {
          const found = log.maxTimestampOffset();
          return found ? answer(ErrorCode.NONE, found.offset, found.timestamp) : answer(ErrorCode.NONE);
        }
        if (ts < 0n) return answer(ErrorCode.NONE);
        const found = log.offsetForTimestamp(ts);
        return found ? answer(ErrorCode.NONE, found.offset, found.timestamp) : answer(ErrorCode.NONE);
      };
      const twice = duplicatePartitions(request.topics);
      const answered = new Set<string>();
      const topics = request.topics.map((topic) => ({
        name: topic.name,
        partitions: topic.partitions.flatMap((p): ListOffsetsPartitionResponseInit[] => {
          const key = `${topic.name}\u0000${p.partitionIndex}`;
          if (!twice.has(key)) return [answerFor(topic, p)];
          if (answered.has(key)) return [];
          answered.add(key);
          return [{ partitionIndex: p.partitionIndex, errorCode: ErrorCode.INVALID_REQUEST, timestamp: -1n, offset: -1n, leaderEpoch: -1 }];
        }),
      }));
      return ListOffsetsResponse.create({ topics });
    },
});
