/**
 * The partitions of a classic member's assignment: the consumer protocol's
 * ConsumerProtocolAssignment bytes that SyncGroup hands out and DescribeGroups
 * returns (Kafka's ConsumerProtocol.deserializeAssignment). Every version
 * starts with the int16 version and the assigned topics, each a string and
 * an int32 array of partitions; the user data after them is not needed here.
 */
import { Reader } from '../../runtime/index.js';
import { KafkaError } from '../errors.js';
import type { TopicPartition } from '../consumer/topic-partition.js';

export function assignedPartitions(bytes: Uint8Array, where: string): TopicPartition[] {
  if (bytes.length === 0) return [];
  try {
    const reader = new Reader(bytes);
    if (reader.int16() < 0) throw new Error('negative version');
    const topics = reader.int32();
    const out: TopicPartition[] = [];
    for (let i = 0; i < topics; i++) {
      const topic = reader.string(false);
      const partitions = reader.int32();
      for (let j = 0; j < partitions; j++) out.push({ topic, partition: reader.int32() });
    }
    return out;
  } catch (error) {
    throw new KafkaError(`${where}: the member's assignment is not a consumer protocol Assignment (${(error as Error).message})`, { cause: error });
  }
}
