/**
 * ACL authorization (coordinator/auth/): the model (LITERAL and PREFIXED
 * patterns, implied DESCRIBE, DENY over ALLOW, super users), ACL management
 * over the wire and on disk, and allow/deny for every API family, including
 * KIP-1289's AddShareAcksToTxn (95) and TxnShareAcknowledge (96): WRITE on the
 * transactional id and READ on the share group, each half denied on its own.
 *
 * The broker's PLAINTEXT listener plays the trusted inter-broker listener
 * (User:ANONYMOUS is a super user), so the checks in these tests go through
 * the SASL listener as alice, bob and carol.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ClusterAuthorizationError,
  GroupAuthorizationError,
  KafkaProducer,
  KafkaShareConsumer,
  ShareAcknowledgements,
  TopicAuthorizationError,
  TransactionalIdAuthorizationError,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { BROKER_APIS } from '../../coordinator/apis/index.js';
import { startBroker } from '../../coordinator/broker.js';
import {
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  CreateAclsRequest,
  DeleteAclsRequest,
  DeleteTopicsRequest,
  DeleteTopicsResponse,
  DescribeAclsRequest,
  EndTxnRequest,
  FindCoordinatorRequest,
  InitProducerIdRequest,
  OffsetFetchRequest,
  ProduceRequest,
  ShareAcknowledgeRequest,
  ShareAcknowledgeResponse,
  ShareFetchRequest,
  ShareFetchResponse,
  ShareGroupDescribeRequest,
  ShareGroupHeartbeatRequest,
  TxnOffsetCommitRequest,
  WriteTxnMarkersRequest,
  AddShareAcksToTxnRequest,
  AddShareAcksToTxnResponse,
  ApiVersionsRequest,
  ApiVersionsResponse,
  FetchRequest,
  FetchResponse,
  ListOffsetsRequest,
  ListOffsetsResponse,
  MetadataRequest,
  MetadataResponse,
  TxnShareAcknowledgeRequest,
  TxnShareAcknowledgeResponse,
} from '../../generated/index.js';
import type { KafkaConnection } from '../../connection/connection.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { readCommitted } from '../client/support/brokers.js';
import { connectAs, createAcls, deleteAcls, describeAcls, Op, PatternType, Perm, Res, type Grant } from './acl-support.js';
import { startSecureBroker, USERS, type SecureBroker } from './support.js';

let secure: SecureBroker;
let admin: KafkaConnection;
beforeAll(async () => {
  secure = await startSecureBroker({
    authorizer: { enabled: true, superUsers: ['User:admin', 'User:ANONYMOUS'], allowEveryoneIfNoAclFound: false },
    shareGroup: { recordLockDurationMs: 5_000, heartbeatIntervalMs: 100 },
    // On, so that Enable2Pc is refused by the TWO_PHASE_COMMIT ACL below and not by the broker setting (off by default).
    transactionTwoPhaseCommitEnable: true,
  });
  admin = await connectAs(secure, 'admin');
  // Records to read, produced on the trusted listener.
  const p = new KafkaProducer({ bootstrapServers: secure.bootstrap('PLAINTEXT'), lingerMs: 1, logger: null, metricsRegistry: null });
  await Promise.all(Array.from({ length: 6 }, (_, i) => p.send({ topic: 'in', key: `k${i}`, value: `v${i}` })));
  await p.send({ topic: 'audit', value: 'secret' });
  await p.close();
});
afterAll(async () => {
  await admin?.close();
  await secure?.close();
});
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function grant(...grants: Grant[]): Promise<void> {
  const response = await createAcls(admin, grants);
  expect(response.results.map((r) => r.errorCode)).toEqual(grants.map(() => 0));
}

function saslClient(user: keyof typeof USERS): {
  bootstrapServers: string;
  sasl: { mechanism: 'SCRAM-SHA-256'; username: string; password: string };
  logger: null;
  metricsRegistry: null;
} {
  return {
    bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
    sasl: { mechanism: 'SCRAM-SHA-256', username: user, password: USERS[user] },
    logger: null,
    metricsRegistry: null,
  };
}

function producer(user: keyof typeof USERS, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ ...saslClient(user), lingerMs: 1, maxBlockMs: 5_000, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

function shareConsumer(user: keyof typeof USERS, groupId: string): KafkaShareConsumer {
  const s = new KafkaShareConsumer({ ...saslClient(user), groupId, acknowledgementMode: 'transactional', fetchMaxWaitMs: 50, requestTimeoutMs: 5_000 });
  cleanups.push(() => s.close(1_000));
  return s;
}

async function pollSome(s: KafkaShareConsumer, timeoutMs = 5_000): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records = await s.poll(200);
    if (records.length > 0 || Date.now() > deadline) return records;
  }
}

async function as<T>(user: keyof typeof USERS, fn: (c: KafkaConnection) => Promise<T>): Promise<T> {
  const c = await connectAs(secure, user);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const topicIds = new Map<string, string>();
async function learnTopicIds(): Promise<void> {
  const response = await admin.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse);
  for (const t of response.topics) topicIds.set(t.name!, t.topicId);
}

describe('every API the broker serves has an ACL rule', () => {
  it('ApiVersions lists no API without a definition in coordinator/apis/ (which cannot be written without its rule)', async () => {
    const response = await admin.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3, ApiVersionsResponse);
    const defined = BROKER_APIS.map((api) => api.apiKey);
    const unruled = response.apiKeys.map((k) => k.apiKey).filter((key) => !defined.includes(key));
    expect(unruled).toEqual([]);
  });
});

describe('ACL management (CreateAcls, DescribeAcls, DeleteAcls)', () => {
  it('needs ALTER / DESCRIBE on the cluster; creates, describes and deletes; rejects invalid entries', async () => {
    const refused = await as('alice', (c) => createAcls(c, [{ principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'x', operation: Op.READ }]));
    expect(refused.results[0]!.errorCode).toBe(31); // CLUSTER_AUTHORIZATION_FAILED
    const described = await as('alice', (c) => describeAcls(c, null));
    expect(described.errorCode).toBe(31);

    const created = await createAcls(admin, [
      { principal: 'User:nobody', resourceType: Res.TOPIC, resourceName: 'tmp-', patternType: PatternType.PREFIXED, operation: Op.READ },
      { principal: 'User:nobody', resourceType: Res.TOPIC, resourceName: 'x', patternType: PatternType.ANY, operation: Op.READ },
      { principal: 'nobody', resourceType: Res.GROUP, resourceName: 'g', operation: Op.READ },
    ]);
    expect(created.results.map((r) => r.errorCode)).toEqual([0, 42, 42]); // INVALID_REQUEST for the pattern ANY and the bare principal
    expect(created.results[1]!.errorMessage).toMatch(/pattern type ANY is not LITERAL or PREFIXED/);

    const listed = await describeAcls(admin, 'User:nobody');
    expect(listed.resources).toEqual([
      {
        resourceType: Res.TOPIC,
        resourceName: 'tmp-',
        patternType: PatternType.PREFIXED,
        acls: [{ principal: 'User:nobody', host: '*', operation: Op.READ, permissionType: Perm.ALLOW }],
      },
    ]);
    const stored = JSON.parse(fs.readFileSync(path.join(secure.dataDir, 'acls.json'), 'utf8')) as { acls: Grant[] };
    expect(stored.acls.some((a) => a.principal === 'User:nobody' && a.resourceName === 'tmp-')).toBe(true);

    const deleted = await deleteAcls(admin, 'User:nobody');
    expect(deleted.filterResults[0]!.matchingAcls.map((a) => a.resourceName)).toEqual(['tmp-']);
    expect((await describeAcls(admin, 'User:nobody')).resources).toEqual([]);
  });

  it('survives a restart (acls.json in the data directory)', async () => {
    const dataDir = fs.mkdtempSync(path.join(secure.dataDir, '..', 'kipgen-acl-restart-'));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const config = { host: '127.0.0.1', port: 0, dataDir, authorizer: { enabled: true, superUsers: ['User:ANONYMOUS'] } };
    const first = await startBroker(config, { log: () => {} });
    const { KafkaConnection } = await import('../../connection/connection.js');
    const c1 = await KafkaConnection.connect({ host: '127.0.0.1', port: first.port });
    await createAcls(c1, [{ principal: 'User:zoe', resourceType: Res.GROUP, resourceName: 'g1', operation: Op.READ, permissionType: Perm.DENY }]);
    await c1.close();
    await first.close();
    const second = await startBroker(config, { log: () => {} });
    cleanups.push(() => second.close());
    const c2 = await KafkaConnection.connect({ host: '127.0.0.1', port: second.port });
    cleanups.push(() => c2.close());
    const listed = await describeAcls(c2, 'User:zoe');
    expect(listed.resources.map((r) => [r.resourceName, r.acls[0]!.permissionType])).toEqual([['g1', Perm.DENY]]);
  });
});

describe('Produce and InitProducerId', () => {
  it('WRITE on the topic (PREFIXED), DENY wins over ALLOW, implied DESCRIBE for Metadata', async () => {
    const denied = await producer('alice')
      .send({ topic: 'orders', value: 'o1' })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(TopicAuthorizationError);

    await grant({ principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'ord', patternType: PatternType.PREFIXED, operation: Op.WRITE });
    await producer('alice').send({ topic: 'orders', value: 'o2' });
    expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'orders')).toContain('o2');

    await grant({ principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'orders', operation: Op.WRITE, permissionType: Perm.DENY });
    const denyWins = await producer('alice')
      .send({ topic: 'orders', value: 'o3' })
      .catch((e: unknown) => e);
    expect(denyWins).toBeInstanceOf(TopicAuthorizationError);
  });

  it('an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic', async () => {
    // Bob may see the topic but write nowhere: InitProducerId is refused.
    await grant({ principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.DESCRIBE });
    const refused = await producer('bob')
      .send({ topic: 'events', value: 'e1' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ClusterAuthorizationError);
  });

  it('a transactional producer needs WRITE on its transactional id', async () => {
    await grant({ principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'out', operation: Op.WRITE });
    const refused = await producer('carol', { transactionalId: 'tx-carol' })
      .initTransactions()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TransactionalIdAuthorizationError);
    await grant({ principal: 'User:carol', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-carol', operation: Op.WRITE });
    const p = producer('carol', { transactionalId: 'tx-carol' });
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', value: 'committed-by-carol' });
    await p.commitTransaction();
    expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'out')).toContain('committed-by-carol');
  });
});

describe('Metadata, ListOffsets and Fetch', () => {
  it('DESCRIBE shows a topic and its offsets, READ is needed to fetch; others are hidden or refused', async () => {
    await learnTopicIds();
    await as('alice', async (c) => {
      const all = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse);
      expect(all.topics.map((t) => t.name)).not.toContain('audit');
      const named = await c.send(MetadataRequest, MetadataRequest.create({ topics: [{ topicId: ZERO_UUID, name: 'audit' }] }), 12, MetadataResponse);
      expect(named.topics[0]!.errorCode).toBe(29);
      const offsets = await c.send(
        ListOffsetsRequest,
        ListOffsetsRequest.create({ replicaId: -1, topics: [{ name: 'audit', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }),
        7,
        ListOffsetsResponse,
      );
      expect(offsets.topics[0]!.partitions[0]!.errorCode).toBe(29);
    });
    await grant({ principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'audit', operation: Op.DESCRIBE });
    const fetch = (c: KafkaConnection) =>
      c.send(
        FetchRequest,
        FetchRequest.create({
          replicaId: -1,
          maxWaitMs: 10,
          minBytes: 0,
          maxBytes: 1 << 20,
          topics: [
            {
              topic: 'audit',
              topicId: topicIds.get('audit')!,
              partitions: [
                {
                  partition: 0,
                  currentLeaderEpoch: -1,
                  fetchOffset: 0n,
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 1 << 20,
                  replicaDirectoryId: ZERO_UUID,
                  highWatermark: -1n,
                },
              ],
            },
          ],
        }),
        13,
        FetchResponse,
      );
    await as('alice', async (c) => {
      const offsets = await c.send(
        ListOffsetsRequest,
        ListOffsetsRequest.create({ replicaId: -1, topics: [{ name: 'audit', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }),
        7,
        ListOffsetsResponse,
      );
      expect(offsets.topics[0]!.partitions[0]!.errorCode).toBe(0);
      expect(offsets.topics[0]!.partitions[0]!.offset).toBe(1n);
      const refused = await fetch(c);
      expect(refused.responses[0]!.partitions[0]!.errorCode).toBe(29);
      // No data: empty records, as Kafka's FetchResponse.partitionResponse (MemoryRecords.EMPTY), not null.
      expect(refused.responses[0]!.partitions[0]!.records).toEqual(new Uint8Array(0));
    });
    await grant({ principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'audit', operation: Op.READ });
    await as('alice', async (c) => {
      const fetched = await fetch(c);
      expect(fetched.responses[0]!.partitions[0]!.errorCode).toBe(0);
      expect(fetched.responses[0]!.partitions[0]!.records!.length).toBeGreaterThan(0);
    });
  });
});

describe('topics: auto-creation and topics named by id', () => {
  const metadataFor = (c: KafkaConnection, name: string) =>
    c.send(MetadataRequest, MetadataRequest.create({ topics: [{ topicId: ZERO_UUID, name }], allowAutoTopicCreation: true }), 12, MetadataResponse);
  const exists = async (name: string) =>
    (await admin.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse)).topics.some((t) => t.name === name);

  it('Metadata creates a missing topic only with CREATE on the cluster or the topic, as Kafka does', async () => {
    await grant({ principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'auto-', patternType: PatternType.PREFIXED, operation: Op.DESCRIBE });
    const refused = await as('carol', (c) => metadataFor(c, 'auto-refused'));
    expect(refused.topics[0]!.errorCode).toBe(29);
    expect(await exists('auto-refused')).toBe(false);
    await grant({ principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'auto-allowed', operation: Op.CREATE });
    const created = await as('carol', (c) => metadataFor(c, 'auto-allowed'));
    expect(created.topics[0]!.errorCode).toBe(0);
    expect(await exists('auto-allowed')).toBe(true);
  });

  it('DeleteTopics by topic id needs DELETE on the topic the id names', async () => {
    await learnTopicIds();
    const byId = (c: KafkaConnection) =>
      c.send(
        DeleteTopicsRequest,
        DeleteTopicsRequest.create({ topics: [{ name: null, topicId: topicIds.get('audit')! }], timeoutMs: 5_000 }),
        6,
        DeleteTopicsResponse,
      );
    const refused = await as('dave', byId);
    expect(refused.responses[0]!.errorCode).toBe(29);
    expect(await exists('audit')).toBe(true);
  });
});

describe('share groups and KIP-1289', () => {
  it('a share consumer needs READ on its group and on the topic', async () => {
    await grant({ principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'in', operation: Op.READ });
    const noGroup = shareConsumer('bob', 'g-closed');
    noGroup.subscribe(['in']);
    expect(await noGroup.poll(2_000).catch((e: unknown) => e)).toBeInstanceOf(GroupAuthorizationError);
  });

  it('a ShareFetch or ShareAcknowledge with a null GroupId is answered GROUP_AUTHORIZATION_FAILED, not a dropped connection, while a PREFIXED group ACL exists', async () => {
    // A PREFIXED entry is matched by the start of the name: the rule checks the group as '' (a null name has no start).
    await grant({ principal: 'User:carol', resourceType: Res.GROUP, resourceName: 'null-group-', operation: Op.READ, patternType: PatternType.PREFIXED });
    const fetch = await as('dave', (c) =>
      c.send(ShareFetchRequest, ShareFetchRequest.create({ groupId: null, memberId: 'm', shareSessionEpoch: 0, topics: [] }), 2, ShareFetchResponse),
    );
    expect(fetch.errorCode).toBe(30);
    const ack = await as('dave', (c) =>
      c.send(
        ShareAcknowledgeRequest,
        ShareAcknowledgeRequest.create({ groupId: null, memberId: 'm', shareSessionEpoch: 1, topics: [] }),
        2,
        ShareAcknowledgeResponse,
      ),
    );
    expect(ack.errorCode).toBe(30);
  });

  it('a share consumer may read but not bind acks to a transaction: each half of AddShareAcksToTxn and TxnShareAcknowledge is denied alone', async () => {
    await learnTopicIds();
    await grant(
      { principal: 'User:bob', resourceType: Res.GROUP, resourceName: 'g-kip', operation: Op.READ },
      { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'in', operation: Op.READ },
      // carol: her transactional id and output topic, but not bob's group.
      { principal: 'User:carol', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-kip', operation: Op.WRITE },
      { principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'out', operation: Op.WRITE },
      { principal: 'User:carol', resourceType: Res.TOPIC, resourceName: 'in', operation: Op.READ },
    );
    const consumer = shareConsumer('bob', 'g-kip');
    consumer.subscribe(['in']);
    const records = await pollSome(consumer);
    expect(records.length).toBeGreaterThan(0);

    // Group half, through the client: carol's producer may not bind acks of bob's group.
    const p = producer('carol', { transactionalId: 'tx-kip' });
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', value: 'kip-out' });
    const refused = await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GroupAuthorizationError);
    await p.abortTransaction().catch(() => {});

    const meta = consumer.groupMetadata();
    const addAcks = (transactionalId: string) =>
      AddShareAcksToTxnRequest.create({ transactionalId, producerId: 0n, producerEpoch: 0, groupId: 'g-kip', topics: [{ name: 'in', partitions: [0] }] });
    // AddShareAcksToTxn (95): the transactional-id half (bob reads the group but does not own tx-kip) and the group half (carol).
    const bobAdd = await as('bob', (c) => c.send(AddShareAcksToTxnRequest, addAcks('tx-kip'), 0, AddShareAcksToTxnResponse));
    expect(bobAdd.errorCode).toBe(53);
    const carolAdd = await as('carol', (c) => c.send(AddShareAcksToTxnRequest, addAcks('tx-kip'), 0, AddShareAcksToTxnResponse));
    expect(carolAdd.errorCode).toBe(30);

    // TxnShareAcknowledge (96): the same two halves.
    const ack = TxnShareAcknowledgeRequest.create({
      groupId: 'g-kip',
      transactionalId: 'tx-kip',
      producerId: 0n,
      producerEpoch: 0,
      memberId: meta.memberId,
      generationId: meta.generationId,
      topics: [
        { topicId: topicIds.get('in')!, partitions: [{ partition: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 0n, acknowledgeType: 1 }] }] },
      ],
    });
    const bobAck = await as('bob', (c) => c.send(TxnShareAcknowledgeRequest, ack, 1, TxnShareAcknowledgeResponse));
    expect(bobAck.errorCode).toBe(53);
    const carolAck = await as('carol', (c) => c.send(TxnShareAcknowledgeRequest, ack, 1, TxnShareAcknowledgeResponse));
    expect(carolAck.errorCode).toBe(30);

    // With READ on the group, carol binds bob's acks and commits them with her output.
    await grant({ principal: 'User:carol', resourceType: Res.GROUP, resourceName: 'g-kip', operation: Op.READ });
    const again = await pollSome(consumer, 8_000);
    expect(again.length).toBeGreaterThan(0);
    const p2 = producer('carol', { transactionalId: 'tx-kip' });
    await p2.initTransactions();
    p2.beginTransaction();
    await p2.send({ topic: 'out', value: 'kip-allowed' });
    await p2.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(again, 'accept'), consumer.groupMetadata());
    await p2.commitTransaction();
    expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'out')).toContain('kip-allowed');
  });
});

describe("each API denies a principal without ACLs, with Kafka's error code (dave has none)", () => {
  type Case = [name: string, codec: any, request: () => unknown, code: (response: any) => number, expected: number, version?: number];
  const g = 'g-dave';
  const tx = 'tx-dave';
  const cases: Case[] = [
    [
      'Produce (topic WRITE)',
      ProduceRequest,
      () => ({ acks: -1, timeoutMs: 1000, topicData: [{ name: 'events', topicId: ZERO_UUID, partitionData: [{ index: 0, records: null }] }] }),
      (r) => r.responses[0].partitionResponses[0].errorCode,
      29,
      9,
    ],
    [
      'Produce (transactional id WRITE)',
      ProduceRequest,
      () => ({
        transactionalId: tx,
        acks: -1,
        timeoutMs: 1000,
        topicData: [{ name: 'events', topicId: ZERO_UUID, partitionData: [{ index: 0, records: null }] }],
      }),
      (r) => r.responses[0].partitionResponses[0].errorCode,
      53,
      9,
    ],
    [
      'Fetch (topic READ)',
      FetchRequest,
      () => ({
        replicaId: -1,
        maxWaitMs: 10,
        topics: [
          {
            topic: 'events',
            partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1000, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }],
          },
        ],
      }),
      (r) => r.responses[0].partitions[0].errorCode,
      29,
      12,
    ],
    [
      'ListOffsets (topic DESCRIBE)',
      ListOffsetsRequest,
      () => ({ replicaId: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] }),
      (r) => r.topics[0].partitions[0].errorCode,
      29,
      7,
    ],
    ['Metadata (topic DESCRIBE)', MetadataRequest, () => ({ topics: [{ topicId: ZERO_UUID, name: 'events' }] }), (r) => r.topics[0].errorCode, 29, 12],
    [
      'OffsetFetch (group DESCRIBE)',
      OffsetFetchRequest,
      () => ({ groups: [{ groupId: g, memberId: null, memberEpoch: -1, topics: null }] }),
      (r) => r.groups[0].errorCode,
      30,
      8,
    ],
    ['FindCoordinator GROUP (group DESCRIBE)', FindCoordinatorRequest, () => ({ keyType: 0, coordinatorKeys: [g] }), (r) => r.coordinators[0].errorCode, 30, 4],
    [
      'FindCoordinator TRANSACTION (transactional id DESCRIBE)',
      FindCoordinatorRequest,
      () => ({ keyType: 1, coordinatorKeys: [tx] }),
      (r) => r.coordinators[0].errorCode,
      53,
      4,
    ],
    [
      'InitProducerId (transactional id WRITE)',
      InitProducerIdRequest,
      () => ({ transactionalId: tx, transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1 }),
      (r) => r.errorCode,
      53,
      4,
    ],
    [
      'InitProducerId (TWO_PHASE_COMMIT on the transactional id for 2PC)',
      InitProducerIdRequest,
      () => ({ transactionalId: 'tx-dave-2pc', transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1, enable2Pc: true }),
      (r) => r.errorCode,
      53,
      6,
    ],
    [
      'InitProducerId (IDEMPOTENT_WRITE / some topic WRITE)',
      InitProducerIdRequest,
      () => ({ transactionalId: null, transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1 }),
      (r) => r.errorCode,
      31,
      4,
    ],
    [
      'AddPartitionsToTxn v3 (transactional id WRITE)',
      AddPartitionsToTxnRequest,
      () => ({ v3AndBelowTransactionalId: tx, v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: 'events', partitions: [0] }] }),
      (r) => r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
      53,
      3,
    ],
    ['AddPartitionsToTxn v4 (CLUSTER_ACTION)', AddPartitionsToTxnRequest, () => ({ transactions: [] }), (r) => r.errorCode, 31, 4],
    [
      'AddOffsetsToTxn (transactional id WRITE)',
      AddOffsetsToTxnRequest,
      () => ({ transactionalId: tx, producerId: 1n, producerEpoch: 0, groupId: g }),
      (r) => r.errorCode,
      53,
      3,
    ],
    [
      'EndTxn (transactional id WRITE)',
      EndTxnRequest,
      () => ({ transactionalId: tx, producerId: 1n, producerEpoch: 0, committed: true }),
      (r) => r.errorCode,
      53,
      3,
    ],
    [
      'WriteTxnMarkers (CLUSTER_ACTION)',
      WriteTxnMarkersRequest,
      () => ({
        markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: true, topics: [{ name: 'events', partitionIndexes: [0] }], coordinatorEpoch: 0 }],
      }),
      (r) => r.markers[0].topics[0].partitions[0].errorCode,
      31,
      1,
    ],
    [
      'TxnOffsetCommit (transactional id WRITE)',
      TxnOffsetCommitRequest,
      () => ({
        transactionalId: tx,
        groupId: g,
        producerId: 1n,
        producerEpoch: 0,
        topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
      (r) => r.topics[0].partitions[0].errorCode,
      53,
      3,
    ],
    [
      'DescribeAcls (cluster DESCRIBE)',
      DescribeAclsRequest,
      () => ({
        resourceTypeFilter: 1,
        resourceNameFilter: null,
        patternTypeFilter: 1,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      }),
      (r) => r.errorCode,
      31,
      3,
    ],
    [
      'CreateAcls (cluster ALTER)',
      CreateAclsRequest,
      () => ({
        creations: [{ resourceType: 2, resourceName: 'events', resourcePatternType: 3, principal: 'User:dave', host: '*', operation: 3, permissionType: 3 }],
      }),
      (r) => r.results[0].errorCode,
      31,
      3,
    ],
    [
      'DeleteAcls (cluster ALTER)',
      DeleteAclsRequest,
      () => ({
        filters: [
          { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 },
        ],
      }),
      (r) => r.filterResults[0].errorCode,
      31,
      3,
    ],
    [
      'ShareGroupHeartbeat (group READ)',
      ShareGroupHeartbeatRequest,
      () => ({ groupId: g, memberId: 'm', memberEpoch: 0, subscribedTopicNames: ['events'] }),
      (r) => r.errorCode,
      30,
    ],
    ['ShareGroupDescribe (group DESCRIBE)', ShareGroupDescribeRequest, () => ({ groupIds: [g] }), (r) => r.groups[0].errorCode, 30],
    ['ShareFetch (group READ)', ShareFetchRequest, () => ({ groupId: g, memberId: 'm', shareSessionEpoch: 0, topics: [] }), (r) => r.errorCode, 30],
    ['ShareAcknowledge (group READ)', ShareAcknowledgeRequest, () => ({ groupId: g, memberId: 'm', shareSessionEpoch: 1, topics: [] }), (r) => r.errorCode, 30],
    [
      'AddShareAcksToTxn (transactional id WRITE)',
      AddShareAcksToTxnRequest,
      () => ({ transactionalId: tx, producerId: 1n, producerEpoch: 0, groupId: g, topics: [{ name: 'in', partitions: [0] }] }),
      (r) => r.errorCode,
      53,
      0,
    ],
    [
      'TxnShareAcknowledge (transactional id WRITE)',
      TxnShareAcknowledgeRequest,
      () => ({ groupId: g, transactionalId: tx, producerId: 1n, producerEpoch: 0, memberId: 'm', generationId: 1, topics: [] }),
      (r) => r.errorCode,
      53,
      1,
    ],
  ];
  beforeAll(async () => {
    // dave owns tx-dave-2pc but may not use it for two-phase commit.
    await createAcls(admin, [{ principal: 'User:dave', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-dave-2pc', operation: Op.WRITE }]);
  });
  for (const [name, codec, build, code, expected, version] of cases) {
    it(name, async () => {
      const response = await as('dave', async (c) => {
        const v = version ?? codec.validVersions.highest;
        return c.send(codec, codec.create(build()), v);
      });
      expect(code(response)).toBe(expected);
    });
  }
});
