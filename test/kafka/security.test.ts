/**
 * Our client against Kafka 4.4's SASL_SSL listener: PLAIN and SCRAM-SHA-512
 * over TLS with a CA made for the run, wrong credentials, and ACL denials by
 * the StandardAuthorizer arriving as our typed errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  GroupAuthorizationError,
  KafkaProducer,
  KafkaShareConsumer,
  SaslAuthenticationError,
  TopicAuthorizationError,
  TransactionalIdAuthorizationError,
} from '../../client/index.js';
import { Cleanups, createAcls, createTopic, kafka, readWithKafkaConsumer, shareGroup, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

// Kafka's ResourceType, AclOperation and AclPermissionType codes (clients' org.apache.kafka.common.acl / resource).
const TOPIC = 2;
const TRANSACTIONAL_ID = 5;
const READ = 3;
const WRITE = 4;
const DESCRIBE = 8;
const TWO_PHASE_COMMIT = 15;

function secure(user: { username: string; password: string }, mechanism: 'PLAIN' | 'SCRAM-SHA-512') {
  const k = kafka();
  return {
    bootstrapServers: k.saslSsl.bootstrap,
    ssl: { ca: k.saslSsl.caPem },
    sasl: { mechanism, username: user.username, password: user.password },
    logger: null,
  } as const;
}

function producer(config: ConstructorParameters<typeof KafkaProducer>[0]): KafkaProducer {
  return cleanups.track(new KafkaProducer({ lingerMs: 1, maxBlockMs: 15_000, metricsRegistry: null, ...config }), (p) => p.close(2_000));
}

describe('SASL over TLS against Kafka 4.4', () => {
  for (const mechanism of ['PLAIN', 'SCRAM-SHA-512'] as const) {
    it(`${mechanism}: the super user produces over SASL_SSL and Kafka's consumer reads it back`, async () => {
      const k = kafka();
      const topic = unique(`sasl-${mechanism.toLowerCase()}`);
      await createTopic(k, topic);
      const p = producer(secure(k.saslSsl.superUser, mechanism));
      const meta = await p.send({ topic, key: 'k', value: `over ${mechanism}` });
      expect(meta.offset).toBe(0n);
      await p.close();
      const read = await readWithKafkaConsumer(k, topic, { isolationLevel: 'read_committed', expected: 1 });
      expect(read.map((r) => r.value)).toEqual([`over ${mechanism}`]);
    });

    it(`${mechanism}: a wrong password is a SaslAuthenticationError naming the mechanism, not a retry loop`, async () => {
      const k = kafka();
      const p = producer(secure({ username: k.saslSsl.users[0]!.username, password: 'not-the-password' }, mechanism));
      const error = await p.send({ topic: unique('never'), value: 'x' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SaslAuthenticationError);
      expect((error as SaslAuthenticationError).mechanism).toBe(mechanism);
    });
  }

  it('a SCRAM user with no ACLs: TopicAuthorizationError on send, TransactionalIdAuthorizationError on initTransactions', async () => {
    const k = kafka();
    const [alice] = k.saslSsl.users;
    const topic = unique('denied');
    await createTopic(k, topic);
    const p = producer(secure(alice!, 'SCRAM-SHA-512'));
    await expect(p.send({ topic, value: 'x' })).rejects.toBeInstanceOf(TopicAuthorizationError);
    const t = producer({ ...secure(alice!, 'SCRAM-SHA-512'), transactionalId: unique('denied-txn') });
    await expect(t.initTransactions()).rejects.toBeInstanceOf(TransactionalIdAuthorizationError);
  });

  it('a share consumer whose user may read the topic but not the group gets GroupAuthorizationError', async () => {
    const k = kafka();
    const bob = k.saslSsl.users[1]!;
    const topic = unique('share-denied');
    const group = unique('share-denied-group');
    await createTopic(k, topic);
    await shareGroup(k, group);
    await createAcls(k, [
      { principal: `User:${bob.username}`, resourceType: TOPIC, resourceName: topic, operation: READ },
      { principal: `User:${bob.username}`, resourceType: TOPIC, resourceName: topic, operation: DESCRIBE },
    ]);
    const s = cleanups.track(new KafkaShareConsumer({ ...secure(bob, 'PLAIN'), groupId: group, acknowledgementMode: 'explicit' }), (c) => c.close(2_000));
    s.subscribe([topic]);
    const deadline = Date.now() + 30_000;
    let error: unknown;
    while (error === undefined && Date.now() < deadline) {
      error = await s.poll(500).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(error).toBeInstanceOf(GroupAuthorizationError);
  });

  it('two-phase commit needs TWO_PHASE_COMMIT on the transactional id (KafkaApis, InitProducerId with enable2Pc): without it TransactionalIdAuthorizationError, with it a prepared transaction commits', async () => {
    const k = kafka();
    const bob = k.saslSsl.users[1]!;
    const topic = unique('2pc-acl');
    const txn = unique('2pc-acl-txn');
    await createTopic(k, topic);
    await createAcls(k, [
      { principal: `User:${bob.username}`, resourceType: TOPIC, resourceName: topic, operation: WRITE },
      { principal: `User:${bob.username}`, resourceType: TOPIC, resourceName: topic, operation: DESCRIBE },
      { principal: `User:${bob.username}`, resourceType: TRANSACTIONAL_ID, resourceName: txn, operation: WRITE },
      { principal: `User:${bob.username}`, resourceType: TRANSACTIONAL_ID, resourceName: txn, operation: DESCRIBE },
    ]);
    const denied = producer({ ...secure(bob, 'PLAIN'), transactionalId: txn, transactionTwoPhaseCommitEnable: true });
    await expect(denied.initTransactions()).rejects.toBeInstanceOf(TransactionalIdAuthorizationError);

    await createAcls(k, [{ principal: `User:${bob.username}`, resourceType: TRANSACTIONAL_ID, resourceName: txn, operation: TWO_PHASE_COMMIT }]);
    const p = producer({ ...secure(bob, 'PLAIN'), transactionalId: txn, transactionTwoPhaseCommitEnable: true });
    await p.initTransactions();
    p.beginTransaction();
    void p.send({ topic, value: 'two-phase' });
    const state = await p.prepareTransaction();
    expect(await p.completeTransaction(state)).toBe('committed');
    const read = await readWithKafkaConsumer(k, topic, { isolationLevel: 'read_committed', expected: 1 });
    expect(read.map((r) => r.value)).toEqual(['two-phase']);
  });

  it('with WRITE on the topic and the transactional id, a SCRAM user commits a transaction that Kafka reads as committed', async () => {
    const k = kafka();
    const [alice] = k.saslSsl.users;
    const topic = unique('granted');
    const txn = unique('granted-txn');
    await createTopic(k, topic);
    await createAcls(k, [
      { principal: `User:${alice!.username}`, resourceType: TOPIC, resourceName: topic, operation: WRITE },
      { principal: `User:${alice!.username}`, resourceType: TOPIC, resourceName: topic, operation: DESCRIBE },
      { principal: `User:${alice!.username}`, resourceType: TRANSACTIONAL_ID, resourceName: txn, operation: WRITE },
      { principal: `User:${alice!.username}`, resourceType: TRANSACTIONAL_ID, resourceName: txn, operation: DESCRIBE },
    ]);
    const p = producer({ ...secure(alice!, 'SCRAM-SHA-512'), transactionalId: txn });
    await p.initTransactions();
    p.beginTransaction();
    void p.send({ topic, key: 'a', value: 'committed-by-alice' });
    await p.commitTransaction();
    const read = await readWithKafkaConsumer(k, topic, { isolationLevel: 'read_committed', expected: 1 });
    expect(read.map((r) => r.value)).toEqual(['committed-by-alice']);
  });
});
