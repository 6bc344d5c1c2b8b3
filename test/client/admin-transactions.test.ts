/**
 * Admin's transaction tools (KIP-664) against a real kipgen broker: a
 * KafkaProducer leaves a transaction open (a hanging transaction), the Admin
 * finds it (listTransactions, describeTransactions, describeProducers) and
 * aborts it on the partition with abortTransaction (WriteTxnMarkers to the
 * leader with the producer id, epoch and coordinator epoch, as Kafka's
 * AbortTransactionHandler); a read_committed read then sees it aborted. Per-entry
 * errors: an unknown transactional id, an unknown partition, ACL denials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Admin,
  KafkaProducer,
  TransactionalIdAuthorizationError,
  TopicAuthorizationError,
  ClusterAuthorizationError,
  KafkaTimeoutError,
} from '../../client/index.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { connectAs, createAcls, Op, Res } from '../security/acl-support.js';
import { startSecureBroker, USERS, type SecureBroker } from '../security/support.js';
import { readTopic } from '../../examples/support.js';

let secure: SecureBroker;
let admin: Admin;
let bob: Admin;
let producer: KafkaProducer;
const started = Date.now();

beforeAll(async () => {
  secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin', 'User:ANONYMOUS'], allowEveryoneIfNoAclFound: false } });
  const connection = await connectAs(secure, 'admin');
  await createAcls(connection, [
    { principal: 'User:bob', resourceType: Res.TRANSACTIONAL_ID, resourceName: 'hanging', operation: Op.DESCRIBE },
    { principal: 'User:bob', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ },
  ]);
  await connection.close();
  const bootstrapServers = secure.bootstrap('SASL_PLAINTEXT');
  const as = (user: 'admin' | 'bob') => ({ mechanism: 'SCRAM-SHA-256' as const, username: user, password: USERS[user] });
  admin = new Admin({ bootstrapServers, sasl: as('admin'), logger: null, defaultApiTimeoutMs: 10_000 });
  bob = new Admin({ bootstrapServers, sasl: as('bob'), logger: null, defaultApiTimeoutMs: 10_000 });
  // The hanging transaction: begun, two records sent to events-0, never committed or aborted.
  producer = new KafkaProducer({
    bootstrapServers,
    sasl: as('admin'),
    transactionalId: 'hanging',
    transactionTimeoutMs: 600_000,
    logger: null,
    metricsRegistry: null,
  });
  await producer.initTransactions();
  producer.beginTransaction();
  await producer.send({ topic: 'events', partition: 0, value: 'lost-1' });
  await producer.send({ topic: 'events', partition: 0, value: 'lost-2' });
});

afterAll(async () => {
  await producer?.close(0);
  await bob?.close();
  await admin?.close();
  await secure?.close();
});

describe('finding the hanging transaction', () => {
  it('listTransactions lists it Ongoing, filtered by state, producer id and pattern', async () => {
    const all = (await admin.listTransactions()).all();
    expect(all).toEqual([{ transactionalId: 'hanging', producerId: expect.any(BigInt), state: 'ONGOING' }]);
    expect((await admin.listTransactions({ filterStates: ['PREPARE_COMMIT'] })).all()).toEqual([]);
    expect((await admin.listTransactions({ filterProducerIds: [all[0]!.producerId] })).all()).toHaveLength(1);
    expect((await admin.listTransactions({ filterOnTransactionalIdPattern: 'hang.*' })).all()).toHaveLength(1);
    expect((await admin.listTransactions({ filterOnDuration: 3_600_000 })).all()).toEqual([]);
  });

  it('describeTransactions describes it; an unknown id is a TRANSACTIONAL_ID_NOT_FOUND entry', async () => {
    const result = await admin.describeTransactions(['hanging', 'never-used']);
    const d = result.get('hanging');
    expect(d).toMatchObject({ state: 'ONGOING', transactionTimeoutMs: 600_000, topicPartitions: [{ topic: 'events', partition: 0 }], coordinatorId: 0 });
    expect(d.transactionStartTimeMs).toBeGreaterThanOrEqual(started);
    expect(result.errors().get('never-used')?.code).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  });

  it('describeProducers shows the open transaction on its partition; an unknown partition times out its entry as in Kafka', async () => {
    const result = await admin.describeProducers(
      [
        { topic: 'events', partition: 0 },
        { topic: 'events', partition: 1 },
        { topic: 'nowhere', partition: 0 },
      ],
      { timeoutMs: 1_500 },
    );
    const [open] = result.get('events-0').activeProducers;
    expect(open).toMatchObject({ producerEpoch: 0, lastSequence: 1, coordinatorEpoch: undefined, currentTransactionStartOffset: 0n });
    expect(result.get('events-1').activeProducers).toEqual([]);
    expect(result.errors().get('nowhere-0')).toBeInstanceOf(KafkaTimeoutError);
  });

  it('bob sees what his ACLs allow: the id and events, not audit; other ids are TransactionalIdAuthorizationError', async () => {
    expect((await bob.listTransactions()).all().map((t) => t.transactionalId)).toEqual(['hanging']);
    const described = await bob.describeTransactions(['hanging', 'someone-else']);
    expect(described.get('hanging').topicPartitions).toEqual([{ topic: 'events', partition: 0 }]);
    expect(described.errors().get('someone-else')).toBeInstanceOf(TransactionalIdAuthorizationError);
    const producers = await bob.describeProducers([{ topic: 'audit', partition: 0 }]);
    expect(producers.errors().get('audit-0')).toBeInstanceOf(TopicAuthorizationError);
  });
});

describe('abortTransaction', () => {
  it('needs CLUSTER_ACTION (WriteTxnMarkers): bob is refused with ClusterAuthorizationError', async () => {
    const [open] = (await admin.describeProducers([{ topic: 'events', partition: 0 }])).get('events-0').activeProducers;
    await expect(
      bob.abortTransaction({
        topicPartition: { topic: 'events', partition: 0 },
        producerId: open!.producerId,
        producerEpoch: open!.producerEpoch,
        coordinatorEpoch: 0,
      }),
    ).rejects.toBeInstanceOf(ClusterAuthorizationError);
  });

  it('aborts the hanging transaction on its partition: the partition is stable again and read_committed skips its records', async () => {
    // A committed record after the open transaction: read_committed cannot reach it while the transaction hangs.
    const plain = new KafkaProducer({ bootstrapServers: secure.bootstrap('PLAINTEXT'), logger: null, metricsRegistry: null });
    await plain.send({ topic: 'events', partition: 0, value: 'after' });
    await plain.close();
    const read = async (isolation: 'read_committed' | 'read_uncommitted') =>
      (await readTopic(secure.bootstrap('PLAINTEXT'), 'events', isolation, 300)).map((r) => r.value);
    expect(await read('read_uncommitted')).toEqual(['lost-1', 'lost-2', 'after']);
    expect(await read('read_committed')).toEqual([]);

    const [open] = (await admin.describeProducers([{ topic: 'events', partition: 0 }])).get('events-0').activeProducers;
    await admin.abortTransaction({
      topicPartition: { topic: 'events', partition: 0 },
      producerId: open!.producerId,
      producerEpoch: open!.producerEpoch,
      coordinatorEpoch: open!.coordinatorEpoch ?? 0,
    });
    const [after] = (await admin.describeProducers([{ topic: 'events', partition: 0 }])).get('events-0').activeProducers;
    expect(after).toMatchObject({ producerId: open!.producerId, currentTransactionStartOffset: undefined, coordinatorEpoch: 0 });
    expect(await read('read_committed')).toEqual(['after']);
  });
});
