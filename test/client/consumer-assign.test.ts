/**
 * KafkaConsumer with assign() against a real kipgen broker (in this process,
 * over TCP): poll until the end, read_committed skipping an aborted
 * transaction's records and every control batch (the abort index), seek /
 * seekToBeginning / seekToEnd / position, commitSync + committed, auto-commit,
 * pause/resume, and records inside batches of every compression codec.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, NoOffsetForPartitionError, WakeupError, type ConsumerConfig, type ConsumerRecord } from '../../client/index.js';
import type { TopicConfig } from '../../coordinator/config.js';
import { startCluster, type TestCluster } from './support/brokers.js';
import { text } from './support/group-consumers.js';

const quiet = { logger: null, metricsRegistry: null } as const;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(topics: TopicConfig[]): Promise<TestCluster> {
  const c = await startCluster({ config: { topics, groupInitialRebalanceDelayMs: 0 } });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 5, maxBlockMs: 5_000, ...quiet, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

function consumer(c: TestCluster, extra: Partial<ConsumerConfig> = {}): KafkaConsumer {
  const k = new KafkaConsumer({ bootstrapServers: c.bootstrap, logger: null, fetchMaxWaitMs: 50, ...extra });
  cleanups.push(() => k.close(1_000));
  return k;
}

/** Polls until `count` records came or 10 s passed. */
async function pollFor(k: KafkaConsumer, count: number): Promise<ConsumerRecord[]> {
  const out: ConsumerRecord[] = [];
  const deadline = Date.now() + 10_000;
  while (out.length < count && Date.now() < deadline) out.push(...(await k.poll(200)));
  return out;
}

describe('KafkaConsumer.assign', () => {
  it('reads every record of the assigned partitions in order, with offsets, keys, headers and leader epochs', async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const p = producer(c);
    for (let i = 0; i < 20; i++) await p.send({ topic: 'in', partition: i % 2, key: `k${i}`, value: `v${i}`, headers: { n: String(i) } });
    const k = consumer(c, { autoOffsetReset: 'earliest', maxPollRecords: 3 });
    k.assign([
      { topic: 'in', partition: 0 },
      { topic: 'in', partition: 1 },
    ]);
    const records = await pollFor(k, 20);
    expect(records).toHaveLength(20);
    for (const partition of [0, 1]) {
      const mine = records.filter((r) => r.partition === partition);
      expect(mine.map((r) => r.offset)).toEqual([...Array(10).keys()].map(BigInt));
      expect(mine.map(text)).toEqual([...Array(10).keys()].map((i) => `v${i * 2 + partition}`));
    }
    expect(Buffer.from(records[0]!.key!).toString()).toMatch(/^k/);
    expect(records[0]!.headers[0]!.key).toBe('n');
    expect(records[0]!.leaderEpoch).not.toBeNull();
    expect(await k.position({ topic: 'in', partition: 0 })).toBe(10n);
  });

  it('starts at the end with autoOffsetReset latest, and fails poll() with none and no committed offset', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const p = producer(c);
    await p.send({ topic: 'in', value: 'old' });
    const latest = consumer(c);
    latest.assign([{ topic: 'in', partition: 0 }]);
    expect(await latest.position({ topic: 'in', partition: 0 })).toBe(1n);
    await p.send({ topic: 'in', value: 'new' });
    expect((await pollFor(latest, 1)).map(text)).toEqual(['new']);
    const none = consumer(c, { autoOffsetReset: 'none', groupId: 'g-none', enableAutoCommit: false });
    none.assign([{ topic: 'in', partition: 0 }]);
    await expect(none.poll(100)).rejects.toBeInstanceOf(NoOffsetForPartitionError);
  });

  it('read_committed skips an aborted transaction and the control batches; read_uncommitted sees the aborted records', async () => {
    const c = await cluster([{ name: 'tx', partitions: 1 }]);
    const t = producer(c, { transactionalId: 'tx-1' });
    await t.initTransactions();
    t.beginTransaction();
    await t.send({ topic: 'tx', value: 'c1' });
    await t.send({ topic: 'tx', value: 'c2' });
    await t.commitTransaction();
    t.beginTransaction();
    await t.send({ topic: 'tx', value: 'a1' });
    await t.send({ topic: 'tx', value: 'a2' });
    await t.abortTransaction();
    t.beginTransaction();
    await t.send({ topic: 'tx', value: 'c3' });
    await t.commitTransaction();
    const committed = consumer(c, { autoOffsetReset: 'earliest', isolationLevel: 'read_committed' });
    committed.assign([{ topic: 'tx', partition: 0 }]);
    const seen = await pollFor(committed, 3);
    expect(seen.map(text)).toEqual(['c1', 'c2', 'c3']);
    // Past the last marker: control batches move the position too.
    const end = (await committed.endOffsets([{ topic: 'tx', partition: 0 }])).get('tx-0')!;
    expect(await committed.position({ topic: 'tx', partition: 0 })).toBe(end);
    const uncommitted = consumer(c, { autoOffsetReset: 'earliest' });
    uncommitted.assign([{ topic: 'tx', partition: 0 }]);
    expect((await pollFor(uncommitted, 5)).map(text)).toEqual(['c1', 'c2', 'a1', 'a2', 'c3']);
  });

  it('read_committed stops at an open transaction (the last stable offset) and reads it once committed', async () => {
    const c = await cluster([{ name: 'tx', partitions: 1 }]);
    const plain = producer(c);
    const t = producer(c, { transactionalId: 'tx-open' });
    await t.initTransactions();
    t.beginTransaction();
    await t.send({ topic: 'tx', value: 'pending' });
    await t.flush();
    await plain.send({ topic: 'tx', value: 'after' });
    const k = consumer(c, { autoOffsetReset: 'earliest', isolationLevel: 'read_committed' });
    k.assign([{ topic: 'tx', partition: 0 }]);
    expect((await k.poll(300)).count).toBe(0);
    await t.commitTransaction();
    expect((await pollFor(k, 2)).map(text)).toEqual(['pending', 'after']);
  });

  it('seek, seekToBeginning and seekToEnd move the position; pause stops a partition and resume starts it again', async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const p = producer(c);
    for (let i = 0; i < 5; i++) await p.send({ topic: 'in', partition: 0, value: `a${i}` });
    for (let i = 0; i < 5; i++) await p.send({ topic: 'in', partition: 1, value: `b${i}` });
    const k = consumer(c, { autoOffsetReset: 'earliest' });
    const p0 = { topic: 'in', partition: 0 };
    const p1 = { topic: 'in', partition: 1 };
    k.assign([p0]);
    k.seek(p0, 3n);
    expect((await pollFor(k, 2)).map(text)).toEqual(['a3', 'a4']);
    k.seekToBeginning([p0]);
    expect(await k.position(p0)).toBe(0n);
    expect((await pollFor(k, 5)).map(text)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    k.seekToEnd([p0]);
    expect(await k.position(p0)).toBe(5n);
    k.assign([p0, p1]);
    k.seekToBeginning([p1]);
    k.pause([p1]);
    expect(k.paused()).toEqual([p1]);
    await p.send({ topic: 'in', partition: 0, value: 'a5' });
    expect((await pollFor(k, 1)).map(text)).toEqual(['a5']);
    k.resume([p1]);
    expect((await pollFor(k, 5)).map(text)).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
    expect(() => k.seek({ topic: 'in', partition: 7 }, 0n)).toThrow(/in-7 is not assigned/);
  });

  it('commitSync stores the positions; committed() reads them; a new consumer of the group starts there', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const p = producer(c);
    for (let i = 0; i < 6; i++) await p.send({ topic: 'in', value: `v${i}` });
    const tp = { topic: 'in', partition: 0 };
    const first = consumer(c, { groupId: 'g', enableAutoCommit: false, autoOffsetReset: 'earliest', maxPollRecords: 4 });
    first.assign([tp]);
    expect((await first.poll(2_000)).count).toBe(4);
    await first.commitSync();
    expect((await first.committed([tp])).get('in-0')?.offset).toBe(4n);
    await first.commitSync([{ ...tp, offset: 5n, metadata: 'mine' }]);
    expect((await first.committed([tp])).get('in-0')).toMatchObject({ offset: 5n, metadata: 'mine' });
    const second = consumer(c, { groupId: 'g', enableAutoCommit: false });
    second.assign([tp]);
    expect((await pollFor(second, 1)).map(text)).toEqual(['v5']);
  });

  it('commitAsync reports to its callback; wakeup() makes the waiting poll() throw WakeupError', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const tp = { topic: 'in', partition: 0 };
    const k = consumer(c, { groupId: 'async', enableAutoCommit: false, fetchMaxWaitMs: 100 });
    k.assign([tp]);
    k.seek(tp, 0n);
    const outcome = await new Promise<{ offsets: string[]; error: Error | null }>((resolve) =>
      k.commitAsync([{ ...tp, offset: 0n }], (offsets, error) => resolve({ offsets: [...offsets.keys()], error })),
    );
    expect(outcome).toEqual({ offsets: ['in-0'], error: null });
    expect((await k.committed([tp])).get('in-0')?.offset).toBe(0n);
    const waiting = k.poll(30_000);
    setTimeout(() => k.wakeup(), 100);
    await expect(waiting).rejects.toBeInstanceOf(WakeupError);
    // The wakeup is used up: the next poll() works.
    expect((await k.poll(50)).count).toBe(0);
  });

  it('auto-commit commits the positions every autoCommitIntervalMs, and on close', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const p = producer(c);
    for (let i = 0; i < 3; i++) await p.send({ topic: 'in', value: `v${i}` });
    const tp = { topic: 'in', partition: 0 };
    const k = new KafkaConsumer({ bootstrapServers: c.bootstrap, logger: null, groupId: 'auto', autoOffsetReset: 'earliest', autoCommitIntervalMs: 100 });
    k.assign([tp]);
    expect(await pollFor(k, 3)).toHaveLength(3);
    const reader = consumer(c, { groupId: 'auto', enableAutoCommit: false });
    const deadline = Date.now() + 5_000;
    while ((await reader.committed([tp])).get('in-0')?.offset !== 3n && Date.now() < deadline) await k.poll(50);
    expect((await reader.committed([tp])).get('in-0')?.offset).toBe(3n);
    await p.send({ topic: 'in', value: 'v3' });
    expect(await pollFor(k, 1)).toHaveLength(1);
    await k.close();
    expect((await reader.committed([tp])).get('in-0')?.offset).toBe(4n);
  });

  it('fetches from every partition leader of a three-node cluster', async () => {
    const c = await startCluster({ nodes: 3, config: { topics: [{ name: 'spread', partitions: 6 }] } });
    cleanups.push(() => c.close());
    const p = producer(c);
    for (let i = 0; i < 12; i++) await p.send({ topic: 'spread', partition: i % 6, value: `v${i}` });
    const k = consumer(c, { autoOffsetReset: 'earliest' });
    const leaders = new Set((await k.partitionsFor('spread')).map((info) => info.leader));
    expect(leaders.size).toBeGreaterThan(1);
    k.assign([...Array(6).keys()].map((partition) => ({ topic: 'spread', partition })));
    expect((await pollFor(k, 12)).map(text).sort()).toEqual([...Array(12).keys()].map((i) => `v${i}`).sort());
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)('reads records from %s batches, starting inside a batch', async (codec) => {
    const c = await cluster([{ name: 'z', partitions: 1 }]);
    const p = producer(c, { compressionType: codec, lingerMs: 50 });
    await Promise.all([...Array(10).keys()].map((i) => p.send({ topic: 'z', value: `${codec} ${i} ${'compressible '.repeat(10)}` })));
    const k = consumer(c, { autoOffsetReset: 'earliest' });
    const tp = { topic: 'z', partition: 0 };
    k.assign([tp]);
    k.seek(tp, 4n);
    const records = await pollFor(k, 6);
    expect(records.map((r) => r.offset)).toEqual([4n, 5n, 6n, 7n, 8n, 9n]);
    expect(text(records[0]!)).toMatch(new RegExp(`^${codec} 4 `));
  });
});
