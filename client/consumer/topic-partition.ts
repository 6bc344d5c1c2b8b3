/** A topic's partition, as Kafka's TopicPartition. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/** `topic-3`: Kafka's TopicPartition.toString, used as a map key and in messages. */
export function topicPartitionKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** Sorted by topic, then partition: the order Kafka's assignors and logs use. */
export function compareTopicPartitions(a: TopicPartition, b: TopicPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}
