/**
 * What a principal may not DESCRIBE stays hidden.
 * bob may use the groups below and DESCRIBE (READ) the topic `events`, but has
 * no ACL on `audit`:
 * - OffsetFetch leaves `audit` out of all-topics answers and answers it by name
 *   with TOPIC_AUTHORIZATION_FAILED and no offset (KafkaApis.handleOffsetFetchRequest);
 * - ConsumerGroupHeartbeat subscribing to `audit` is TOPIC_AUTHORIZATION_FAILED and
 *   assigns nothing (KAFKA-18813);
 * - ConsumerGroupDescribe / ShareGroupDescribe of a group assigned `audit` answer
 *   TOPIC_AUTHORIZATION_FAILED without members (KAFKA-18817);
 * - Metadata by topic id answers `audit` with a null name (KafkaApis.handleTopicMetadataRequest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { KafkaConnection } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { connectAs, createAcls, Op, Res } from './acl-support.js';
import { startSecureBroker, type SecureBroker } from './support.js';

function call(c: KafkaConnection, apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
  const api = apiByKey(apiKey)!;
  const codec = api.request as ApiMessageCodec<any>;
  return c.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
}

let secure: SecureBroker;
let admin: KafkaConnection;
let bob: KafkaConnection;
const ids = new Map<string, string>();

beforeAll(async () => {
  secure = await startSecureBroker({
    authorizer: { enabled: true, superUsers: ['User:admin', 'User:ANONYMOUS'], allowEveryoneIfNoAclFound: false },
    shareGroup: { heartbeatIntervalMs: 100 },
  });
  admin = await connectAs(secure, 'admin');
  bob = await connectAs(secure, 'bob');
  const grants = await createAcls(admin, [
    { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'g-', patternType: 4, operation: Op.READ },
    { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ },
  ]);
  expect(grants.results.map((r) => r.errorCode)).toEqual([0, 0]);
  const metadata = await call(admin, 3, { topics: null, allowAutoTopicCreation: false }, 12);
  for (const t of metadata.topics) ids.set(t.name, t.topicId);
  // Offsets of both topics in a group bob may describe, committed by admin (no members: a simple commit).
  const commit = await call(
    admin,
    8,
    {
      groupId: 'g-offsets',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: ['events', 'audit'].map((name) => ({
        name,
        partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: 'm' }],
      })),
    },
    8,
  );
  expect(commit.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode))).toEqual([0, 0]);
});

afterAll(async () => {
  await bob?.close();
  await admin?.close();
  await secure?.close();
});

describe('OffsetFetch hides the offsets of topics the caller may not DESCRIBE', () => {
  const offsets = (topics: any[]) => topics.map((t) => [t.name, t.partitions.map((p: any) => [p.committedOffset, p.errorCode])]);

  it('v7 (one group): all topics leave audit out; by name, audit is TOPIC_AUTHORIZATION_FAILED with no offset', async () => {
    const all = await call(bob, 9, { groupId: 'g-offsets', topics: null, requireStable: false }, 7);
    expect(offsets(all.topics)).toEqual([['events', [[7n, 0]]]]);
    const named = await call(
      bob,
      9,
      {
        groupId: 'g-offsets',
        topics: [
          { name: 'audit', partitionIndexes: [0] },
          { name: 'events', partitionIndexes: [0] },
        ],
        requireStable: false,
      },
      7,
    );
    expect(offsets(named.topics).sort()).toEqual([
      ['audit', [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      ['events', [[7n, 0]]],
    ]);
  });

  it('v9 (groups) and v10 (topic ids): the same, per group', async () => {
    const all = await call(bob, 9, { groups: [{ groupId: 'g-offsets', memberId: null, memberEpoch: -1, topics: null }], requireStable: false }, 9);
    expect(offsets(all.groups[0].topics)).toEqual([['events', [[7n, 0]]]]);
    const named = await call(
      bob,
      9,
      {
        groups: [
          {
            groupId: 'g-offsets',
            memberId: null,
            memberEpoch: -1,
            topics: [
              { name: 'audit', partitionIndexes: [0] },
              { name: 'events', partitionIndexes: [0] },
            ],
          },
        ],
        requireStable: false,
      },
      9,
    );
    expect(offsets(named.groups[0].topics).sort()).toEqual([
      ['audit', [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      ['events', [[7n, 0]]],
    ]);
    const byId = await call(
      bob,
      9,
      {
        groups: [{ groupId: 'g-offsets', memberId: null, memberEpoch: -1, topics: [{ name: '', topicId: ids.get('audit'), partitionIndexes: [0] }] }],
        requireStable: false,
      },
      10,
    );
    expect(byId.groups[0].topics.map((t: any) => [t.topicId, t.partitions.map((p: any) => [p.committedOffset, p.errorCode])])).toEqual([
      [ids.get('audit'), [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
    ]);
  });
});

describe('consumer and share groups (KAFKA-18813, KAFKA-18817)', () => {
  const beat = (groupId: string, memberId: string, topics: string[]) =>
    call(
      bob,
      68,
      {
        groupId,
        memberId,
        memberEpoch: 0,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: topics,
        subscribedTopicRegex: null,
        serverAssignor: null,
        topicPartitions: [],
      },
      1,
    );

  it('ConsumerGroupHeartbeat subscribing to an undescribable topic is TOPIC_AUTHORIZATION_FAILED and assigns nothing', async () => {
    const denied = await beat('g-subscribe', 'm-bob', ['events', 'audit']);
    expect(denied.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(denied.assignment).toBeNull();
    const described = await call(admin, 69, { groupIds: ['g-subscribe'], includeAuthorizedOperations: false }, 1);
    expect(described.groups[0].members).toEqual([]);
    expect((await beat('g-subscribe', 'm-bob', ['events'])).errorCode).toBe(0);
  });

  it('ConsumerGroupDescribe of a group assigned an undescribable topic is TOPIC_AUTHORIZATION_FAILED, without members', async () => {
    const joined = await call(
      admin,
      68,
      {
        groupId: 'g-mixed',
        memberId: 'm-admin',
        memberEpoch: 0,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: ['events', 'audit'],
        subscribedTopicRegex: null,
        serverAssignor: null,
        topicPartitions: [],
      },
      1,
    );
    expect(joined.errorCode).toBe(0);
    const asAdmin = await call(admin, 69, { groupIds: ['g-mixed'], includeAuthorizedOperations: false }, 1);
    expect(asAdmin.groups[0].members[0].targetAssignment.topicPartitions.map((tp: any) => tp.topicName).sort()).toEqual(['audit', 'events']);
    const asBob = await call(bob, 69, { groupIds: ['g-mixed', 'g-subscribe'], includeAuthorizedOperations: false }, 1);
    expect(asBob.groups.map((g: any) => [g.groupId, g.errorCode, g.members.length])).toEqual([
      ['g-mixed', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0],
      ['g-subscribe', 0, 1],
    ]);
    expect(JSON.stringify(asBob.groups[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('audit');
  });

  it('ShareGroupDescribe of a share group assigned an undescribable topic is TOPIC_AUTHORIZATION_FAILED, without members', async () => {
    const joined = await call(
      admin,
      76,
      { groupId: 'g-share', memberId: 'share-member-admin-0001', memberEpoch: 0, rackId: null, subscribedTopicNames: ['audit'] },
      1,
    );
    expect(joined.errorCode).toBe(0);
    const asAdmin = await call(admin, 77, { groupIds: ['g-share'], includeAuthorizedOperations: false }, 1);
    expect(asAdmin.groups[0].members[0].assignment.topicPartitions.map((tp: any) => tp.topicName)).toEqual(['audit']);
    const asBob = await call(bob, 77, { groupIds: ['g-share'], includeAuthorizedOperations: false }, 1);
    expect(asBob.groups.map((g: any) => [g.groupId, g.errorCode, g.members.length])).toEqual([['g-share', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0]]);
  });
});

describe('Metadata by topic id', () => {
  it('answers an undescribable topic with its id and a null name', async () => {
    const response = await call(
      bob,
      3,
      {
        topics: [
          { name: null, topicId: ids.get('audit') },
          { name: null, topicId: ids.get('events') },
        ],
        allowAutoTopicCreation: false,
      },
      12,
    );
    expect(response.topics.map((t: any) => [t.name, t.topicId, t.errorCode, t.partitions.length])).toEqual([
      [null, ids.get('audit'), ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0],
      ['events', ids.get('events'), 0, 2],
    ]);
  });

  it('by name, a denied topic keeps its name and loses its id', async () => {
    const response = await call(bob, 3, { topics: [{ name: 'audit', topicId: ZERO_UUID }], allowAutoTopicCreation: false }, 12);
    expect(response.topics.map((t: any) => [t.name, t.topicId, t.errorCode])).toEqual([['audit', ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]);
  });
});
