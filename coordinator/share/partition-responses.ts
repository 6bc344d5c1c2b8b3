import { endpointFor, type ClusterView, type RequestContext, type SharePartitionRef } from '../broker-context.js';
import { ErrorCode } from './share-error.js';

/**
 * What the ShareFetch and ShareAcknowledge answers (coordinator/apis/78-share-fetch.ts,
 * 79-share-acknowledge.ts) share: partitions grouped by topic, CurrentLeader and
 * NodeEndpoints (KIP-951: a client told NOT_LEADER_OR_FOLLOWER learns the leader at once).
 */

/** Groups items by topic id, keeping first-seen order of topics and items. */
export function byTopic<T extends SharePartitionRef>(items: readonly T[]): { topicId: string; items: T[] }[] {
  const topics = new Map<string, T[]>();
  for (const item of items) {
    const list = topics.get(item.topicId);
    if (list === undefined) topics.set(item.topicId, [item]);
    else list.push(item);
  }
  return [...topics].map(([topicId, list]) => ({ topicId, items: list }));
}

/** CurrentLeader for a partition result: the real leader when this node is not it, else unknown (−1), as Kafka fills it only on errors. */
export function currentLeader(cluster: ClusterView, ref: SharePartitionRef, errorCode: number): { leaderId: number; leaderEpoch: number } {
  if (errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER) return { leaderId: -1, leaderEpoch: -1 };
  const topic = cluster.topicById(ref.topicId);
  return { leaderId: topic === undefined ? -1 : cluster.leaderOf(topic.name, ref.partition), leaderEpoch: 0 };
}

/** NodeEndpoints for every leader named in a CurrentLeader. */
export function nodeEndpoints(
  cluster: ClusterView,
  leaderIds: Iterable<number>,
  /** The request's listener decides the ports (a SASL_SSL client is sent SASL_SSL ports). */
  ctx: Pick<RequestContext, 'listener'>,
): { nodeId: number; host: string; port: number; rack: string | null }[] {
  const out = [];
  for (const id of new Set(leaderIds)) {
    const node = id < 0 ? undefined : cluster.node(id);
    if (node !== undefined) out.push({ nodeId: node.nodeId, ...endpointFor(node, ctx), rack: null });
  }
  return out;
}
