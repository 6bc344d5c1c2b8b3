/**
 * Our KafkaConsumer against Kafka 4.4: assign and poll, read_committed over
 * transactions that Kafka's own producer committed (ProducerPerformance with
 * a transactional id: its commit markers are skipped) and that ours committed
 * and aborted (Kafka's abort index skips the aborted ones, as Kafka's console
 * consumer reads them), seek and commits, every compression codec, a classic
 * group of two of ours (range) that rebalances when one leaves, and the
 * classic EOS loop with a zombie of an older generation fenced by Kafka.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord, type TopicPartition } from '../../client/index.js';
import { Cleanups, createTopic, kafka, readWithKafkaConsumer, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

function producer(config: Record<string, unknown> = {}): KafkaProducer {
  return cleanups.track(
    new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, maxBlockMs: 30_000, logger: null, metricsRegistry: null, ...config }),
    (p) => p.close(2_000),
  );
}

function consumer(config: Partial<ConsumerConfig> = {}): KafkaConsumer {
  return cleanups.track(
    new KafkaConsumer({ bootstrapServers: kafka().bootstrap, logger: null, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, ...config }),
    (k) => k.close(5_000),
  );
}

const text = (r: ConsumerRecord) => Buffer.from(r.value ?? new Uint8Array()).toString();
const keys = (tps: readonly TopicPartition[]) => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

async function pollFor(consumers: KafkaConsumer[], done: (seen: ConsumerRecord[]) => boolean, timeoutMs = 30_000): Promise<ConsumerRecord[]> {
  const seen: ConsumerRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(seen) && Date.now() < deadline) for (const batch of await Promise.all(consumers.map((k) => k.poll(200)))) seen.push(...batch);
  return seen;
}

/** Kafka's own transactional producer: ProducerPerformance commits a transaction every `transactionMs`. */
async function produceWithKafkaTransactions(topic: string, records: number): Promise<void> {
  const args = [
    '-Xmx128m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Dlog4j2.level=OFF',
    '-cp',
    kafka().javaClasspath,
    'org.apache.kafka.tools.ProducerPerformance',
    '--topic',
    topic,
    '--num-records',
    String(records),
    '--record-size',
    '20',
    '--throughput',
    '-1',
    '--transactional-id',
    unique('perf-txn'),
    '--transaction-duration-ms',
    '50',
    '--producer-props',
    `bootstrap.servers=${kafka().bootstrap}`,
  ];
  const { status, stderr } = await new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn('java', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code, stderr });
    });
  });
  if (status !== 0) throw new Error(`ProducerPerformance failed (exit ${status}): ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
}

describe('KafkaConsumer against Kafka 4.4', () => {
  it('read_committed over Kafka’s own transactional producer: every record, the commit markers skipped, the position at the end', async () => {
    const topic = unique('consumer-perf');
    await createTopic(kafka(), topic, 1);
    await produceWithKafkaTransactions(topic, 200);
    const k = consumer({ isolationLevel: 'read_committed' });
    const tp = { topic, partition: 0 };
    k.assign([tp]);
    const end = (await k.endOffsets([tp])).get(`${topic}-0`)!;
    const seen: ConsumerRecord[] = [];
    const deadline = Date.now() + 30_000;
    while ((await k.position(tp)) < end && Date.now() < deadline) seen.push(...(await k.poll(200)));
    expect(seen).toHaveLength(200);
    // More offsets than records: the markers took some, and the position went past them.
    expect(end).toBeGreaterThan(200n);
    expect(await k.position(tp)).toBe(end);
  });

  it('read_committed skips an aborted transaction with Kafka’s abort index, as Kafka’s console consumer does; read_uncommitted sees it', async () => {
    const topic = unique('consumer-abort');
    await createTopic(kafka(), topic, 2);
    const t = producer({ transactionalId: unique('consumer-abort-txn') });
    await t.initTransactions();
    t.beginTransaction();
    for (let i = 0; i < 4; i++) void t.send({ topic, partition: i % 2, value: `c${i}` });
    await t.commitTransaction();
    t.beginTransaction();
    const aborted = [0, 1, 2].map((i) => t.send({ topic, partition: i % 2, value: `a${i}` }));
    await t.flush();
    await t.abortTransaction();
    await Promise.allSettled(aborted);
    t.beginTransaction();
    void t.send({ topic, partition: 1, value: 'c4' });
    await t.commitTransaction();
    const all = [0, 1].map((partition) => ({ topic, partition }));
    const committed = consumer({ isolationLevel: 'read_committed' });
    committed.assign(all);
    const ours = (await pollFor([committed], (s) => s.length >= 5)).map(text).sort();
    expect(ours).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    const theirs = (await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_committed', expected: 5, idleMs: 15_000 })).map((r) => r.value).sort();
    expect(ours).toEqual(theirs);
    const uncommitted = consumer();
    uncommitted.assign(all);
    expect((await pollFor([uncommitted], (s) => s.length >= 8)).map(text).sort()).toEqual(['a0', 'a1', 'a2', 'c0', 'c1', 'c2', 'c3', 'c4']);
  });

  it('seek, commitSync and committed with a group id, and records in batches of every codec', async () => {
    const topic = unique('consumer-codecs');
    await createTopic(kafka(), topic, 1);
    for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
      const p = producer({ compressionType: codec, lingerMs: 20 });
      await Promise.all([0, 1, 2].map((i) => p.send({ topic, value: `${codec}-${i} ${'x'.repeat(50)}` })));
    }
    const groupId = unique('consumer-commit');
    const tp = { topic, partition: 0 };
    const k = consumer({ groupId, enableAutoCommit: false });
    k.assign([tp]);
    const seen = await pollFor([k], (s) => s.length >= 15);
    expect(seen.map((r) => text(r).split(' ')[0])).toEqual(['none', 'gzip', 'snappy', 'lz4', 'zstd'].flatMap((c) => [0, 1, 2].map((i) => `${c}-${i}`)));
    k.seek(tp, 7n);
    expect(text((await pollFor([k], (s) => s.length >= 1))[0]!)).toMatch(/^snappy-1 /);
    await k.commitSync([{ ...tp, offset: 10n, metadata: 'm' }]);
    expect((await k.committed([tp])).get(`${topic}-0`)).toMatchObject({ offset: 10n, metadata: 'm' });
    const next = consumer({ groupId, enableAutoCommit: false });
    next.assign([tp]);
    expect(text((await pollFor([next], (s) => s.length >= 1))[0]!)).toMatch(/^lz4-1 /);
  });

  it('a classic group of two of ours splits the partitions (range) and the survivor takes them all when one leaves', async () => {
    const topic = unique('consumer-group');
    await createTopic(kafka(), topic, 4);
    const groupId = unique('consumer-group');
    const member = () => consumer({ groupId, heartbeatIntervalMs: 500, sessionTimeoutMs: 10_000 });
    const a = member();
    const b = member();
    a.subscribe([topic]);
    b.subscribe([topic]);
    await pollFor([a, b], () => a.assignment().length === 2 && b.assignment().length === 2);
    expect([...keys(a.assignment()), ...keys(b.assignment())].sort()).toEqual([0, 1, 2, 3].map((p) => `${topic}-${p}`));
    expect(a.groupMetadata().generationId).toBe(b.groupMetadata().generationId);
    await b.close();
    await pollFor([a], () => a.assignment().length === 4);
    expect(keys(a.assignment())).toEqual([0, 1, 2, 3].map((p) => `${topic}-${p}`));
  });

  it('the classic EOS loop: sendOffsetsToTransaction(groupMetadata()) commits with the output; a zombie of an older generation is fenced', async () => {
    const input = unique('eos-in');
    const output = unique('eos-out');
    await createTopic(kafka(), input, 2);
    await createTopic(kafka(), output, 1);
    const plain = producer();
    for (let i = 0; i < 6; i++) await plain.send({ topic: input, partition: i % 2, value: `v${i}` });
    const groupId = unique('eos-group');
    const a = consumer({ groupId, enableAutoCommit: false, isolationLevel: 'read_committed', heartbeatIntervalMs: 500 });
    a.subscribe([input]);
    const seen = await pollFor([a], (s) => s.length >= 6);
    const zombieMetadata = a.groupMetadata();
    const t = producer({ transactionalId: unique('eos-txn') });
    await t.initTransactions();
    t.beginTransaction();
    for (const r of seen) void t.send({ topic: output, value: `out-${text(r)}` });
    await t.sendOffsetsToTransaction(
      a.assignment().map((tp) => ({ ...tp, offset: 3n })),
      a.groupMetadata(),
    );
    await t.commitTransaction();
    expect([...(await a.committed(a.assignment())).values()].map((o) => o.offset)).toEqual([3n, 3n]);
    const b = consumer({ groupId, enableAutoCommit: false, heartbeatIntervalMs: 500 });
    b.subscribe([input]);
    await pollFor([a, b], () => a.assignment().length === 1 && b.assignment().length === 1);
    const zombie = producer({ transactionalId: unique('eos-zombie') });
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: output, value: 'zombie' });
    await expect(zombie.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: 6n }], zombieMetadata)).rejects.toThrow(
      /ILLEGAL_GENERATION|generation/i,
    );
    await zombie.abortTransaction().catch(() => {});
    const out = (await readWithKafkaConsumer(kafka(), output, { isolationLevel: 'read_committed', expected: 6 })).map((r) => r.value);
    expect(out.sort()).toEqual(seen.map((r) => `out-${text(r)}`).sort());
  });
});
