/**
 * The group protocols as KafkaConsumer wires them (membership-factory.ts),
 * end to end against our broker: groupProtocol 'consumer' (KIP-848, the
 * broker assigns) splits a topic, commits with the member epoch as the
 * generation, hands a leaving member's partitions over and feeds
 * sendOffsetsToTransaction; the classic protocol with 'cooperative-sticky'
 * revokes only what moves (KIP-429); the default strategy
 * ['range', 'cooperative-sticky'] rebalances EAGER with range, as Kafka's
 * ConsumerCoordinator does (the highest protocol every assignor supports).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord } from '../../client/index.js';
import type { TopicConfig } from '../../coordinator/config.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';
import { keys, pollAll, recorder, text } from './support/group-consumers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(topics: TopicConfig[]): Promise<TestCluster> {
  const c = await startCluster({
    config: {
      topics,
      groupInitialRebalanceDelayMs: 0,
      groupMinSessionTimeoutMs: 100,
      // KIP-848 members heartbeat at the broker's interval: low, so that each reconciliation step takes a fraction of a second.
      groupConsumerHeartbeatIntervalMs: 200,
      groupConsumerMinHeartbeatIntervalMs: 100,
    },
  });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 5, maxBlockMs: 5_000, logger: null, metricsRegistry: null, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

function member(c: TestCluster, extra: Partial<ConsumerConfig>): KafkaConsumer {
  const k = new KafkaConsumer({
    bootstrapServers: c.bootstrap,
    logger: null,
    autoOffsetReset: 'earliest',
    enableAutoCommit: false,
    fetchMaxWaitMs: 50,
    heartbeatIntervalMs: 100,
    sessionTimeoutMs: 3_000,
    maxPollIntervalMs: 10_000,
    ...extra,
  });
  cleanups.push(() => k.close(1_000));
  return k;
}

const ALL = ['in-0', 'in-1', 'in-2', 'in-3'];

describe("groupProtocol 'consumer' (KIP-848) through KafkaConsumer", () => {
  it('two members split the topic, read every record once, commit with their member epochs; the survivor takes everything', async () => {
    const c = await cluster([{ name: 'in', partitions: 4 }]);
    const p = producer(c);
    for (let i = 0; i < 40; i++) await p.send({ topic: 'in', partition: i % 4, value: `v${i}` });
    const events: string[] = [];
    // Auto-commit (only at revocation, with this interval): a commits what it read of the partitions it gives b before it lets them go.
    const auto = { groupId: 'kip848', groupProtocol: 'consumer', enableAutoCommit: true, autoCommitIntervalMs: 60_000 } as const;
    const a = member(c, auto);
    const b = member(c, auto);
    a.subscribe(['in'], recorder(events, 'a'));
    b.subscribe(['in'], recorder(events, 'b'));
    const seen = await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2);
    expect([...keys(a.assignment()), ...keys(b.assignment())].sort()).toEqual(ALL);
    await pollAll([a, b], () => seen.length >= 40, seen);
    expect(seen.map(text).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`).sort());
    expect(new Set(seen.map((r) => `${r.partition}@${r.offset}`)).size).toBe(40);
    // The member epoch is the generation a KIP-848 member commits with (Kafka's AsyncKafkaConsumer.groupMetadata).
    for (const k of [a, b]) {
      const meta = k.groupMetadata();
      expect(meta.generationId).toBeGreaterThan(0);
      expect(meta.memberId).not.toBe('');
      await k.commitSync();
      const committed = await k.committed(k.assignment());
      expect([...committed.values()].map((o) => o.offset)).toEqual([10n, 10n]);
    }
    expect(a.groupMetadata().memberId).not.toBe(b.groupMetadata().memberId);
    const mark = events.length;
    const bs = keys(b.assignment());
    await b.close();
    await pollAll([a], () => a.assignment().length === 4);
    expect(keys(a.assignment())).toEqual(ALL);
    // Incremental: b revoked its partitions as it left; a gave up nothing and its listener hears only what it gained.
    expect(events.slice(mark).filter((e) => e !== 'a+' && e !== 'b+')).toEqual([`b-${bs.join(',')}`, `a+${bs.join(',')}`]);
    // The survivor resumes b's partitions at b's commits: only the new records come.
    for (let i = 0; i < 4; i++) await p.send({ topic: 'in', partition: i, value: `late${i}` });
    const after: ConsumerRecord[] = [];
    await pollAll([a], () => after.length >= 4, after);
    expect(after.map(text).sort()).toEqual(['late0', 'late1', 'late2', 'late3']);
  });

  it('groupMetadata() feeds sendOffsetsToTransaction: the offsets commit with the output in one transaction', async () => {
    const c = await cluster([
      { name: 'in', partitions: 2 },
      { name: 'out', partitions: 1 },
    ]);
    const p = producer(c);
    for (let i = 0; i < 10; i++) await p.send({ topic: 'in', partition: i % 2, value: `v${i}` });
    const a = member(c, { groupId: 'kip848-eos', groupProtocol: 'consumer', isolationLevel: 'read_committed' });
    a.subscribe(['in']);
    const seen = await pollAll([a], () => a.assignment().length === 2);
    await pollAll([a], () => seen.length >= 10, seen);
    const t = producer(c, { transactionalId: 'kip848-eos-1' });
    await t.initTransactions();
    t.beginTransaction();
    for (const r of seen) await t.send({ topic: 'out', value: `out-${text(r)}` });
    const offsets = a.assignment().map((tp) => ({ ...tp, offset: 5n }));
    expect(a.groupMetadata().generationId).toBeGreaterThan(0);
    await t.sendOffsetsToTransaction(offsets, a.groupMetadata());
    await t.commitTransaction();
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(seen.map((r) => `out-${text(r)}`).sort());
    expect([...(await a.committed(a.assignment())).values()].map((o) => o.offset)).toEqual([5n, 5n]);
  });
});

describe('the classic protocol with cooperative-sticky (KIP-429) through KafkaConsumer', () => {
  it('a joining member makes the owner revoke only what moves; a second rebalance hands it over', async () => {
    const c = await cluster([{ name: 'in', partitions: 4 }]);
    const events: string[] = [];
    const a = member(c, { groupId: 'coop', partitionAssignmentStrategy: ['cooperative-sticky'] });
    a.subscribe(['in'], recorder(events, 'a'));
    await pollAll([a], () => a.assignment().length === 4);
    const before = a.groupMetadata().generationId;
    const b = member(c, { groupId: 'coop', partitionAssignmentStrategy: ['cooperative-sticky'] });
    b.subscribe(['in'], recorder(events, 'b'));
    await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, [], 30_000);
    const moved = keys(b.assignment());
    expect([...keys(a.assignment()), ...moved].sort()).toEqual(ALL);
    // Never everything at once (that is EAGER): a revokes exactly the two partitions b ends with.
    expect(events).not.toContain('a-in-0,in-1,in-2,in-3');
    expect(events.filter((e) => e.startsWith('a-') && e !== 'a-')).toEqual([`a-${moved.join(',')}`]);
    // Each moved partition reached b only after a had revoked it, which takes a second rebalance.
    const revokedAt = events.indexOf(`a-${moved.join(',')}`);
    const gotAt = events.findIndex((e) => e.startsWith('b+') && moved.every((tp) => e.slice(2).split(',').includes(tp)));
    expect(revokedAt).toBeGreaterThanOrEqual(0);
    expect(gotAt).toBeGreaterThan(revokedAt);
    expect(a.groupMetadata().generationId).toBeGreaterThanOrEqual(before + 2);
  });

  it("the default ['range', 'cooperative-sticky'] rebalances EAGER with range, as Kafka does", async () => {
    const c = await cluster([{ name: 'in', partitions: 4 }]);
    const events: string[] = [];
    const a = member(c, { groupId: 'default' });
    a.subscribe(['in'], recorder(events, 'a'));
    await pollAll([a], () => a.assignment().length === 4);
    const b = member(c, { groupId: 'default' });
    b.subscribe(['in'], recorder(events, 'b'));
    await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2);
    // EAGER: a gave up all four before the rebalance, then got its range back.
    expect(events).toContain('a-in-0,in-1,in-2,in-3');
    // Range: each member a run of consecutive partitions, the first to the member id that sorts first.
    const [first, second] = [a, b].sort((x, y) => (x.groupMetadata().memberId < y.groupMetadata().memberId ? -1 : 1));
    expect(keys(first!.assignment())).toEqual(['in-0', 'in-1']);
    expect(keys(second!.assignment())).toEqual(['in-2', 'in-3']);
  });
});
