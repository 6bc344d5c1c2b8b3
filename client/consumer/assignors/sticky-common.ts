/** What the sticky assignors' builders share: the member data, the default generation, partition-list helpers. */
import { topicPartitionKey, type TopicPartition } from '../topic-partition.js';

/** Kafka's AbstractStickyAssignor.DEFAULT_GENERATION. */
export const DEFAULT_GENERATION = -1;

/** What a member's subscription says it owns (AbstractStickyAssignor.MemberData). */
export interface StickyMemberData {
  partitions: readonly TopicPartition[];
  /** The generation the partitions belong to, null when the member did not say. */
  generation: number | null;
}

export interface StickyMember {
  topics: readonly string[];
  data: StickyMemberData;
}

export function removePartition(list: TopicPartition[], key: string): void {
  const i = list.findIndex((tp) => topicPartitionKey(tp) === key);
  if (i >= 0) list.splice(i, 1);
}

/** Every partition of the topics, by topic in `topics`' order, then partition. */
export function allTopicPartitions(partitionsPerTopic: ReadonlyMap<string, number>, topics: readonly string[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const topic of topics) for (let partition = 0; partition < partitionsPerTopic.get(topic)!; partition++) out.push({ topic, partition });
  return out;
}
