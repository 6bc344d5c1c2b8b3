/**
 * KafkaConsumer's metadata, lag and rebalance calls against Kafka 4.4, the
 * same steps test/client/consumer-more.test.ts takes against our broker:
 * offsetsForTimes, listTopics and partitionsFor (leader, replicas, ISR),
 * currentLag under read_uncommitted (high watermark) and read_committed
 * (last stable offset, an open transaction not counted), subscribe(RegExp)
 * in both group protocols (classic: matched by the client; KIP-848: by
 * Kafka's group coordinator) and enforceRebalance in a classic group.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord, type TopicPartition } from '../../client/index.js';
import { Cleanups, createTopic, kafka, unique } from './support/cluster.js';

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

const keys = (tps: readonly TopicPartition[]) => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();

/** Polls until `done` holds (30 s at most). */
async function pollUntil(k: KafkaConsumer, done: () => boolean, seen: ConsumerRecord[] = []): Promise<ConsumerRecord[]> {
  const deadline = Date.now() + 30_000;
  while (!done() && Date.now() < deadline) seen.push(...(await k.poll(200)));
  return seen;
}

/** The first non-empty batch poll() returns (30 s at most). */
async function firstBatch(k: KafkaConsumer): Promise<ConsumerRecord[]> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const batch = [...(await k.poll(200))];
    if (batch.length > 0) return batch;
  }
  return [];
}

describe('KafkaConsumer against Kafka 4.4: metadata and lag', () => {
  it('offsetsForTimes finds the first offset at or after each timestamp, null past the end', async () => {
    const topic = unique('times');
    await createTopic(kafka(), topic, 2);
    const p = producer();
    for (const ts of [1_000, 2_000, 3_000]) await p.send({ topic, partition: 0, value: `v${ts}`, timestamp: BigInt(ts) });
    await p.send({ topic, partition: 1, value: 'one', timestamp: 1_000n });
    const k = consumer();
    const found = await k.offsetsForTimes([
      { topic, partition: 0, timestamp: 1_500n },
      { topic, partition: 1, timestamp: 0n },
    ]);
    expect(found.get(`${topic}-0`)).toEqual({ offset: 1n, timestamp: 2_000n, leaderEpoch: 0 });
    expect(found.get(`${topic}-1`)).toEqual({ offset: 0n, timestamp: 1_000n, leaderEpoch: 0 });
    const past = await k.offsetsForTimes([{ topic, partition: 0, timestamp: 5_000n }]);
    expect(past.has(`${topic}-0`)).toBe(true);
    expect(past.get(`${topic}-0`)).toBeNull();
  });

  it('listTopics and partitionsFor name the leader, replicas and in-sync replicas; an unknown topic has no partitions', async () => {
    const topic = unique('list');
    await createTopic(kafka(), topic, 3);
    const k = consumer();
    const topics = await k.listTopics();
    expect(topics.get(topic)?.map((p) => p.partition)).toEqual([0, 1, 2]);
    const parts = await k.partitionsFor(topic);
    expect(parts).toHaveLength(3);
    for (const info of parts) {
      // One Kafka broker: it leads every partition, and is the whole replica set and ISR.
      expect(info.replicas).toEqual([info.leader]);
      expect(info.isr).toEqual([info.leader]);
      expect(info.offlineReplicas).toEqual([]);
    }
    expect(topics.get(topic)).toEqual(parts);
    expect(await k.partitionsFor(unique('missing'), 5_000)).toEqual([]);
  });

  it('currentLag: the high watermark minus the position, and under read_committed the last stable offset (an open transaction is not lag)', async () => {
    const topic = unique('lag');
    await createTopic(kafka(), topic, 1);
    const p = producer();
    for (let i = 0; i < 5; i++) await p.send({ topic, value: `c${i}` });
    const t = producer({ transactionalId: unique('lag-tx') });
    await t.initTransactions();
    t.beginTransaction();
    for (let i = 0; i < 3; i++) await t.send({ topic, value: `open${i}` });
    const tp = { topic, partition: 0 };
    const committed = consumer({ isolationLevel: 'read_committed', maxPollRecords: 2 });
    committed.assign([tp]);
    expect(await firstBatch(committed)).toHaveLength(2);
    expect(committed.currentLag(tp)).toBe(3n);
    const uncommitted = consumer({ maxPollRecords: 2 });
    uncommitted.assign([tp]);
    expect(await firstBatch(uncommitted)).toHaveLength(2);
    expect(uncommitted.currentLag(tp)).toBe(6n);
    await t.abortTransaction();
  });
});

describe('KafkaConsumer against Kafka 4.4: subscribe(RegExp) and enforceRebalance', () => {
  it('classic: the client matches whole topic names and joins with them', async () => {
    const prefix = unique('rx');
    await createTopic(kafka(), `${prefix}-a`, 2);
    await createTopic(kafka(), `${prefix}-b`, 1);
    await createTopic(kafka(), `x${prefix}-a`, 1);
    const k = consumer({ groupId: unique('pattern-classic'), groupProtocol: 'classic' });
    k.subscribe(new RegExp(`${prefix}-.*`));
    await pollUntil(k, () => k.assignment().length === 3);
    expect(keys(k.assignment())).toEqual([`${prefix}-a-0`, `${prefix}-a-1`, `${prefix}-b-0`]);
  });

  it("consumer (KIP-848): Kafka's group coordinator resolves the pattern and assigns the matching topics", async () => {
    const prefix = unique('rx848');
    await createTopic(kafka(), `${prefix}-a`, 2);
    await createTopic(kafka(), `${prefix}-b`, 1);
    const k = consumer({ groupId: unique('pattern-848'), groupProtocol: 'consumer' });
    k.subscribe(new RegExp(`${prefix}-.*`));
    await pollUntil(k, () => k.assignment().length === 3);
    expect(keys(k.assignment())).toEqual([`${prefix}-a-0`, `${prefix}-a-1`, `${prefix}-b-0`]);
  });

  it('enforceRebalance (classic): the member rejoins in a new generation with the same member id, through the listener', async () => {
    const topic = unique('rejoin');
    await createTopic(kafka(), topic, 2);
    const events: string[] = [];
    const k = consumer({ groupId: unique('rejoin'), groupProtocol: 'classic' });
    k.subscribe([topic], {
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
    expect(events).toEqual([`-${topic}-0,${topic}-1`, `+${topic}-0,${topic}-1`]);
  });
});
