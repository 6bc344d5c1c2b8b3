/**
 * End to end against real kipgen brokers (coordinator/, in this process, over
 * TCP on 127.0.0.1): the KIP's three use cases, abort and redelivery, lock
 * expiry, fencing, transaction timeout, and the compatibility rules.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  KafkaProducer,
  KafkaShareConsumer,
  ProducerFencedError,
  ShareAcknowledgements,
  TransactionalShareAcknowledger,
  UnsupportedVersionError,
  type KafkaError,
  type Logger,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(options: Parameters<typeof startCluster>[0] = {}): Promise<TestCluster> {
  const c = await startCluster({
    ...options,
    config: {
      topics: [
        { name: 'in', partitions: 3 },
        { name: 'out', partitions: 2 },
      ],
      ...options.config,
      shareGroup: {
        recordLockDurationMs: 5_000,
        heartbeatIntervalMs: 100,
        isolationLevel: 'read_committed',
        autoOffsetReset: 'earliest',
        ...options.config?.shareGroup,
      },
    },
  });
  cleanups.push(() => c.close());
  return c;
}

const quiet = { logger: null, metricsRegistry: null } as const;

function producer(c: TestCluster, transactionalId?: string, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({
    bootstrapServers: c.bootstrap,
    transactionalId,
    lingerMs: 1,
    maxBlockMs: 5_000,
    ...quiet,
    ...extra,
  });
  cleanups.push(() => p.close(1_000));
  return p;
}

function consumer(c: TestCluster, groupId: string, extra: Record<string, unknown> = {}): KafkaShareConsumer {
  const s = new KafkaShareConsumer({
    bootstrapServers: c.bootstrap,
    groupId,
    acknowledgementMode: 'transactional',
    fetchMaxWaitMs: 50,
    logger: null,
    ...extra,
  });
  cleanups.push(() => s.close(1_000));
  return s;
}

async function seed(c: TestCluster, count: number, topic = 'in'): Promise<void> {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 1, ...quiet });
  await Promise.all(Array.from({ length: count }, (_, i) => p.send({ topic, key: `k${i}`, value: `v${i}`, headers: { seq: String(i), empty: null } })));
  await p.close();
}

async function pollUntil(s: KafkaShareConsumer, count: number, timeoutMs = 5_000): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const records: ShareConsumerRecord[] = [];
  while (records.length < count && Date.now() < deadline) records.push(...(await s.poll(Math.min(300, deadline - Date.now()))));
  return records;
}

const values = (records: ShareConsumerRecord[]) => records.map((r) => Buffer.from(r.value!).toString()).sort();
const ids = (records: ShareConsumerRecord[]) => records.map((r) => `${r.partition}@${r.offset}`).sort();

describe('KIP-1289 end to end', () => {
  it('2.1 consume-transform-produce on 3 nodes: output and acks commit together; after abort neither, and records come back at once', async () => {
    const c = await cluster({ nodes: 3 });
    await seed(c, 9);
    const s = consumer(c, 'ctp');
    s.subscribe(['in']);
    const p = producer(c, 'ctp-1');
    await p.initTransactions();

    // First attempt: aborted.
    const first = await pollUntil(s, 9);
    expect(values(first)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8']);
    p.beginTransaction();
    for (const r of first) void p.send({ topic: 'out', key: r.key, value: `T-${Buffer.from(r.value!).toString()}` });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(first, 'accept'), s.groupMetadata());
    await p.abortTransaction();
    expect(await readCommitted(c.bootstrap, 'out')).toEqual([]);

    // Redelivered at once (lock is 5 s), with the delivery count kept.
    const started = Date.now();
    const second = await pollUntil(s, 9, 3_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ids(second)).toEqual(ids(first));
    expect(second.every((r) => r.deliveryCount === 2)).toBe(true);

    // Second attempt: committed.
    p.beginTransaction();
    for (const r of second) void p.send({ topic: 'out', key: r.key, value: `T-${Buffer.from(r.value!).toString()}` });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(second, 'accept'), s.groupMetadata());
    await p.commitTransaction();
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(['T-v0', 'T-v1', 'T-v2', 'T-v3', 'T-v4', 'T-v5', 'T-v6', 'T-v7', 'T-v8']);
    expect(p.metrics()).toMatchObject({ 'share-transaction-active': 0, 'share-transaction-abort-total': 1 });
    expect(p.metrics()['share-transaction-commit-time-ms'].count).toBe(1);
    expect(p.metrics()['share-transaction-prepare-time-ms'].count).toBe(2);
    // Accepted records never come back.
    expect(await s.poll(300)).toEqual([]);
  });

  it('2.2 a source without a producer: TransactionalShareAcknowledger commits acks, aborts redeliver', async () => {
    // prepareAcknowledgements() prepares a transaction: two-phase commit, on the broker and the acknowledger.
    const c = await cluster({ config: { transactionTwoPhaseCommitEnable: true } });
    await seed(c, 4);
    const s = consumer(c, 'source');
    s.subscribe(['in']);
    const acker = new TransactionalShareAcknowledger({
      bootstrapServers: c.bootstrap,
      transactionalId: 'src-1',
      transactionTwoPhaseCommitEnable: true,
      ...quiet,
    });
    cleanups.push(() => acker.close());
    await acker.initTransactions();
    const records = await pollUntil(s, 4);
    expect(records).toHaveLength(4);
    // Records come with key, headers and delivery count.
    for (const r of records) {
      const i = Buffer.from(r.value!).toString().slice(1);
      expect(Buffer.from(r.key!).toString()).toBe(`k${i}`);
      expect(r.headers.map((h) => [h.key, h.value && Buffer.from(h.value).toString()])).toEqual([
        ['seq', i],
        ['empty', null],
      ]);
      expect(r.deliveryCount).toBe(1);
      expect(r.topic).toBe('in');
    }
    const [a, b, ...rest] = records;
    // Accept two, release one, reject one: in one transaction.
    const acks = ShareAcknowledgements.fromRecords([a!], 'accept').add(b!, 'release').add(rest[0]!, 'reject').add(rest[1]!, 'accept');
    await acker.commitAcknowledgements(acks, s.groupMetadata());
    // Only the released record comes back, at once.
    const back = await pollUntil(s, 1, 2_000);
    expect(ids(back)).toEqual(ids([b!]));
    // An aborted transaction makes it available again at once.
    await acker.prepareAcknowledgements(ShareAcknowledgements.fromRecords(back, 'accept'), s.groupMetadata());
    await acker.abortAcknowledgements();
    const again = await pollUntil(s, 1, 2_000);
    expect(ids(again)).toEqual(ids([b!]));
    await acker.commitAcknowledgements(ShareAcknowledgements.fromRecords(again, 'accept'), 'source');
    expect(await s.poll(300)).toEqual([]);
    expect(acker.metrics()['share-transaction-abort-total']).toBe(1);
  });

  it('2.3 source + sink in one transaction, prepared at a checkpoint and committed after a restart', async () => {
    const c = await cluster({ config: { transactionTwoPhaseCommitEnable: true } });
    await seed(c, 5);
    const s = consumer(c, 'flink');
    s.subscribe(['in']);
    const sink = producer(c, 'flink-sink-0', { transactionTwoPhaseCommitEnable: true });
    await sink.initTransactions();
    const records = await pollUntil(s, 5);
    sink.beginTransaction();
    for (const r of records) void sink.send({ topic: 'out', value: `S-${Buffer.from(r.value!).toString()}` });
    await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    // prepareCommit + snapshotState: flush, acks pending, persist the transaction.
    const checkpoint = await sink.prepareTransaction();
    expect(checkpoint).toMatchObject({ transactionalId: 'flink-sink-0' });
    expect(await readCommitted(c.bootstrap, 'out', 0)).toEqual([]);
    // The job "crashes": the producer's connections are gone without ending the transaction.
    await (sink as unknown as { cluster: { close(): Promise<void> } }).cluster.close();
    // notifyCheckpointComplete after the restart: commit exactly that transaction; once it committed, completing it
    // again (or aborting it) changes nothing and says it committed (KIP-939).
    expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, checkpoint, 'commit')).toBe('committed');
    expect(await TransactionalShareAcknowledger.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, checkpoint, 'commit')).toBe('committed');
    expect(await KafkaProducer.completeTransaction({ bootstrapServers: c.bootstrap, logger: null }, checkpoint, 'abort')).toBe('committed');
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(['S-v0', 'S-v1', 'S-v2', 'S-v3', 'S-v4']);
    // The acks committed with the output: nothing is redelivered.
    expect(await s.poll(300)).toEqual([]);
    // The restarted job's producer takes over the transactional id.
    const restarted = producer(c, 'flink-sink-0');
    await restarted.initTransactions();
  });

  it('records never acknowledged come back when their lock expires', async () => {
    const c = await cluster({ config: { shareGroup: { recordLockDurationMs: 400 } } });
    await seed(c, 3);
    const s = consumer(c, 'expiry');
    s.subscribe(['in']);
    const first = await pollUntil(s, 3);
    expect(first).toHaveLength(3);
    const started = Date.now();
    const again = await pollUntil(s, 3, 3_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(ids(again)).toEqual(ids(first));
    expect(again.every((r) => r.deliveryCount === 2)).toBe(true);
  });

  it('a zombie producer is fenced: its output and acks are discarded and the records redelivered', async () => {
    const c = await cluster();
    await seed(c, 3);
    const s = consumer(c, 'zombie');
    s.subscribe(['in']);
    const zombie = producer(c, 'shared-id');
    await zombie.initTransactions();
    const records = await pollUntil(s, 3);
    zombie.beginTransaction();
    await zombie.send({ topic: 'out', value: 'zombie-output' });
    await zombie.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    // A new instance with the same transactional id fences the zombie and aborts its transaction.
    const successor = producer(c, 'shared-id');
    await successor.initTransactions();
    const error = await zombie.commitTransaction().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProducerFencedError);
    expect(zombie.transactionState).toBe('FATAL_ERROR');
    expect(await readCommitted(c.bootstrap, 'out')).toEqual([]);
    const back = await pollUntil(s, 3, 3_000);
    expect(ids(back)).toEqual(ids(records));
    successor.beginTransaction();
    await successor.send({ topic: 'out', value: 'successor-output' });
    await successor.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(back, 'accept'), s.groupMetadata());
    await successor.commitTransaction();
    expect(await readCommitted(c.bootstrap, 'out')).toEqual(['successor-output']);
  });

  it('a transaction that outlives transaction.timeout.ms is aborted by the coordinator and counted as a timeout', async () => {
    const c = await cluster();
    await seed(c, 2);
    const s = consumer(c, 'slow');
    s.subscribe(['in']);
    const p = producer(c, 'slow-1', { transactionTimeoutMs: 300 });
    await p.initTransactions();
    const records = await pollUntil(s, 2);
    p.beginTransaction();
    await p.send({ topic: 'out', value: 'late' });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
    await new Promise((r) => setTimeout(r, 800));
    const error = (await p.commitTransaction().catch((e: unknown) => e)) as KafkaError;
    expect(error.name).toMatch(/ProducerFencedError|InvalidProducerEpochError|TransactionAbortableError|InvalidTxnStateError/);
    expect(p.metrics()['share-transaction-timeout-total']).toBe(1);
    expect(p.metrics()['share-transaction-active']).toBe(0);
    expect(await readCommitted(c.bootstrap, 'out')).toEqual([]);
    const back = await pollUntil(s, 2, 3_000);
    expect(ids(back)).toEqual(ids(records));
  });

  it('a broker without the KIP-1289 APIs fails fast in transactional mode, and falls back only when opted in', async () => {
    const c = await cluster({ config: { kip1289: false } });
    await seed(c, 2);
    const strict = consumer(c, 'old-broker');
    strict.subscribe(['in']);
    const error = await strict.poll(500).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedVersionError);
    expect((error as Error).message).toMatch(
      /does not support TxnShareAcknowledge \(API 96, KIP-1289; kipgen sends v0–1\): it advertises API keys .*allowExplicitFallback/,
    );

    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };
    const lenient = consumer(c, 'old-broker-2', { allowExplicitFallback: true, logger });
    lenient.subscribe(['in']);
    const records = await pollUntil(lenient, 2);
    expect(records).toHaveLength(2);
    expect(lenient.acknowledgementMode).toBe('explicit');
    expect(warnings.join('\n')).toMatch(/falling back to 'explicit' acknowledgements/);
    for (const r of records) lenient.acknowledge(r, 'accept');
    const result = await lenient.commitSync();
    expect([...result.values()].every((e) => e === null)).toBe(true);
    expect(await lenient.poll(300)).toEqual([]);

    // And the producer side refuses to put share acks into a transaction.
    const p = producer(c, 'old-1');
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), lenient.groupMetadata())).rejects.toBeInstanceOf(
      UnsupportedVersionError,
    );
    await p.abortTransaction();

    // A TransactionalShareAcknowledger, whose only use is share acks, refuses at initTransactions, before fencing anyone.
    const acker = new TransactionalShareAcknowledger({ bootstrapServers: c.bootstrap, transactionalId: 'old-acker', maxBlockMs: 5_000, ...quiet });
    cleanups.push(() => acker.close(1_000));
    const initError = await acker.initTransactions().catch((e: unknown) => e);
    expect(initError).toBeInstanceOf(UnsupportedVersionError);
    expect((initError as Error).message).toMatch(/does not support AddShareAcksToTxn \(API 95, KIP-1289; kipgen sends v0\): it advertises API keys 0–\d+/);
    expect(acker.transactionState).toBe('UNINITIALIZED');
  });

  it('implicit and explicit modes acknowledge on their own', async () => {
    const c = await cluster({ config: { shareGroup: { recordLockDurationMs: 300 } } });
    await seed(c, 4);
    const implicit = consumer(c, 'implicit', { acknowledgementMode: 'implicit' });
    implicit.subscribe(['in']);
    expect(await pollUntil(implicit, 4)).toHaveLength(4);
    // The next poll accepts them; they never come back, even after the lock time.
    await implicit.poll(100);
    await new Promise((r) => setTimeout(r, 400));
    expect(await implicit.poll(200)).toEqual([]);

    const explicit = consumer(c, 'explicit', { acknowledgementMode: 'explicit' });
    explicit.subscribe(['in']);
    const records = await pollUntil(explicit, 4);
    await expect(explicit.poll(10)).rejects.toThrow(/every record must be acknowledged before the next poll/);
    for (const r of records) explicit.acknowledge(r, r.offset === records[0]!.offset && r.partition === records[0]!.partition ? 'release' : 'accept');
    const back = await pollUntil(explicit, 1, 2_000);
    expect(ids(back)).toEqual(ids([records[0]!]));
    explicit.acknowledge(back[0]!, 'accept');
    await explicit.commitSync();
    expect(await explicit.poll(200)).toEqual([]);
  });

  it('a member expired by the session timeout rejoins at its next ShareFetch (UNKNOWN_MEMBER_ID), not at its next heartbeat', async () => {
    // Heartbeats seconds apart against a 500 ms session timeout: the member is expired between two heartbeats.
    const c = await cluster({ config: { shareGroup: { sessionTimeoutMs: 500, heartbeatIntervalMs: 10_000, recordLockDurationMs: 30_000 } } });
    await seed(c, 3);
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    const s = consumer(c, 'expiring', { logger });
    s.subscribe(['in']);
    const first = await pollUntil(s, 3);
    expect(new Set(ids(first)).size).toBe(3);
    // Expired (session timeout + the broker's 1 s housekeeping); its records were released.
    await new Promise((r) => setTimeout(r, 2_000));
    const started = Date.now();
    const again = await pollUntil(s, 3, 5_000);
    const elapsed = Date.now() - started;
    // Before the fix the broker kept delivering to the expired member, or (with the broker check alone) the
    // consumer spun on UNKNOWN_MEMBER_ID until its next heartbeat told it it was out of the group.
    expect([...new Set(ids(again))]).toEqual([...new Set(ids(first))]);
    expect(again.every((r) => r.deliveryCount >= 2)).toBe(true);
    expect(elapsed).toBeLessThan(1_500); // ~50 ms; ~3 s without the client change
    expect(warnings.some((w) => /UNKNOWN_MEMBER_ID on a share request\); rejoining/.test(w))).toBe(true);
  });
});
