/**
 * The broker's side of Admin's transaction tools (KIP-664): DescribeProducers
 * (61), DescribeTransactions (65) and ListTransactions (66), and their ACL rules
 * (KafkaApis.handleDescribeProducersRequest: READ on the topic;
 * handleDescribeTransactionsRequest: DESCRIBE on the transactional id, topics
 * shown only with DESCRIBE on them; handleListTransactionsRequest: the ids the
 * caller may DESCRIBE). A real broker with SASL and ACLs; a transaction left
 * open over the wire, then aborted with WriteTxnMarkers the way
 * Admin.abortTransaction does, and read back read_committed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { connectAs, createAcls, Op, Res } from '../security/acl-support.js';
import { startSecureBroker, type SecureBroker } from '../security/support.js';
import { batch, fetchAll, type TestClient } from './support/broker-harness.js';

let secure: SecureBroker;
let admin: TestClient;
let bob: TestClient;
let producer: { producerId: bigint; producerEpoch: number };
const opened = Date.now();

function client(connection: KafkaConnection): TestClient {
  return {
    connection,
    call(apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
      const api = apiByKey(apiKey)!;
      const codec = api.request as ApiMessageCodec<any>;
      return connection.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
    },
    close: () => connection.close(),
  } as unknown as TestClient;
}

beforeAll(async () => {
  secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false } });
  admin = client(await connectAs(secure, 'admin'));
  bob = client(await connectAs(secure, 'bob'));
  const grants = await createAcls(admin.connection, [
    { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ },
    { principal: 'User:bob', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-open', operation: Op.DESCRIBE },
  ]);
  expect(grants.results.map((r) => r.errorCode)).toEqual([0, 0]);
  // A transaction left open on events-0 and audit-0, as a producer that hangs after sending.
  producer = await admin.call(22, { transactionalId: 'tx-open', transactionTimeoutMs: 600_000 }, 4);
  const added = await admin.call(
    24,
    {
      v3AndBelowTransactionalId: 'tx-open',
      v3AndBelowProducerId: producer.producerId,
      v3AndBelowProducerEpoch: producer.producerEpoch,
      v3AndBelowTopics: [
        { name: 'events', partitions: [0] },
        { name: 'audit', partitions: [0] },
      ],
    },
    3,
  );
  expect(added.resultsByTopicV3AndBelow.flatMap((t: any) => t.resultsByPartition.map((p: any) => p.partitionErrorCode))).toEqual([0, 0]);
  for (const topic of ['events', 'audit']) {
    const records = batch({ values: ['a', 'b'], producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: 0, transactional: true });
    const produced = await admin.call(
      0,
      { transactionalId: 'tx-open', acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] },
      9,
    );
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(0);
  }
  // A second id, idle (Empty), to filter against.
  expect((await admin.call(22, { transactionalId: 'tx-idle', transactionTimeoutMs: 60_000 }, 4)).errorCode).toBe(0);
});

afterAll(async () => {
  await bob?.close();
  await admin?.close();
  await secure?.close();
});

const describeProducers = (c: TestClient, topics: { name: string; partitionIndexes: number[] }[]) => c.call(61, { topics }, 0);

describe('DescribeProducers (61)', () => {
  it("lists the partition's producers with the first offset of the open transaction", async () => {
    const response = await describeProducers(admin, [{ name: 'events', partitionIndexes: [0, 1] }]);
    const [p0, p1] = response.topics[0].partitions;
    expect(p0.errorCode).toBe(0);
    expect(p0.activeProducers).toEqual([
      expect.objectContaining({
        producerId: producer.producerId,
        producerEpoch: producer.producerEpoch,
        lastSequence: 1,
        currentTxnStartOffset: 0n,
        coordinatorEpoch: -1,
      }),
    ]);
    expect(p0.activeProducers[0].lastTimestamp).toBeGreaterThanOrEqual(BigInt(opened));
    expect(p1).toMatchObject({ partitionIndex: 1, errorCode: 0, activeProducers: [] });
  });

  it('answers an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION, an illegal name INVALID_TOPIC_EXCEPTION', async () => {
    const response = await describeProducers(admin, [
      { name: 'nope', partitionIndexes: [0] },
      { name: 'events', partitionIndexes: [7] },
      { name: 'bad/name', partitionIndexes: [0] },
    ]);
    expect(response.topics.map((t: any) => [t.name, t.partitions.map((p: any) => p.errorCode)])).toEqual([
      ['nope', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
      ['events', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
      ['bad/name', [ErrorCode.INVALID_TOPIC_EXCEPTION]],
    ]);
  });

  it('needs READ on the topic: bob sees events, audit is TOPIC_AUTHORIZATION_FAILED', async () => {
    const response = await describeProducers(bob, [
      { name: 'events', partitionIndexes: [0] },
      { name: 'audit', partitionIndexes: [0] },
    ]);
    expect(response.topics.map((t: any) => [t.name, t.partitions[0].errorCode, t.partitions[0].activeProducers.length])).toEqual([
      ['events', 0, 1],
      ['audit', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0],
    ]);
  });
});

describe('DescribeTransactions (65)', () => {
  it('describes an open transaction: Ongoing, its producer, timeout, start time and partitions', async () => {
    const response = await admin.call(65, { transactionalIds: ['tx-open', 'tx-idle', 'tx-unknown', ''] }, 0);
    const [open, idle, unknown, empty] = response.transactionStates;
    expect(open).toMatchObject({
      errorCode: 0,
      transactionalId: 'tx-open',
      transactionState: 'Ongoing',
      transactionTimeoutMs: 600_000,
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
    });
    expect(open.transactionStartTimeMs).toBeGreaterThanOrEqual(BigInt(opened));
    expect(open.topics.map((t: any) => [t.topic, t.partitions]).sort()).toEqual([
      ['audit', [0]],
      ['events', [0]],
    ]);
    expect(idle).toMatchObject({ errorCode: 0, transactionState: 'Empty', topics: [] });
    expect(unknown).toMatchObject({ transactionalId: 'tx-unknown', errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND });
    expect(empty.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('needs DESCRIBE on the id, and shows only the topics the caller may DESCRIBE', async () => {
    const response = await bob.call(65, { transactionalIds: ['tx-open', 'tx-idle'] }, 0);
    const [open, idle] = response.transactionStates;
    expect(open).toMatchObject({ errorCode: 0, transactionState: 'Ongoing' });
    expect(open.topics.map((t: any) => t.topic)).toEqual(['events']);
    expect(idle).toMatchObject({ transactionalId: 'tx-idle', errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED });
  });
});

describe('ListTransactions (66)', () => {
  const ids = (response: any) => response.transactionStates.map((s: any) => `${s.transactionalId}:${s.transactionState}`).sort();

  it('lists every id, or those in the states, of the producer ids, older than the duration, matching the pattern', async () => {
    expect(ids(await admin.call(66, {}, 2))).toEqual(['tx-idle:Empty', 'tx-open:Ongoing']);
    const byState = await admin.call(66, { stateFilters: ['Ongoing', 'Sleeping'] }, 2);
    expect(ids(byState)).toEqual(['tx-open:Ongoing']);
    expect(byState.unknownStateFilters).toEqual(['Sleeping']);
    expect(ids(await admin.call(66, { producerIdFilters: [producer.producerId] }, 2))).toEqual(['tx-open:Ongoing']);
    // The idle id has no transaction (start time -1), so any duration keeps it; the open one is younger than an hour.
    expect(ids(await admin.call(66, { durationFilter: 3_600_000n }, 2))).toEqual(['tx-idle:Empty']);
    expect(ids(await admin.call(66, { transactionalIdPattern: 'tx-o.*' }, 2))).toEqual(['tx-open:Ongoing']);
    // The pattern matches the whole id, as Java's Matcher.matches.
    expect(ids(await admin.call(66, { transactionalIdPattern: 'open' }, 2))).toEqual([]);
  });

  it('answers a pattern that does not compile INVALID_REGULAR_EXPRESSION', async () => {
    expect((await admin.call(66, { transactionalIdPattern: 'tx-(' }, 2)).errorCode).toBe(ErrorCode.INVALID_REGULAR_EXPRESSION);
  });

  it('lists only the ids the caller may DESCRIBE', async () => {
    expect(ids(await bob.call(66, {}, 0))).toEqual(['tx-open:Ongoing']);
  });
});

describe('aborting the hanging transaction with WriteTxnMarkers (what Admin.abortTransaction sends)', () => {
  it('the partition no longer holds the transaction open and a read_committed read skips its records', async () => {
    const marker = (topic: string) => ({
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      transactionResult: false,
      coordinatorEpoch: 0,
      topics: [{ name: topic, partitionIndexes: [0] }],
    });
    // bob lacks CLUSTER_ACTION, which Kafka's handleWriteTxnMarkersRequest requires.
    const denied = await bob.call(27, { markers: [marker('events')] }, 1);
    expect(denied.markers[0].topics[0].partitions[0].errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const aborted = await admin.call(27, { markers: [marker('events')] }, 1);
    expect(aborted.markers[0].topics[0].partitions[0].errorCode).toBe(0);
    const after = (await describeProducers(admin, [{ name: 'events', partitionIndexes: [0] }])).topics[0].partitions[0];
    expect(after.activeProducers[0]).toMatchObject({ currentTxnStartOffset: -1n, coordinatorEpoch: 0 });
    const read = await fetchAll(admin, 'events', 0, 'read_committed');
    expect(read.lastStableOffset).toBe(3n);
    expect(read.records).toEqual([]);
  });
});
