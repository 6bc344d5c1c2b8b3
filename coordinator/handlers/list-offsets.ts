/**
 * ListOffsets: EARLIEST (-2) and EARLIEST_LOCAL (-4) → log start offset;
 * LATEST (-1) → high watermark, or the last stable offset for read_committed;
 * MAX_TIMESTAMP (-3) → the record with the largest timestamp; a timestamp ≥ 0
 * → the first record at or after it. Other special values (-5, tiered
 * storage) answer offset -1, as Kafka does without tiered storage.
 */
import { ListOffsetsResponse } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import { resolveTopic } from './topics.js';

/**
 * The partitions a request names more than once. Kafka answers such a
 * partition once, with INVALID_REQUEST, instead of once per mention
 * (ListOffsetsRequest.duplicatePartitions; ReplicaManager.fetchOffset keys
 * its answers by partition).
 */
function duplicatePartitions(topics: Array<{ name: string; partitions: Array<{ partitionIndex: number }> }>): Set<string> {
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

export function listOffsetsHandler(cluster: Cluster, logs: LogManager): Handler {
  return async (req, ctx) => {
    const twice = duplicatePartitions(req.topics);
    const answered = new Set<string>();
    const topics = req.topics.map((topic: any) => ({
      name: topic.name,
      partitions: topic.partitions.flatMap((p: any) => {
        const key = `${topic.name}\u0000${p.partitionIndex}`;
        if (!twice.has(key)) return [answerFor(topic, p)];
        if (answered.has(key)) return [];
        answered.add(key);
        return [{ partitionIndex: p.partitionIndex, errorCode: ErrorCode.INVALID_REQUEST, timestamp: -1n, offset: -1n, leaderEpoch: -1 }];
      }),
    }));
    return ListOffsetsResponse.create({ topics });

    function answerFor(topic: any, p: any): any {
      const answer = (errorCode: number, offset = -1n, timestamp = -1n) => ({ partitionIndex: p.partitionIndex, errorCode, timestamp, offset, leaderEpoch: errorCode === 0 && ctx.apiVersion >= 4 ? 0 : -1 });
      const resolved = resolveTopic(cluster, { name: topic.name }, p.partitionIndex);
      if ('error' in resolved) return answer(resolved.error);
      const log = logs.get(resolved.info.name, p.partitionIndex);
      if (log === undefined) return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      const ts = p.timestamp as bigint;
      if (ts === -2n || ts === -4n) return answer(ErrorCode.NONE, log.logStartOffset());
      if (ts === -1n) return answer(ErrorCode.NONE, req.isolationLevel === 1 ? log.lastStableOffset() : log.highWatermark());
      if (ts === -3n) {
        const found = log.maxTimestampOffset();
        return found ? answer(ErrorCode.NONE, found.offset, found.timestamp) : answer(ErrorCode.NONE);
      }
      if (ts < 0n) return answer(ErrorCode.NONE);
      const found = log.offsetForTimestamp(ts);
      return found ? answer(ErrorCode.NONE, found.offset, found.timestamp) : answer(ErrorCode.NONE);
    }
  };
}
