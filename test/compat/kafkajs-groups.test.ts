/**
 * kafkajs 2.2.4 against `kipgen broker` (child process): the admin client
 * creates, lists and deletes topics; a consumer group of two members shares
 * a topic's partitions, commits, and rebalances when one leaves (the other
 * then owns every partition and reads on from the committed offsets); and a
 * transactional consume-transform-produce commits its input offsets with
 * sendOffsets. Prints the API versions kafkajs used.
 */
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apisUsed, removeTempDirs, startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';
import { readPartition } from '../interop/support/fetch.js';

const { Kafka, logLevel } = kafkajs;
const CLIENT_ID = 'kafkajs-groups';
let broker: KipgenBroker;
let kafka: InstanceType<typeof Kafka>;

beforeAll(async () => {
  broker = await startKipgenBroker({ topics: [], config: { groupInitialRebalanceDelayMs: 300 } });
  kafka = new Kafka({ clientId: CLIENT_ID, brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100 } });
});

afterAll(async () => {
  const stderr = await broker?.stop();
  removeTempDirs();
  if (stderr !== undefined)
    process.stdout.write(`kafkajs groups/admin, APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`);
});

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kafkajs 2.2.4: admin, consumer groups, sendOffsets', () => {
  it('admin creates, lists, describes and deletes topics; an existing topic is refused', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(
        await admin.createTopics({
          topics: [
            { topic: 'kj-admin', numPartitions: 3 },
            { topic: 'kj-doomed', numPartitions: 1 },
          ],
        }),
      ).toBe(true);
      // kafkajs answers false when the topic exists already (TOPIC_ALREADY_EXISTS).
      expect(await admin.createTopics({ topics: [{ topic: 'kj-admin', numPartitions: 3 }] })).toBe(false);
      // A bad partition count: kafkajs gathers the per-topic errors.
      const bad = (await admin.createTopics({ topics: [{ topic: 'kj-bad', numPartitions: 0 }] }).catch((e: unknown) => e)) as {
        name: string;
        errors: { type: string }[];
      };
      expect(bad.name).toBe('KafkaJSAggregateError');
      expect(bad.errors.map((e) => e.type)).toEqual(['INVALID_PARTITIONS']);
      expect(await admin.listTopics()).toEqual(expect.arrayContaining(['kj-admin', 'kj-doomed']));
      const meta = await admin.fetchTopicMetadata({ topics: ['kj-admin'] });
      expect(meta.topics[0]!.partitions).toHaveLength(3);
      await admin.createPartitions({ topicPartitions: [{ topic: 'kj-admin', count: 5 }] });
      expect((await admin.fetchTopicMetadata({ topics: ['kj-admin'] })).topics[0]!.partitions).toHaveLength(5);
      const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: 'kj-admin', configNames: ['cleanup.policy'] }] });
      expect(configs.resources[0]!.configEntries[0]).toMatchObject({ configName: 'cleanup.policy', configValue: 'delete' });
      await admin.deleteTopics({ topics: ['kj-doomed'] });
      expect(await admin.listTopics()).not.toContain('kj-doomed');
      const cluster = await admin.describeCluster();
      expect(cluster.brokers).toEqual([{ nodeId: 0, host: '127.0.0.1', port: broker.port }]);
    } finally {
      await admin.disconnect();
    }
  });

  it('a group of two shares the partitions, commits, and rebalances when one leaves', async () => {
    const TOPIC = 'kj-group';
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }] });
    const producer = kafka.producer();
    await producer.connect();
    const send = (from: number, count: number) =>
      producer.send({ topic: TOPIC, messages: Array.from({ length: count }, (_, i) => ({ partition: (from + i) % 4, value: `m-${from + i}` })) });
    const seen = { a: [] as string[], b: [] as string[] };
    const assigned = { a: [] as number[], b: [] as number[] };
    const consumer = (name: 'a' | 'b') => {
      // kafkajs heartbeats between fetches: a short fetch wait keeps it within the rebalance timeout.
      const c = kafka.consumer({ groupId: 'kj-group-g', sessionTimeout: 6_000, rebalanceTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
      c.on(c.events.GROUP_JOIN, (e: any) => (assigned[name] = (e.payload.memberAssignment[TOPIC] ?? []).slice().sort()));
      return c;
    };
    const a = consumer('a');
    const b = consumer('b');
    try {
      await a.connect();
      await a.subscribe({ topic: TOPIC, fromBeginning: true });
      await a.run({ eachMessage: async ({ message }) => void seen.a.push(message.value!.toString()) });
      await until(() => assigned.a.length === 4, 15_000, 'a to own the 4 partitions');
      await send(0, 8);
      await until(() => seen.a.length === 8, 15_000, 'a to read 8');

      await b.connect();
      await b.subscribe({ topic: TOPIC, fromBeginning: true });
      await b.run({ eachMessage: async ({ message }) => void seen.b.push(message.value!.toString()) });
      await until(() => assigned.b.length === 2 && assigned.a.length === 2, 20_000, 'the rebalance to split 2 and 2').catch((e) => {
        throw new Error(
          `${e.message}: ${JSON.stringify(assigned)}\n${broker
            .stderr()
            .split('\n')
            .filter((l) => /group /.test(l))
            .slice(-20)
            .join('\n')}`,
        );
      });
      expect([...assigned.a, ...assigned.b].sort()).toEqual([0, 1, 2, 3]);
      await send(8, 8);
      await until(() => seen.a.length + seen.b.length >= 16, 15_000, 'both to read the next 8');
      // Each member read only from its own partitions; nothing was read twice after the committed offsets.
      expect(seen.b.every((v) => assigned.b.includes(Number(v.slice(2)) % 4))).toBe(true);

      await b.disconnect(); // LeaveGroup: a takes everything over
      await until(() => assigned.a.length === 4, 20_000, 'a to own the 4 partitions again');
      await send(16, 8);
      await until(() => seen.a.length + seen.b.length >= 24, 15_000, 'a to read the last 8');
      expect(new Set([...seen.a, ...seen.b]).size).toBe(24);
      expect([...seen.a, ...seen.b]).toHaveLength(24);
      const groups = await admin.describeGroups(['kj-group-g']);
      expect(groups.groups[0]).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'RoundRobinAssigner' });
      expect(groups.groups[0]!.members).toHaveLength(1);
      await a.stop();
      const offsets = await admin.fetchOffsets({ groupId: 'kj-group-g', topics: [TOPIC] });
      expect(offsets[0]!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
        [0, '6'],
        [1, '6'],
        [2, '6'],
        [3, '6'],
      ]);
    } finally {
      await a.disconnect().catch(() => {});
      await b.disconnect().catch(() => {});
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  it('transactional consume-transform-produce: output and input offsets (sendOffsets) commit together', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        { topic: 'kj-in', numPartitions: 2 },
        { topic: 'kj-out', numPartitions: 1 },
      ],
    });
    const seed = kafka.producer();
    await seed.connect();
    await seed.send({ topic: 'kj-in', messages: Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, value: `in-${i}` })) });
    await seed.disconnect();
    const producer = kafka.producer({ transactionalId: 'kj-ctp', maxInFlightRequests: 1, idempotent: true });
    await producer.connect();
    const consumer = kafka.consumer({ groupId: 'kj-ctp-g', sessionTimeout: 6_000, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'kj-in', fromBeginning: true });
    let done = 0;
    try {
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const txn = await producer.transaction();
          await txn.send({ topic: 'kj-out', messages: [{ value: `out-${message.value!.toString()}` }] });
          await txn.sendOffsets({ consumerGroupId: 'kj-ctp-g', topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }] });
          await txn.commit();
          done++;
        },
      });
      await until(() => done === 6, 20_000, 'six transactions');
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
    }
    const out = await readPartition(broker.port, 'kj-out', 0, 'read_committed');
    expect(out.records.map((r) => r.value!.toString()).sort()).toEqual(['out-in-0', 'out-in-1', 'out-in-2', 'out-in-3', 'out-in-4', 'out-in-5']);
    const offsets = await admin.fetchOffsets({ groupId: 'kj-ctp-g', topics: ['kj-in'] });
    expect(offsets[0]!.partitions.map((p) => p.offset).sort()).toEqual(['3', '3']);
    await admin.disconnect();
  });
});
