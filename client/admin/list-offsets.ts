/**
 * listOffsets (Kafka's KafkaAdminClient.listOffsets with ListOffsetsHandler and
 * PartitionLeaderStrategy): each partition's offset for a spec (earliest,
 * latest, max timestamp, a timestamp, earliest local, latest tiered, earliest
 * pending upload), asked of the partition's leader, one ListOffsets per leader.
 *
 * - Lookup: Metadata for the topics. A topic that does not exist or is refused
 *   fails its partitions; a partition with no leader, a retriable error, or not
 *   in the topic (yet) is looked up again until the deadline, then fails with
 *   KafkaTimeoutError.
 * - Fulfilment: NOT_LEADER_OR_FOLLOWER / LEADER_NOT_AVAILABLE send the
 *   partition back to the lookup; another retriable error retries it at the same
 *   leader; any other error fails it.
 * - Versions: a spec needs a minimum version (ListOffsetsRequest.Builder.forConsumer).
 *   Kafka fails only MAX_TIMESTAMP partitions when the leader is too old and
 *   every partition otherwise; kipgen fails exactly the partitions whose spec
 *   the leader cannot answer, and sends the rest.
 */
import { ListOffsetsRequest, ListOffsetsResponse } from '../../generated/index.js';
import { ErrorCode, isRetriableErrorCode } from '../../runtime/error-codes.js';
import { isRetriable, sleep } from '../cluster/retry.js';
import { topicPartitionKey, type TopicPartition } from '../consumer/topic-partition.js';
import { ConfigError, KafkaError, KafkaTimeoutError, UnsupportedVersionError, errorFromCode } from '../errors.js';
import { deadlineOf, remainingMs, type AdminCallOptions, type AdminContext } from './call.js';
import { AdminResult, type EntryError, type EntryOutcome } from './result.js';

/** Kafka's OffsetSpec: which offset to look up. */
export type OffsetSpec =
  | { type: 'earliest' }
  | { type: 'latest' }
  | { type: 'maxTimestamp' }
  | { type: 'earliestLocal' }
  | { type: 'latestTiered' }
  | { type: 'earliestPendingUpload' }
  | { type: 'forTimestamp'; timestamp: number | bigint };

/** Kafka's OffsetSpec factories. */
export const OffsetSpec = {
  earliest: (): OffsetSpec => ({ type: 'earliest' }),
  latest: (): OffsetSpec => ({ type: 'latest' }),
  maxTimestamp: (): OffsetSpec => ({ type: 'maxTimestamp' }),
  earliestLocal: (): OffsetSpec => ({ type: 'earliestLocal' }),
  latestTiered: (): OffsetSpec => ({ type: 'latestTiered' }),
  earliestPendingUpload: (): OffsetSpec => ({ type: 'earliestPendingUpload' }),
  forTimestamp: (timestamp: number | bigint): OffsetSpec => ({ type: 'forTimestamp', timestamp }),
} as const;

export interface ListOffsetsOptions extends AdminCallOptions {
  /** READ_COMMITTED: latest is the last stable offset. Default READ_UNCOMMITTED. */
  isolationLevel?: 'READ_UNCOMMITTED' | 'READ_COMMITTED';
}

/** Kafka's ListOffsetsResultInfo. `offset` -1 when no record matches (e.g. a timestamp after the last record). */
export interface ListOffsetsResultInfo {
  offset: bigint;
  timestamp: bigint;
  /** Null when the broker gave none (-1). */
  leaderEpoch: number | null;
}

/** The special timestamp of each spec (ListOffsetsRequest.*_TIMESTAMP) and the first version that serves it (forConsumer). */
const SPECS: Record<Exclude<OffsetSpec['type'], 'forTimestamp'>, { timestamp: bigint; minVersion: number }> = {
  latest: { timestamp: -1n, minVersion: 1 },
  earliest: { timestamp: -2n, minVersion: 1 },
  maxTimestamp: { timestamp: -3n, minVersion: 7 },
  earliestLocal: { timestamp: -4n, minVersion: 8 },
  latestTiered: { timestamp: -5n, minVersion: 9 },
  earliestPendingUpload: { timestamp: -6n, minVersion: 11 },
};
/** read_committed needs v2 (forConsumer). */
const READ_COMMITTED_VERSION = 2;

interface Pending {
  tp: TopicPartition;
  timestamp: bigint;
  minVersion: number;
}

/** Where a call stands: the partitions still to answer, the answered ones, and the last reason some were not. */
class Progress {
  readonly pending = new Map<string, Pending>();
  readonly done = new Map<string, EntryOutcome<ListOffsetsResultInfo>>();
  lastProblem = 'no leader known';

  succeed(key: string, value: ListOffsetsResultInfo): void {
    this.done.set(key, { ok: true, value });
    this.pending.delete(key);
  }

  fail(key: string, error: EntryError): void {
    this.done.set(key, { ok: false, error });
    this.pending.delete(key);
  }
}

function resolve(tp: TopicPartition, spec: OffsetSpec): Pending {
  if (spec.type === 'forTimestamp') {
    const ts = BigInt(spec.timestamp);
    if (ts < 0n) throw new ConfigError(`listOffsets of ${topicPartitionKey(tp)}: forTimestamp needs a timestamp >= 0, not ${ts}`);
    return { tp, timestamp: ts, minVersion: 1 };
  }
  const known = SPECS[spec.type];
  if (known === undefined) throw new ConfigError(`listOffsets of ${topicPartitionKey(tp)}: unknown OffsetSpec ${JSON.stringify(spec)}`);
  return { tp, ...known };
}

export async function listOffsets(
  admin: AdminContext,
  topicPartitionOffsets: ReadonlyMap<TopicPartition, OffsetSpec> | ReadonlyArray<readonly [TopicPartition, OffsetSpec]>,
  options: ListOffsetsOptions = {},
): Promise<AdminResult<TopicPartition, ListOffsetsResultInfo>> {
  const deadline = deadlineOf(admin, options);
  const readCommitted = options.isolationLevel === 'READ_COMMITTED';
  const cluster = admin.cluster;
  const keys = new Map<string, TopicPartition>();
  const progress = new Progress();
  const pending = progress.pending;
  for (const [tp, spec] of topicPartitionOffsets instanceof Map ? topicPartitionOffsets.entries() : topicPartitionOffsets) {
    const key = topicPartitionKey(tp);
    if (keys.has(key)) continue;
    keys.set(key, tp);
    const p = resolve(tp, spec);
    if (readCommitted) p.minVersion = Math.max(p.minVersion, READ_COMMITTED_VERSION);
    pending.set(key, p);
  }
  const fail = (key: string, error: EntryError): void => progress.fail(key, error);
  for (let attempt = 1; pending.size > 0; attempt++) {
    // Lookup (PartitionLeaderStrategy): the leader of each pending partition.
    const byLeader = new Map<number, Pending[]>();
    try {
      const topics = [...new Set([...pending.values()].map((p) => p.tp.topic))];
      await cluster.refreshMetadata(topics, deadline);
      for (const [key, p] of pending) {
        const refused = cluster.topicRefusedCode(p.tp.topic);
        if (refused !== undefined) fail(key, errorFromCode(refused, `listOffsets of ${key}: Metadata for topic ${p.tp.topic}`));
        else if (cluster.saidAbsent(p.tp.topic))
          fail(key, errorFromCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `listOffsets of ${key}`, `topic ${p.tp.topic} could not be found`));
        else {
          const leader = cluster.cachedTopic(p.tp.topic)?.partitions.find((q) => q.partition === p.tp.partition);
          if (leader === undefined || leader.leader < 0 || leader.errorCode !== ErrorCode.NONE) {
            progress.lastProblem = leader === undefined ? `${key} is not in the topic's metadata` : `${key} has no leader`;
            continue;
          }
          const group = byLeader.get(leader.leader);
          if (group) group.push(p);
          else byLeader.set(leader.leader, [p]);
        }
      }
    } catch (error) {
      if (!isRetriable(error)) throw error;
      progress.lastProblem = (error as Error).message;
    }
    // Fulfilment (ListOffsetsHandler): one request per leader.
    await Promise.all([...byLeader].map(([leader, group]) => askLeader(admin, leader, group, readCommitted, deadline, progress)));
    if (pending.size === 0) break;
    const wait = cluster.backoff(attempt);
    if (Date.now() + wait >= deadline) {
      for (const key of [...pending.keys()]) {
        fail(
          key,
          new KafkaTimeoutError(
            `listOffsets of ${key} did not complete within its deadline after ${attempt} attempt(s); last problem: ${progress.lastProblem}`,
          ),
        );
      }
      break;
    }
    await sleep(wait, cluster.closeSignal);
  }
  const outcomes = new Map<TopicPartition, EntryOutcome<ListOffsetsResultInfo>>();
  for (const [key, tp] of keys) outcomes.set(tp, progress.done.get(key)!);
  return new AdminResult(outcomes);
}

async function askLeader(admin: AdminContext, leader: number, group: Pending[], readCommitted: boolean, deadline: number, progress: Progress): Promise<void> {
  const cluster = admin.cluster;
  const pending = progress.pending;
  const fail = (key: string, error: EntryError): void => progress.fail(key, error);
  const noteProblem = (message: string): void => {
    progress.lastProblem = message;
  };
  try {
    let sendable = group;
    const needed = Math.max(...group.map((p) => p.minVersion));
    if (!(await cluster.supports(leader, ListOffsetsRequest.apiKey, needed, deadline))) {
      sendable = [];
      for (const p of group) {
        if (await cluster.supports(leader, ListOffsetsRequest.apiKey, p.minVersion, deadline)) sendable.push(p);
        else {
          const key = topicPartitionKey(p.tp);
          fail(
            key,
            new UnsupportedVersionError(
              `listOffsets of ${key}: ${cluster.describeNode(leader)} cannot answer this offset spec (it needs ListOffsets v${p.minVersion}+)`,
            ),
          );
        }
      }
      if (sendable.length === 0) return;
    }
    const topics = new Map<string, Pending[]>();
    for (const p of sendable) topics.set(p.tp.topic, [...(topics.get(p.tp.topic) ?? []), p]);
    const { response } = await cluster.send(
      leader,
      ListOffsetsRequest,
      ListOffsetsResponse,
      () =>
        ListOffsetsRequest.create({
          replicaId: -1,
          isolationLevel: readCommitted ? 1 : 0,
          topics: [...topics].map(([name, ps]) => ({
            name,
            partitions: ps.map((p) => ({ partitionIndex: p.tp.partition, currentLeaderEpoch: -1, timestamp: p.timestamp })),
          })),
          timeoutMs: remainingMs(deadline),
        }),
      { min: Math.max(...sendable.map((p) => p.minVersion)), deadline, timeoutMs: Math.max(1, Math.min(cluster.requestTimeoutMs, remainingMs(deadline))) },
    );
    for (const topic of response.topics) {
      for (const part of topic.partitions) {
        const key = topicPartitionKey({ topic: topic.name, partition: part.partitionIndex });
        if (!pending.has(key)) continue;
        if (part.errorCode === ErrorCode.NONE) {
          progress.succeed(key, { offset: part.offset, timestamp: part.timestamp, leaderEpoch: part.leaderEpoch < 0 ? null : part.leaderEpoch });
        } else if (part.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || part.errorCode === ErrorCode.LEADER_NOT_AVAILABLE) {
          cluster.invalidateMetadata();
          noteProblem(`${key}: ${cluster.describeNode(leader)} answered ${errorFromCode(part.errorCode, 'ListOffsets').message}`);
        } else if (isRetriableErrorCode(part.errorCode)) {
          noteProblem(`${key}: ${cluster.describeNode(leader)} answered ${errorFromCode(part.errorCode, 'ListOffsets').message}`);
        } else fail(key, errorFromCode(part.errorCode, `listOffsets of ${key}`));
      }
    }
    // Kafka's sanity check: the leader must answer every partition it was asked about.
    for (const p of sendable) {
      const key = topicPartitionKey(p.tp);
      if (pending.has(key) && !response.topics.some((t) => t.name === p.tp.topic && t.partitions.some((q) => q.partitionIndex === p.tp.partition))) {
        fail(key, errorFromCode(ErrorCode.UNKNOWN_SERVER_ERROR, `listOffsets of ${key}`, `the response from broker ${leader} did not contain a result for it`));
      }
    }
  } catch (error) {
    if (!isRetriable(error)) {
      for (const p of group) {
        const key = topicPartitionKey(p.tp);
        if (pending.has(key))
          fail(
            key,
            error instanceof KafkaError || error instanceof UnsupportedVersionError ? error : new KafkaError((error as Error).message, { cause: error }),
          );
      }
      return;
    }
    cluster.invalidateMetadata();
    noteProblem((error as Error).message);
  }
}
