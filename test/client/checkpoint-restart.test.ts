/**
 * Exactly-once across checkpoint restarts (DESIGN §5.6, issue 13): a job
 * commits T1 at checkpoint 1, begins T2 with the same producer, and dies
 * before checkpoint 2 completes. Recovery from checkpoint 1 must commit
 * nothing of T2: a read_committed reader sees T1's output only, T2's records
 * are delivered again at once, nothing is lost or duplicated. Real kipgen
 * brokers over TCP on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  KafkaProducer,
  KafkaShareConsumer,
  PreparedTxnState,
  ShareAcknowledgements,
  TransactionalShareAcknowledger,
  UnsupportedVersionError,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const quiet = { logger: null, metricsRegistry: null } as const;
/** Far longer than any wait below: a record that comes back did so because its transaction aborted, not a lock or timeout. */
const LOCK_MS = 20_000;

async function cluster(transactionVersion?: number, extra: { lockMs?: number; abortCheckMs?: number; twoPhaseCommit?: boolean } = {}): Promise<TestCluster> {
  const c = await startCluster({
    config: {
      topics: [
        { name: 'in', partitions: 2 },
        { name: 'out', partitions: 2 },
      ],
      ...(transactionVersion === undefined ? {} : { transactionVersion }),
      ...(extra.abortCheckMs === undefined ? {} : { transactionAbortCheckIntervalMs: extra.abortCheckMs }),
      ...(extra.twoPhaseCommit === undefined ? {} : { transactionTwoPhaseCommitEnable: extra.twoPhaseCommit }),
      shareGroup: { recordLockDurationMs: extra.lockMs ?? LOCK_MS, heartbeatIntervalMs: 100 },
    },
  });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, transactionalId: string): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId, lingerMs: 1, maxBlockMs: 5_000, transactionTimeoutMs: 60_000, ...quiet });
  cleanups.push(() => p.close(1_000));
  return p;
}

function consumer(c: TestCluster, groupId: string): KafkaShareConsumer {
  const s = new KafkaShareConsumer({ bootstrapServers: c.bootstrap, groupId, acknowledgementMode: 'transactional', fetchMaxWaitMs: 50, logger: null });
  cleanups.push(() => s.close(1_000));
  return s;
}

async function seed(c: TestCluster, from: number, count: number): Promise<void> {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 1, ...quiet });
  await Promise.all(Array.from({ length: count }, (_, i) => p.send({ topic: 'in', partition: 0, value: `v${from + i}` })));
  await p.close();
}

async function pollUntil(s: KafkaShareConsumer, count: number, timeoutMs = 5_000): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const records: ShareConsumerRecord[] = [];
  while (records.length < count && Date.now() < deadline) records.push(...(await s.poll(Math.min(300, deadline - Date.now()))));
  return records;
}

const values = (records: ShareConsumerRecord[]) => records.map((r) => Buffer.from(r.value!).toString()).sort();

/** The job dies: its connections are gone, nothing is ended. */
async function crash(client: KafkaProducer | TransactionalShareAcknowledger, s: KafkaShareConsumer): Promise<void> {
  const producer = client instanceof KafkaProducer ? client : (client as unknown as { producer: KafkaProducer }).producer;
  await (producer as unknown as { cluster: { close(): Promise<void> } }).cluster.close();
  await s.close(1_000);
}

describe('recovery from an older checkpoint while a newer transaction is open', () => {
  for (const t2 of ['ongoing', 'prepared'] as const) {
    it(`through the producer, T2 ${t2}: T1's output only, T2's records redelivered at once`, async () => {
      const c = await cluster();
      await seed(c, 0, 6);
      const s = consumer(c, 'job');
      s.subscribe(['in']);
      const sink = producer(c, 'job-sink-0');
      await sink.initTransactions();

      // T1: records v0-v2 → output, acks; checkpoint 1 saves the prepared transaction; completes; commit.
      const firstBatch = await pollUntil(s, 6);
      expect(firstBatch).toHaveLength(6);
      const t1 = firstBatch.slice(0, 3);
      const t2Records = firstBatch.slice(3);
      sink.beginTransaction();
      for (const r of t1) void sink.send({ topic: 'out', partition: 0, value: `T1-${Buffer.from(r.value!).toString()}` });
      await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(t1, 'accept'), s.groupMetadata());
      const checkpoint1 = (await sink.prepareTransaction()).toString(); // stored in the checkpoint as text
      await sink.commitTransaction();

      // T2 with the same producer: output and acks; the job dies before checkpoint 2 completes.
      sink.beginTransaction();
      for (const r of t2Records) void sink.send({ topic: 'out', partition: 1, value: `T2-${Buffer.from(r.value!).toString()}` });
      await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(t2Records, 'accept'), s.groupMetadata());
      if (t2 === 'prepared') await sink.prepareTransaction();
      else await sink.flush();
      await crash(sink, s);

      // Recovery restores checkpoint 1 and finishes its transaction.
      const outcome = await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, checkpoint1, 'commit');
      expect(outcome).toBe('aborted'); // T2 was open, and it is not the transaction checkpoint 1 names

      expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['T1-v0', 'T1-v1', 'T1-v2']);
      // T2's records come back at once (the lock is 20 s and the transaction timeout 60 s); T1's never.
      const s2 = consumer(c, 'job');
      s2.subscribe(['in']);
      const again = await pollUntil(s2, 3, 3_000);
      expect(values(again)).toEqual(['v3', 'v4', 'v5']);
      expect(again.every((r) => r.deliveryCount === 2)).toBe(true);
      expect(await s2.poll(300)).toEqual([]);

      // The restarted job reprocesses them exactly once.
      const restarted = producer(c, 'job-sink-0');
      await restarted.initTransactions();
      restarted.beginTransaction();
      for (const r of again) void restarted.send({ topic: 'out', partition: 1, value: `T2-${Buffer.from(r.value!).toString()}` });
      await restarted.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(again, 'accept'), s2.groupMetadata());
      await restarted.commitTransaction();
      expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['T1-v0', 'T1-v1', 'T1-v2', 'T2-v3', 'T2-v4', 'T2-v5']);
      expect(await s2.poll(300)).toEqual([]);
    });
  }

  it('through TransactionalShareAcknowledger.prepareAcknowledgements: the acks of the uncompleted checkpoint 2 are not committed', async () => {
    const c = await cluster();
    await seed(c, 0, 4);
    const s = consumer(c, 'source');
    s.subscribe(['in']);
    const acker = new TransactionalShareAcknowledger({ bootstrapServers: c.bootstrap, transactionalId: 'source-0', maxBlockMs: 5_000, ...quiet });
    cleanups.push(() => acker.close(1_000));
    await acker.initTransactions();
    const records = await pollUntil(s, 4);
    expect(records).toHaveLength(4);
    const saved1 = await acker.prepareAcknowledgements(ShareAcknowledgements.fromRecords(records.slice(0, 2), 'accept'), s.groupMetadata());
    expect(saved1).toBeInstanceOf(PreparedTxnState);
    await acker.commitPrepared(); // checkpoint 1 complete
    const saved2 = await acker.prepareAcknowledgements(ShareAcknowledgements.fromRecords(records.slice(2), 'accept'), s.groupMetadata());
    expect(saved2.equals(saved1)).toBe(false); // Transactions V2: every transaction has its own epoch
    await crash(acker, s);

    expect(await TransactionalShareAcknowledger.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('aborted');
    // Checkpoint 1's transaction already committed: completing it again is a no-op success.
    expect(await TransactionalShareAcknowledger.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('none');
    const s2 = consumer(c, 'source');
    s2.subscribe(['in']);
    const again = await pollUntil(s2, 2, 3_000);
    expect(values(again)).toEqual(values(records.slice(2)));
    expect(await s2.poll(300)).toEqual([]);
  });

  it('recovery from the checkpoint that names the open transaction commits it, exactly once', async () => {
    const c = await cluster();
    await seed(c, 0, 2);
    const s = consumer(c, 'exact');
    s.subscribe(['in']);
    const sink = producer(c, 'exact-sink');
    await sink.initTransactions();
    const records = await pollUntil(s, 2);
    sink.beginTransaction();
    for (const r of records) void sink.send({ topic: 'out', partition: 0, value: `X-${Buffer.from(r.value!).toString()}` });
    await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    const saved = await sink.prepareTransaction();
    await crash(sink, s); // checkpoint completed, the job died before committing
    const config = { bootstrapServers: c.bootstrap, logger: null };
    expect(await KafkaProducer.completeTransaction(config, PreparedTxnState.fromString(saved.toString()), 'commit')).toBe('committed');
    expect(await KafkaProducer.completeTransaction(config, saved, 'commit')).toBe('none');
    expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['X-v0', 'X-v1']);
    const s2 = consumer(c, 'exact');
    s2.subscribe(['in']);
    expect(await s2.poll(500)).toEqual([]);
  });
});

describe('an empty checkpoint period', () => {
  // Checkpoint 1 falls in an idle period: nothing sent, nothing acked, so no EndTxn goes out. Whether it
  // completes (commit) or is given up (abort), its transaction must not share its identity with the next one.
  for (const end of ['commit', 'abort'] as const) {
    it(`a${end === 'commit' ? ' committed' : 'n aborted'} empty prepared transaction does not share its identity with the next one: recovery from its checkpoint aborts the next`, async () => {
      const c = await cluster();
      await seed(c, 0, 2);
      const s = consumer(c, `idle-${end}`);
      s.subscribe(['in']);
      const sink = producer(c, `idle-${end}-sink`);
      await sink.initTransactions();
      sink.beginTransaction();
      const saved1 = await sink.prepareTransaction();
      await (end === 'commit' ? sink.commitTransaction() : sink.abortTransaction());
      expect(sink.transactionSnapshot().equals(saved1)).toBe(false);
      // The next period has input: T2, prepared; the job dies before checkpoint 2 completes.
      const records = await pollUntil(s, 2);
      sink.beginTransaction();
      for (const r of records) void sink.send({ topic: 'out', partition: 0, value: `T2-${Buffer.from(r.value!).toString()}` });
      await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
      const saved2 = await sink.prepareTransaction();
      expect(saved2.equals(saved1)).toBe(false);
      await crash(sink, s);
      // Recovery restores checkpoint 1: T2 is not the transaction it names, so T2 is aborted, never committed.
      expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('aborted');
      expect(await readCommitted(c.bootstrap, 'out', 500)).toEqual([]);
      const s2 = consumer(c, `idle-${end}`);
      s2.subscribe(['in']);
      expect(values(await pollUntil(s2, 2, 3_000))).toEqual(values(records));
    });
  }
});

describe('two-phase commit and the records its share acks pin (coordinator/share/README.md)', () => {
  it('a 2PC transaction outlives its timeout and the record locks, its acked records stay pinned, and a new instance that does not keep it releases them at once', async () => {
    const c = await cluster(undefined, { lockMs: 300, abortCheckMs: 50 });
    await seed(c, 0, 2);
    const s = consumer(c, 'pinned');
    s.subscribe(['in']);
    const p = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId: 'pin-2pc', transactionTwoPhaseCommitEnable: true, transactionTimeoutMs: 200, maxBlockMs: 5_000, lingerMs: 1, ...quiet });
    cleanups.push(() => p.close(1_000));
    await p.initTransactions();
    const records = await pollUntil(s, 2);
    p.beginTransaction();
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    const state = await p.prepareTransaction();
    await crash(p, s);
    // 5× the transaction timeout (checked every 50 ms) and 5× the lock: still open, the records still pinned.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(c.brokers[0]!.transactions.get('pin-2pc')?.state).toBe(1 /* ONGOING */);
    const s2 = consumer(c, 'pinned');
    s2.subscribe(['in']);
    expect(await pollUntil(s2, 1, 600)).toEqual([]);
    // The bound: the application's recovery decides; an instance that starts without keeping it aborts it.
    const fresh = producer(c, 'pin-2pc');
    await fresh.initTransactions();
    const back = await pollUntil(s2, 2, 3_000);
    expect(values(back)).toEqual(values(records));
    // The saved state now names an aborted transaction: completing it finds nothing open.
    expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, state, 'commit')).toBe('none');
  });
});

describe('the protocol the producer picks', () => {
  it('Transactions V2 when the broker finalizes it: every commit hands the producer a new epoch, with no AddPartitionsToTxn or AddOffsetsToTxn', async () => {
    const c = await cluster();
    const p = producer(c, 'tv2-client');
    await p.initTransactions();
    const epochs: number[] = [];
    for (let i = 0; i < 3; i++) {
      p.beginTransaction();
      await p.send({ topic: 'out', partition: i % 2, value: `tv2-${i}` });
      await p.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: BigInt(i + 1) }], 'tv2-group');
      epochs.push(p.transactionSnapshot().producerEpoch);
      await p.commitTransaction();
    }
    expect(epochs[1]).toBe(epochs[0]! + 1);
    expect(epochs[2]).toBe(epochs[0]! + 2);
    const served = c.brokers[0]!.metrics().requestVersions;
    expect(served['AddPartitionsToTxn']).toBeUndefined();
    expect(served['AddOffsetsToTxn']).toBeUndefined();
    expect(Object.keys(served['EndTxn'] ?? {})).toEqual(['5']);
    expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['tv2-0', 'tv2-1', 'tv2-2']);
  });

  it('the classic protocol on a broker pinned to transaction.version 1: the epoch stays, partitions and groups are added explicitly', async () => {
    const c = await cluster(1);
    const p = producer(c, 'tv1-client');
    await p.initTransactions();
    const epoch = p.transactionSnapshot().producerEpoch;
    for (let i = 0; i < 2; i++) {
      p.beginTransaction();
      await p.send({ topic: 'out', partition: 0, value: `tv1-${i}` });
      await p.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: BigInt(i + 1) }], 'tv1-group');
      await p.commitTransaction();
      expect(p.transactionSnapshot().producerEpoch).toBe(epoch);
    }
    const served = c.brokers[0]!.metrics().requestVersions;
    expect(Object.keys(served['AddPartitionsToTxn'] ?? {})).toEqual(['3']);
    expect(Object.keys(served['AddOffsetsToTxn'] ?? {}).length).toBe(1);
    expect(Object.keys(served['EndTxn'] ?? {})).toEqual(['4']);
    expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['tv1-0', 'tv1-1']);
    // Two-phase commit needs Transactions V2: the producer says so rather than risk naming the wrong transaction.
    const twoPc = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId: 'tv1-2pc', transactionTwoPhaseCommitEnable: true, maxBlockMs: 3_000, ...quiet });
    cleanups.push(() => twoPc.close(1_000));
    await expect(twoPc.initTransactions()).rejects.toThrow(/two-phase commit needs Transactions V2/);
  });

  it('completeTransaction on that broker refuses, since the saved id and epoch also name later transactions; with classicProtocolFallback it ends the open one with EndTxn', async () => {
    const c = await cluster(1);
    const p = producer(c, 'tv1-fallback');
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', partition: 0, value: 'tv1-saved' });
    const saved = p.transactionSnapshot().toString();
    const config = { bootstrapServers: c.bootstrap, maxBlockMs: 5_000, ...quiet };
    const refused = KafkaProducer.completeTransaction(config, saved, 'commit');
    await expect(refused).rejects.toBeInstanceOf(UnsupportedVersionError);
    await expect(refused).rejects.toThrow(/cannot tell the saved transaction from a later one, so it was not ended; pass classicProtocolFallback: true/);
    expect(await readCommitted(c.bootstrap, 'out', 500)).not.toContain('tv1-saved');
    await expect(KafkaProducer.completeTransaction({ ...config, classicProtocolFallback: true }, saved, 'commit')).resolves.toBe('committed');
    expect(await readCommitted(c.bootstrap, 'out', 500)).toContain('tv1-saved');
  });
});

describe('a broker that refuses two-phase commit', () => {
  it('initTransactions() of a 2PC producer says so and what to do', async () => {
    const c = await cluster(undefined, { twoPhaseCommit: false });
    const p = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId: 'refused-2pc', transactionTwoPhaseCommitEnable: true, maxBlockMs: 3_000, ...quiet });
    cleanups.push(() => p.close(1_000));
    await expect(p.initTransactions()).rejects.toThrow(/TRANSACTIONAL_ID_AUTHORIZATION_FAILED.*refuses two-phase commit/s);
  });
});

describe('PreparedTxnState', () => {
  it('round-trips its string form, with and without the transactional id, and rejects malformed text', () => {
    const state = new PreparedTxnState('a:b', 42n, 7);
    expect(state.toString()).toBe('42:7:a:b');
    expect(PreparedTxnState.fromString(state.toString()).equals(state)).toBe(true);
    expect(PreparedTxnState.fromString('42:7', 'a:b').equals(state)).toBe(true);
    expect(() => PreparedTxnState.fromString('42:7')).toThrow(/names no transactional id/);
    expect(() => PreparedTxnState.fromString('x:7:id')).toThrow(/expected "producerId:epoch/);
    expect(() => PreparedTxnState.fromString('1:40000:id')).toThrow(/outside/);
  });
});
