/** Resolves a request's topic (by name before the topic-id versions, by id after) and checks the partition exists. */
import type { TopicInfo } from './broker-context.js';
import type { Cluster } from './cluster.js';
import { ErrorCode } from './errors.js';

export type ResolvedTopic = { info: TopicInfo } | { error: number; message: string };

export function resolveTopic(cluster: Cluster, ref: { name?: string; topicId?: string }, partition: number): ResolvedTopic {
  const byId = ref.name === undefined;
  const info = byId ? cluster.topicById(ref.topicId!) : cluster.topicByName(ref.name!);
  if (info === undefined) {
    return byId
      ? { error: ErrorCode.UNKNOWN_TOPIC_ID, message: `unknown topic id ${ref.topicId}` }
      : { error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `unknown topic ${ref.name}` };
  }
  if (partition < 0 || partition >= info.partitions) {
    return { error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `${info.name} has no partition ${partition} (it has ${info.partitions})` };
  }
  return { info };
}
