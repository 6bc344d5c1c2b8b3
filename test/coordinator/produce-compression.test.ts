/**
 * The broker's Produce validation for compressed batches (LogValidator's
 * checks): every codec decoded, corrupt and oversized payloads answered with
 * CORRUPT_MESSAGE while the broker goes on serving, zstd refused before
 * Produce v7, header checks, batches with non-sequential inner offsets
 * rebuilt, maxTimestamp set from the records, and batches served byte for
 * byte as stored.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import {
  COMPRESSION_TYPES,
  RECORD_BATCH_OVERHEAD,
  compress,
  crc32c,
  decodeRecordBatches,
  encodeRecordBatch,
  type CompressionType,
  type RecordInput,
} from '../../runtime/index.js';
import { TestClient, fetchAll, produce, startTestBroker } from './support/broker-harness.js';

const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
let dataDir: string;
let broker: Broker;
let c: TestClient;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-produce-compression-'));
  broker = await startTestBroker({ dataDir, topics: [...CODECS, 'bad', 'rebuild', 'old'].map((name) => ({ name, partitions: 1 })) });
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const now = BigInt(Date.now());
const records = (n: number): RecordInput[] =>
  Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`v${i}-${'x'.repeat(50)}`), timestamp: now + BigInt(i) }));

/** A batch of `count` records whose records section is `body` as `codec` declares it, with a good CRC. */
function batchWithBody(codec: CompressionType, body: Uint8Array, count: number): Buffer {
  const out = Buffer.concat([
    Buffer.from(encodeRecordBatch({ baseTimestamp: now, records: [{ value: Buffer.from('x') }] })).subarray(0, RECORD_BATCH_OVERHEAD),
    body,
  ]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(COMPRESSION_TYPES.indexOf(codec), 21);
  out.writeInt32BE(count - 1, 23);
  out.writeInt32BE(count, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

async function rawPartition(topic: string): Promise<Buffer> {
  const response = await c.call(
    1,
    {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 22,
      topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 22 })] })],
    },
    12,
  );
  return Buffer.from(response.responses[0].partitions[0].records);
}

describe('Produce with every codec', () => {
  it('accepts each codec, serves the batch byte for byte as sent (only the base offset and the leader epoch assigned), and its records decode', async () => {
    for (const codec of CODECS) {
      const sent = Buffer.from(encodeRecordBatch({ baseTimestamp: now, compression: codec, records: records(30) }));
      expect(await produce(c, codec, 0, sent)).toMatchObject({ errorCode: 0, baseOffset: 0n });
      const second = Buffer.from(encodeRecordBatch({ baseTimestamp: now, compression: codec, records: records(5) }));
      expect(await produce(c, codec, 0, second)).toMatchObject({ errorCode: 0, baseOffset: 30n });
      const served = await rawPartition(codec);
      // The batches' bytes are the sent ones but for the base offset (bytes 0-7) and the partition leader
      // epoch (bytes 12-15: -1 as sent, the leader's 0 as stored; outside the CRC).
      const asSent = (stored: Buffer, batch: Buffer) =>
        stored.subarray(8, 12).equals(batch.subarray(8, 12)) && stored.readInt32BE(12) === 0 && stored.subarray(16, batch.length).equals(batch.subarray(16));
      expect(served.readBigInt64BE(0)).toBe(0n);
      expect(asSent(served.subarray(0, sent.length), sent)).toBe(true);
      expect(asSent(served.subarray(sent.length), second)).toBe(true);
      expect(served.readBigInt64BE(sent.length)).toBe(30n);
      const fetched = await fetchAll(c, codec, 0, 'read_committed');
      expect(fetched.records.map((r) => r.offset)).toEqual(Array.from({ length: 35 }, (_, i) => BigInt(i)));
    }
  });
});

describe('Produce refuses what Kafka refuses, and goes on serving', () => {
  it('corrupt compressed payloads (valid CRC) get CORRUPT_MESSAGE naming the codec', async () => {
    for (const codec of CODECS) {
      const response = await produce(c, 'bad', 0, batchWithBody(codec, Buffer.from('these bytes are not compressed'), 1));
      expect(response.errorCode, codec).toBe(ErrorCode.CORRUPT_MESSAGE);
      expect(response.errorMessage, codec).toMatch(new RegExp(`^${codec} batch: `));
    }
    // A valid frame of records whose count is off: the records, not the codec, are at fault.
    const body = compress('lz4', Buffer.from(encodeRecordBatch({ records: records(3) })).subarray(RECORD_BATCH_OVERHEAD));
    expect((await produce(c, 'bad', 0, batchWithBody('lz4', body, 2))).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    expect((await fetchAll(c, 'bad', 0, 'read_uncommitted')).records).toEqual([]);
  });

  it('payloads that would inflate past the 64 MiB limit are refused without inflating them (CORRUPT_MESSAGE)', async () => {
    // zstd: 600 RLE blocks of 128 KiB (75 MiB) in 2.4 KB.
    const rle = Buffer.alloc(4);
    rle.writeUIntLE(((128 * 1024) << 3) | (1 << 1), 0, 3);
    rle[3] = 0x41;
    const last = Buffer.from(rle);
    last[0]! |= 1;
    const zstdBomb = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (27 - 10) << 3]), ...Array.from({ length: 599 }, () => rle), last]);
    // lz4: 17 blocks of a 4 MiB frame, each of the 16,449 bytes that may inflate to 4 MiB (255 per byte): 68 MiB at most.
    const lz4Header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73]);
    const blockSize = Math.ceil((4 * 1024 * 1024) / 255);
    const block = Buffer.alloc(4 + blockSize, 0x10);
    block.writeUInt32LE(blockSize, 0);
    const lz4Bomb = Buffer.concat([lz4Header, ...Array.from({ length: 17 }, () => block), Buffer.alloc(4)]);
    // snappy: a raw block declaring 100 MiB.
    const snappyBomb = Buffer.from([0x80, 0x80, 0x80, 0x32, 0x00]);
    for (const [codec, bomb] of [
      ['zstd', zstdBomb],
      ['lz4', lz4Bomb],
      ['snappy', snappyBomb],
    ] as const) {
      const heapBefore = process.memoryUsage().arrayBuffers;
      const response = await produce(c, 'bad', 0, batchWithBody(codec, bomb, 1));
      expect(response.errorCode, codec).toBe(ErrorCode.CORRUPT_MESSAGE);
      // Over the limit, or (snappy) more than the block's bytes can inflate to: refused before inflating either way.
      expect(response.errorMessage, codec).toMatch(/inflate to (\d+ bytes, )?more than|inflate to at most/);
      expect(process.memoryUsage().arrayBuffers - heapBefore, codec).toBeLessThan(32 * 1024 * 1024);
    }
    expect((await produce(c, 'bad', 0, encodeRecordBatch({ baseTimestamp: now, compression: 'zstd', records: records(1) }))).errorCode).toBe(0);
  });

  it('zstd before Produce v7 is UNSUPPORTED_COMPRESSION_TYPE; LogAppendTime from a producer is INVALID_TIMESTAMP; offset range and count must agree', async () => {
    const zstd = encodeRecordBatch({ baseTimestamp: now, compression: 'zstd', records: records(2) });
    const v6 = await c.call(
      0,
      { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'old', partitionData: [{ index: 0, records: zstd }] }] },
      6,
    );
    expect(v6.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    const lz4v6 = await c.call(
      0,
      {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [
          { name: 'old', partitionData: [{ index: 0, records: encodeRecordBatch({ baseTimestamp: now, compression: 'lz4', records: records(2) }) }] },
        ],
      },
      6,
    );
    expect(lz4v6.responses[0].partitionResponses[0].errorCode).toBe(0);

    const logAppend = encodeRecordBatch({ timestampType: 'LogAppendTime', maxTimestamp: now, compression: 'snappy', records: records(2) });
    expect((await produce(c, 'old', 0, logAppend)).errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    const gap = encodeRecordBatch({ baseTimestamp: now, compression: 'gzip', lastOffsetDelta: 5, records: records(2) });
    expect((await produce(c, 'old', 0, gap)).errorCode).toBe(ErrorCode.INVALID_RECORD);
    const noSequence = encodeRecordBatch({ baseTimestamp: now, producerId: 3n, producerEpoch: 0, records: records(1) });
    expect((await produce(c, 'old', 0, noSequence)).errorCode).toBe(ErrorCode.INVALID_RECORD);
  });
});

describe('batches the broker rebuilds or stamps', () => {
  it('non-sequential inner offsets are renumbered 0..n-1 (Kafka rewrites rather than refuses); a wrong maxTimestamp is set from the records', async () => {
    // Inner offsets 0, 2, 3 with lastOffsetDelta 2 and count 3: count and range agree, the offsets do not.
    const skewed = Buffer.from(
      encodeRecordBatch({
        baseTimestamp: now,
        compression: 'lz4',
        records: [
          { offset: 0n, value: Buffer.from('a') },
          { offset: 1n, value: Buffer.from('b') },
          { offset: 3n, value: Buffer.from('c') },
        ],
      }),
    );
    // Make it claim lastOffsetDelta 2 (it says 3, the last record's delta) so that count and range agree.
    skewed.writeInt32BE(2, 23);
    skewed.writeUInt32BE(crc32c(skewed.subarray(21)), 17);
    expect((await produce(c, 'rebuild', 0, skewed)).errorCode).toBe(0);
    const [rebuilt] = decodeRecordBatches(await rawPartition('rebuild')).batches;
    expect(rebuilt!.compression).toBe('lz4');
    expect(rebuilt!.records.map((r) => [r.offset, Buffer.from(r.value!).toString()])).toEqual([
      [0n, 'a'],
      [1n, 'b'],
      [2n, 'c'],
    ]);

    const stale = Buffer.from(encodeRecordBatch({ baseTimestamp: now, compression: 'snappy', records: records(3) }));
    stale.writeBigInt64BE(now + 1_000_000n, 35); // maxTimestamp, unlike its records'
    stale.writeUInt32BE(crc32c(stale.subarray(21)), 17);
    expect((await produce(c, 'rebuild', 0, stale)).errorCode).toBe(0);
    const stamped = decodeRecordBatches(await rawPartition('rebuild')).batches[1]!;
    expect(stamped.maxTimestamp).toBe(now + 2n);
    expect(stamped.compression).toBe('snappy');
  });
});

describe("a topic's compression.type set at run time", () => {
  it('CreateTopics and IncrementalAlterConfigs decide the codec batches are stored in, and a restart keeps it', async () => {
    const created = await c.call(
      19,
      {
        topics: [{ name: 'runtime-codec', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [{ name: 'compression.type', value: 'gzip' }] }],
        timeoutMs: 5000,
        validateOnly: false,
      },
      7,
    );
    expect(created.topics[0].errorCode).toBe(0);
    expect((await produce(c, 'runtime-codec', 0, encodeRecordBatch({ baseTimestamp: now, records: records(3) }))).errorCode).toBe(0);

    const altered = await c.call(
      44,
      {
        resources: [
          {
            resourceType: 2,
            resourceName: 'runtime-codec',
            configs: [
              { name: 'compression.type', configOperation: 0, value: 'zstd' },
              { name: 'compression.zstd.level', configOperation: 0, value: '9' },
            ],
          },
        ],
        validateOnly: false,
      },
      1,
    );
    expect(altered.responses[0].errorCode).toBe(0);
    expect((await produce(c, 'runtime-codec', 0, encodeRecordBatch({ baseTimestamp: now, compression: 'snappy', records: records(2) }))).errorCode).toBe(0);

    const stored = decodeRecordBatches(await rawPartition('runtime-codec')).batches;
    expect(stored.map((b) => b.compression)).toEqual(['gzip', 'zstd']);
    expect(stored.flatMap((b) => b.records.map((r) => Buffer.from(r.value!).toString()))).toEqual(
      [...records(3), ...records(2)].map((r) => Buffer.from(r.value!).toString()),
    );

    // Restart on the same data directory: the stored configuration still decides.
    await c.close();
    await broker.close();
    broker = await startTestBroker({ dataDir, topics: [...CODECS, 'bad', 'rebuild', 'old'].map((name) => ({ name, partitions: 1 })) });
    c = await TestClient.connect(broker.port);
    expect((await produce(c, 'runtime-codec', 0, encodeRecordBatch({ baseTimestamp: now, compression: 'lz4', records: records(1) }))).errorCode).toBe(0);
    expect(decodeRecordBatches(await rawPartition('runtime-codec')).batches.map((b) => b.compression)).toEqual(['gzip', 'zstd', 'zstd']);
  });
});
