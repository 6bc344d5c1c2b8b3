/**
 * A record that comes back to its consumer while the transaction holding an
 * earlier delivery of it is still open (DESIGN §5.8), against a real kipgen
 * broker over TCP: the acquisition lock runs out between two polls of one
 * transaction, and the member is timed out and rejoins mid-transaction.
 * Exactly once: every input has one committed output, and nothing is
 * delivered again once the transaction committed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  CommitFailedError,
  KafkaProducer,
  KafkaShareConsumer,
  ShareAcknowledgements,
  TransactionAbortableError,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const quiet = { logger: null, metricsRegistry: null } as const;

async function cluster(shareGroup: Record<string, unknown>): Promise<TestCluster> {
  const c = await startCluster({
    config: {
      topics: [
        { name: 'in', partitions: 1 },
        { name: 'out', partitions: 1 },
      ],
      shareGroup: { heartbeatIntervalMs: 100, ...shareGroup },
    },
  });
  cleanups.push(() => c.close());
  return c;
}

async function seed(c: TestCluster, count: number): Promise<void> {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 1, ...quiet });
  await Promise.all(Array.from({ length: count }, (_, i) => p.send({ topic: 'in', value: `v${i}` })));
  await p.close();
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

async function transactionalProducer(c: TestCluster, transactionalId: string): Promise<KafkaProducer> {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId, lingerMs: 1, maxBlockMs: 5_000, ...quiet });
  cleanups.push(() => p.close(1_000));
  await p.initTransactions();
  return p;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const valueOf = (r: ShareConsumerRecord) => Buffer.from(r.value!).toString();

/**
 * One checkpoint of a Flink-style job (KIP §2.3): a transaction spanning two
 * polls `gapMs` apart, each record's output sent into it, the acks sent at
 * the end, then commit; an abortable failure aborts. Returns what it did.
 */
async function checkpoint(
  s: KafkaShareConsumer,
  p: KafkaProducer,
  gapMs: number,
): Promise<{ outcome: 'committed' | 'aborted' | 'empty'; polled: string[]; error?: unknown }> {
  p.beginTransaction();
  const acks = new ShareAcknowledgements();
  const polled: string[] = [];
  for (let i = 0; i < 2; i++) {
    if (i > 0) await sleep(gapMs);
    for (const r of await s.poll(300)) {
      polled.push(valueOf(r));
      void p.send({ topic: 'out', value: `${valueOf(r)}:done` }).catch(() => {});
      acks.add(r, 'accept');
    }
  }
  if (acks.isEmpty) {
    await p.abortTransaction();
    return { outcome: 'empty', polled };
  }
  try {
    await p.sendShareAcksToTransaction(acks, s.groupMetadata());
    await p.commitTransaction();
    return { outcome: 'committed', polled };
  } catch (error) {
    await p.abortTransaction();
    return { outcome: 'aborted', polled, error };
  }
}

describe('a record back inside the transaction that holds it', () => {
  it('a lock that runs out between two polls of one transaction: the repeat is withheld and its one output committed', async () => {
    // share.record.lock.duration.ms 150 ms, polls 400 ms apart (KIP §2.3's checkpoint interval longer than the lock).
    const c = await cluster({ recordLockDurationMs: 150 });
    await seed(c, 4);
    const s = consumer(c, 'lock-expiry');
    s.subscribe(['in']);
    const p = await transactionalProducer(c, 'lock-expiry-1');
    const outcomes: string[] = [];
    for (let round = 0; round < 8 && outcomes.filter((o) => o === 'committed').length === 0; round++) {
      const result = await checkpoint(s, p, 400);
      outcomes.push(result.outcome);
      if (result.outcome === 'aborted') expect(result.error).toBeInstanceOf(CommitFailedError);
      // A committed transaction never saw a record twice. (The first may: before any transaction carried its
      // acks, the consumer cannot know where one ends, so it hands the repeat out and makes that one abort.)
      if (result.outcome === 'committed') expect(new Set(result.polled).size).toBe(result.polled.length);
    }
    expect(outcomes).toContain('committed');
    // Before the fix: each of the 4 inputs output twice in the one transaction, every run.
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(['v0:done', 'v1:done', 'v2:done', 'v3:done']);
    // All acknowledged: nothing comes back, also after the lock time.
    await sleep(300);
    expect(await s.poll(300)).toEqual([]);
  });

  it('once a transaction carried its acks, a repeat is withheld from poll() and released when the transaction ends without its ack', async () => {
    const c = await cluster({ recordLockDurationMs: 150 });
    await seed(c, 2);
    const s = consumer(c, 'withheld');
    s.subscribe(['in']);
    const p = await transactionalProducer(c, 'withheld-1');
    // A first transaction links the consumer to the producer.
    const first = await s.poll(2_000);
    expect(first).toHaveLength(2);
    p.beginTransaction();
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords([first[0]!], 'accept'), s.groupMetadata());
    await p.commitTransaction();
    // first[1] was handed out in that transaction without an ack: it is free for the next one.
    p.beginTransaction();
    await sleep(300); // its lock ran out
    const again = await s.poll(1_000);
    expect(again.map(valueOf)).toEqual([valueOf(first[1]!)]);
    await sleep(300); // and again, inside this transaction: withheld
    expect(await s.poll(500)).toEqual([]);
    // The transaction aborts without its ack: the withheld delivery is released and comes back at once.
    await p.abortTransaction();
    const back = await s.poll(1_000);
    expect(back.map(valueOf)).toEqual([valueOf(first[1]!)]);
    p.beginTransaction();
    await p.send({ topic: 'out', value: `${valueOf(back[0]!)}:done` });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(back, 'accept'), s.groupMetadata());
    await p.commitTransaction();
    expect(await readCommitted(c.bootstrap, 'out')).toEqual(['v1:done']);
  });

  it('a member timed out mid-transaction: acks and commit fail abortable, and after the abort each record is output once', async () => {
    // Heartbeats seconds apart against a 500 ms session timeout: the member is expired inside the transaction.
    const c = await cluster({ sessionTimeoutMs: 500, heartbeatIntervalMs: 10_000, recordLockDurationMs: 30_000 });
    await seed(c, 3);
    const s = consumer(c, 'timed-out');
    s.subscribe(['in']);
    const p = await transactionalProducer(c, 'timed-out-1');
    p.beginTransaction();
    const polled: ShareConsumerRecord[] = [];
    const deadline = Date.now() + 5_000;
    while (polled.length < 3 && Date.now() < deadline) polled.push(...(await s.poll(300)));
    expect(polled).toHaveLength(3);
    for (const r of polled) void p.send({ topic: 'out', value: `${valueOf(r)}:done` }).catch(() => {});
    const epochBefore = s.groupMetadata().generationId;
    await sleep(2_000); // session timeout + the broker's 1 s housekeeping: the member is gone, its records released
    // The consumer hears UNKNOWN_MEMBER_ID, rejoins, and its next poll in this same transaction gets the records
    // back; before the fix they were handed out again, processed twice, and both outputs committed with one ack.
    const more: ShareConsumerRecord[] = [];
    const until = Date.now() + 1_500;
    while (Date.now() < until) more.push(...(await s.poll(200)));
    for (const r of more) void p.send({ topic: 'out', value: `${valueOf(r)}:done` }).catch(() => {});
    expect(s.groupMetadata().generationId).not.toBe(epochBefore);
    const acks = ShareAcknowledgements.fromRecords([...polled, ...more], 'accept');
    const error = await p.sendShareAcksToTransaction(acks, s.groupMetadata()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitFailedError);
    expect((error as Error).message).toMatch(/lost this member \(UNKNOWN_MEMBER_ID.*3 record\(s\)/);
    expect(p.transactionState).toBe('ABORTABLE_ERROR');
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(TransactionAbortableError);
    await p.abortTransaction();
    expect(await readCommitted(c.bootstrap, 'out')).toEqual([]);

    // After the abort the records come back, once each, and one transaction outputs them.
    const back: ShareConsumerRecord[] = [];
    const backDeadline = Date.now() + 5_000;
    while (back.length < 3 && Date.now() < backDeadline) back.push(...(await s.poll(300)));
    expect(back.map(valueOf).sort()).toEqual(['v0', 'v1', 'v2']);
    p.beginTransaction();
    for (const r of back) await p.send({ topic: 'out', value: `${valueOf(r)}:done` });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(back, 'accept'), s.groupMetadata());
    await p.commitTransaction();
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(['v0:done', 'v1:done', 'v2:done']);
    expect(await s.poll(300)).toEqual([]);
  });

  it('a membership loss after every record of the transaction has a pending ack does not fail it', async () => {
    const c = await cluster({ sessionTimeoutMs: 500, heartbeatIntervalMs: 10_000, recordLockDurationMs: 30_000 });
    await seed(c, 2);
    const s = consumer(c, 'staged-then-lost');
    s.subscribe(['in']);
    const p = await transactionalProducer(c, 'staged-then-lost-1');
    p.beginTransaction();
    const polled: ShareConsumerRecord[] = [];
    const deadline = Date.now() + 5_000;
    while (polled.length < 2 && Date.now() < deadline) polled.push(...(await s.poll(300)));
    for (const r of polled) await p.send({ topic: 'out', value: `${valueOf(r)}:done` });
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(polled, 'accept'), s.groupMetadata());
    await sleep(2_000);
    // The rejoin: pending acks stay with their transaction (TX_PENDING survives the member).
    expect(await s.poll(800)).toEqual([]);
    await p.commitTransaction();
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(['v0:done', 'v1:done']);
  });

  it('a member expired before its acks reach the share coordinator: TxnShareAcknowledge answers UNKNOWN_MEMBER_ID and the commit fails with CommitFailedError (abortable), its records delivered again', async () => {
    // Heartbeats 10 s apart against a 500 ms session: the consumer cannot learn of its expiry before the producer's
    // TxnShareAcknowledge does (the broker's housekeeping runs each second).
    const c = await cluster({ sessionTimeoutMs: 500, heartbeatIntervalMs: 10_000, recordLockDurationMs: 30_000 });
    await seed(c, 2);
    const s = consumer(c, 'expired-before-acks');
    s.subscribe(['in']);
    const p = await transactionalProducer(c, 'expired-before-acks-1');
    let polled: ShareConsumerRecord[] = [];
    for (let i = 0; i < 50 && polled.length < 2; i++) polled = polled.concat(await s.poll(100));
    expect(polled.map(valueOf).sort()).toEqual(['v0', 'v1']);
    p.beginTransaction();
    for (const r of polled) await p.send({ topic: 'out', value: `${valueOf(r)}:done` });
    await sleep(2_000);
    const failure = await p
      .sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(polled, 'accept'), s.groupMetadata())
      .then(() => p.commitTransaction())
      .then(
        () => null,
        (error: unknown) => error,
      );
    // Before: an ApiError naming UNKNOWN_MEMBER_ID, which says nothing of what to do; Kafka's TxnOffsetCommitHandler
    // wraps the same loss in CommitFailedException.
    expect(failure).toBeInstanceOf(CommitFailedError);
    expect(String(failure)).toMatch(/lost this member \(UNKNOWN_MEMBER_ID/);
    await p.abortTransaction();
    expect(await readCommitted(c.bootstrap, 'out')).toEqual([]);
    let again: ShareConsumerRecord[] = [];
    for (let i = 0; i < 50 && again.length < 2; i++) again = again.concat(await s.poll(100));
    expect(again.map(valueOf).sort()).toEqual(['v0', 'v1']);
  });
});
