/**
 * Exactly-once across checkpoint restarts (DESIGN §5.6): a job
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
  InvalidTxnStateError,
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

/**
 * Checkpointing prepares transactions, which needs two-phase commit (KIP-939) on the broker: on here unless
 * `twoPhaseCommit: false`; `twoPhaseCommit: null` leaves the broker's default (off, as Kafka's).
 */
async function cluster(
  transactionVersion?: number,
  extra: { lockMs?: number; abortCheckMs?: number; twoPhaseCommit?: boolean | null } = {},
): Promise<TestCluster> {
  const twoPhaseCommit = extra.twoPhaseCommit === undefined ? true : extra.twoPhaseCommit;
  const c = await startCluster({
    config: {
      topics: [
        { name: 'in', partitions: 2 },
        { name: 'out', partitions: 2 },
      ],
      ...(transactionVersion === undefined ? {} : { transactionVersion }),
      ...(extra.abortCheckMs === undefined ? {} : { transactionAbortCheckIntervalMs: extra.abortCheckMs }),
      ...(twoPhaseCommit === null ? {} : { transactionTwoPhaseCommitEnable: twoPhaseCommit }),
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

/** A checkpointing job's producer: prepareTransaction() needs two-phase commit. */
function sink(c: TestCluster, transactionalId: string): KafkaProducer {
  const p = new KafkaProducer({
    bootstrapServers: c.bootstrap,
    transactionalId,
    transactionTwoPhaseCommitEnable: true,
    lingerMs: 1,
    maxBlockMs: 5_000,
    ...quiet,
  });
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
      const job = sink(c, 'job-sink-0');
      await job.initTransactions();

      // T1: records v0-v2 → output, acks; checkpoint 1 saves the prepared transaction; completes; commit.
      const firstBatch = await pollUntil(s, 6);
      expect(firstBatch).toHaveLength(6);
      const t1 = firstBatch.slice(0, 3);
      const t2Records = firstBatch.slice(3);
      job.beginTransaction();
      for (const r of t1) void job.send({ topic: 'out', partition: 0, value: `T1-${Buffer.from(r.value!).toString()}` });
      await job.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(t1, 'accept'), s.groupMetadata());
      const checkpoint1 = (await job.prepareTransaction()).toString(); // stored in the checkpoint as text
      await job.commitTransaction();

      // T2 with the same producer: output and acks; the job dies before checkpoint 2 completes.
      job.beginTransaction();
      for (const r of t2Records) void job.send({ topic: 'out', partition: 1, value: `T2-${Buffer.from(r.value!).toString()}` });
      await job.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(t2Records, 'accept'), s.groupMetadata());
      if (t2 === 'prepared') await job.prepareTransaction();
      else await job.flush();
      await crash(job, s);

      // Recovery restores checkpoint 1 and finishes its transaction.
      const outcome = await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, checkpoint1, 'commit');
      // T2 was open, not the transaction checkpoint 1 names: aborted. T1 ended before, and the coordinator keeps no older state.
      expect(outcome).toBe('unknown');

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
    const acker = new TransactionalShareAcknowledger({
      bootstrapServers: c.bootstrap,
      transactionalId: 'source-0',
      transactionTwoPhaseCommitEnable: true,
      maxBlockMs: 5_000,
      ...quiet,
    });
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

    // Checkpoint 2's transaction was open: aborted. What became of checkpoint 1's the coordinator no longer knows.
    expect(await TransactionalShareAcknowledger.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('unknown');
    expect(await TransactionalShareAcknowledger.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('unknown');
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
    const job = sink(c, 'exact-sink');
    await job.initTransactions();
    const records = await pollUntil(s, 2);
    job.beginTransaction();
    for (const r of records) void job.send({ topic: 'out', partition: 0, value: `X-${Buffer.from(r.value!).toString()}` });
    await job.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    const saved = await job.prepareTransaction();
    await crash(job, s); // checkpoint completed, the job died before committing
    const config = { bootstrapServers: c.bootstrap, logger: null };
    expect(await KafkaProducer.completeTransaction(config, PreparedTxnState.fromString(saved.toString()), 'commit')).toBe('committed');
    // Again (a recovery that died before recording it): the coordinator still knows it committed, nothing twice.
    expect(await KafkaProducer.completeTransaction(config, saved, 'commit')).toBe('committed');
    expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['X-v0', 'X-v1']);
    const s2 = consumer(c, 'exact');
    s2.subscribe(['in']);
    expect(await s2.poll(500)).toEqual([]);
  });
});

describe('prepareTransaction needs two-phase commit; completeTransaction says what became of the saved transaction', () => {
  it("prepareTransaction() without two-phase commit throws InvalidTxnStateError (Kafka's KafkaProducer.prepareTransaction); the transaction can still commit", async () => {
    const c = await cluster();
    const p = producer(c, 'no-2pc');
    await p.initTransactions();
    p.beginTransaction();
    const sent = p.send({ topic: 'out', partition: 0, value: 'no-2pc' });
    const refused = p.prepareTransaction();
    await expect(refused).rejects.toBeInstanceOf(InvalidTxnStateError);
    await expect(refused).rejects.toThrow(/prepareTransaction\(\) needs two-phase commit: set transactionTwoPhaseCommitEnable: true/);
    expect(p.transactionState).toBe('IN_TRANSACTION');
    await sent;
    await p.commitTransaction();
    expect(await readCommitted(c.bootstrap, 'out', 500)).toContain('no-2pc');
  });

  it("'committed' and 'aborted' while the coordinator's state still shows the saved transaction's end (its epoch + 1), 'unknown' once it moved past it", async () => {
    const c = await cluster();
    const config = { bootstrapServers: c.bootstrap, maxBlockMs: 5_000, logger: null };
    // Ended aborted by its producer: COMPLETE_ABORT at the saved epoch + 1 (before, completeTransaction answered 'none').
    const a = sink(c, 'fate-aborted');
    await a.initTransactions();
    a.beginTransaction();
    await a.send({ topic: 'out', partition: 0, value: 'fate-aborted' });
    const savedAborted = await a.prepareTransaction();
    await a.abortTransaction();
    expect(await KafkaProducer.completeTransaction(config, savedAborted, 'commit')).toBe('aborted');
    // Committed, then asked again, for either result: 'committed', and nothing changes.
    const b = sink(c, 'fate-committed');
    await b.initTransactions();
    b.beginTransaction();
    await b.send({ topic: 'out', partition: 1, value: 'fate-committed' });
    const savedCommitted = await b.prepareTransaction();
    // Prepared: only the end may follow (the Java client's PREPARED_TRANSACTION).
    await expect(b.send({ topic: 'out', partition: 1, value: 'after-prepare' })).rejects.toThrow(
      /was prepared; only commitTransaction\(\) or abortTransaction\(\)/,
    );
    await b.commitTransaction();
    expect(await KafkaProducer.completeTransaction(config, savedCommitted, 'commit')).toBe('committed');
    expect(await KafkaProducer.completeTransaction(config, savedCommitted, 'abort')).toBe('committed');
    // Prepared with nothing in it and never ended: nothing of it reached the coordinator, so nothing of it commits.
    const e = sink(c, 'fate-empty');
    await e.initTransactions();
    e.beginTransaction();
    const savedEmpty = await e.prepareTransaction();
    await crash(e, consumer(c, 'fate-empty-group'));
    expect(await KafkaProducer.completeTransaction(config, savedEmpty, 'commit')).toBe('aborted');
    // A later transaction of the same producer ended since: the coordinator keeps no older state.
    b.beginTransaction();
    await b.send({ topic: 'out', partition: 1, value: 'fate-later' });
    await b.commitTransaction();
    expect(await KafkaProducer.completeTransaction(config, savedCommitted, 'commit')).toBe('unknown');
    expect((await readCommitted(c.bootstrap, 'out', 500)).sort()).toEqual(['fate-committed', 'fate-later']);
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
      const job = sink(c, `idle-${end}-sink`);
      await job.initTransactions();
      job.beginTransaction();
      const saved1 = await job.prepareTransaction();
      await (end === 'commit' ? job.commitTransaction() : job.abortTransaction());
      expect(job.transactionSnapshot().equals(saved1)).toBe(false);
      // The next period has input: T2, prepared; the job dies before checkpoint 2 completes.
      const records = await pollUntil(s, 2);
      job.beginTransaction();
      for (const r of records) void job.send({ topic: 'out', partition: 0, value: `T2-${Buffer.from(r.value!).toString()}` });
      await job.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
      const saved2 = await job.prepareTransaction();
      expect(saved2.equals(saved1)).toBe(false);
      await crash(job, s);
      // Recovery restores checkpoint 1: T2 is not the transaction it names, so T2 is aborted, never committed.
      expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, saved1, 'commit')).toBe('unknown');
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
    const p = new KafkaProducer({
      bootstrapServers: c.bootstrap,
      transactionalId: 'pin-2pc',
      transactionTwoPhaseCommitEnable: true,
      transactionTimeoutMs: 200,
      maxBlockMs: 5_000,
      lingerMs: 1,
      ...quiet,
    });
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
    // The new instance aborted it (fencing bumps the epoch twice under TV2) and moved on: the coordinator no longer holds it.
    expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, state, 'commit')).toBe('unknown');
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
    const twoPc = new KafkaProducer({
      bootstrapServers: c.bootstrap,
      transactionalId: 'tv1-2pc',
      transactionTwoPhaseCommitEnable: true,
      maxBlockMs: 3_000,
      ...quiet,
    });
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
  it('by default, as Kafka (transaction.two.phase.commit.enable false): initTransactions() of a 2PC producer says so and what to do', async () => {
    const c = await cluster(undefined, { twoPhaseCommit: null });
    const p = new KafkaProducer({
      bootstrapServers: c.bootstrap,
      transactionalId: 'refused-2pc',
      transactionTwoPhaseCommitEnable: true,
      maxBlockMs: 3_000,
      ...quiet,
    });
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
