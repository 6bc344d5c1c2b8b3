/**
 * TxnOffsetCommit and OffsetFetch, served by the node leading the group's
 * `__consumer_offsets` partition (NOT_COORDINATOR elsewhere).
 */
import { OffsetFetchResponse, TxnOffsetCommitResponse } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode, errorCodeOf, BrokerError } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { TransactionVerifier } from '../txn/verifier.js';
import type { OffsetStore, OffsetToCommit } from './offset-store.js';

export function txnOffsetCommitHandler(
  cluster: Cluster,
  logs: LogManager,
  store: OffsetStore,
  verifier: TransactionVerifier,
  log: (line: string) => void,
): Handler {
  return async (req, ctx) => {
    const v = ctx.apiVersion;
    const byId = v >= 6;
    // Resolve every topic first: an unknown one fails only its own partitions.
    const topicNames = (req.topics as any[]).map((t) => (byId ? cluster.topicById(t.topicId)?.name : cluster.topicByName(t.name)?.name));
    const respond = (code: (topicIndex: number) => number) =>
      TxnOffsetCommitResponse.create({
        topics: (req.topics as any[]).map((t, i) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p: any) => ({ partitionIndex: p.partitionIndex, errorCode: code(i) })),
        })),
      });
    let groupError: number = ErrorCode.NONE;
    if (req.groupId === '') groupError = ErrorCode.INVALID_GROUP_ID;
    else if (!store.isCoordinatorFor(req.groupId)) groupError = ErrorCode.NOT_COORDINATOR;
    if (groupError !== ErrorCode.NONE) return respond(() => groupError);
    const unknown = byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;

    const offsets: OffsetToCommit[] = [];
    (req.topics as any[]).forEach((t, i) => {
      const name = topicNames[i];
      if (name === undefined) return;
      for (const p of t.partitions) {
        offsets.push({ topic: name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
      }
    });
    let code: number = ErrorCode.NONE;
    if (offsets.length > 0) {
      try {
        const offsetsLog = logs.get(CONSUMER_OFFSETS_TOPIC, cluster.offsetsPartitionFor(req.groupId))!;
        await verifier.verifyWrite(offsetsLog, req.transactionalId, req.producerId, req.producerEpoch, v >= 5);
        await store.commitTransactional(req.groupId, req.producerId, req.producerEpoch, offsets);
      } catch (error) {
        if (!(error instanceof BrokerError)) log(`TxnOffsetCommit for group ${req.groupId} failed: ${(error as Error).stack}`);
        code = errorCodeOf(error);
      }
    }
    return respond((i) => (topicNames[i] === undefined ? unknown : code));
  };
}

export function offsetFetchHandler(cluster: Cluster, store: OffsetStore): Handler {
  /** One group's answer in the v8+ shape (converted for older versions below). */
  const fetchGroup = (groupId: string, topics: { name?: string; topicId?: string; partitionIndexes: number[] }[] | null, requireStable: boolean, byId: boolean) => {
    if (!store.isCoordinatorFor(groupId)) return { groupId, topics: [], errorCode: ErrorCode.NOT_COORDINATOR };
    const wanted =
      topics === null
        ? null
        : topics.map((t) => ({ topic: byId ? (cluster.topicById(t.topicId!)?.name ?? `\u0000${t.topicId}`) : t.name!, partitions: t.partitionIndexes }));
    const found = store.fetch(groupId, wanted);
    const out = [];
    for (const [topic, partitions] of found) {
      const unknownId = topic.startsWith('\u0000');
      out.push({
        name: unknownId ? '' : topic,
        topicId: unknownId ? topic.slice(1) : (cluster.topicByName(topic)?.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA'),
        partitions: [...partitions].map(([partitionIndex, value]) => ({
          partitionIndex,
          committedOffset: value === null || (value.unstable && requireStable) ? -1n : value.offset,
          committedLeaderEpoch: value?.leaderEpoch ?? -1,
          metadata: value?.metadata ?? '',
          errorCode: unknownId ? ErrorCode.UNKNOWN_TOPIC_ID : value?.unstable && requireStable ? ErrorCode.UNSTABLE_OFFSET_COMMIT : ErrorCode.NONE,
        })),
      });
    }
    return { groupId, topics: out, errorCode: ErrorCode.NONE };
  };

  return async (req, ctx) => {
    const v = ctx.apiVersion;
    const requireStable = v >= 7 && req.requireStable === true;
    if (v >= 8) {
      return OffsetFetchResponse.create({ groups: (req.groups as any[]).map((g) => fetchGroup(g.groupId, g.topics, requireStable, v >= 10)) });
    }
    const group = fetchGroup(req.groupId, req.topics, requireStable, false);
    const topics =
      v === 1 && group.errorCode !== ErrorCode.NONE
        ? // v1 has no top-level error: report it on every requested partition.
          (req.topics ?? []).map((t: any) => ({
            name: t.name,
            partitions: t.partitionIndexes.map((p: number) => ({ partitionIndex: p, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: group.errorCode })),
          }))
        : group.topics.map((t) => ({ name: t.name, partitions: t.partitions }));
    return OffsetFetchResponse.create({ topics, errorCode: v >= 2 ? group.errorCode : ErrorCode.NONE });
  };
}
