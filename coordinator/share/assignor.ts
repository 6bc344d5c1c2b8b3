/**
 * Server-side assignment of a share group (KIP-932's simple assignor, in
 * spirit): each subscribed topic's partitions are spread over the members
 * subscribed to it. With at least as many partitions as members, partition p
 * goes to member p mod n (members sorted by id, so every node computes the
 * same); with more members than partitions, every member gets one partition,
 * member i partition i mod p, so that partitions are shared (share groups
 * allow it, and an idle member would be wasted). Deterministic and stateless:
 * no stickiness, since share groups have no revocation handshake to protect.
 */

export interface AssignorMember {
  memberId: string;
  subscribedTopicNames: readonly string[];
}

export interface AssignorTopic {
  topicId: string;
  partitions: number;
}

/** memberId → topicId → sorted partitions. Members without partitions get an empty map. */
export type TargetAssignment = Map<string, Map<string, number[]>>;

export function assignPartitions(members: readonly AssignorMember[], topics: ReadonlyMap<string, AssignorTopic>): TargetAssignment {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  const target: TargetAssignment = new Map(sorted.map((m) => [m.memberId, new Map<string, number[]>()]));
  const topicNames = [...new Set(sorted.flatMap((m) => m.subscribedTopicNames))].sort();
  for (const name of topicNames) {
    const topic = topics.get(name);
    if (topic === undefined || topic.partitions <= 0) continue;
    const subscribers = sorted.filter((m) => m.subscribedTopicNames.includes(name));
    const give = (member: AssignorMember, partition: number): void => {
      const byTopic = target.get(member.memberId)!;
      const list = byTopic.get(topic.topicId) ?? [];
      list.push(partition);
      byTopic.set(topic.topicId, list);
    };
    if (topic.partitions >= subscribers.length) {
      for (let p = 0; p < topic.partitions; p++) give(subscribers[p % subscribers.length]!, p);
    } else {
      subscribers.forEach((member, i) => give(member, i % topic.partitions));
    }
  }
  for (const byTopic of target.values()) for (const list of byTopic.values()) list.sort((a, b) => a - b);
  return target;
}
