/**
 * Reads a partition the way a Kafka consumer does, with kipgen's own codecs:
 * FetchRequest / FetchResponse over connection/connection.ts, record batches
 * parsed by runtime/record-batch.ts, and — for read_committed — the records of
 * aborted transactions dropped with the AbortedTransactions list, as Kafka's
 * consumer (Fetcher/CompletedFetch) does.
 */
import { FetchRequest, FetchResponse } from '../../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../../generated/FetchRequest.js';
import { KafkaConnection } from '../../../connection/connection.js';
import { decodeRecordBatches, readControlRecord, type CompressionType, type RecordBatch } from '../../../runtime/index.js';

export interface ConsumedRecord {
  offset: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  producerId: bigint;
  transactional: boolean;
}

export interface PartitionRead {
  records: ConsumedRecord[];
  /** Transaction markers seen (read_committed shows those below the LSO). */
  markers: { offset: bigint; producerId: bigint; type: string }[];
  highWatermark: bigint;
  lastStableOffset: bigint;
  /** Every AbortedTransactions entry the broker sent. */
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[];
  /** Fetch requests it took. */
  fetches: number;
  /** Every batch read (control batches included), as the broker served it: its codec and its bytes. */
  batches: { compression: CompressionType; isControl: boolean; bytes: Buffer }[];
}

/** FetchRequest v12: the last version naming topics (v13+ use ids), flexible. */
const FETCH_VERSION = 12;

/**
 * Fetches `topic`-`partition` from offset 0 to the end (the HW, or the LSO for
 * read_committed) over a fresh connection, and filters as a consumer does.
 */
export async function readPartition(port: number, topic: string, partition: number, isolation: 'read_committed' | 'read_uncommitted'): Promise<PartitionRead> {
  // EndTxn returns once PREPARE_* is durable; markers follow. Wait (briefly) for the partition to be stable.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const read = await readOnce(port, topic, partition, isolation);
    if (read.lastStableOffset === read.highWatermark || Date.now() > deadline) return read;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readOnce(port: number, topic: string, partition: number, isolation: 'read_committed' | 'read_uncommitted'): Promise<PartitionRead> {
  const connection = await KafkaConnection.connect({ host: '127.0.0.1', port, clientId: 'kipgen-interop-reader', requestTimeoutMs: 10_000 });
  try {
    const batches: RecordBatch[] = [];
    const served: PartitionRead['batches'] = [];
    const aborted: { producerId: bigint; firstOffset: bigint }[] = [];
    let offset = 0n;
    let fetches = 0;
    let highWatermark = -1n;
    let lastStableOffset = -1n;
    for (;;) {
      fetches++;
      const request = FetchRequest.create({
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: isolation === 'read_committed' ? 1 : 0,
        topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition, fetchOffset: offset, partitionMaxBytes: 1 << 20 })] })],
      });
      const response = await connection.send(FetchRequest, request, FETCH_VERSION, FetchResponse);
      if (response.errorCode !== 0) throw new Error(`Fetch ${topic}-${partition}: top-level error ${response.errorCode}`);
      const p = response.responses[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`Fetch ${topic}-${partition} at ${offset}: error ${p.errorCode}`);
      highWatermark = p.highWatermark;
      lastStableOffset = p.lastStableOffset;
      for (const a of p.abortedTransactions ?? []) {
        if (!aborted.some((b) => b.producerId === a.producerId && b.firstOffset === a.firstOffset))
          aborted.push({ producerId: a.producerId, firstOffset: a.firstOffset });
      }
      const decoded = p.records && p.records.length > 0 ? decodeRecordBatches(p.records).batches : [];
      let position = 0;
      for (const b of decoded) {
        if (b.lastOffset >= offset) {
          batches.push(b);
          served.push({ compression: b.compression, isControl: b.isControl, bytes: Buffer.from(p.records!.subarray(position, position + b.sizeInBytes)) });
        }
        position += b.sizeInBytes;
      }
      const end = isolation === 'read_committed' ? lastStableOffset : highWatermark;
      if (decoded.length === 0) break;
      offset = decoded[decoded.length - 1]!.lastOffset + 1n;
      if (offset >= end) break;
      if (fetches > 10_000) throw new Error('fetch loop does not advance');
    }
    return { ...filter(batches, aborted, isolation), highWatermark, lastStableOffset, abortedTransactions: aborted, fetches, batches: served };
  } finally {
    await connection.close();
  }
}

function filter(batches: RecordBatch[], aborted: { producerId: bigint; firstOffset: bigint }[], isolation: string): Pick<PartitionRead, 'records' | 'markers'> {
  const pending = [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const skipping = new Set<bigint>();
  const records: ConsumedRecord[] = [];
  const markers: PartitionRead['markers'] = [];
  for (const b of batches) {
    if (isolation === 'read_committed') {
      while (pending.length > 0 && pending[0]!.firstOffset <= b.lastOffset) skipping.add(pending.shift()!.producerId);
    }
    if (b.isControl) {
      const control = readControlRecord(b.records[0]!);
      markers.push({ offset: b.baseOffset, producerId: b.producerId, type: control.type });
      if (control.type === 'ABORT') skipping.delete(b.producerId);
      continue;
    }
    if (isolation === 'read_committed' && b.isTransactional && skipping.has(b.producerId)) continue;
    for (const r of b.records) {
      records.push({
        offset: r.offset,
        key: r.key === null ? null : Buffer.from(r.key),
        value: r.value === null ? null : Buffer.from(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value) })),
        producerId: b.producerId,
        transactional: b.isTransactional,
      });
    }
  }
  return { records, markers };
}
