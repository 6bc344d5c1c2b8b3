/**
 * Who a TLS client is: an SSL listener with
 * ssl.clientAuth "requested" takes a principal only from a certificate the
 * CA verifies, refuses an untrusted one, and builds the principal from the
 * subject's RFC 2253 form so that a crafted CN cannot pass for another
 * subject (coordinator/server/tls-listener.ts, coordinator/auth/x500-name.ts,
 * coordinator/auth/ssl-principal-mapper.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { MetadataRequest, MetadataResponse, SaslHandshakeRequest } from '../../generated/index.js';
import type { KeyAndCert } from './certificates.js';
import { createAcls, Op, Res } from './acl-support.js';
import { startSecureBroker, testPki, waitForLog, type SecureBroker } from './support.js';
import { resolveConfig } from '../../coordinator/config.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function sslConnect(secure: SecureBroker, cert: KeyAndCert | null): Promise<KafkaConnection> {
  const c = await KafkaConnection.connect({
    host: '127.0.0.1',
    port: secure.broker.ports.get('SSL')!,
    requestTimeoutMs: 5_000,
    tls: { ca: secure.pki.ca, servername: 'localhost', ...(cert ?? {}) },
  });
  cleanups.push(() => c.close());
  return c;
}

/** CreateAcls needs ALTER on the cluster: only a super user (or an ACL) gets it. */
async function createAclsError(c: KafkaConnection): Promise<number> {
  const response = await createAcls(c, [{ principal: 'User:someone', resourceType: Res.TOPIC, resourceName: 'events', operation: Op.READ }]);
  return response.results[0]!.errorCode;
}

/** The principal the broker gave the connection, as its authorizer logs it on a denial. */
async function principalOf(secure: SecureBroker, c: KafkaConnection, topic: string): Promise<string> {
  const metadata = await c.send(
    MetadataRequest,
    MetadataRequest.create({ topics: [{ name: topic, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false }),
    12,
    MetadataResponse,
  );
  expect(metadata.topics[0]!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  const line = await waitForLog(secure.logs, (l) => l.includes(`denied DESCRIBE on TOPIC ${topic} `));
  return /authorizer: (.*) from \S+ denied/.exec(line)![1]!;
}

describe('ssl.clientAuth requested', () => {
  let secure: SecureBroker;
  beforeAll(async () => {
    secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:CN=admin', 'User:CN=admin,O=Acme'] } });
  });
  afterAll(async () => {
    await secure?.close();
  });

  it('refuses a self-signed certificate naming a super user, and logs the peer and why', async () => {
    const forged = await secure.pki.selfSignedClient('CN=admin');
    const outcome = await sslConnect(secure, forged)
      .then((c) => createAclsError(c))
      .then(
        (code) => `served: error code ${code}`,
        (error: unknown) => `refused: ${(error as Error).name}`,
      );
    expect(outcome).toBe('refused: NetworkError');
    const line = await waitForLog(secure.logs, (l) => l.includes('refused the TLS client'));
    expect(line).toMatch(
      /^\[kipgen node 0\] SSL: refused the TLS client 127\.0\.0\.1:\d+: the client certificate is not trusted \(\w+; subject "CN=admin"\); closing the connection$/,
    );
  });

  it('a client without a certificate is User:ANONYMOUS', async () => {
    const c = await sslConnect(secure, null);
    expect(await createAclsError(c)).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(await principalOf(secure, c, 'orders')).toBe('User:ANONYMOUS');
  });

  it('a certificate the CA signed gives its subject as the principal', async () => {
    const c = await sslConnect(secure, await secure.pki.issueClient('CN=admin'));
    expect(await createAclsError(c)).toBe(0);
  });

  it('a CA-signed CN "admin,O=Acme" is not the subject O=Acme, CN=admin: its comma and "=" are escaped', async () => {
    const crafted = await sslConnect(secure, await secure.pki.issueClient([{ CN: ['admin,O=Acme'] }]));
    expect(await createAclsError(crafted)).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(await principalOf(secure, crafted, 'audit')).toBe('User:CN=admin\\,O\\=Acme');
    const genuine = await sslConnect(secure, await secure.pki.issueClient([{ O: ['Acme'] }, { CN: ['admin'] }]));
    expect(await createAclsError(genuine)).toBe(0);
  });

  it('repeated and multi-valued attributes keep their order, most specific RDN first', async () => {
    const c = await sslConnect(secure, await secure.pki.issueClient([{ C: ['US'] }, { OU: ['b'] }, { OU: ['a'] }, { CN: ['x'], OU: ['y'] }]));
    expect(await principalOf(secure, c, 'in')).toMatch(/^User:(CN=x\+OU=y|OU=y\+CN=x),OU=a,OU=b,C=US$/);
  });
});

describe('ssl.principalMappingRules', () => {
  it('maps the subject with the first rule that matches (RULE:pattern/replacement/U, then DEFAULT)', async () => {
    const secure = await startSecureBroker({
      authorizer: { enabled: true, superUsers: ['User:ALICE'] },
      ssl: { ...(await sslBase()), principalMappingRules: 'RULE:^CN=([^,]*),O=kipgen$/$1/U, DEFAULT' },
    });
    cleanups.push(() => secure.close());
    const mapped = await sslConnect(secure, await secure.pki.issueClient([{ O: ['kipgen'] }, { CN: ['alice'] }]));
    expect(await createAclsError(mapped)).toBe(0);
    const unmapped = await sslConnect(secure, await secure.pki.issueClient([{ O: ['elsewhere'] }, { CN: ['bob'] }]));
    expect(await principalOf(secure, unmapped, 'events')).toBe('User:CN=bob,O=elsewhere');
  });

  it('refuses a certificate no rule applies to', async () => {
    const secure = await startSecureBroker({ ssl: { ...(await sslBase()), principalMappingRules: 'RULE:^CN=([^,]*),O=kipgen$/$1/' } });
    cleanups.push(() => secure.close());
    const error = await sslConnect(secure, await secure.pki.issueClient([{ O: ['other'] }, { CN: ['carol'] }]))
      .then((c) => c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((error as Error | null)?.name).toBe('NetworkError');
    await waitForLog(secure.logs, (l) =>
      /refused the TLS client 127\.0\.0\.1:\d+: no ssl\.principalMappingRules rule applies to the subject CN=carol,O=other/.test(l),
    );
  });

  it('a bad rule is a configuration error naming it', async () => {
    const config = { port: 0, listeners: [{ name: 'SSL', port: 0 }], ssl: { ...(await sslBase()), principalMappingRules: 'RULE:^CN=(.*)$/$1/L, BOGUS' } };
    expect(() => resolveConfig(config)).toThrow(/ssl\.principalMappingRules: invalid rule "BOGUS"/);
  });
});

async function sslBase(): Promise<{ key: string; cert: string; ca: string; clientAuth: 'requested' }> {
  const pki = await testPki();
  return { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, clientAuth: 'requested' };
}

describe('the other modes', () => {
  it('required: no certificate and an untrusted one both fail; a CA-signed one is served', async () => {
    const secure = await startSecureBroker({ ssl: { ...(await sslBase()), clientAuth: 'required' } });
    cleanups.push(() => secure.close());
    const attempt = (cert: KeyAndCert | null): Promise<string> =>
      sslConnect(secure, cert)
        .then((c) => c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12))
        .then(
          () => 'served',
          (e: unknown) => `failed: ${(e as Error).name}`,
        );
    expect(await attempt(null)).toMatch(/^failed: /);
    expect(await attempt(await secure.pki.selfSignedClient('CN=admin'))).toMatch(/^failed: /);
    expect(await attempt(await secure.pki.issueClient('CN=admin'))).toBe('served');
  });

  it('a SASL_SSL listener asks for no client certificate (Kafka applies ssl.client.auth to SSL listeners only): SASL decides', async () => {
    const secure = await startSecureBroker();
    cleanups.push(() => secure.close());
    const forged = await secure.pki.selfSignedClient('CN=admin');
    const c = await KafkaConnection.connect({
      host: '127.0.0.1',
      port: secure.broker.ports.get('SASL_SSL')!,
      requestTimeoutMs: 5_000,
      tls: { ca: secure.pki.ca, servername: 'localhost', ...forged },
    });
    cleanups.push(() => c.close());
    const handshake = (await c.send(SaslHandshakeRequest, SaslHandshakeRequest.create({ mechanism: 'PLAIN' }), 1)) as { errorCode: number };
    expect(handshake.errorCode).toBe(0);
    expect(secure.logs.filter((l) => l.includes('refused the TLS client'))).toEqual([]);
  });
});
