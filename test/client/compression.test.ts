/**
 * Compression end to end against a real kipgen broker (in this process, over
 * TCP): the producer's compressionType for every codec, stored and served
 * unchanged and read back by a read_committed reader; a topic whose
 * compression.type makes the broker recompress; and a share group acquiring
 * and acknowledging (accept, release, reject) records inside compressed batches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, type ShareConsumerRecord } from '../../client/index.js';
import { ConfigError } from '../../client/errors.js';
import type { TopicConfig } from '../../coordinator/config.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import { decodeRecordBatches, type CompressionType, type RecordBatch } from '../../runtime/index.js';
import { TestClient } from '../coordinator/support/broker-harness.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';

const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
const quiet = { logger: null, metricsRegistry: null } as const;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(topics: TopicConfig[], shareGroup = {}): Promise<TestCluster> {
  const c = await startCluster({ config: { topics, shareGroup: { heartbeatIntervalMs: 100, ...shareGroup } } });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, extra: Record<string, unknown>): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 20, maxBlockMs: 5_000, ...quiet, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

/** The raw batches of partition 0 as the broker serves them to Fetch. */
async function servedBatches(c: TestCluster, topic: string): Promise<RecordBatch[]> {
  const client = await TestClient.connect(c.brokers[0]!.port);
  try {
    const response = await client.call(
      1,
      {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 22,
        isolationLevel: 1,
        topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 22 })] })],
      },
      12,
    );
    return decodeRecordBatches(response.responses[0].partitions[0].records).batches;
  } finally {
    await client.close();
  }
}

const value = (i: number) => `record ${i} ${'payload that compresses well '.repeat(8)}`;

describe('the producer’s compressionType', () => {
  it('every codec: one compressed batch per send burst, stored and served as sent, read back by a read_committed reader', async () => {
    const c = await cluster(CODECS.map((codec) => ({ name: `t-${codec}`, partitions: 1 })));
    for (const codec of CODECS) {
      const levels = codec === 'gzip' ? { compressionLevel: 9 } : codec === 'zstd' ? { compressionLevel: 10 } : {};
      const p = producer(c, { compressionType: codec, transactionalId: `tx-${codec}`, ...levels });
      await p.initTransactions();
      p.beginTransaction();
      await Promise.all(Array.from({ length: 20 }, (_, i) => p.send({ topic: `t-${codec}`, partition: 0, key: `k${i}`, value: value(i) })));
      await p.commitTransaction();

      expect(await readCommitted(c.bootstrap, `t-${codec}`)).toEqual(Array.from({ length: 20 }, (_, i) => value(i)));
      const data = (await servedBatches(c, `t-${codec}`)).filter((b) => !b.isControl);
      expect(data.length).toBeGreaterThan(0);
      expect(data.every((b) => b.compression === codec && b.isTransactional)).toBe(true);
      expect(data.flatMap((b) => b.records.map((r) => r.offset))).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i)));
      // Compressed: the batches are smaller than the values alone.
      const wire = data.reduce((n, b) => n + b.sizeInBytes, 0);
      expect(wire).toBeLessThan(20 * value(0).length);
    }
  });

  it('refuses an unknown codec or a level the codec does not take, at construction', () => {
    expect(() => new KafkaProducer({ bootstrapServers: '127.0.0.1:1', compressionType: 'brotli' as CompressionType, ...quiet })).toThrow(
      new ConfigError('compressionType must be one of none, gzip, snappy, lz4, zstd; got brotli'),
    );
    expect(() => new KafkaProducer({ bootstrapServers: '127.0.0.1:1', compressionType: 'lz4', compressionLevel: 9, ...quiet })).toThrow(
      /compressionType lz4 level 9: compression lz4 takes no level/,
    );
    expect(() => new KafkaProducer({ bootstrapServers: '127.0.0.1:1', compressionType: 'zstd', compressionLevel: 40, ...quiet })).toThrow(
      /zstd level must be an integer in \[-131072, 22\], got 40/,
    );
  });
});

describe('the topic’s compression.type', () => {
  it('the broker recompresses into the topic’s codec (and to none for uncompressed), keeping records and producer fields', async () => {
    const c = await cluster([
      { name: 'to-zstd', partitions: 1, compressionType: 'zstd', compressionLevel: 5 },
      { name: 'to-none', partitions: 1, compressionType: 'uncompressed' },
      { name: 'as-sent', partitions: 1, compressionType: 'producer' },
    ]);
    const p = producer(c, { compressionType: 'gzip' });
    for (const topic of ['to-zstd', 'to-none', 'as-sent']) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => p.send({ topic, partition: 0, value: value(i) })));
    }
    const expected = Array.from({ length: 10 }, (_, i) => value(i));
    for (const [topic, codec] of [
      ['to-zstd', 'zstd'],
      ['to-none', 'none'],
      ['as-sent', 'gzip'],
    ] as const) {
      expect(await readCommitted(c.bootstrap, topic), topic).toEqual(expected);
      const batches = await servedBatches(c, topic);
      expect(
        batches.map((b) => b.compression),
        topic,
      ).toEqual(batches.map(() => codec));
      // Idempotent producer fields survive the rebuild.
      expect(
        batches.every((b) => b.producerId >= 0n && b.baseSequence >= 0),
        topic,
      ).toBe(true);
    }
  });
});

describe('share groups over compressed batches', () => {
  it('acquire, accept, release and reject records inside compressed batches of every codec, by their inner offsets', async () => {
    const c = await cluster(
      CODECS.map((codec) => ({ name: `s-${codec}`, partitions: 1 })),
      { recordLockDurationMs: 10_000 },
    );
    for (const codec of CODECS) {
      const p = producer(c, { compressionType: codec });
      await Promise.all(Array.from({ length: 5 }, (_, i) => p.send({ topic: `s-${codec}`, partition: 0, value: `${codec}-${i}` })));
      expect((await servedBatches(c, `s-${codec}`)).every((b) => b.compression === codec)).toBe(true);
    }
    const s = new KafkaShareConsumer({
      bootstrapServers: c.bootstrap,
      groupId: 'compressed',
      acknowledgementMode: 'explicit',
      fetchMaxWaitMs: 50,
      logger: null,
    });
    cleanups.push(() => s.close(1_000));
    s.subscribe(CODECS.map((codec) => `s-${codec}`));

    const first = await pollUntil(s, 20);
    expect(first.map((r) => `${r.topic}@${r.offset}=${Buffer.from(r.value!).toString()}`).sort()).toEqual(
      CODECS.flatMap((codec) => Array.from({ length: 5 }, (_, i) => `s-${codec}@${i}=${codec}-${i}`)).sort(),
    );
    // Offset 1 released, 2 rejected, the rest accepted.
    for (const r of first) s.acknowledge(r, r.offset === 1n ? 'release' : r.offset === 2n ? 'reject' : 'accept');
    await s.commitSync();

    const second = await pollUntil(s, 4);
    expect(second.map((r) => `${r.topic}@${r.offset}#${r.deliveryCount}`).sort()).toEqual(CODECS.map((codec) => `s-${codec}@1#2`).sort());
    for (const r of second) s.acknowledge(r, 'accept');
    await s.commitSync();
    expect(await s.poll(300)).toEqual([]);
  });
});

async function pollUntil(s: KafkaShareConsumer, count: number, timeoutMs = 8_000): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const records: ShareConsumerRecord[] = [];
  while (records.length < count && Date.now() < deadline) records.push(...(await s.poll(Math.min(300, deadline - Date.now()))));
  return records;
}
