/**
 * OffsetDelete (47): a group's offsets for some partitions go, the group and
 * its other offsets stay (Kafka's OffsetMetadataManager.deleteOffsets,
 * ClassicGroup.validateOffsetDelete / isSubscribedToTopic; the rule of
 * KafkaApis.handleOffsetDeleteRequest: DELETE on the group, READ on each topic).
 * A real broker over real logs in a temp folder, restarted to see the
 * tombstones replayed; a second one with SASL and ACLs for the rule.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { KafkaConnection } from '../../connection/connection.js';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { connectAs, createAcls, Op, Res } from '../security/acl-support.js';
import { startSecureBroker } from '../security/support.js';
import { startTestBroker, tempDir, TestClient } from './support/broker-harness.js';

const TOPICS = [
  { name: 'a', partitions: 2 },
  { name: 'b', partitions: 1 },
];
const open: { close(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function broker(dataDir: string): Promise<{ broker: Broker; c: TestClient }> {
  const started = await startTestBroker({ dataDir, topics: TOPICS, groupInitialRebalanceDelayMs: 0 });
  const c = await TestClient.connect(started.port);
  open.push(started, c);
  return { broker: started, c };
}

type Caller = Pick<TestClient, 'call'>;
const commit = (c: Caller, groupId: string, offsets: [string, number, bigint][]) =>
  c.call(
    8,
    {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: offsets.map(([name, partitionIndex, committedOffset]) => ({
        name,
        partitions: [{ partitionIndex, committedOffset, committedLeaderEpoch: -1, committedMetadata: '' }],
      })),
    },
    8,
  );
const offsetDelete = (c: Caller, groupId: string, topics: [string, number[]][]) =>
  c.call(47, { groupId, topics: topics.map(([name, partitions]) => ({ name, partitions: partitions.map((partitionIndex) => ({ partitionIndex })) })) }, 0);
const errors = (response: any) => response.topics.map((t: any) => [t.name, t.partitions.map((p: any) => [p.partitionIndex, p.errorCode])]);
async function committed(c: Caller, groupId: string): Promise<string[]> {
  const response = await c.call(9, { groupId, topics: null, requireStable: false }, 7);
  return response.topics.flatMap((t: any) => t.partitions.map((p: any) => `${t.name}-${p.partitionIndex}=${p.committedOffset}`)).sort();
}

/** A classic consumer-protocol subscription (ConsumerProtocolSubscription v0): the topics, no user data. */
function subscription(topics: string[]): Uint8Array {
  const names = topics.map((t) => Buffer.from(t, 'utf8'));
  const out = Buffer.alloc(2 + 4 + names.reduce((n, b) => n + 2 + b.length, 0) + 4);
  let at = out.writeInt16BE(0, 0);
  at = out.writeInt32BE(topics.length, at);
  for (const name of names) {
    at = out.writeInt16BE(name.length, at);
    at += name.copy(out, at);
  }
  out.writeInt32BE(-1, at); // no user data
  return out;
}

describe('OffsetDelete (47)', () => {
  it('deletes the named offsets only, answers unknown topics and partitions, and the deletion survives a restart', async () => {
    const dataDir = tempDir();
    const first = await broker(dataDir);
    const commits = await commit(first.c, 'g', [
      ['a', 0, 5n],
      ['a', 1, 6n],
      ['b', 0, 7n],
    ]);
    expect(commits.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode))).toEqual([0, 0, 0]);
    const response = await offsetDelete(first.c, 'g', [
      ['a', [0, 9]],
      ['nope', [0]],
    ]);
    expect(response.errorCode).toBe(0);
    // One entry per topic; the unknown partitions and topics first, as KafkaApis answers them before the coordinator.
    expect(errors(response)).toEqual([
      [
        'a',
        [
          [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
          [0, 0],
        ],
      ],
      ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
    ]);
    expect(await committed(first.c, 'g')).toEqual(['a-1=6', 'b-0=7']);
    await first.c.close();
    await first.broker.close();
    const again = await broker(dataDir);
    expect(await committed(again.c, 'g')).toEqual(['a-1=6', 'b-0=7']);
    // A partition without an offset is answered NONE too, with nothing written.
    expect(errors(await offsetDelete(again.c, 'g', [['a', [0]]]))).toEqual([['a', [[0, 0]]]]);
    expect((await offsetDelete(again.c, 'unknown-group', [['a', [0]]])).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('refuses the topics a classic consumer group or a KIP-848 group still subscribes to (GROUP_SUBSCRIBED_TO_TOPIC)', async () => {
    const { c } = await broker(tempDir());
    await commit(c, 'classic', [
      ['a', 0, 1n],
      ['b', 0, 2n],
    ]);
    const joined = await c.call(
      11,
      {
        groupId: 'classic',
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 5_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(['a']) }],
      },
      3,
    );
    expect(joined.errorCode).toBe(0);
    const classic = await offsetDelete(c, 'classic', [
      ['a', [0]],
      ['b', [0]],
    ]);
    expect(errors(classic)).toEqual([
      ['a', [[0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]]],
      ['b', [[0, 0]]],
    ]);
    expect(await committed(c, 'classic')).toEqual(['a-0=1']);

    const beat = await c.call(
      68,
      {
        groupId: 'modern',
        memberId: 'm1',
        memberEpoch: 0,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: ['b'],
        subscribedTopicRegex: null,
        serverAssignor: null,
        topicPartitions: [],
      },
      1,
    );
    expect(beat.errorCode).toBe(0);
    await commit(c, 'modern', [['a', 0, 3n]]);
    const modern = await offsetDelete(c, 'modern', [
      ['b', [0]],
      ['a', [0]],
    ]);
    expect(errors(modern)).toEqual([
      ['b', [[0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]]],
      ['a', [[0, 0]]],
    ]);
  });

  it('needs DELETE on the group (else GROUP_AUTHORIZATION_FAILED) and READ on each topic (else TOPIC_AUTHORIZATION_FAILED)', async () => {
    const secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false } });
    open.push(secure);
    const call = (connection: KafkaConnection): Caller => ({
      call: (apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> => {
        const api = apiByKey(apiKey)!;
        const codec = api.request as ApiMessageCodec<any>;
        return connection.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
      },
    });
    const adminConnection = await connectAs(secure, 'admin');
    const bobConnection = await connectAs(secure, 'bob');
    open.push(adminConnection, bobConnection);
    const admin = call(adminConnection);
    const bob = call(bobConnection);
    await commit(admin, 'g-admin', [
      ['events', 0, 1n],
      ['audit', 0, 2n],
    ]);
    expect((await offsetDelete(bob, 'g-admin', [['events', [0]]])).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    await createAcls(adminConnection, [
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'g-admin', operation: Op.DELETE },
      { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ },
    ]);
    const response = await offsetDelete(bob, 'g-admin', [
      ['events', [0]],
      ['audit', [0]],
    ]);
    expect(errors(response)).toEqual([
      ['audit', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      ['events', [[0, 0]]],
    ]);
    expect(await committed(admin, 'g-admin')).toEqual(['audit-0=2']);
  });
});
