/**
 * Admin's membership, fencing and feature calls against Apache Kafka 4.4 (the
 * run's shared broker): the same calls as test/client/admin-more.test.ts, so
 * that they are checked against the reference. Classic groups are joined over
 * the wire; KafkaProducers leave transactions open (one prepared, KIP-939) for
 * fenceProducers and forceTerminateTransaction, and Kafka's own console
 * consumer reads read_committed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, KafkaProducer, ProducerFencedError, type KafkaError } from '../../client/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { Cleanups, createTopic, kafka, readWithKafkaConsumer, unique } from './support/cluster.js';

const cleanups = new Cleanups();
let admin: Admin;
let raw: KafkaConnection;
const topic = unique('admin-more');

const int16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (v: string): number[] => [...int16(Buffer.byteLength(v)), ...Buffer.from(v)];
const assignment = (partitions: number[]): Uint8Array =>
  Uint8Array.from([...int16(0), ...int32(1), ...str(topic), ...int32(partitions.length), ...partitions.flatMap(int32), ...int32(-1)]);

function call(apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
  const api = apiByKey(apiKey)!;
  const codec = api.request as ApiMessageCodec<any>;
  return raw.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
}

/** Joins `groupId` alone (static when `instanceId` is given) and syncs it with `bytes` as its assignment; returns its member id. */
async function joinAlone(groupId: string, protocolType: string, instanceId: string | null, bytes: Uint8Array): Promise<string> {
  const join = (memberId: string) =>
    call(
      11,
      {
        groupId,
        sessionTimeoutMs: 45_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        groupInstanceId: instanceId,
        protocolType,
        protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
      },
      5,
    );
  let joined = await join('');
  if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) joined = await join(joined.memberId);
  expect(joined.errorCode).toBe(0);
  const synced = await call(
    14,
    {
      groupId,
      generationId: joined.generationId,
      memberId: joined.memberId,
      groupInstanceId: instanceId,
      assignments: [{ memberId: joined.memberId, assignment: bytes }],
    },
    3,
  );
  expect(synced.errorCode).toBe(0);
  return joined.memberId as string;
}

const committedValues = async (): Promise<string[]> =>
  (await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_committed', idleMs: 3_000 })).map((r) => r.value);

function producer(transactionalId: string, twoPhase = false): KafkaProducer {
  return cleanups.track(
    new KafkaProducer({
      bootstrapServers: kafka().bootstrap,
      transactionalId,
      transactionTwoPhaseCommitEnable: twoPhase,
      lingerMs: 1,
      maxBlockMs: 30_000,
      logger: null,
      metricsRegistry: null,
    }),
    (p) => p.close(0),
  );
}

beforeAll(async () => {
  const k = kafka();
  await createTopic(k, topic, 2);
  admin = cleanups.track(new Admin({ bootstrapServers: k.bootstrap, logger: null, defaultApiTimeoutMs: 30_000 }), (a) => a.close());
  const [host, port] = k.bootstrap.split(':') as [string, string];
  raw = cleanups.track(await KafkaConnection.connect({ host, port: Number(port), clientId: 'kipgen-admin-test', requestTimeoutMs: 15_000 }), (c) => c.close());
  // Kafka creates __consumer_offsets on the first FindCoordinator: the Admin's retries wait for it.
  await admin.describeClassicGroups([unique('warm-up')]);
});

afterAll(() => cleanups.closeAll());

describe('removeMembersFromConsumerGroup against Kafka 4.4', () => {
  it('removes a static member by group.instance.id, an unknown instance id is its entry error; with none named every member goes', async () => {
    const statics = unique('admin-statics');
    await joinAlone(statics, 'consumer', 'instance-1', assignment([0, 1]));
    const result = await admin.removeMembersFromConsumerGroup(statics, { members: [{ groupInstanceId: 'instance-1' }, { groupInstanceId: 'ghost' }] });
    expect(result.get('instance-1')).toBeUndefined();
    expect((result.errors().get('ghost') as KafkaError).code).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await admin.describeClassicGroups([statics])).get(statics)).toMatchObject({ members: [], state: 'EMPTY' });

    const dynamics = unique('admin-dynamics');
    const memberId = await joinAlone(dynamics, 'consumer', null, assignment([0]));
    expect([...(await admin.removeMembersFromConsumerGroup(dynamics)).all().keys()]).toEqual([memberId]);
    expect((await admin.describeClassicGroups([dynamics])).get(dynamics).state).toBe('EMPTY');

    await expect(admin.removeMembersFromConsumerGroup(unique('admin-none'))).rejects.toMatchObject({ code: ErrorCode.GROUP_ID_NOT_FOUND });
  });
});

describe('describeClassicGroups against Kafka 4.4', () => {
  it('describes a consumer group (assignment decoded) and a connect group (bytes left alone); an unknown group is an entry error', async () => {
    const consumerGroup = unique('admin-classic-consumer');
    const connectGroup = unique('admin-classic-connect');
    const unknown = unique('admin-unknown');
    const memberId = await joinAlone(consumerGroup, 'consumer', null, assignment([1]));
    await joinAlone(connectGroup, 'connect', null, Uint8Array.from([1, 2, 3]));
    const result = await admin.describeClassicGroups([consumerGroup, connectGroup, unknown]);
    const consumer = result.get(consumerGroup);
    expect(consumer).toMatchObject({ protocol: 'consumer', protocolData: 'range', isSimpleConsumerGroup: false, state: 'STABLE' });
    expect(consumer.members).toMatchObject([
      { memberId, groupInstanceId: null, clientId: 'kipgen-admin-test', assignment: { topicPartitions: [{ topic, partition: 1 }] } },
    ]);
    expect(result.get(connectGroup)).toMatchObject({ protocol: 'connect', members: [{ assignment: { topicPartitions: [] } }] });
    expect((result.errors().get(unknown) as KafkaError).code).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

describe('fenceProducers and forceTerminateTransaction against Kafka 4.4', () => {
  it('fenceProducers bumps the epoch, aborts the open transaction and fences the old producer', async () => {
    const id = unique('admin-fence');
    const p = producer(id);
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic, partition: 0, value: 'fenced-away' });
    const before = (await admin.describeTransactions([id])).get(id);
    expect(before.state).toBe('ONGOING');
    const fenced = (await admin.fenceProducers([id])).get(id);
    expect(fenced.producerId).toBe(before.producerId);
    expect(fenced.producerEpoch).toBeGreaterThan(before.producerEpoch);
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(ProducerFencedError);
    expect((await admin.describeTransactions([id])).get(id)).toMatchObject({ state: 'EMPTY', producerEpoch: fenced.producerEpoch });
  });

  it('forceTerminateTransaction aborts a prepared two-phase transaction', async () => {
    const id = unique('admin-prepared');
    const p = producer(id, true);
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic, partition: 1, value: 'prepared-away' });
    await p.prepareTransaction();
    expect((await admin.describeTransactions([id])).get(id).state).toBe('ONGOING');
    await admin.forceTerminateTransaction(id);
    expect((await admin.describeTransactions([id])).get(id).state).toBe('EMPTY');
    expect(await committedValues()).toEqual([]);
  });
});

describe('describeFeatures against Kafka 4.4', () => {
  it('reports the finalized transaction.version (2) and share.version, an epoch, and the supported ranges', async () => {
    const features = await admin.describeFeatures();
    expect(features.finalizedFeatures.get('transaction.version')).toEqual({ minVersionLevel: 2, maxVersionLevel: 2 });
    expect(features.finalizedFeatures.get('share.version')!.maxVersionLevel).toBeGreaterThanOrEqual(1);
    expect(features.finalizedFeaturesEpoch).toBeGreaterThan(0n);
    expect(features.supportedFeatures.get('transaction.version')!.maxVersion).toBeGreaterThanOrEqual(2);
    expect(features.supportedFeatures.has('metadata.version')).toBe(true);
  });
});
