/**
 * @platformatic/kafka 2.12 against `kipgen broker` (child process): its Admin
 * creates, grows, lists, describes and deletes topics and groups; a Producer
 * fills a topic; a Consumer in a group (the classic protocol) streams it from
 * the earliest offset and commits; the committed offsets are read back with
 * listConsumerGroupOffsets; two Consumers with groupProtocol "consumer"
 * (KIP-848, ConsumerGroupHeartbeat) are assigned by the broker. Prints the
 * API versions it used.
 *
 * The package declares Node ≥ 22.22 in `engines`, and on the project's
 * Node 20 it fails at its first call: it uses Promise.withResolvers (Node
 * 22+). With that one function supplied (below, on Node 20 only) everything
 * here works, so nothing else it needs is missing from Node 20; an
 * application on Node 20 would need the same shim.
 */
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { apisUsed, removeTempDirs, startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';

const CLIENT_ID = 'platformatic-interop';
const TOPIC = 'plt-topic';
let broker: KipgenBroker;
let admin: Admin;

/** Promise.withResolvers (ES2024, Node 22+), which @platformatic/kafka calls; absent on Node 20. */
function supplyWithResolvers(): void {
  const P = Promise as unknown as { withResolvers?: () => unknown };
  if (typeof P.withResolvers === 'function') return;
  P.withResolvers = () => {
    let resolve!: (value: unknown) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

beforeAll(async () => {
  supplyWithResolvers();
  broker = await startKipgenBroker({ topics: [], config: { groupInitialRebalanceDelayMs: 200 } });
  admin = new Admin({ clientId: CLIENT_ID, bootstrapBrokers: [`127.0.0.1:${broker.port}`] });
});

afterAll(async () => {
  await admin?.close();
  await broker?.stop();
  removeTempDirs();
  if (broker)
    process.stdout.write(
      `@platformatic/kafka 2.12 on Node ${process.versions.node}: APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`,
    );
});

describe('@platformatic/kafka 2.12 against kipgen broker', () => {
  it('Admin: create, grow, describe and delete topics; an existing topic is refused', async () => {
    await admin.createTopics({ topics: [TOPIC, 'plt-doomed'], partitions: 2, replicas: 1 });
    await expect(admin.createTopics({ topics: [TOPIC], partitions: 2, replicas: 1 })).rejects.toThrow();
    await admin.createPartitions({ topics: [{ name: TOPIC, count: 3 }] });
    const meta = await admin.metadata({ topics: [TOPIC] });
    expect(meta.topics.get(TOPIC)!.partitionsCount).toBe(3);
    await admin.deleteTopics({ topics: ['plt-doomed'] });
    await expect(admin.metadata({ topics: ['plt-doomed'], autocreateTopics: false })).rejects.toThrow();
  });

  it('Producer, then a Consumer in a group streams every record and commits; offsets, groups listed and described', async () => {
    const producer = new Producer({ clientId: CLIENT_ID, bootstrapBrokers: [`127.0.0.1:${broker.port}`], serializers: stringSerializers });
    await producer.send({ messages: Array.from({ length: 12 }, (_, i) => ({ topic: TOPIC, key: `k${i}`, value: `v${i}`, partition: i % 3 })) });
    await producer.close();

    const consumer = new Consumer({
      groupId: 'plt-group',
      clientId: CLIENT_ID,
      bootstrapBrokers: [`127.0.0.1:${broker.port}`],
      deserializers: stringDeserializers,
      sessionTimeout: 10_000,
      heartbeatInterval: 500,
    });
    const values: string[] = [];
    try {
      const stream = await consumer.consume({ topics: [TOPIC], mode: 'earliest', autocommit: false, maxWaitTime: 200 });
      for await (const message of stream) {
        values.push(message.value as string);
        await message.commit();
        if (values.length === 12) break;
      }
      expect(values.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `v${i}`).sort());
      const described = await admin.describeGroups({ groups: ['plt-group'] });
      expect(described.get('plt-group')).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'roundrobin' });
      const listed = await admin.listGroups();
      expect(listed.get('plt-group')).toMatchObject({ id: 'plt-group', protocolType: 'consumer' });
    } finally {
      await consumer.close(true);
    }
    const offsets = await admin.listConsumerGroupOffsets({ groups: ['plt-group'] });
    const partitions = offsets[0]!.topics.find((t) => t.name === TOPIC)!.partitions;
    expect(partitions.map((p) => [p.partitionIndex, p.committedOffset]).sort()).toEqual([
      [0, 4n],
      [1, 4n],
      [2, 4n],
    ]);
    await admin.deleteGroups({ groups: ['plt-group'] });
    expect((await admin.listGroups()).has('plt-group')).toBe(false);
  });
  it('Consumer with groupProtocol "consumer" (KIP-848): two members get their partitions from the broker and read everything once', async () => {
    const producer = new Producer({ clientId: CLIENT_ID, bootstrapBrokers: [`127.0.0.1:${broker.port}`], serializers: stringSerializers });
    await admin.createTopics({ topics: ['plt-848'], partitions: 4, replicas: 1 });
    await producer.send({ messages: Array.from({ length: 16 }, (_, i) => ({ topic: 'plt-848', value: `w${i}`, partition: i % 4 })) });
    await producer.close();
    const seen: string[] = [];
    const members = ['one', 'two'].map(
      () =>
        new Consumer({
          groupId: 'plt-848-group',
          groupProtocol: 'consumer',
          clientId: CLIENT_ID,
          bootstrapBrokers: [`127.0.0.1:${broker.port}`],
          deserializers: stringDeserializers,
        }),
    );
    try {
      const streams = await Promise.all(members.map((m) => m.consume({ topics: ['plt-848'], mode: 'earliest', autocommit: true, maxWaitTime: 200 })));
      for (const stream of streams) stream.on('data', (message: { value: string }) => seen.push(message.value));
      const deadline = Date.now() + 20_000;
      while (seen.length < 16 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(seen.slice().sort()).toEqual(Array.from({ length: 16 }, (_, i) => `w${i}`).sort());
      // Both members hold partitions once the group has settled (revocation first, then reassignment).
      let described: any;
      while (Date.now() < deadline) {
        const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'kipgen-interop-reader' });
        described = (
          await c.send(ConsumerGroupDescribeRequest, ConsumerGroupDescribeRequest.create({ groupIds: ['plt-848-group'] }), 1, ConsumerGroupDescribeResponse)
        ).groups[0];
        await c.close();
        if (described.groupState === 'Stable' && described.members.length === 2) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(described).toMatchObject({ errorCode: 0, groupState: 'Stable' });
      expect(described.members.map((m: any) => m.assignment.topicPartitions.flatMap((tp: any) => tp.partitions).length)).toEqual([2, 2]);
    } finally {
      await Promise.all(members.map((m) => m.close(true)));
    }
  });
});
