/**
 * Kafka's default partitioning: murmur2 of the serialized key for keyed
 * records (exactly Utils.murmur2 + toPositive, so keys land where a Java
 * producer puts them), and a sticky partition for records without a key
 * (KIP-480/KIP-794: stay on one partition until about batch.size bytes went to
 * it, then move on round-robin).
 */

/** Kafka's Utils.murmur2: MurmurHash2, seed 0x9747b28c, as a signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  const r = 24;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  switch (length & 3) {
    case 3:
      h ^= data[tail + 2]! << 16;
    // falls through
    case 2:
      h ^= data[tail + 1]! << 8;
    // falls through
    case 1:
      h ^= data[tail]!;
      h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive. */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition Kafka's default partitioner picks for a key. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  return toPositive(murmur2(key)) % numPartitions;
}

/** Picks a partition for a record: (topic, key, partition count) → partition. */
export type Partitioner = (topic: string, key: Uint8Array | null, numPartitions: number) => number;

/**
 * The default partitioner: murmur2 for keyed records; for keyless ones a
 * sticky partition per topic that moves on (round-robin) after `stickyBytes`
 * bytes or when the producer reports a batch was closed.
 */
export class DefaultPartitioner {
  private readonly sticky = new Map<string, { partition: number; bytes: number }>();
  private next = Math.floor(Math.random() * 1024);

  constructor(private readonly stickyBytes = 16384) {}

  partition(topic: string, key: Uint8Array | null, numPartitions: number, recordBytes = 0): number {
    if (key !== null) return partitionForKey(key, numPartitions);
    let state = this.sticky.get(topic);
    if (!state || state.partition >= numPartitions || state.bytes >= this.stickyBytes) {
      state = { partition: this.next++ % numPartitions, bytes: 0 };
      this.sticky.set(topic, state);
    }
    state.bytes += recordBytes;
    return state.partition;
  }

  /** Called when the batch of the sticky partition was sent: the next keyless record moves on. */
  onBatchClosed(topic: string, partition: number): void {
    const state = this.sticky.get(topic);
    if (state && state.partition === partition) state.bytes = this.stickyBytes;
  }
}

/** Round-robin over all partitions, one record at a time (Kafka's RoundRobinPartitioner). */
export function roundRobinPartitioner(): Partitioner {
  const counters = new Map<string, number>();
  return (topic, _key, numPartitions) => {
    const n = counters.get(topic) ?? 0;
    counters.set(topic, n + 1);
    return n % numPartitions;
  };
}
