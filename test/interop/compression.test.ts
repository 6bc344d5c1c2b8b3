/**
 * Compressed batches across implementations, against `kipgen broker` in a
 * child process, for gzip, snappy, lz4 and zstd (partition i of each topic
 * holds codec i):
 * - batches compressed by kcat (`-z codec`, librdkafka) and by
 *   confluent-kafka-python (compression.type, transactional) are read back
 *   byte for byte by kipgen's read_committed reader and by its share consumer,
 *   which acknowledges them;
 * - batches compressed by kipgen's producer are read back byte for byte by
 *   kcat, and by kafkajs's record-batch decoder with codec plugins from npm
 *   (kafkajs-snappy; lz4js and fzstd wrapped as kafkajs codecs).
 * Each batch's codec attribute is checked, so a batch sent uncompressed
 * cannot pass for a compressed one. Every client reaches the broker through
 * ProduceV0Proxy (see there): Debian's librdkafka 2.0.2 compresses gzip, snappy
 * and lz4 only for brokers that advertise Produce v0, which kipgen, like
 * Kafka 4.0, does not.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, type ShareConsumerRecord } from '../../client/index.js';
import { ROOT, requireTool, run, startKipgenBroker, tempDir, type KipgenBroker, removeTempDirs } from './support/broker-process.js';
import { readPartition, type ConsumedRecord } from './support/fetch.js';
import { kcatConsume, kcatProduceFiles, requireKcat } from './support/kcat.js';
import { ProduceV0Proxy } from './support/produce-v0-proxy.js';
import { DEBIAN_PYTHON as PYTHON } from './support/tools.js';

const require = createRequire(import.meta.url);
const { CompressionCodecs, CompressionTypes } = require('kafkajs') as any;
const kafkajsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: any) => Promise<any>;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;
const lz4js = require('lz4js') as { decompress(data: Uint8Array): Uint8Array; compress(data: Uint8Array): Uint8Array };
const fzstd = require('fzstd') as { decompress(data: Uint8Array): Uint8Array };

const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
const KCAT_TOPIC = 'z-kcat';
const PY_TOPIC = 'z-python';
const OURS_TOPIC = 'z-kipgen';

interface TestRecord {
  key: Buffer | null;
  value: Buffer;
  headers: [string, Buffer | null][];
}

// A large, compressible value (lz4 and zstd then span several blocks, xerial snappy several chunks), binary bytes, a null key.
const big = Buffer.from(Array.from({ length: 3000 }, (_, i) => `line ${i}: ${i % 7 === 0 ? crypto.randomBytes(8).toString('hex') : 'steady text'}\n`).join(''));
const RECORDS: TestRecord[] = [
  {
    key: Buffer.from('k-0'),
    value: Buffer.from([0x00, 0xff, 0x0a, 0x80, 0x7f]),
    headers: [
      ['h', Buffer.from([0x00, 0xff])],
      ['n', null],
    ],
  },
  { key: null, value: big, headers: [] },
  { key: Buffer.from('k-2-ключ'), value: crypto.randomBytes(2000), headers: [['utf8', Buffer.from('значение')]] },
  { key: Buffer.from('k-3'), value: Buffer.alloc(10_000, 0x41), headers: [] },
];

let broker: KipgenBroker;
const proxy = new ProduceV0Proxy();
/** The proxy's port, which the broker advertises in Metadata: every connection goes through it. */
let port: number;
let python: { confluent_kafka: string; librdkafka: string; errors: string[] };

beforeAll(async () => {
  requireKcat();
  requireTool(PYTHON, ['-c', 'import confluent_kafka'], 'python3-confluent-kafka');
  await proxy.listen();
  port = proxy.port;
  broker = await startKipgenBroker({
    topics: [`${KCAT_TOPIC}:4`, `${PY_TOPIC}:4`, `${OURS_TOPIC}:4`],
    config: {
      cluster: [{ nodeId: 0, host: '127.0.0.1', port }],
      shareGroup: { heartbeatIntervalMs: 200, autoOffsetReset: 'earliest', isolationLevel: 'read_committed' },
    },
  });
  proxy.targetPort = broker.port;

  // kcat: the values as files (one message each); every message gets the same key and headers. The linger puts
  // them in one batch: librdkafka sends a batch uncompressed when compressing does not make it smaller (a lone
  // 5-byte record), which would leave that codec untested.
  const dir = tempDir('kipgen-interop-compression-');
  const files = RECORDS.map((r, i) => {
    const file = path.join(dir, `value-${i}.bin`);
    fs.writeFileSync(file, r.value);
    return file;
  });
  for (const [i, codec] of CODECS.entries())
    await kcatProduceFiles(port, KCAT_TOPIC, i, files, ['-z', codec, '-X', 'linger.ms=500', '-k', 'kcat-key', '-H', 'codec=' + codec]);

  const recordsFile = path.join(dir, 'records.json');
  fs.writeFileSync(
    recordsFile,
    JSON.stringify(
      RECORDS.map((r) => ({
        key: r.key?.toString('hex') ?? null,
        value: r.value.toString('hex'),
        headers: r.headers.map(([k, v]) => [k, v?.toString('hex') ?? null]),
      })),
    ),
  );
  const result = await run(PYTHON, [path.join(ROOT, 'test/interop/support/confluent_compressed.py'), `127.0.0.1:${port}`, PY_TOPIC, recordsFile], {
    timeoutMs: 90_000,
  });
  if (result.code !== 0) throw new Error(`confluent_compressed.py exited ${result.code ?? result.signal}:\n${result.stderr}\nbroker:\n${broker.stderr()}`);
  python = JSON.parse(result.stdout.toString('utf8').trim().split('\n').pop()!) as typeof python;
}, 180_000);

afterAll(async () => {
  await proxy.close();
  await broker?.stop();
  removeTempDirs();
  if (python) process.stdout.write(`compressed batches from confluent-kafka-python ${python.confluent_kafka} (librdkafka ${python.librdkafka})\n`);
});

const asTuple = (key: Uint8Array | null, value: Uint8Array | null, headers: { key: string; value: Uint8Array | null }[]) => [
  key === null ? null : Buffer.from(key).toString('hex'),
  value === null ? null : Buffer.from(value).toString('hex'),
  headers.map((h) => [h.key, h.value === null ? null : Buffer.from(h.value).toString('hex')]),
];
const expectedKcat = (codec: string) => RECORDS.map((r) => asTuple(Buffer.from('kcat-key'), r.value, [{ key: 'codec', value: Buffer.from(codec) }]));
const expectedPython = () =>
  RECORDS.map((r) =>
    asTuple(
      r.key,
      r.value,
      r.headers.map(([key, value]) => ({ key, value })),
    ),
  );
const consumed = (records: ConsumedRecord[]) => records.map((r) => asTuple(r.key, r.value, r.headers));

describe('batches compressed by kcat and confluent-kafka-python', () => {
  it('were stored compressed with their codec and read back byte for byte by kipgen’s read_committed reader', async () => {
    expect(python.errors).toEqual([]);
    expect(proxy.rewritten).toBeGreaterThan(0);
    for (const [i, codec] of CODECS.entries()) {
      const fromKcat = await readPartition(port, KCAT_TOPIC, i, 'read_committed');
      expect(
        fromKcat.batches.map((b) => b.compression),
        `kcat ${codec}`,
      ).toEqual(fromKcat.batches.map(() => codec));
      expect(consumed(fromKcat.records), `kcat ${codec}`).toEqual(expectedKcat(codec));

      const fromPython = await readPartition(port, PY_TOPIC, i, 'read_committed');
      const data = fromPython.batches.filter((b) => !b.isControl);
      expect(data.length, `python ${codec}`).toBeGreaterThan(0);
      expect(
        data.map((b) => b.compression),
        `python ${codec}`,
      ).toEqual(data.map(() => codec));
      expect(
        fromPython.markers.map((m) => m.type),
        `python ${codec}`,
      ).toEqual(['COMMIT']);
      expect(consumed(fromPython.records), `python ${codec}`).toEqual(expectedPython());
    }
  });

  it('kipgen’s share consumer acquires every record of those batches byte for byte and acknowledges them', async () => {
    const consumer = new KafkaShareConsumer({
      bootstrapServers: `127.0.0.1:${port}`,
      groupId: 'compressed-interop',
      acknowledgementMode: 'explicit',
      fetchMaxWaitMs: 100,
      logger: null,
    });
    try {
      consumer.subscribe([KCAT_TOPIC, PY_TOPIC]);
      const total = 2 * CODECS.length * RECORDS.length;
      const got: ShareConsumerRecord[] = [];
      const deadline = Date.now() + 20_000;
      while (got.length < total && Date.now() < deadline) {
        const batch = await consumer.poll(500);
        for (const r of batch) consumer.acknowledge(r, 'accept');
        got.push(...batch);
      }
      await consumer.commitSync();
      const byPartition = (topic: string, partition: number) =>
        got
          .filter((r) => r.topic === topic && r.partition === partition)
          .sort((a, b) => (a.offset < b.offset ? -1 : 1))
          .map((r) => asTuple(r.key, r.value, r.headers));
      for (const [i, codec] of CODECS.entries()) {
        expect(byPartition(KCAT_TOPIC, i), `kcat ${codec}`).toEqual(expectedKcat(codec));
        expect(byPartition(PY_TOPIC, i), `python ${codec}`).toEqual(expectedPython());
      }
      expect(got).toHaveLength(total);
      expect(await consumer.poll(300)).toEqual([]);
    } finally {
      await consumer.close(2_000);
    }
  });
});

describe('batches compressed by kipgen’s producer', () => {
  beforeAll(async () => {
    for (const [i, codec] of CODECS.entries()) {
      const producer = new KafkaProducer({ bootstrapServers: `127.0.0.1:${port}`, compressionType: codec, lingerMs: 20, logger: null, metricsRegistry: null });
      try {
        await Promise.all(
          RECORDS.map((r) =>
            producer.send({ topic: OURS_TOPIC, partition: i, key: r.key, value: r.value, headers: r.headers.map(([key, value]) => ({ key, value })) }),
          ),
        );
      } finally {
        await producer.close();
      }
    }
  });

  it('are read back byte for byte by kcat (librdkafka’s decompressors)', async () => {
    for (const [i, codec] of CODECS.entries()) {
      const read = await readPartition(port, OURS_TOPIC, i, 'read_uncommitted');
      expect(
        read.batches.map((b) => b.compression),
        codec,
      ).toEqual(read.batches.map(() => codec));
      const messages = await kcatConsume(port, OURS_TOPIC, i);
      expect(
        messages.map((m) => [m.key?.toString('hex') ?? null, m.value?.toString('hex') ?? null]),
        codec,
      ).toEqual(RECORDS.map((r) => [r.key?.toString('hex') ?? null, r.value.toString('hex')]));
    }
  });

  it('are read back byte for byte by kafkajs’s record-batch decoder with npm codec plugins', async () => {
    // kafkajs ships gzip only; codecs are plugins. kafkajs-snappy is the usual one (snappyjs, reads xerial
    // framing). The npm lz4/zstd plugins (kafkajs-lz4, @kafkajs/zstd) build native code at install time, so
    // the same plugin interface is filled here with lz4js and fzstd (pure JavaScript, independent of the
    // libraries kipgen uses).
    CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy');
    CompressionCodecs[CompressionTypes.LZ4] = () => ({
      compress: async (encoder: { buffer: Buffer }) => Buffer.from(lz4js.compress(encoder.buffer)),
      decompress: async (buffer: Buffer) => Buffer.from(lz4js.decompress(buffer)),
    });
    CompressionCodecs[CompressionTypes.ZSTD] = () => ({
      compress: async () => {
        throw new Error('not needed: only decompression is tested');
      },
      decompress: async (buffer: Buffer) => Buffer.from(fzstd.decompress(buffer)),
    });
    for (const [i, codec] of CODECS.entries()) {
      const read = await readPartition(port, OURS_TOPIC, i, 'read_uncommitted');
      // The codec attribute of each batch, read from its bytes (kafkajs's decoder does not report it).
      expect(
        read.batches.map((b) => b.compression),
        codec,
      ).toEqual(read.batches.map(() => codec));
      const decoded: any[] = [];
      for (const batch of read.batches) decoded.push(await kafkajsBatchDecoder(new KafkajsDecoder(batch.bytes)));
      const messages = decoded.flatMap((b) => b.records);
      expect(
        messages.map((m: any) => [
          m.key === null ? null : Buffer.from(m.key).toString('hex'),
          Buffer.from(m.value).toString('hex'),
          Object.entries(m.headers).map(([k, v]) => [k, v === null ? null : Buffer.from(v as Buffer).toString('hex')]),
        ]),
        codec,
      ).toEqual(RECORDS.map((r) => [r.key?.toString('hex') ?? null, r.value.toString('hex'), r.headers.map(([k, v]) => [k, v?.toString('hex') ?? null])]));
    }
  });
});
