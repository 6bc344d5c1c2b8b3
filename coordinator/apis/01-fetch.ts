/**
 * Fetch (key 1, consumer fetches): sessionless, read_uncommitted up to the high
 * watermark or read_committed up to the last stable offset with the aborted
 * transactions the consumer needs to skip. Waits up to MaxWaitMs for MinBytes as
 * Kafka's delayed fetch does.
 *
 * Kafka: KafkaApis.handleFetchRequest, ReplicaManager.fetchMessages /
 * readFromLog, DelayedFetch.
 * - Fetch sessions (KIP-227, v7+): a request to open one (SessionId 0, epoch 0) is
 *   answered in full with SessionId 0, which tells the client no session was
 *   created, so it keeps sending full requests; a request naming a session gets
 *   FETCH_SESSION_ID_NOT_FOUND.
 * - MaxWaitMs is capped at 30 s, so a broken client cannot park a connection.
 * - v13+ names topics by id.
 * Rule: READ on each topic; a denied one is answered TOPIC_AUTHORIZATION_FAILED per
 * partition and never reaches the handler.
 */
import { FetchRequest, type FetchPartition, type FetchTopic } from '../../generated/FetchRequest.js';
import { createFetchableTopicResponse, createPartitionData, FetchResponse, type PartitionData } from '../../generated/FetchResponse.js';
import { AclOperation as Op } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import type { IsolationLevel } from '../broker-context.js';
import { BrokerError, ErrorCode, errorCodeOf } from '../errors.js';
import type { PartitionLog } from '../log/partition-log.js';
import { resolveTopic } from '../resolve-topic.js';
import { defineApi } from './define.js';

/** Upper bound on MaxWaitMs, so a broken client cannot park a connection forever. */
const MAX_WAIT_CAP_MS = 30_000;

/** One partition the request names, resolved: its log, or why it cannot be read. */
interface FetchTarget {
  readonly topic: FetchTopic;
  readonly partition: FetchPartition;
  readonly log: PartitionLog | null;
  readonly error: number;
  readonly topicName: string;
}

export default defineApi({
  request: FetchRequest,
  response: FetchResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => FetchResponse.create(),
      answerDenied: (response, denied) =>
        response.responses.push(
          ...denied.map((t) =>
            createFetchableTopicResponse({
              topic: t.topic,
              topicId: t.topicId,
              partitions: t.partitions.map((p) =>
                createPartitionData({
                  partitionIndex: p.partition,
                  errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                  highWatermark: -1n,
                  lastStableOffset: -1n,
                  logStartOffset: -1n,
                  records: new Uint8Array(0),
                }),
              ),
            }),
          ),
        ),
    }),
  handler:
    ({ cluster, logs }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      if (v >= 7 && (request.sessionId !== 0 || (request.sessionEpoch !== 0 && request.sessionEpoch !== -1))) {
        return FetchResponse.create({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, responses: [] });
      }
      const isolation: IsolationLevel = request.isolationLevel === 1 ? 'read_committed' : 'read_uncommitted';
      const targets: FetchTarget[] = [];
      for (const topic of request.topics) {
        for (const partition of topic.partitions) {
          const resolved = resolveTopic(cluster, v >= 13 ? { topicId: topic.topicId } : { name: topic.topic }, partition.partition);
          if ('error' in resolved) {
            targets.push({ topic, partition, log: null, error: resolved.error, topicName: topic.topic });
            continue;
          }
          const log = logs.get(resolved.info.name, partition.partition) ?? null;
          targets.push({ topic, partition, log, error: log === null ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE, topicName: resolved.info.name });
        }
      }

      const readAll = (): { results: PartitionData[]; total: number } => {
        let remaining = request.maxBytes;
        let total = 0;
        const results = targets.map((t) => {
          const base = createPartitionData({
            partitionIndex: t.partition.partition,
            errorCode: t.error,
            highWatermark: -1n,
            lastStableOffset: -1n,
            logStartOffset: -1n,
            // Kafka's answer for a partition it does not serve (FetchResponse.partitionResponse) leaves the list empty, not null.
            abortedTransactions: t.error !== ErrorCode.NONE ? [] : null,
            preferredReadReplica: -1,
            records: new Uint8Array(0),
          });
          if (t.log === null) return base;
          base.highWatermark = t.log.highWatermark();
          base.lastStableOffset = t.log.lastStableOffset();
          base.logStartOffset = t.log.logStartOffset();
          try {
            // Kafka returns at least one batch of the first non-empty partition, even past MaxBytes.
            const limit = Math.max(0, Math.min(t.partition.partitionMaxBytes, remaining));
            const read = t.log.read(t.partition.fetchOffset, total === 0 ? Math.max(limit, 1) : limit, isolation);
            const records = read.records.length > 0 && (total === 0 || read.records.length <= limit) ? read.records : new Uint8Array(0);
            total += records.length;
            remaining -= records.length;
            base.records = records;
            base.highWatermark = read.highWatermark;
            base.lastStableOffset = read.lastStableOffset;
            if (isolation === 'read_committed') base.abortedTransactions = records.length > 0 ? [...read.abortedTransactions] : [];
          } catch (error) {
            if (!(error instanceof BrokerError)) throw error;
            base.errorCode = errorCodeOf(error);
            // A read that fails (OFFSET_OUT_OF_RANGE) reports no offsets, as Kafka's ReplicaManager.readFromLog does for its errors.
            base.highWatermark = -1n;
            base.lastStableOffset = -1n;
            base.logStartOffset = -1n;
          }
          return base;
        });
        return { results, total };
      };

      let { results, total } = readAll();
      const waitMs = Math.min(request.maxWaitMs, MAX_WAIT_CAP_MS);
      const anyError = results.some((r) => r.errorCode !== ErrorCode.NONE);
      if (total < request.minBytes && waitMs > 0 && !anyError) {
        const deadline = Date.now() + waitMs;
        while (total < request.minBytes && Date.now() < deadline) {
          await waitForAppend(
            targets.map((t) => t.log).filter((l): l is PartitionLog => l !== null),
            deadline - Date.now(),
          );
          ({ results, total } = readAll());
        }
      }

      const byTopic = new Map<FetchTopic, PartitionData[]>();
      targets.forEach((t, i) => {
        let list = byTopic.get(t.topic);
        if (list === undefined) byTopic.set(t.topic, (list = []));
        list.push(results[i]!);
      });
      return FetchResponse.create({
        errorCode: ErrorCode.NONE,
        sessionId: 0,
        responses: [...byTopic].map(([topic, partitions]) => ({ topic: topic.topic, topicId: topic.topicId, partitions })),
      });
    },
});

/** Resolves at the next append to any of `logs`, or after `ms`. */
function waitForAppend(logs: PartitionLog[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe: (() => void)[] = [];
    const done = (): void => {
      clearTimeout(timer);
      for (const u of unsubscribe) u();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    for (const log of logs) unsubscribe.push(log.onAppend(done));
  });
}
