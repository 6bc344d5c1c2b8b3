/** What poll() returns (Kafka's ConsumerRecord / ConsumerRecords). */
import type { RecordHeader } from '../../runtime/record-batch.js';

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: bigint;
  /** CreateTime, or the broker's append time in a LogAppendTime topic. */
  timestamp: bigint;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  /** The partition leader epoch of the record's batch, or null when the batch has none (-1). */
  leaderEpoch: number | null;
}

/** Kafka's ConsumerRecords: the records of one poll, by partition and in order. */
export class ConsumerRecords implements Iterable<ConsumerRecord> {
  constructor(private readonly list: readonly ConsumerRecord[]) {}

  get count(): number {
    return this.list.length;
  }

  isEmpty(): boolean {
    return this.list.length === 0;
  }

  records(topic?: string, partition?: number): ConsumerRecord[] {
    return this.list.filter((r) => (topic === undefined || r.topic === topic) && (partition === undefined || r.partition === partition));
  }

  partitions(): Array<{ topic: string; partition: number }> {
    const seen = new Map<string, { topic: string; partition: number }>();
    for (const r of this.list) seen.set(`${r.topic}-${r.partition}`, { topic: r.topic, partition: r.partition });
    return [...seen.values()];
  }

  [Symbol.iterator](): Iterator<ConsumerRecord> {
    return this.list[Symbol.iterator]();
  }
}
