/**
 * ACL hosts on a dual-stack listener: a broker bound to
 * `::` sees an IPv4 client as `::ffff:127.0.0.1`; Kafka (Java) sees it as
 * 127.0.0.1, so an ACL for host 127.0.0.1 must apply to it
 * (coordinator/net/address.ts, coordinator/auth/authorizer.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { connectAs, createAcls, Op, Perm, Res } from './acl-support.js';
import { startSecureBroker, waitForLog, type SecureBroker } from './support.js';

let secure: SecureBroker;
beforeAll(async () => {
  secure = await startSecureBroker({ host: '::', authorizer: { enabled: true, superUsers: ['User:admin'] } });
  const admin = await connectAs(secure, 'admin');
  const everyone = (topic: string, host: string) => [
    { principal: 'User:*', resourceType: Res.TOPIC, resourceName: topic, operation: Op.DESCRIBE },
    { principal: 'User:*', resourceType: Res.TOPIC, resourceName: topic, operation: Op.DESCRIBE, permissionType: Perm.DENY, host },
  ];
  const created = await createAcls(admin, [
    ...everyone('events', '127.0.0.1'),
    ...everyone('orders', '::1'),
    ...everyone('audit', '0:0:0:0:0:0:0:1'),
    ...everyone('in', '::ffff:127.0.0.1'),
  ]);
  expect(created.results.map((r) => r.errorCode)).toEqual(new Array(8).fill(0));
  await admin.close();
});
afterAll(async () => {
  await secure?.close();
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function describeTopic(host: string, topic: string): Promise<number> {
  const c = await KafkaConnection.connect({ host, port: secure.broker.port, requestTimeoutMs: 5_000 });
  cleanups.push(() => c.close());
  const metadata = await c.send(
    MetadataRequest,
    MetadataRequest.create({ topics: [{ name: topic, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false }),
    12,
    MetadataResponse,
  );
  return metadata.topics[0]!.errorCode;
}

describe('a dual-stack listener', () => {
  it('applies DENY host=127.0.0.1 to an IPv4 client it sees as ::ffff:127.0.0.1, and logs the IPv4 form', async () => {
    expect(await describeTopic('127.0.0.1', 'events')).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await waitForLog(secure.logs, (l) => l.includes('User:ANONYMOUS from 127.0.0.1 denied DESCRIBE on TOPIC events'));
  });

  it('an ACL written as ::ffff:127.0.0.1 is the same host', async () => {
    expect(await describeTopic('127.0.0.1', 'in')).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });

  it('an IPv6 host matches in Node form (::1) and in Java form (0:0:0:0:0:0:0:1)', async () => {
    expect(await describeTopic('::1', 'orders')).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    expect(await describeTopic('::1', 'audit')).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });

  it('the DENY stays with its host: other clients and hosts are allowed', async () => {
    expect(await describeTopic('::1', 'events')).toBe(0);
    expect(await describeTopic('127.0.0.1', 'orders')).toBe(0);
  });
});
