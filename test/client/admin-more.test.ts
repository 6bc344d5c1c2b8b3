/**
 * Admin's membership, fencing and feature calls against a real kipgen broker:
 * removeMembersFromConsumerGroup (static members by group.instance.id, or every
 * member), describeClassicGroups (a consumer group's assignment decoded, another
 * protocol's bytes left alone), fenceProducers (the epoch bumped, the old
 * producer fenced, its open transaction aborted), forceTerminateTransaction (a
 * prepared two-phase transaction aborted) and describeFeatures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, GroupAuthorizationError, KafkaProducer, ProducerFencedError, TransactionalIdAuthorizationError, type KafkaError } from '../../client/index.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { TestClient } from '../coordinator/support/broker-harness.js';
import { connectAs, createAcls, Op, Res } from '../security/acl-support.js';
import { startSecureBroker, USERS, type SecureBroker } from '../security/support.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';

let cluster: TestCluster;
let admin: Admin;
let raw: TestClient;
const quiet = { logger: null, metricsRegistry: null } as const;

/** ConsumerProtocolAssignment v0 bytes, as a classic consumer's leader hands them out. */
const int16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (v: string): number[] => [...int16(Buffer.byteLength(v)), ...Buffer.from(v)];
function assignment(topic: string, partitions: number[]): Uint8Array {
  return Uint8Array.from([...int16(0), ...int32(1), ...str(topic), ...int32(partitions.length), ...partitions.flatMap(int32), ...int32(-1)]);
}

/** Joins `groupId` alone (static when `instanceId` is given) and syncs it with `bytes` as its assignment; returns its member id. */
async function joinAlone(groupId: string, protocolType: string, instanceId: string | null, bytes: Uint8Array): Promise<string> {
  const join = (memberId: string) =>
    raw.call(
      11,
      {
        groupId,
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 5_000,
        memberId,
        groupInstanceId: instanceId,
        protocolType,
        protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
      },
      5,
    );
  let joined = await join('');
  // A dynamic member joins twice: the first answer only hands it its member id (KIP-394).
  if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) joined = await join(joined.memberId);
  expect(joined.errorCode).toBe(0);
  const synced = await raw.call(
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

beforeAll(async () => {
  cluster = await startCluster({
    config: { topics: [{ name: 'a', partitions: 2 }], groupInitialRebalanceDelayMs: 0, transactionTwoPhaseCommitEnable: true },
  });
  admin = new Admin({ bootstrapServers: cluster.bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
  raw = await TestClient.connect(cluster.brokers[0]!.port);
});

afterAll(async () => {
  await raw?.close();
  await admin?.close();
  await cluster?.close();
});

describe('removeMembersFromConsumerGroup', () => {
  it('removes a static member by group.instance.id; an unknown instance id is its own entry error', async () => {
    await joinAlone('statics', 'consumer', 'instance-1', assignment('a', [0, 1]));
    const result = await admin.removeMembersFromConsumerGroup('statics', { members: [{ groupInstanceId: 'instance-1' }, { groupInstanceId: 'ghost' }] });
    expect([...result.entries.keys()]).toEqual(['instance-1', 'ghost']);
    expect(result.get('instance-1')).toBeUndefined();
    expect((result.errors().get('ghost') as KafkaError).code).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const after = (await admin.describeClassicGroups(['statics'])).get('statics');
    expect(after.members).toEqual([]);
    expect(after.state).toBe('EMPTY');
  });

  it('with no members named, removes every member (a dynamic one by its member id)', async () => {
    const memberId = await joinAlone('dynamics', 'consumer', null, assignment('a', [0]));
    const result = await admin.removeMembersFromConsumerGroup('dynamics', { reason: 'test' });
    expect([...result.all().keys()]).toEqual([memberId]);
    expect((await admin.describeClassicGroups(['dynamics'])).get('dynamics').state).toBe('EMPTY');
  });

  it('removing every member of a group that has none sends nothing and has no entries (Kafka throws instead)', async () => {
    await admin.alterConsumerGroupOffsets('memberless', [{ topic: 'a', partition: 0, offset: 1n }]);
    expect((await admin.removeMembersFromConsumerGroup('memberless')).entries).toEqual(new Map());
  });

  it('removing every member of an unknown group fails the call, as it fails Kafka’s whole result', async () => {
    await expect(admin.removeMembersFromConsumerGroup('no-such-group')).rejects.toMatchObject({ code: ErrorCode.GROUP_ID_NOT_FOUND });
  });

  it('names the member entry it cannot use', async () => {
    await expect(admin.removeMembersFromConsumerGroup('statics', { members: [{ groupInstanceId: '' }] })).rejects.toThrow(
      /members\[0\] needs a non-empty groupInstanceId/,
    );
  });
});

describe('describeClassicGroups', () => {
  it('describes a consumer group (assignment decoded) and a group of another protocol type (bytes left alone); an unknown group is an entry error', async () => {
    const consumerMember = await joinAlone('classic-consumer', 'consumer', null, assignment('a', [1]));
    await joinAlone('classic-connect', 'connect', null, Uint8Array.from([1, 2, 3]));
    const result = await admin.describeClassicGroups(['classic-consumer', 'classic-connect', 'unknown-group'], { includeAuthorizedOperations: true });
    const consumer = result.get('classic-consumer');
    expect(consumer).toMatchObject({ protocol: 'consumer', protocolData: 'range', isSimpleConsumerGroup: false, state: 'STABLE', coordinatorId: 0 });
    expect(consumer.members).toEqual([
      {
        memberId: consumerMember,
        groupInstanceId: null,
        clientId: 'kipgen-test',
        host: expect.any(String),
        assignment: { topicPartitions: [{ topic: 'a', partition: 1 }] },
      },
    ]);
    // No authorizer: the broker reports no operations (Kafka's Integer.MIN_VALUE), so none are listed.
    expect(consumer.authorizedOperations).toBeUndefined();
    const connect = result.get('classic-connect');
    expect(connect.protocol).toBe('connect');
    expect(connect.members[0]!.assignment.topicPartitions).toEqual([]);
    expect((result.errors().get('unknown-group') as KafkaError).code).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

describe('fenceProducers and forceTerminateTransaction', () => {
  it('fenceProducers bumps the epoch, aborts the open transaction and fences the old producer', async () => {
    const producer = new KafkaProducer({ bootstrapServers: cluster.bootstrap, transactionalId: 'to-fence', lingerMs: 1, maxBlockMs: 5_000, ...quiet });
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.send({ topic: 'a', partition: 0, value: 'fenced-away' });
      const before = (await admin.describeTransactions(['to-fence'])).get('to-fence');
      expect(before.state).toBe('ONGOING');

      const fenced = (await admin.fenceProducers(['to-fence'])).get('to-fence');
      expect(fenced.producerId).toBe(before.producerId);
      expect(fenced.producerEpoch).toBeGreaterThan(before.producerEpoch);
      await expect(producer.commitTransaction()).rejects.toBeInstanceOf(ProducerFencedError);
      expect(await readCommitted(cluster.bootstrap, 'a', 500)).not.toContain('fenced-away');
      // The abort completed before the fencing InitProducerId was answered (retried on CONCURRENT_TRANSACTIONS).
      expect((await admin.describeTransactions(['to-fence'])).get('to-fence')).toMatchObject({ state: 'EMPTY', producerEpoch: fenced.producerEpoch });
    } finally {
      await producer.close(0);
    }
  });

  it('fences an id never used (a new producer id) and keeps ids apart', async () => {
    const result = await admin.fenceProducers(['fresh-1', 'fresh-2', 'fresh-1']);
    expect([...result.entries.keys()]).toEqual(['fresh-1', 'fresh-2']);
    const all = result.all();
    expect(all.get('fresh-1')!.producerId).not.toBe(all.get('fresh-2')!.producerId);
  });

  it('forceTerminateTransaction aborts a prepared two-phase transaction', async () => {
    const producer = new KafkaProducer({
      bootstrapServers: cluster.bootstrap,
      transactionalId: 'prepared',
      transactionTwoPhaseCommitEnable: true,
      lingerMs: 1,
      maxBlockMs: 5_000,
      ...quiet,
    });
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.send({ topic: 'a', partition: 1, value: 'prepared-away' });
      await producer.prepareTransaction();
      // KIP-939's prepare is the client's flush: the coordinator still holds the transaction as Ongoing.
      expect((await admin.describeTransactions(['prepared'])).get('prepared').state).toBe('ONGOING');
    } finally {
      await producer.close(0);
    }
    await admin.forceTerminateTransaction('prepared');
    expect((await admin.describeTransactions(['prepared'])).get('prepared').state).toBe('EMPTY');
    expect(await readCommitted(cluster.bootstrap, 'a', 500)).not.toContain('prepared-away');
  });
});

describe('describeFeatures', () => {
  it('reports the finalized transaction.version, its epoch and the supported range', async () => {
    const features = await admin.describeFeatures();
    expect(features.supportedFeatures.get('transaction.version')).toEqual({ minVersion: 0, maxVersion: 2 });
    expect(features.finalizedFeatures.get('transaction.version')).toEqual({ minVersionLevel: 2, maxVersionLevel: 2 });
    expect(features.finalizedFeaturesEpoch).toBe(0n);
  });
});

describe('with ACLs', () => {
  let secure: SecureBroker;
  let bob: Admin;
  beforeAll(async () => {
    secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false } });
    const adminConnection = await connectAs(secure, 'admin');
    await createAcls(adminConnection, [
      { principal: 'User:bob', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'bobs-txn', operation: Op.WRITE },
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'bobs', operation: Op.DESCRIBE },
    ]);
    await adminConnection.close();
    bob = new Admin({
      bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
      sasl: { mechanism: 'SCRAM-SHA-256', username: 'bob', password: USERS.bob },
      logger: null,
      defaultApiTimeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await bob?.close();
    await secure?.close();
  });

  it('fenceProducers: an id the principal may not write is a TransactionalIdAuthorizationError entry; the other is fenced', async () => {
    const result = await bob.fenceProducers(['bobs-txn', 'others-txn']);
    expect(result.get('bobs-txn').producerEpoch).toBeGreaterThanOrEqual(0);
    expect(result.errors().get('others-txn')).toBeInstanceOf(TransactionalIdAuthorizationError);
    await expect(bob.forceTerminateTransaction('others-txn')).rejects.toBeInstanceOf(TransactionalIdAuthorizationError);
  });

  it('removeMembersFromConsumerGroup without READ on the group rejects with GroupAuthorizationError; describeClassicGroups denies per group', async () => {
    await expect(bob.removeMembersFromConsumerGroup('others', { members: [{ groupInstanceId: 'i' }] })).rejects.toBeInstanceOf(GroupAuthorizationError);
    const described = await bob.describeClassicGroups(['bobs', 'others']);
    expect((described.errors().get('bobs') as KafkaError).code).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect(described.errors().get('others')).toBeInstanceOf(GroupAuthorizationError);
  });
});
