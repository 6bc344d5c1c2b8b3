/**
 * KafkaConsumer's group protocols against Kafka 4.4, the cases
 * test/client/consumer-protocols.test.ts runs against our broker:
 * groupProtocol 'consumer' (KIP-848, Kafka's group coordinator assigns with
 * its uniform assignor) splits a topic, commits with the member epoch, hands
 * a leaving member's partitions over and feeds sendOffsetsToTransaction; the
 * classic protocol with 'cooperative-sticky' revokes only what moves
 * (KIP-429); the default ['range', 'cooperative-sticky'] rebalances EAGER
 * with range. The harness sets group.consumer.heartbeat.interval.ms to 200 ms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord } from '../../client/index.js';
import { keys, pollAll, recorder, text } from '../client/support/group-consumers.js';
import { Cleanups, createTopic, kafka, readWithKafkaConsumer, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

function producer(config: Record<string, unknown> = {}): KafkaProducer {
  return cleanups.track(
    new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, maxBlockMs: 30_000, logger: null, metricsRegistry: null, ...config }),
    (p) => p.close(2_000),
  );
}

function member(config: Partial<ConsumerConfig>): KafkaConsumer {
  return cleanups.track(
    new KafkaConsumer({
      bootstrapServers: kafka().bootstrap,
      logger: null,
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      fetchMaxWaitMs: 100,
      heartbeatIntervalMs: 200,
      sessionTimeoutMs: 10_000,
      ...config,
    }),
    (k) => k.close(5_000),
  );
}

async function topicWith(partitions: number, records = 0): Promise<string> {
  const topic = unique('protocols');
  await createTopic(kafka(), topic, partitions);
  const p = producer();
  for (let i = 0; i < records; i++) await p.send({ topic, partition: i % partitions, value: `v${i}` });
  return topic;
}

describe("groupProtocol 'consumer' (KIP-848) against Kafka 4.4", () => {
  it('two members split the topic, read every record once, commit with their member epochs; the survivor takes everything', async () => {
    const topic = await topicWith(4, 40);
    const all = [0, 1, 2, 3].map((p) => `${topic}-${p}`);
    const events: string[] = [];
    const auto = { groupId: unique('kip848'), groupProtocol: 'consumer', enableAutoCommit: true, autoCommitIntervalMs: 60_000 } as const;
    const a = member(auto);
    const b = member(auto);
    a.subscribe([topic], recorder(events, 'a'));
    b.subscribe([topic], recorder(events, 'b'));
    const seen = await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, [], 30_000);
    expect([...keys(a.assignment()), ...keys(b.assignment())].sort()).toEqual(all);
    await pollAll([a, b], () => seen.length >= 40, seen, 30_000);
    expect(seen.map(text).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`).sort());
    for (const k of [a, b]) {
      expect(k.groupMetadata().generationId).toBeGreaterThan(0);
      await k.commitSync();
      expect([...(await k.committed(k.assignment())).values()].map((o) => o.offset)).toEqual([10n, 10n]);
    }
    const mark = events.length;
    const bs = keys(b.assignment());
    await b.close();
    await pollAll([a], () => a.assignment().length === 4, [], 30_000);
    expect(keys(a.assignment())).toEqual(all);
    expect(events.slice(mark).filter((e) => e !== 'a+' && e !== 'b+')).toEqual([`b-${bs.join(',')}`, `a+${bs.join(',')}`]);
    const p = producer();
    for (let i = 0; i < 4; i++) await p.send({ topic, partition: i, value: `late${i}` });
    const after: ConsumerRecord[] = [];
    await pollAll([a], () => after.length >= 4, after, 30_000);
    expect(after.map(text).sort()).toEqual(['late0', 'late1', 'late2', 'late3']);
  });

  it('groupMetadata() feeds sendOffsetsToTransaction: Kafka takes the member epoch as the generation', async () => {
    const input = await topicWith(2, 6);
    const output = await topicWith(1);
    const a = member({ groupId: unique('kip848-eos'), groupProtocol: 'consumer', isolationLevel: 'read_committed' });
    a.subscribe([input]);
    const seen: ConsumerRecord[] = [];
    await pollAll([a], () => seen.length >= 6 && a.assignment().length === 2, seen, 30_000);
    const t = producer({ transactionalId: unique('kip848-eos-txn') });
    await t.initTransactions();
    t.beginTransaction();
    for (const r of seen) await t.send({ topic: output, value: `out-${text(r)}` });
    await t.sendOffsetsToTransaction(
      a.assignment().map((tp) => ({ ...tp, offset: 3n })),
      a.groupMetadata(),
    );
    await t.commitTransaction();
    expect([...(await a.committed(a.assignment())).values()].map((o) => o.offset)).toEqual([3n, 3n]);
    const out = (await readWithKafkaConsumer(kafka(), output, { isolationLevel: 'read_committed', expected: 6 })).map((r) => r.value);
    expect(out.sort()).toEqual(seen.map((r) => `out-${text(r)}`).sort());
  });
});

describe('the classic protocol with cooperative-sticky (KIP-429) against Kafka 4.4', () => {
  it('a joining member makes the owner revoke only what moves; a second rebalance hands it over', async () => {
    const topic = await topicWith(4);
    const groupId = unique('coop');
    const events: string[] = [];
    const a = member({ groupId, partitionAssignmentStrategy: ['cooperative-sticky'] });
    a.subscribe([topic], recorder(events, 'a'));
    await pollAll([a], () => a.assignment().length === 4, [], 30_000);
    const b = member({ groupId, partitionAssignmentStrategy: ['cooperative-sticky'] });
    b.subscribe([topic], recorder(events, 'b'));
    // Polled together, as in one process: a's fetches must not wait behind its JoinGroup, which Kafka holds until b rejoins.
    await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, [], 30_000);
    const moved = keys(b.assignment());
    expect(events.filter((e) => e.startsWith('a-') && e !== 'a-')).toEqual([`a-${moved.join(',')}`]);
    const revokedAt = events.indexOf(`a-${moved.join(',')}`);
    const gotAt = events.findIndex((e) => e.startsWith('b+') && moved.every((tp) => e.slice(2).split(',').includes(tp)));
    expect(gotAt).toBeGreaterThan(revokedAt);
  });

  it("the default ['range', 'cooperative-sticky'] rebalances EAGER with range", async () => {
    const topic = await topicWith(4);
    const groupId = unique('default');
    const events: string[] = [];
    const a = member({ groupId });
    a.subscribe([topic], recorder(events, 'a'));
    await pollAll([a], () => a.assignment().length === 4, [], 30_000);
    const b = member({ groupId });
    b.subscribe([topic], recorder(events, 'b'));
    await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, [], 30_000);
    expect(events).toContain(`a-${[0, 1, 2, 3].map((p) => `${topic}-${p}`).join(',')}`);
    const [first, second] = [a, b].sort((x, y) => (x.groupMetadata().memberId < y.groupMetadata().memberId ? -1 : 1));
    expect(keys(first!.assignment())).toEqual([`${topic}-0`, `${topic}-1`]);
    expect(keys(second!.assignment())).toEqual([`${topic}-2`, `${topic}-3`]);
  });
});
