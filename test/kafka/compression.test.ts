/**
 * Every compression codec both ways between our client and Kafka 4.4:
 * batches our producer compresses (gzip, snappy, lz4, zstd) are accepted by
 * Kafka's broker (LogValidator decompresses them to assign offsets) and read
 * by Kafka's own consumer; batches Kafka compresses — topics whose
 * compression.type makes the broker recompress with Kafka's codecs (the
 * Compression classes of kafka-clients, as its producer uses) — are read by
 * our share consumer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, type CompressionType, type ShareConsumerRecord } from '../../client/index.js';
import { Cleanups, createTopic, kafka, readWithKafkaConsumer, shareGroup, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

const CODECS: CompressionType[] = ['gzip', 'snappy', 'lz4', 'zstd'];

/** Compressible and not: repeated text, and a value long enough to span lz4/snappy blocks. */
function values(codec: string): string[] {
  return [`${codec}-short`, `${codec}-${'abc'.repeat(2_000)}`, `${codec}-${Array.from({ length: 300 }, (_, i) => i.toString(36)).join('/')}`];
}

describe('compression against Kafka 4.4', () => {
  it('our producer, every codec: Kafka stores the batches and its consumer reads every record back', async () => {
    const topic = unique('compressed-by-us');
    await createTopic(kafka(), topic);
    for (const codec of CODECS) {
      const p = new KafkaProducer({ bootstrapServers: kafka().bootstrap, compressionType: codec, lingerMs: 5, logger: null, metricsRegistry: null });
      try {
        await Promise.all(values(codec).map((value, i) => p.send({ topic, key: `${codec}-${i}`, value })));
      } finally {
        await p.close();
      }
    }
    const expected = CODECS.flatMap(values);
    const read = await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_uncommitted', expected: expected.length });
    expect(read.map((r) => r.value).sort()).toEqual([...expected].sort());
  });

  it('Kafka-compressed batches, every codec (topic compression.type): our share consumer reads every record', async () => {
    const expected: string[] = [];
    const topics: string[] = [];
    for (const codec of CODECS) {
      const topic = unique(`compressed-by-kafka-${codec}`);
      await createTopic(kafka(), topic, 1, { 'compression.type': codec });
      topics.push(topic);
      const p = new KafkaProducer({ bootstrapServers: kafka().bootstrap, compressionType: 'none', lingerMs: 5, logger: null, metricsRegistry: null });
      try {
        await Promise.all(values(codec).map((value, i) => p.send({ topic, key: `${codec}-${i}`, value })));
      } finally {
        await p.close();
      }
      expected.push(...values(codec));
    }
    const group = await shareGroup(kafka(), unique('compressed-group'));
    const c = cleanups.track(
      new KafkaShareConsumer({ bootstrapServers: kafka().bootstrap, groupId: group, acknowledgementMode: 'implicit', fetchMaxWaitMs: 200, logger: null }),
      (x) => x.close(5_000),
    );
    c.subscribe(topics);
    const got: ShareConsumerRecord[] = [];
    const deadline = Date.now() + 60_000;
    while (got.length < expected.length && Date.now() < deadline) got.push(...(await c.poll(500)));
    expect(got.map((r) => Buffer.from(r.value!).toString()).sort()).toEqual([...expected].sort());
  });
});
