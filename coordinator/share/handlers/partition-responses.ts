import { endpointFor, type RequestContext } from '../../broker-context.js';
import type { ShareRuntime } from '../share-runtime.js';
import { ErrorCode } from '../error-codes.js';
import type { PartitionRef } from '../share-partitions.js';

/** Helpers the ShareFetch and ShareAcknowledge handlers share: grouping by topic, CurrentLeader and NodeEndpoints. */

export function refKey(ref: PartitionRef): string {
  return `${ref.topicId}:${ref.partition}`;
}

/** Groups items by topic id, keeping first-seen order of topics and items. */
export function byTopic<T extends PartitionRef>(items: readonly T[]): { topicId: string; items: T[] }[] {
  const topics = new Map<string, T[]>();
  for (const item of items) {
    const list = topics.get(item.topicId);
    if (list === undefined) topics.set(item.topicId, [item]);
    else list.push(item);
  }
  return [...topics].map(([topicId, list]) => ({ topicId, items: list }));
}

/** CurrentLeader for a partition result: the real leader when this node is not it, else unknown (−1), as Kafka fills it only on errors. */
export function currentLeader(rt: ShareRuntime, ref: PartitionRef, errorCode: number): { leaderId: number; leaderEpoch: number } {
  if (errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER) return { leaderId: -1, leaderEpoch: -1 };
  return { leaderId: rt.partitions.leaderOf(ref), leaderEpoch: 0 };
}

/** NodeEndpoints for every leader named in a CurrentLeader. */
export function nodeEndpoints(
  rt: ShareRuntime,
  leaderIds: Iterable<number>,
  /** The request's listener decides the ports (a SASL_SSL client is sent SASL_SSL ports). */
  ctx: Pick<RequestContext, 'listener'>,
): { nodeId: number; host: string; port: number; rack: string | null }[] {
  const out = [];
  for (const id of new Set(leaderIds)) {
    const node = id < 0 ? undefined : rt.cluster.node(id);
    if (node !== undefined) out.push({ nodeId: node.nodeId, ...endpointFor(node, ctx), rack: null });
  }
  return out;
}
