/**
 * Kafka's RangeAssignor ('range'): topic by topic, the members subscribed to
 * it in order (static members by group.instance.id first, then the rest by
 * member id: AbstractPartitionAssignor.MemberInfo.compareTo) each get a
 * consecutive range of its partitions; the first `partitions % members` get
 * one more. Eager only, as Kafka's.
 * Not done: the rack-aware variant (RangeAssignor.assignWithRackMatching, when
 * members and partitions both know racks); every member gets its plain range.
 */
import type { TopicPartition } from '../topic-partition.js';
import type { MemberAssignment, MemberSubscription, PartitionAssignor, RebalanceProtocol } from './assignor.js';

/** Kafka's MemberInfo order. */
function compareMembers(a: [string, MemberSubscription], b: [string, MemberSubscription]): number {
  const [aId, aSub] = a;
  const [bId, bSub] = b;
  if (aSub.groupInstanceId !== null && bSub.groupInstanceId !== null)
    return aSub.groupInstanceId < bSub.groupInstanceId ? -1 : aSub.groupInstanceId > bSub.groupInstanceId ? 1 : 0;
  if (aSub.groupInstanceId !== null) return -1;
  if (bSub.groupInstanceId !== null) return 1;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

export class RangeAssignor implements PartitionAssignor {
  readonly name = 'range';
  readonly supportedProtocols: readonly RebalanceProtocol[] = ['EAGER'];

  subscriptionUserData(): Uint8Array | null {
    return null;
  }

  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    const result = new Map<string, MemberAssignment>();
    for (const memberId of subscriptions.keys()) result.set(memberId, { partitions: [], userData: null });
    const topics = [...new Set([...subscriptions.values()].flatMap((s) => s.topics))].sort();
    for (const topic of topics) {
      const count = partitionsPerTopic.get(topic);
      if (count === undefined) continue;
      const members = [...subscriptions].filter(([, s]) => s.topics.includes(topic)).sort(compareMembers);
      const perMember = Math.floor(count / members.length);
      const extra = count % members.length;
      members.forEach(([memberId], i) => {
        const start = perMember * i + Math.min(i, extra);
        const length = perMember + (i < extra ? 1 : 0);
        const partitions: TopicPartition[] = [];
        for (let p = start; p < start + length; p++) partitions.push({ topic, partition: p });
        result.get(memberId)!.partitions.push(...partitions);
      });
    }
    return result;
  }
}
