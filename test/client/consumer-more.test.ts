/**
 * KafkaConsumer's metadata and lag calls and the rest of its group calls,
 * against real kipgen brokers over TCP: offsetsForTimes, listTopics,
 * partitionsFor with replicas and ISR, currentLag (high watermark, last
 * stable offset, the background end-offset look-up), subscribe(RegExp) in
 * both group protocols (classic: matched by the client and re-evaluated at
 * metadata refresh) and enforceRebalance.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Admin, ConfigError, IllegalStateError, KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord } from '../../client/index.js';
import type { TopicConfig } from '../../coordinator/config.js';
import { startCluster, type TestCluster } from './support/brokers.js';
import { keys } from './support/group-consumers.js';

const quiet = { logger: null, metricsRegistry: null } as const;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(topics: TopicConfig[], nodes = 1): Promise<TestCluster> {
  const c = await startCluster({ nodes, config: { topics, groupInitialRebalanceDelayMs: 0, groupMinSessionTimeoutMs: 100 } });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 5, maxBlockMs: 5_000, ...quiet, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

function consumer(c: TestCluster, extra: Partial<ConsumerConfig> = {}): KafkaConsumer {
  const k = new KafkaConsumer({
    bootstrapServers: c.bootstrap,
    logger: null,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 50,
    heartbeatIntervalMs: 100,
    sessionTimeoutMs: 3_000,
    maxPollIntervalMs: 10_000,
    ...extra,
  });
  cleanups.push(() => k.close(1_000));
  return k;
}

/** Polls until `done` holds (10 s at most). */
async function pollUntil(k: KafkaConsumer, done: () => boolean, seen: ConsumerRecord[] = []): Promise<ConsumerRecord[]> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) seen.push(...(await k.poll(100)));
  return seen;
}

/** The first non-empty batch poll() returns (10 s at most). */
async function firstBatch(k: KafkaConsumer): Promise<ConsumerRecord[]> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const batch = [...(await k.poll(100))];
    if (batch.length > 0) return batch;
  }
  return [];
}

describe('KafkaConsumer.offsetsForTimes', () => {
  it('finds the first offset at or after each timestamp, with its timestamp and leader epoch, and null past the end', async () => {
    const c = await cluster([{ name: 't', partitions: 2 }]);
    const p = producer(c);
    for (const ts of [1_000, 2_000, 3_000]) await p.send({ topic: 't', partition: 0, value: `v${ts}`, timestamp: BigInt(ts) });
    await p.send({ topic: 't', partition: 1, value: 'one', timestamp: 1_000n });
    const k = consumer(c);
    const found = await k.offsetsForTimes([
      { topic: 't', partition: 0, timestamp: 1_500n },
      { topic: 't', partition: 1, timestamp: 0n },
    ]);
    expect(found.get('t-0')).toEqual({ offset: 1n, timestamp: 2_000n, leaderEpoch: 0 });
    expect(found.get('t-1')).toEqual({ offset: 0n, timestamp: 1_000n, leaderEpoch: 0 });
    const past = await k.offsetsForTimes([{ topic: 't', partition: 0, timestamp: 5_000n }]);
    expect(past.has('t-0')).toBe(true);
    expect(past.get('t-0')).toBeNull();
    expect((await k.offsetsForTimes([])).size).toBe(0);
    await expect(k.offsetsForTimes([{ topic: 't', partition: 0, timestamp: -1n }])).rejects.toThrow(/target time for t-0 is -1/);
    await expect(k.offsetsForTimes([{ topic: 't', partition: 0, timestamp: -1n }])).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('KafkaConsumer.listTopics / partitionsFor', () => {
  it('lists every topic with its partitions, and partitionsFor names the leader, replicas and in-sync replicas', async () => {
    const c = await cluster(
      [
        { name: 'a', partitions: 4 },
        { name: 'b', partitions: 1 },
      ],
      2,
    );
    const k = consumer(c);
    const topics = await k.listTopics();
    expect(topics.get('a')?.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    expect(topics.get('b')?.map((p) => p.partition)).toEqual([0]);
    const parts = await k.partitionsFor('a');
    expect(parts).toHaveLength(4);
    for (const info of parts) {
      expect(info.topic).toBe('a');
      expect([0, 1]).toContain(info.leader);
      // Our broker keeps one replica per partition (no replication): the leader is the replica set and the ISR.
      expect(info.replicas).toEqual([info.leader]);
      expect(info.isr).toEqual([info.leader]);
      expect(info.offlineReplicas).toEqual([]);
    }
    expect(new Set(parts.map((p) => p.leader)).size).toBe(2);
    expect(topics.get('a')).toEqual(parts);
    // An unknown topic: no partitions, at once (Kafka leaves it out of the answer instead of waiting for it).
    expect(await k.partitionsFor('missing', 2_000)).toEqual([]);
    expect(topics.has('missing')).toBe(false);
  });
});

describe('KafkaConsumer.currentLag', () => {
  it('is the high watermark of the last fetch minus the position, undefined before, and an error for a partition not assigned', async () => {
    const c = await cluster([{ name: 'lag', partitions: 2 }]);
    const p = producer(c);
    for (let i = 0; i < 10; i++) await p.send({ topic: 'lag', partition: 0, value: `v${i}` });
    const k = consumer(c, { maxPollRecords: 3 });
    const tp = { topic: 'lag', partition: 0 };
    k.assign([tp]);
    expect(k.currentLag(tp)).toBeUndefined();
    const first = await firstBatch(k);
    expect(first).toHaveLength(3);
    expect(k.currentLag(tp)).toBe(7n);
    expect(() => k.currentLag({ topic: 'lag', partition: 1 })).toThrow(IllegalStateError);
  });

  it('looks the end up in the background when no fetch told it yet, as Kafka does', async () => {
    const c = await cluster([{ name: 'lag', partitions: 1 }]);
    const p = producer(c);
    for (let i = 0; i < 10; i++) await p.send({ topic: 'lag', value: `v${i}` });
    const k = consumer(c);
    const tp = { topic: 'lag', partition: 0 };
    k.assign([tp]);
    k.seek(tp, 4n);
    expect(k.currentLag(tp)).toBeUndefined();
    const deadline = Date.now() + 5_000;
    while (k.currentLag(tp) === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(k.currentLag(tp)).toBe(6n);
  });

  it('under read_committed is the last stable offset minus the position: an open transaction is not lag yet', async () => {
    const c = await cluster([{ name: 'tx', partitions: 1 }]);
    const p = producer(c);
    for (let i = 0; i < 5; i++) await p.send({ topic: 'tx', value: `c${i}` });
    const t = producer(c, { transactionalId: 'open-tx' });
    await t.initTransactions();
    t.beginTransaction();
    for (let i = 0; i < 3; i++) await t.send({ topic: 'tx', value: `open${i}` });
    const tp = { topic: 'tx', partition: 0 };
    const committed = consumer(c, { isolationLevel: 'read_committed', maxPollRecords: 2 });
    committed.assign([tp]);
    const got = await firstBatch(committed);
    expect(got).toHaveLength(2);
    // LSO 5 (the open transaction starts there), position 2; the high watermark (8) would say 6.
    expect(committed.currentLag(tp)).toBe(3n);
    const uncommitted = consumer(c, { maxPollRecords: 2 });
    uncommitted.assign([tp]);
    expect(await firstBatch(uncommitted)).toHaveLength(2);
    expect(uncommitted.currentLag(tp)).toBe(6n);
    await t.abortTransaction();
  });
});

describe('KafkaConsumer.subscribe(RegExp)', () => {
  it('classic: the client matches whole topic names from the metadata and picks up a new matching topic at the next refresh', async () => {
    const c = await cluster([
      { name: 'metrics-a', partitions: 2 },
      { name: 'metrics-b', partitions: 1 },
      { name: 'xmetrics-a', partitions: 1 },
      { name: 'other', partitions: 1 },
    ]);
    const k = consumer(c, { groupId: 'pattern-classic', groupProtocol: 'classic', metadataMaxAgeMs: 200 });
    k.subscribe(/metrics-.*/);
    await pollUntil(k, () => k.assignment().length === 3);
    expect(keys(k.assignment())).toEqual(['metrics-a-0', 'metrics-a-1', 'metrics-b-0']);
    expect(k.subscription()).toEqual(['metrics-a', 'metrics-b']);
    expect(() => k.subscribe(['other'])).toThrow(IllegalStateError);
    const admin = new Admin({ bootstrapServers: c.bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
    cleanups.push(() => admin.close());
    await admin.createTopics([{ name: 'metrics-c', numPartitions: 1 }]);
    await pollUntil(k, () => k.assignment().length === 4);
    expect(keys(k.assignment())).toEqual(['metrics-a-0', 'metrics-a-1', 'metrics-b-0', 'metrics-c-0']);
    const p = producer(c);
    await p.send({ topic: 'metrics-c', value: 'new' });
    const seen: ConsumerRecord[] = [];
    await pollUntil(k, () => seen.some((r) => r.topic === 'metrics-c'), seen);
    expect(seen.filter((r) => r.topic === 'metrics-c')).toHaveLength(1);
  });

  it('consumer (KIP-848): the pattern goes to the broker, which assigns the matching topics', async () => {
    const c = await cluster([
      { name: 'metrics-a', partitions: 2 },
      { name: 'metrics-b', partitions: 1 },
      { name: 'other', partitions: 1 },
    ]);
    const k = consumer(c, { groupId: 'pattern-848', groupProtocol: 'consumer' });
    k.subscribe(/metrics-.*/);
    await pollUntil(k, () => k.assignment().length === 3);
    expect(keys(k.assignment())).toEqual(['metrics-a-0', 'metrics-a-1', 'metrics-b-0']);
    expect(() => consumer(c, { groupId: 'g2', groupProtocol: 'consumer' }).subscribe(/metrics/i)).toThrow(ConfigError);
  });

  it('needs a groupId and a non-empty pattern', async () => {
    const c = await cluster([{ name: 't', partitions: 1 }]);
    expect(() => consumer(c).subscribe(/t/)).toThrow(/groupId/);
    expect(() => consumer(c, { groupId: 'g' }).subscribe(new RegExp(''))).toThrow(/must not be empty/);
  });
});

describe('KafkaConsumer.enforceRebalance', () => {
  it('classic: the member rejoins at the next poll, in a new generation, revoking and reassigning through the listener', async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const events: string[] = [];
    const k = consumer(c, { groupId: 'rejoin', groupProtocol: 'classic' });
    k.subscribe(['in'], {
      onPartitionsAssigned: (tps) => void events.push(`+${keys(tps).join(',')}`),
      onPartitionsRevoked: (tps) => void events.push(`-${keys(tps).join(',')}`),
    });
    await pollUntil(k, () => k.assignment().length === 2);
    const before = k.groupMetadata();
    events.length = 0;
    k.enforceRebalance('test');
    await pollUntil(k, () => k.groupMetadata().generationId > before.generationId && k.assignment().length === 2);
    expect(k.groupMetadata().generationId).toBeGreaterThan(before.generationId);
    expect(k.groupMetadata().memberId).toBe(before.memberId);
    // Range is eager: everything is given up before the rejoin.
    expect(events).toEqual(['-in-0,in-1', '+in-0,in-1']);
  });

  it("consumer (KIP-848): does nothing, as Kafka's AsyncKafkaConsumer; without a group it is an error", async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const events: string[] = [];
    const k = consumer(c, { groupId: 'rejoin-848', groupProtocol: 'consumer' });
    k.subscribe(['in'], { onPartitionsRevoked: (tps) => void events.push(`-${keys(tps).join(',')}`) });
    await pollUntil(k, () => k.assignment().length === 2);
    k.enforceRebalance();
    for (let i = 0; i < 3; i++) await k.poll(100);
    expect(events).toEqual([]);
    expect(keys(k.assignment())).toEqual(['in-0', 'in-1']);
    expect(() => consumer(c).enforceRebalance()).toThrow(IllegalStateError);
  });
});
