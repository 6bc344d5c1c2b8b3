/**
 * Admin's group and group-offset calls against a real kipgen broker:
 * listGroups, describeConsumerGroups (classic via DescribeGroups with the
 * assignment decoded from the consumer protocol's bytes, KIP-848 via
 * ConsumerGroupDescribe), describeShareGroups, deleteConsumerGroups,
 * listConsumerGroupOffsets, alterConsumerGroupOffsets,
 * deleteConsumerGroupOffsets, listShareGroupOffsets, alterShareGroupOffsets,
 * deleteShareGroupOffsets — each with its per-entry errors (an unknown
 * group, a group with members, a group or topic denied by ACLs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, KafkaShareConsumer } from '../../client/index.js';
import { ConfigError, GroupAuthorizationError, UnknownTopicOrPartitionError, type KafkaError } from '../../client/errors.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { TestClient } from '../coordinator/support/broker-harness.js';
import { connectAs, createAcls, Op, Res } from '../security/acl-support.js';
import { startSecureBroker, USERS, type SecureBroker } from '../security/support.js';
import { startCluster, type TestCluster } from './support/brokers.js';

let cluster: TestCluster;
let admin: Admin;
let raw: TestClient;
let share: KafkaShareConsumer;

/** ConsumerProtocolSubscription v0 / ConsumerProtocolAssignment v0 bytes, as a classic consumer sends them. */
const int16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (v: string): number[] => [...int16(Buffer.byteLength(v)), ...Buffer.from(v)];
const NO_USER_DATA = int32(-1);
function subscription(topics: string[]): Uint8Array {
  return Uint8Array.from([...int16(0), ...int32(topics.length), ...topics.flatMap(str), ...NO_USER_DATA]);
}
function assignment(parts: Record<string, number[]>): Uint8Array {
  const topics = Object.entries(parts).flatMap(([topic, partitions]) => [...str(topic), ...int32(partitions.length), ...partitions.flatMap(int32)]);
  return Uint8Array.from([...int16(0), ...int32(Object.keys(parts).length), ...topics, ...NO_USER_DATA]);
}

const codeOf = (error: KafkaError | undefined): number | undefined => error?.code;

beforeAll(async () => {
  cluster = await startCluster({
    config: {
      topics: [
        { name: 'a', partitions: 2 },
        { name: 'b', partitions: 1 },
      ],
      groupInitialRebalanceDelayMs: 0,
      shareGroup: { heartbeatIntervalMs: 100 },
    },
  });
  admin = new Admin({ bootstrapServers: cluster.bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
  raw = await TestClient.connect(cluster.brokers[0]!.port);
  // A classic consumer group with one member, assigned a-0 and a-1 by its leader.
  const joined = await raw.call(
    11,
    {
      groupId: 'classic',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: 5_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(['a']) }],
    },
    3,
  );
  expect(joined.errorCode).toBe(0);
  const synced = await raw.call(
    14,
    {
      groupId: 'classic',
      generationId: joined.generationId,
      memberId: joined.memberId,
      assignments: [{ memberId: joined.memberId, assignment: assignment({ a: [0, 1] }) }],
    },
    3,
  );
  expect(synced.errorCode).toBe(0);
  // A KIP-848 group with one member subscribed to b.
  const beat = await raw.call(
    68,
    {
      groupId: 'modern',
      memberId: 'm-1',
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['b'],
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: [],
    },
    1,
  );
  expect(beat.errorCode).toBe(0);
  // A simple group: offsets only, no members.
  const committed = await admin.alterConsumerGroupOffsets('simple', [
    { topic: 'a', partition: 0, offset: 5n, metadata: 'five' },
    { topic: 'b', partition: 0, offset: 7n, leaderEpoch: 0 },
  ]);
  expect(committed.errors()).toEqual(new Map());
  // A share group with one member.
  share = new KafkaShareConsumer({ bootstrapServers: cluster.bootstrap, groupId: 'shared', logger: null });
  share.subscribe(['b']);
  await share.poll(500);
});

afterAll(async () => {
  await share?.close();
  await raw?.close();
  await admin?.close();
  await cluster?.close();
});

describe('listGroups', () => {
  it('lists every kind of group with its type, protocol and state; filters by type and state', async () => {
    const all = (await admin.listGroups()).all();
    const shown = all.map((g) => `${g.groupId}:${g.type}/${g.protocol}/${g.groupState}/${g.isSimpleConsumerGroup}`).sort();
    expect(shown).toEqual([
      'classic:CLASSIC/consumer/STABLE/false',
      'modern:CONSUMER/consumer/STABLE/false',
      'shared:SHARE/share/STABLE/false',
      'simple:CLASSIC//EMPTY/true',
    ]);
    expect((await admin.listGroups({ types: ['SHARE'] })).all().map((g) => g.groupId)).toEqual(['shared']);
    expect((await admin.listGroups({ groupStates: ['EMPTY'] })).all().map((g) => g.groupId)).toEqual(['simple']);
    expect(
      (await admin.listGroups({ protocolTypes: ['consumer'] }))
        .all()
        .map((g) => g.groupId)
        .sort(),
    ).toEqual(['classic', 'modern']);
  });
});

describe('describeConsumerGroups', () => {
  it('describes a classic group (assignment decoded), a KIP-848 group, a simple group; unknown and share groups are entry errors', async () => {
    const result = await admin.describeConsumerGroups(['classic', 'modern', 'simple', 'nope', 'shared'], { includeAuthorizedOperations: true });
    const classic = result.get('classic');
    expect(classic).toMatchObject({ type: 'CLASSIC', groupState: 'STABLE', isSimpleConsumerGroup: false, coordinatorId: 0, groupEpoch: undefined });
    expect(classic.members).toHaveLength(1);
    expect(classic.members[0]!.clientId).toBe('kipgen-test');
    const modern = result.get('modern');
    expect(modern).toMatchObject({ type: 'CONSUMER', groupState: 'STABLE', partitionAssignor: 'uniform', isSimpleConsumerGroup: false });
    expect(modern.members[0]).toMatchObject({
      memberId: 'm-1',
      memberEpoch: modern.groupEpoch,
      assignment: { topicPartitions: [{ topic: 'b', partition: 0 }] },
    });
    // kipgen's broker never computes authorized operations (coordinator/apis/69): "not requested", so undefined.
    expect(modern.authorizedOperations).toBeUndefined();
    expect(result.get('simple')).toMatchObject({ type: 'CLASSIC', groupState: 'EMPTY', isSimpleConsumerGroup: true, members: [] });
    expect(codeOf(result.errors().get('nope'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect(codeOf(result.errors().get('shared'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('decodes a classic member assignment from the consumer protocol bytes', async () => {
    const result = await admin.describeConsumerGroups(['classic']);
    const member = result.get('classic').members[0]!;
    expect(result.get('classic').groupState).toBe('STABLE');
    expect(member.assignment.topicPartitions).toEqual([
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 1 },
    ]);
    expect(result.get('classic').partitionAssignor).toBe('range');
  });

  it("an assignment that is not consumer protocol bytes is the group's entry error, naming the group and the member", async () => {
    const joined = await raw.call(
      11,
      {
        groupId: 'garbled',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 5_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(['a']) }],
      },
      3,
    );
    expect(joined.errorCode).toBe(0);
    try {
      // Version 0, one topic, then the bytes stop where its name should be.
      const cut = Uint8Array.from([...int16(0), ...int32(1)]);
      const synced = await raw.call(
        14,
        { groupId: 'garbled', generationId: joined.generationId, memberId: joined.memberId, assignments: [{ memberId: joined.memberId, assignment: cut }] },
        3,
      );
      expect(synced.errorCode).toBe(0);
      const result = await admin.describeConsumerGroups(['garbled', 'classic']);
      expect(result.get('classic').members).toHaveLength(1);
      expect(result.errors().get('garbled')?.message).toMatch(
        new RegExp(`^DescribeGroups \\(group garbled\\), member ${joined.memberId}: the member's assignment is not a consumer protocol Assignment \\(.+\\)$`),
      );
    } finally {
      const left = await raw.call(13, { groupId: 'garbled', members: [{ memberId: joined.memberId, groupInstanceId: null }] }, 3);
      expect(left.errorCode).toBe(0);
      expect((await admin.deleteConsumerGroups(['garbled'])).errors()).toEqual(new Map());
    }
  });

  it('refuses a negative timeoutMs with the same ConfigError as every Admin call', async () => {
    // One deadline function for every Admin call (client/admin/call.ts): the coordinator calls say it as the others do.
    await expect(admin.describeConsumerGroups(['classic'], { timeoutMs: -1 })).rejects.toThrow(ConfigError);
    await expect(admin.deleteConsumerGroups(['classic'], { timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be a non-negative number of milliseconds, not -1/);
  });
});

describe('describeShareGroups', () => {
  it('describes a share group with its member and assignment; an unknown one is GROUP_ID_NOT_FOUND', async () => {
    const result = await admin.describeShareGroups(['shared', 'nope']);
    const shared = result.get('shared');
    expect(shared).toMatchObject({ groupId: 'shared', groupState: 'STABLE', coordinatorId: 0 });
    expect(shared.members).toHaveLength(1);
    expect(shared.members[0]!.assignment.topicPartitions).toEqual([{ topic: 'b', partition: 0 }]);
    expect(codeOf(result.errors().get('nope'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

describe('consumer group offsets', () => {
  it("lists all of a group's offsets, or the named partitions (null where none)", async () => {
    const listed = await admin.listConsumerGroupOffsets({ simple: {}, classic: { topicPartitions: [{ topic: 'a', partition: 1 }] } });
    const simple = listed.get('simple');
    expect([...simple.keys()].sort()).toEqual(['a-0', 'b-0']);
    expect(simple.get('a-0')!.offset).toEqual({ offset: 5n, leaderEpoch: undefined, metadata: 'five' });
    expect(simple.get('b-0')!.offset).toEqual({ offset: 7n, leaderEpoch: 0, metadata: '' });
    expect(listed.get('classic').get('a-1')).toEqual({ topicPartition: { topic: 'a', partition: 1 }, offset: null });
  });

  it('alterConsumerGroupOffsets: a group with members refuses a commit from outside (UNKNOWN_MEMBER_ID); an unknown partition is its own error', async () => {
    const refused = await admin.alterConsumerGroupOffsets('classic', [{ topic: 'a', partition: 0, offset: 1n }]);
    expect(codeOf(refused.errors().get('a-0'))).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const mixed = await admin.alterConsumerGroupOffsets('simple', [
      { topic: 'a', partition: 1, offset: 9n },
      { topic: 'zzz', partition: 0, offset: 1n },
    ]);
    expect(mixed.get('a-1')).toBeUndefined();
    expect(codeOf(mixed.errors().get('zzz-0'))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    // The same class as the topic calls give for the code: errorFromCode types it for every caller.
    expect(mixed.errors().get('zzz-0')).toBeInstanceOf(UnknownTopicOrPartitionError);
    expect((await admin.listConsumerGroupOffsets('simple')).get('simple').get('a-1')!.offset!.offset).toBe(9n);
  });

  it('deleteConsumerGroupOffsets: deletes the named partitions; a subscribed topic and an unknown group are entry errors', async () => {
    const deleted = await admin.deleteConsumerGroupOffsets('simple', [{ topic: 'a', partition: 1 }]);
    expect(deleted.all()).toEqual(new Map([['a-1', undefined]]));
    expect([...(await admin.listConsumerGroupOffsets('simple')).get('simple').keys()].sort()).toEqual(['a-0', 'b-0']);
    await admin.alterConsumerGroupOffsets('modern-offsets', [{ topic: 'b', partition: 0, offset: 1n }]);
    const subscribed = await admin.deleteConsumerGroupOffsets('modern', [{ topic: 'b', partition: 0 }]);
    expect(codeOf(subscribed.errors().get('b-0'))).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
    const unknown = await admin.deleteConsumerGroupOffsets('nope', [{ topic: 'a', partition: 0 }]);
    expect(codeOf(unknown.errors().get('a-0'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('share-group offsets: alter and delete refused while the group has a member (NON_EMPTY_GROUP); on an empty group they set and remove the start offset that list shows', async () => {
    const busy = await admin.alterShareGroupOffsets('shared', [{ topic: 'b', partition: 0, offset: 0n }]);
    expect(codeOf(busy.errors().get('b-0'))).toBe(ErrorCode.NON_EMPTY_GROUP);
    expect(codeOf((await admin.deleteShareGroupOffsets('shared', ['b'])).errors().get('b'))).toBe(ErrorCode.NON_EMPTY_GROUP);
    const altered = await admin.alterShareGroupOffsets('idle-share', [
      { topic: 'b', partition: 0, offset: 0n },
      { topic: 'b', partition: 1, offset: 0n },
    ]);
    expect(altered.get('b-0')).toBeUndefined();
    expect(altered.errors().get('b-1')).toBeInstanceOf(UnknownTopicOrPartitionError);
    const listed = await admin.listShareGroupOffsets(['idle-share', 'never-seen']);
    expect(listed.get('idle-share')).toEqual(new Map([['b-0', { topicPartition: { topic: 'b', partition: 0 }, startOffset: 0n, leaderEpoch: 0, lag: 0n }]]));
    expect(listed.get('never-seen')).toEqual(new Map());
    const deleted = await admin.deleteShareGroupOffsets('idle-share', ['b', 'a']);
    expect(deleted.get('b')).toBeUndefined();
    expect(deleted.errors().get('a')).toBeInstanceOf(UnknownTopicOrPartitionError);
    expect((await admin.listShareGroupOffsets(['idle-share'])).get('idle-share')).toEqual(new Map());
    expect(codeOf((await admin.deleteShareGroupOffsets('never-seen', ['b'])).errors().get('b'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const consumerGroup = await admin.alterShareGroupOffsets('simple', [{ topic: 'b', partition: 0, offset: 0n }]);
    expect(codeOf(consumerGroup.errors().get('b-0'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

describe('deleteConsumerGroups', () => {
  it('deletes an empty group; a group with members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND', async () => {
    const result = await admin.deleteConsumerGroups(['simple', 'modern', 'nope']);
    expect(result.get('simple')).toBeUndefined();
    expect(codeOf(result.errors().get('modern'))).toBe(ErrorCode.NON_EMPTY_GROUP);
    expect(codeOf(result.errors().get('nope'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect((await admin.listGroups()).all().map((g) => g.groupId)).not.toContain('simple');
  });
});

describe('with ACLs', () => {
  let secure: SecureBroker;
  let bob: Admin;
  beforeAll(async () => {
    secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false } });
    const adminConnection = await connectAs(secure, 'admin');
    await createAcls(adminConnection, [
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'bobs', operation: Op.READ },
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'bobs', operation: Op.DELETE },
      { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ },
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'bobs-share', operation: Op.READ },
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'bobs-share', operation: Op.DELETE },
      { principal: 'User:carol', resourceType: Res.GROUP, resourceName: 'bobs-share', operation: Op.DESCRIBE },
      { principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.DESCRIBE },
    ]);
    await adminConnection.close();
    const superAdmin = new Admin({
      bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
      sasl: { mechanism: 'SCRAM-SHA-256', username: 'admin', password: USERS.admin },
      logger: null,
    });
    for (const group of ['bobs', 'others']) {
      const done = await superAdmin.alterConsumerGroupOffsets(group, [
        { topic: 'events', partition: 0, offset: 1n },
        { topic: 'audit', partition: 0, offset: 2n },
      ]);
      expect(done.errors()).toEqual(new Map());
    }
    await superAdmin.close();
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

  it('a denied group is a GroupAuthorizationError entry, a denied topic a TOPIC_AUTHORIZATION_FAILED entry; the others succeed', async () => {
    expect((await bob.listGroups()).all().map((g) => g.groupId)).toEqual(['bobs']);
    const described = await bob.describeConsumerGroups(['bobs', 'others']);
    expect(described.get('bobs').isSimpleConsumerGroup).toBe(true);
    expect(described.errors().get('others')).toBeInstanceOf(GroupAuthorizationError);
    const offsets = await bob.listConsumerGroupOffsets(['bobs', 'others']);
    expect([...offsets.get('bobs').keys()]).toEqual(['events-0']);
    expect(offsets.errors().get('others')).toBeInstanceOf(GroupAuthorizationError);
    const deleted = await bob.deleteConsumerGroupOffsets('bobs', [
      { topic: 'events', partition: 0 },
      { topic: 'audit', partition: 0 },
    ]);
    expect(deleted.get('events-0')).toBeUndefined();
    expect(codeOf(deleted.errors().get('audit-0'))).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const denied = await bob.deleteConsumerGroups(['others']);
    expect(denied.errors().get('others')).toBeInstanceOf(GroupAuthorizationError);
  });
  it('share-group offsets: GROUP READ to alter, DELETE to delete, DESCRIBE to list (else GroupAuthorizationError); a topic without READ (DESCRIBE to list) is TOPIC_AUTHORIZATION_FAILED', async () => {
    const altered = await bob.alterShareGroupOffsets('bobs-share', [
      { topic: 'events', partition: 0, offset: 0n },
      { topic: 'audit', partition: 0, offset: 0n },
    ]);
    expect(altered.get('events-0')).toBeUndefined();
    expect(codeOf(altered.errors().get('audit-0'))).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect((await bob.alterShareGroupOffsets('others', [{ topic: 'events', partition: 0, offset: 0n }])).errors().get('events-0')).toBeInstanceOf(
      GroupAuthorizationError,
    );
    const carol = new Admin({
      bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
      sasl: { mechanism: 'SCRAM-SHA-256', username: 'carol', password: USERS.carol },
      logger: null,
      defaultApiTimeoutMs: 5_000,
    });
    try {
      const listed = await carol.listShareGroupOffsets({ 'bobs-share': { topicPartitions: [{ topic: 'events', partition: 0 }] } });
      expect(listed.get('bobs-share').get('events-0')?.startOffset).toBe(0n);
      expect((await carol.listShareGroupOffsets(['others'])).errors().get('others')).toBeInstanceOf(GroupAuthorizationError);
      // Without READ on the group carol may not alter it, nor delete without DELETE.
      expect((await carol.alterShareGroupOffsets('bobs-share', [{ topic: 'events', partition: 0, offset: 1n }])).errors().get('events-0')).toBeInstanceOf(
        GroupAuthorizationError,
      );
      expect((await carol.deleteShareGroupOffsets('bobs-share', ['events'])).errors().get('events')).toBeInstanceOf(GroupAuthorizationError);
    } finally {
      await carol.close();
    }
    const deleted = await bob.deleteShareGroupOffsets('bobs-share', ['events', 'audit']);
    expect(deleted.get('events')).toBeUndefined();
    expect(codeOf(deleted.errors().get('audit'))).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect((await bob.deleteShareGroupOffsets('others', ['events'])).errors().get('events')).toBeInstanceOf(GroupAuthorizationError);
  });
});
