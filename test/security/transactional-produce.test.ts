/**
 * A principal with topic WRITE alone may not append into
 * another principal's open transaction. Transactional records need the
 * request's transactional id and WRITE on it, else the whole Produce is
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED (Kafka's KafkaApis.handleProduceRequest);
 * transactional batches of more than one producer are refused with
 * INVALID_PRODUCER_ID_MAPPING (ReplicaManager.handleProduceAppend).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { apiByKey } from '../../generated/index.js';
import type { KafkaConnection } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { TestClient, batch, fetchAll, startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';
import { connectAs, createAcls, Op, Res } from './acl-support.js';
import { startSecureBroker, type SecureBroker } from './support.js';

function call(c: KafkaConnection, apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
  const api = apiByKey(apiKey)!;
  const codec = api.request as ApiMessageCodec<any>;
  return c.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
}

interface ProducerIdentity {
  producerId: bigint;
  producerEpoch: number;
}

/** Produce v11 of one transactional batch to `topic`-0; every partition's error code. */
async function produceTxn(
  c: KafkaConnection,
  topic: string,
  transactionalId: string | null,
  who: ProducerIdentity,
  baseSequence: number,
  value: string,
): Promise<number[]> {
  const records = batch({ values: [value], producerId: who.producerId, producerEpoch: who.producerEpoch, baseSequence, transactional: true });
  const response = await call(c, 0, { transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }, 11);
  return response.responses.flatMap((t: any) => t.partitionResponses.map((p: any) => p.errorCode));
}

/** InitProducerId, then AddPartitionsToTxn v3 of `topic`-0: the victim's transaction is open on the partition. */
async function openTransaction(c: KafkaConnection, transactionalId: string, topic: string): Promise<ProducerIdentity> {
  const init = await call(c, 22, { transactionalId, transactionTimeoutMs: 30_000 }, 4);
  expect(init.errorCode).toBe(0);
  const added = await call(
    c,
    24,
    {
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: topic, partitions: [0] }],
    },
    3,
  );
  expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(0);
  return { producerId: init.producerId, producerEpoch: init.producerEpoch };
}

describe("with an authorizer: topic WRITE alone cannot write into another principal's transaction", () => {
  let secure: SecureBroker;
  let admin: KafkaConnection;
  let trusted: TestClient;
  beforeAll(async () => {
    secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin', 'User:ANONYMOUS'], allowEveryoneIfNoAclFound: false } });
    admin = await connectAs(secure, 'admin');
    trusted = await TestClient.connect(secure.broker.ports.get('PLAINTEXT')!);
    const grants = await createAcls(admin, [
      { principal: 'User:alice', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-alice', operation: Op.WRITE },
      { principal: 'User:alice', resourceType: Res.TOPIC, resourceName: 'orders', operation: Op.WRITE },
      { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'orders', operation: Op.WRITE },
      { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.WRITE },
      { principal: 'User:bob', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'tx-bob', operation: Op.WRITE },
    ]);
    expect(grants.results.map((r) => r.errorCode)).toEqual([0, 0, 0, 0, 0]);
  });
  afterAll(async () => {
    await trusted?.close();
    await admin?.close();
    await secure?.close();
  });

  it("bob's transactional batches with alice's producer id are refused, with a null transactional id and with alice's, and a read_committed reader sees only alice's records", async () => {
    const alice = await connectAs(secure, 'alice');
    const bob = await connectAs(secure, 'bob');
    try {
      const victim = await openTransaction(alice, 'tx-alice', 'orders');
      expect(await produceTxn(alice, 'orders', 'tx-alice', victim, 0, 'alice-1')).toEqual([0]);
      // The partition now has alice's transaction open: bob continues her sequence under her producer id.
      expect(await produceTxn(bob, 'orders', null, victim, 1, 'bob-null-id')).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
      expect(await produceTxn(bob, 'orders', 'tx-alice', victim, 1, 'bob-alice-id')).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
      expect(await produceTxn(alice, 'orders', 'tx-alice', victim, 1, 'alice-2')).toEqual([0]);
      const ended = await call(
        alice,
        26,
        { transactionalId: 'tx-alice', producerId: victim.producerId, producerEpoch: victim.producerEpoch, committed: true },
        3,
      );
      expect(ended.errorCode).toBe(0);
    } finally {
      await alice.close();
      await bob.close();
    }
    expect((await fetchAll(trusted, 'orders', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['alice-1', 'alice-2']);
    expect((await fetchAll(trusted, 'orders', 0, 'read_committed')).records.map((r) => r.value)).toEqual(['alice-1', 'alice-2']);
  });

  it("bob's own transactional id does not carry alice's producer id into a partition: the coordinator refuses the binding", async () => {
    const alice = await connectAs(secure, 'alice');
    const bob = await connectAs(secure, 'bob');
    try {
      const victim = await openTransaction(alice, 'tx-alice', 'orders');
      const own = await call(bob, 22, { transactionalId: 'tx-bob', transactionTimeoutMs: 30_000 }, 4);
      expect(own.errorCode).toBe(0);
      // events-0 is in no transaction of alice's producer: the partition leader asks the coordinator,
      // which finds that tx-bob's producer is not alice's (Kafka: AddPartitionsToTxn verification).
      expect(await produceTxn(bob, 'events', 'tx-bob', victim, 0, 'bob-into-alice')).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
      await call(alice, 26, { transactionalId: 'tx-alice', producerId: victim.producerId, producerEpoch: victim.producerEpoch, committed: false }, 3);
    } finally {
      await alice.close();
      await bob.close();
    }
    expect((await fetchAll(trusted, 'events', 0, 'read_uncommitted')).records.map((r) => r.value)).not.toContain('bob-into-alice');
  });
});

describe('without an authorizer: the transactional id and producer binding of Produce', () => {
  let broker: Broker;
  let c: TestClient;
  const lines: string[] = [];
  beforeAll(async () => {
    broker = await startTestBroker({ dataDir: tempDir(), topics: [{ name: 'out', partitions: 2 }] }, lines);
    c = await TestClient.connect(broker.port);
  });
  afterAll(async () => {
    await c?.close();
    await broker?.close();
  });

  it('transactional records without a transactional id are TRANSACTIONAL_ID_AUTHORIZATION_FAILED, even into an open transaction', async () => {
    const victim = await openTransaction(c.connection, 'tx-open', 'out');
    expect(await produceTxn(c.connection, 'out', 'tx-open', victim, 0, 'mine')).toEqual([0]);
    expect(await produceTxn(c.connection, 'out', null, victim, 1, 'intruder')).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
    expect((await fetchAll(c, 'out', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['mine']);
  });

  it('transactional batches of two producers in one request are INVALID_PRODUCER_ID_MAPPING on every partition, and nothing is appended', async () => {
    const a = await openTransaction(c.connection, 'tx-two-a', 'out');
    const records = (who: ProducerIdentity, value: string) =>
      batch({ values: [value], producerId: who.producerId, producerEpoch: who.producerEpoch, baseSequence: 0, transactional: true });
    const other = { producerId: a.producerId + 1000n, producerEpoch: 0 };
    const response = await c.call(
      0,
      {
        transactionalId: 'tx-two-a',
        acks: -1,
        timeoutMs: 5000,
        topicData: [
          {
            name: 'out',
            partitionData: [
              { index: 1, records: records(a, 'a') },
              { index: 0, records: records(other, 'b') },
            ],
          },
        ],
      },
      11,
    );
    expect(response.responses[0].partitionResponses.map((p: any) => p.errorCode)).toEqual([
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
    ]);
    expect((await fetchAll(c, 'out', 1, 'read_uncommitted')).records).toEqual([]);
  });
});
