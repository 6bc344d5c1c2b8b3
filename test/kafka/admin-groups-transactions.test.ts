/**
 * Admin's group, group-offset and transaction calls against Apache Kafka 4.4
 * (the run's shared broker): the same calls as test/client/admin-groups.test.ts
 * and admin-transactions.test.ts, so that kipgen's Admin is checked against the
 * reference, not only against kipgen's broker. A classic group and a KIP-848
 * group are set up over the wire, a share group with KafkaShareConsumer; a
 * KafkaProducer leaves a transaction hanging, the Admin aborts it on its
 * partition, and Kafka's own console consumer reads read_committed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, GroupAuthorizationError, KafkaProducer, KafkaShareConsumer, TransactionalIdAuthorizationError, type KafkaError } from '../../client/index.js';
import { randomUuid } from '../../client/cluster.js';
import { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { Cleanups, createAcls, createTopic, kafka, readWithKafkaConsumer, shareGroup, unique } from './support/cluster.js';

const cleanups = new Cleanups();
const code = (error: KafkaError | undefined): number | undefined => error?.code;
let admin: Admin;
let raw: KafkaConnection;
let share: KafkaShareConsumer;
const name = {
  topic: unique('admin-a'),
  other: unique('admin-b'),
  classic: unique('admin-classic'),
  modern: unique('admin-modern'),
  simple: unique('admin-simple'),
  share: unique('admin-share'),
  txn: unique('admin-hanging'),
};

const int16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (v: string): number[] => [...int16(Buffer.byteLength(v)), ...Buffer.from(v)];
const subscription = (topics: string[]): Uint8Array => Uint8Array.from([...int16(0), ...int32(topics.length), ...topics.flatMap(str), ...int32(-1)]);
const assignment = (topic: string, partitions: number[]): Uint8Array =>
  Uint8Array.from([...int16(0), ...int32(1), ...str(topic), ...int32(partitions.length), ...partitions.flatMap(int32), ...int32(-1)]);

function call(apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
  const api = apiByKey(apiKey)!;
  const codec = api.request as ApiMessageCodec<any>;
  return raw.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
}

beforeAll(async () => {
  const k = kafka();
  await createTopic(k, name.topic, 2);
  await createTopic(k, name.other, 1);
  admin = cleanups.track(new Admin({ bootstrapServers: k.bootstrap, logger: null, defaultApiTimeoutMs: 20_000 }), (a) => a.close());
  const [host, port] = k.bootstrap.split(':') as [string, string];
  raw = cleanups.track(await KafkaConnection.connect({ host, port: Number(port), clientId: 'kipgen-admin-test', requestTimeoutMs: 15_000 }), (c) => c.close());
  // First: it finds the group coordinator (Kafka creates __consumer_offsets then) with the Admin's retries.
  const committed = await admin.alterConsumerGroupOffsets(name.simple, [
    { topic: name.topic, partition: 0, offset: 5n, metadata: 'five' },
    { topic: name.topic, partition: 1, offset: 6n },
  ]);
  expect(committed.errors()).toEqual(new Map());
  const joined = await call(
    11,
    {
      groupId: name.classic,
      sessionTimeoutMs: 45_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription([name.topic]) }],
    },
    3,
  );
  expect(joined.errorCode).toBe(0);
  const synced = await call(
    14,
    {
      groupId: name.classic,
      generationId: joined.generationId,
      memberId: joined.memberId,
      assignments: [{ memberId: joined.memberId, assignment: assignment(name.topic, [0, 1]) }],
    },
    3,
  );
  expect(synced.errorCode).toBe(0);
  const beat = await call(
    68,
    {
      groupId: name.modern,
      memberId: randomUuid(),
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: [name.other],
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: [],
    },
    1,
  );
  expect(beat.errorCode).toBe(0);
  await shareGroup(k, name.share);
  share = cleanups.track(new KafkaShareConsumer({ bootstrapServers: k.bootstrap, groupId: name.share, logger: null }), (c) => c.close());
  share.subscribe([name.other]);
  await share.poll(3_000);
}, 60_000);

afterAll(async () => {
  // The Kafka of the run is shared by every file: the ACL granted below would let alice see this file's classic group
  // in the side-by-side file's ListGroups.
  await admin
    .deleteAcls([
      {
        patternFilter: { resourceType: 'GROUP', name: name.classic, patternType: 'LITERAL' },
        entryFilter: { principal: null, host: null, operation: 'ANY', permissionType: 'ANY' },
      },
    ])
    .catch(() => {});
  await cleanups.closeAll();
});

describe('groups on Kafka 4.4', () => {
  it('listGroups: every kind with type and state, filtered by type', async () => {
    const ours = new Set(Object.values(name));
    const listed = (await admin.listGroups()).all().filter((g) => ours.has(g.groupId));
    const shown = listed.map(
      (g) =>
        `${g.groupId === name.classic ? 'classic' : g.groupId === name.modern ? 'modern' : g.groupId === name.simple ? 'simple' : 'share'}:${g.type}/${g.protocol}/${g.groupState}`,
    );
    expect(shown.sort()).toEqual(['classic:CLASSIC/consumer/STABLE', 'modern:CONSUMER/consumer/STABLE', 'share:SHARE/share/STABLE', 'simple:CLASSIC//EMPTY']);
    const shares = (await admin.listGroups({ types: ['SHARE'] })).all().map((g) => g.groupId);
    expect(shares).toContain(name.share);
    expect(shares).not.toContain(name.classic);
  });

  it('describeConsumerGroups: classic (assignment decoded), KIP-848, simple; an unknown group is GROUP_ID_NOT_FOUND', async () => {
    const result = await admin.describeConsumerGroups([name.classic, name.modern, name.simple, unique('admin-missing')]);
    const classic = result.get(name.classic);
    expect(classic).toMatchObject({ type: 'CLASSIC', groupState: 'STABLE', partitionAssignor: 'range', isSimpleConsumerGroup: false });
    expect(classic.members[0]!.assignment.topicPartitions).toEqual([
      { topic: name.topic, partition: 0 },
      { topic: name.topic, partition: 1 },
    ]);
    const modern = result.get(name.modern);
    expect(modern).toMatchObject({ type: 'CONSUMER', groupState: 'STABLE', isSimpleConsumerGroup: false });
    expect(modern.members[0]!.assignment.topicPartitions).toEqual([{ topic: name.other, partition: 0 }]);
    expect(result.get(name.simple)).toMatchObject({ type: 'CLASSIC', groupState: 'EMPTY', isSimpleConsumerGroup: true, members: [] });
    expect([...result.errors().values()].map(code)).toEqual([ErrorCode.GROUP_ID_NOT_FOUND]);
  });

  it('describeShareGroups: the member and its assignment', async () => {
    // Kafka's group coordinator assigns a share member in a heartbeat after it joins: on a loaded machine the
    // setup's one poll may end before that answer, so the description is read again until the member holds it.
    let shared = (await admin.describeShareGroups([name.share])).get(name.share);
    for (let i = 0; i < 40 && shared.members.every((m) => m.assignment.topicPartitions.length === 0); i++) {
      await share.poll(250);
      shared = (await admin.describeShareGroups([name.share])).get(name.share);
    }
    expect(shared.groupState).toBe('STABLE');
    expect(shared.members.flatMap((m) => m.assignment.topicPartitions)).toEqual([{ topic: name.other, partition: 0 }]);
  });

  it('offsets: list, alter from outside (refused while the group has members), delete (refused for a subscribed topic)', async () => {
    const simple = (await admin.listConsumerGroupOffsets(name.simple)).get(name.simple);
    expect([...simple.values()].map((o) => `${o.topicPartition.partition}=${o.offset?.offset}`).sort()).toEqual(['0=5', '1=6']);
    const refused = await admin.alterConsumerGroupOffsets(name.classic, [{ topic: name.topic, partition: 0, offset: 1n }]);
    expect(code(refused.errors().get(`${name.topic}-0`))).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const deleted = await admin.deleteConsumerGroupOffsets(name.simple, [{ topic: name.topic, partition: 1 }]);
    expect(deleted.errors()).toEqual(new Map());
    expect([...(await admin.listConsumerGroupOffsets(name.simple)).get(name.simple).keys()]).toEqual([`${name.topic}-0`]);
    const subscribed = await admin.deleteConsumerGroupOffsets(name.classic, [{ topic: name.topic, partition: 0 }]);
    expect(code(subscribed.errors().get(`${name.topic}-0`))).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  });

  it('share-group offsets (KIP-932): listed; altered and deleted only once the group is empty (NON_EMPTY_GROUP before)', async () => {
    const key = `${name.other}-0`;
    const listed = await admin.listShareGroupOffsets(name.share);
    expect(listed.errors()).toEqual(new Map());
    const busy = await admin.alterShareGroupOffsets(name.share, [{ topic: name.other, partition: 0, offset: 0n }]);
    expect(code(busy.errors().get(key))).toBe(ErrorCode.NON_EMPTY_GROUP);
    await share.close();
    let altered = await admin.alterShareGroupOffsets(name.share, [{ topic: name.other, partition: 0, offset: 0n }]);
    // The member's leave may still be on its way: wait for the group to be empty.
    for (let i = 0; i < 20 && code(altered.errors().get(key)) === ErrorCode.NON_EMPTY_GROUP; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      altered = await admin.alterShareGroupOffsets(name.share, [{ topic: name.other, partition: 0, offset: 0n }]);
    }
    expect(altered.errors()).toEqual(new Map());
    const after = (await admin.describeShareGroupOffsets({ [name.share]: { topicPartitions: [{ topic: name.other, partition: 0 }] } })).get(name.share);
    expect(after.get(key)).toMatchObject({ topicPartition: { topic: name.other, partition: 0 }, startOffset: 0n });
    const deleted = await admin.deleteShareGroupOffsets(name.share, [name.other]);
    expect(deleted.errors()).toEqual(new Map());
    expect([...(await admin.listShareGroupOffsets(name.share)).get(name.share).keys()]).toEqual([]);
  });

  it('deleteConsumerGroups: an empty group goes; one with members is NON_EMPTY_GROUP', async () => {
    const result = await admin.deleteConsumerGroups([name.simple, name.modern]);
    expect(result.get(name.simple)).toBeUndefined();
    expect(code(result.errors().get(name.modern))).toBe(ErrorCode.NON_EMPTY_GROUP);
  });

  it('with ACLs: a denied group is a GroupAuthorizationError entry, a denied transactional id a TransactionalIdAuthorizationError entry', async () => {
    const k = kafka();
    const alice = k.saslSsl.users[0]!;
    await createAcls(k, [{ principal: `User:${alice.username}`, resourceType: 3, resourceName: name.classic, operation: 8 }]);
    const limited = cleanups.track(
      new Admin({
        bootstrapServers: k.saslSsl.bootstrap,
        ssl: { ca: k.saslSsl.caPem },
        sasl: { mechanism: 'PLAIN', username: alice.username, password: alice.password },
        logger: null,
        defaultApiTimeoutMs: 20_000,
      }),
      (a) => a.close(),
    );
    const described = await limited.describeConsumerGroups([name.classic, name.modern]);
    expect(described.get(name.classic).groupState).toBe('STABLE');
    expect(described.errors().get(name.modern)).toBeInstanceOf(GroupAuthorizationError);
    const txns = await limited.describeTransactions([name.txn]);
    expect(txns.errors().get(name.txn)).toBeInstanceOf(TransactionalIdAuthorizationError);
  });
});

describe('transaction tools on Kafka 4.4 (KIP-664)', () => {
  it('finds a hanging transaction, aborts it on its partition, and read_committed then reaches the record behind it', async () => {
    const k = kafka();
    const topic = unique('admin-hanging-topic');
    await createTopic(k, topic, 1);
    const hanging = cleanups.track(
      new KafkaProducer({ bootstrapServers: k.bootstrap, transactionalId: name.txn, transactionTimeoutMs: 600_000, logger: null, metricsRegistry: null }),
      (p) => p.close(0),
    );
    await hanging.initTransactions();
    hanging.beginTransaction();
    await hanging.send({ topic, partition: 0, value: 'lost-1' });
    await hanging.send({ topic, partition: 0, value: 'lost-2' });
    const plain = new KafkaProducer({ bootstrapServers: k.bootstrap, logger: null, metricsRegistry: null });
    await plain.send({ topic, partition: 0, value: 'after' });
    await plain.close();

    const listed = (await admin.listTransactions({ filterOnTransactionalIdPattern: `${name.txn}` })).all();
    expect(listed).toEqual([{ transactionalId: name.txn, producerId: expect.any(BigInt), state: 'ONGOING' }]);
    expect((await admin.listTransactions({ filterStates: ['ONGOING'], filterProducerIds: [listed[0]!.producerId] })).all()).toHaveLength(1);
    const described = await admin.describeTransactions([name.txn, unique('admin-never')]);
    expect(described.get(name.txn)).toMatchObject({ state: 'ONGOING', transactionTimeoutMs: 600_000, topicPartitions: [{ topic, partition: 0 }] });
    expect([...described.errors().values()].map(code)).toEqual([ErrorCode.TRANSACTIONAL_ID_NOT_FOUND]);
    const [open] = (await admin.describeProducers([{ topic, partition: 0 }]))
      .get(`${topic}-0`)
      .activeProducers.filter((p) => p.currentTransactionStartOffset !== undefined);
    expect(open).toMatchObject({ producerId: listed[0]!.producerId, currentTransactionStartOffset: 0n, lastSequence: 1 });

    await admin.abortTransaction({
      topicPartition: { topic, partition: 0 },
      producerId: open!.producerId,
      producerEpoch: open!.producerEpoch,
      coordinatorEpoch: open!.coordinatorEpoch ?? 0,
    });
    const after = (await admin.describeProducers([{ topic, partition: 0 }])).get(`${topic}-0`).activeProducers.find((p) => p.producerId === open!.producerId);
    expect(after?.currentTransactionStartOffset).toBeUndefined();
    const read = await readWithKafkaConsumer(k, topic, { isolationLevel: 'read_committed', expected: 1 });
    expect(read.map((r) => r.value)).toEqual(['after']);
  }, 90_000);
});
