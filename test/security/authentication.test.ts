/**
 * TLS and SASL between the kipgen client and the kipgen broker, on every
 * listener type and mechanism, and what happens to bad credentials and
 * misbehaving connections (coordinator/auth/, client/sasl/).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaProducer, SaslAuthenticationError, TlsHandshakeError, type SaslConfig } from '../../client/index.js';
import { unsecuredJws } from '../../coordinator/auth/oauth.js';
import {
  FindCoordinatorRequest,
  FindCoordinatorResponse,
  MetadataRequest,
  MetadataResponse,
  SaslAuthenticateRequest,
  SaslHandshakeRequest,
} from '../../generated/index.js';
import { connectAs } from './acl-support.js';
import { KafkaConnection, NetworkError } from '../../connection/connection.js';
import { readCommitted } from '../client/support/brokers.js';
import { startSecureBroker, USERS, waitForLog, type SecureBroker } from './support.js';

let secure: SecureBroker;
beforeAll(async () => {
  secure = await startSecureBroker({ sasl: { maxReceiveBytes: 4096, authenticationTimeoutMs: 400 } });
});
afterAll(async () => {
  await secure?.close();
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

function producer(listener: Parameters<SecureBroker['bootstrap']>[0], extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: secure.bootstrap(listener), lingerMs: 1, maxBlockMs: 5_000, logger: null, metricsRegistry: null, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

const tlsTrust = (): { ca: string } => ({ ca: secure.pki.ca });

const mechanisms: Array<[string, () => SaslConfig]> = [
  ['PLAIN', () => ({ mechanism: 'PLAIN', username: 'alice', password: USERS.alice })],
  ['SCRAM-SHA-256', () => ({ mechanism: 'SCRAM-SHA-256', username: 'alice', password: USERS.alice })],
  ['SCRAM-SHA-512', () => ({ mechanism: 'SCRAM-SHA-512', username: 'bob', password: USERS.bob })],
  ['OAUTHBEARER', () => ({ mechanism: 'OAUTHBEARER', oauthBearerProvider: () => ({ value: unsecuredJws('carol', 60_000) }) })],
];

describe('every listener type and mechanism', () => {
  it('PLAINTEXT and SSL (server-verified, and with a client certificate) carry records', async () => {
    const value = `plain-${Date.now()}`;
    await producer('PLAINTEXT').send({ topic: 'events', key: 'k', value });
    await producer('SSL', { ssl: tlsTrust() }).send({ topic: 'events', key: 'k', value: `${value}-ssl` });
    await producer('SSL', { ssl: { ...tlsTrust(), key: secure.pki.client.key, cert: secure.pki.client.cert, servername: 'localhost' } }).send({
      topic: 'events',
      key: 'k',
      value: `${value}-mtls`,
    });
    const values = await readCommitted(secure.bootstrap('PLAINTEXT'), 'events');
    expect(values).toEqual(expect.arrayContaining([value, `${value}-ssl`, `${value}-mtls`]));
  });

  for (const listener of ['SASL_PLAINTEXT', 'SASL_SSL'] as const) {
    for (const [name, sasl] of mechanisms) {
      it(`${listener} with ${name}: a transactional producer commits`, async () => {
        const value = `${listener}-${name}-${Date.now()}`;
        const p = producer(listener, {
          sasl: sasl(),
          transactionalId: `tx-${listener}-${name}`,
          ...(listener === 'SASL_SSL' ? { ssl: tlsTrust() } : {}),
        });
        await p.initTransactions();
        p.beginTransaction();
        await p.send({ topic: 'events', key: name, value });
        await p.commitTransaction();
        expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'events')).toContain(value);
      });
    }
  }
});

describe('advertised endpoints', () => {
  it('Metadata and FindCoordinator answer with the ports of the listener the client came in on', async () => {
    const c = await connectAs(secure, 'alice');
    cleanups.push(() => c.close());
    const metadata = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse);
    expect(metadata.brokers.map((b) => b.port)).toEqual([secure.broker.ports.get('SASL_PLAINTEXT')]);
    const coordinator = await c.send(
      FindCoordinatorRequest,
      FindCoordinatorRequest.create({ keyType: 1, coordinatorKeys: ['tx-any'] }),
      4,
      FindCoordinatorResponse,
    );
    expect(coordinator.coordinators[0]!.port).toBe(secure.broker.ports.get('SASL_PLAINTEXT'));
    const plain = await KafkaConnection.connect({ host: '127.0.0.1', port: secure.broker.port });
    cleanups.push(() => plain.close());
    const plainMetadata = await plain.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse);
    expect(plainMetadata.brokers.map((b) => b.port)).toEqual([secure.broker.port]);
  });
});

describe('refused credentials fail at once, typed, naming the mechanism', () => {
  async function expectRefused(sasl: SaslConfig, mechanism: string, reason: RegExp): Promise<void> {
    const started = Date.now();
    const error = await producer('SASL_PLAINTEXT', { sasl, maxBlockMs: 20_000 })
      .send({ topic: 'events', value: 'never' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(SaslAuthenticationError);
    const sasle = error as SaslAuthenticationError;
    expect(sasle.mechanism).toBe(mechanism);
    expect(sasle.retriable).toBe(false);
    expect(sasle.message).toMatch(reason);
    // Not retried until maxBlockMs: one attempt, then the error.
    expect(Date.now() - started).toBeLessThan(10_000);
  }

  it('wrong password (PLAIN)', async () => {
    await expectRefused(
      { mechanism: 'PLAIN', username: 'alice', password: 'wrong' },
      'PLAIN',
      /PLAIN authentication .* failed: Authentication failed: Invalid username or password/,
    );
  });

  it('wrong password (SCRAM-SHA-256)', async () => {
    await expectRefused({ mechanism: 'SCRAM-SHA-256', username: 'alice', password: 'wrong' }, 'SCRAM-SHA-256', /Invalid username or password/);
  });

  it('unknown user (SCRAM-SHA-512)', async () => {
    await expectRefused({ mechanism: 'SCRAM-SHA-512', username: 'mallory', password: 'x' }, 'SCRAM-SHA-512', /Invalid username or password/);
  });

  it('expired OAuth token', async () => {
    const expired = unsecuredJws('carol', 1_000, Date.now() - 60_000);
    await expectRefused({ mechanism: 'OAUTHBEARER', oauthBearerProvider: () => ({ value: expired }) }, 'OAUTHBEARER', /token expired/);
  });

  it('a token provider that throws', async () => {
    await expectRefused(
      { mechanism: 'OAUTHBEARER', oauthBearerProvider: () => Promise.reject(new Error('identity provider down')) },
      'OAUTHBEARER',
      /identity provider down/,
    );
  });

  it('SASL against a listener without SASL', async () => {
    const error = await producer('PLAINTEXT', { sasl: { mechanism: 'PLAIN', username: 'alice', password: USERS.alice } })
      .send({ topic: 'events', value: 'never' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(SaslAuthenticationError);
    expect((error as Error).message).toMatch(/ILLEGAL_SASL_STATE/);
  });

  it('an untrusted broker certificate is a TlsHandshakeError, not retried', async () => {
    const error = await producer('SSL', { ssl: {} })
      .send({ topic: 'events', value: 'never' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(TlsHandshakeError);
    expect((error as TlsHandshakeError).retriable).toBe(false);
    expect((error as Error).message).toMatch(/TLS handshake with 127\.0\.0\.1:\d+ failed/);
  });
});

describe('the broker before authentication', () => {
  async function rawConnection(): Promise<KafkaConnection> {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')!, requestTimeoutMs: 3_000 });
    cleanups.push(() => c.close());
    return c;
  }

  it('closes a connection that sends anything but ApiVersions and SASL first, and logs it', async () => {
    const c = await rawConnection();
    const error = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    await c.closed;
    await waitForLog(secure.logs, (l) => /Metadata before authentication \(only ApiVersions and SaslHandshake may come first\)/.test(l));
  });

  it('closes a connection that sends SaslAuthenticate before SaslHandshake (out of order)', async () => {
    const c = await rawConnection();
    const error = await c.send(SaslAuthenticateRequest, SaslAuthenticateRequest.create({ authBytes: Buffer.from('\0alice\0x') }), 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    await waitForLog(secure.logs, (l) => /SaslAuthenticate before authentication/.test(l));
  });

  it('closes a connection that sends a request after SaslHandshake instead of SaslAuthenticate', async () => {
    const c = await rawConnection();
    const handshake = (await c.send(SaslHandshakeRequest, SaslHandshakeRequest.create({ mechanism: 'PLAIN' }), 1)) as { errorCode: number };
    expect(handshake.errorCode).toBe(0);
    const error = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    await waitForLog(secure.logs, (l) => /Metadata during SASL authentication \(SaslAuthenticate expected\)/.test(l));
  });

  it('refuses an oversize frame before authentication without buffering it', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')! });
    cleanups.push(async () => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    const header = Buffer.alloc(4);
    header.writeInt32BE(100_000); // sasl.maxReceiveBytes is 4096 here; the broker accepts 100 MiB after authentication
    socket.write(header);
    await new Promise((resolve) => socket.once('close', resolve));
    await waitForLog(secure.logs, (l) => /frame of 100000 bytes exceeds the maximum of 4096 \(before authentication/.test(l));
  });

  it('serves SaslHandshake v0: the tokens then travel as bare frames (pre-KIP-152 clients)', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')! });
    cleanups.push(async () => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    const frame = async (): Promise<Buffer> => {
      for (let i = 0; i < 200 && (received.length < 4 || received.length < 4 + received.readInt32BE(0)); i++) await new Promise((r) => setTimeout(r, 10));
      const size = received.readInt32BE(0);
      const body = received.subarray(4, 4 + size);
      received = received.subarray(4 + size);
      return body;
    };
    const sized = (body: Buffer): Buffer => Buffer.concat([int32(body.length), body]);
    const int32 = (n: number): Buffer => {
      const b = Buffer.alloc(4);
      b.writeInt32BE(n);
      return b;
    };
    const string = (s: string): Buffer => Buffer.concat([Buffer.from([s.length >> 8, s.length & 0xff]), Buffer.from(s)]);
    // SaslHandshake v0: header v1 (api key 17, version 0, correlation 7, null client id), mechanism PLAIN.
    socket.write(sized(Buffer.concat([Buffer.from([0, 17, 0, 0]), int32(7), Buffer.from([0xff, 0xff]), string('PLAIN')])));
    const handshake = await frame();
    expect(handshake.readInt32BE(0)).toBe(7);
    expect(handshake.readInt16BE(4)).toBe(0);
    // The PLAIN token, bare; the answer is a bare (empty) token.
    socket.write(sized(Buffer.from(`\u0000alice\u0000${USERS.alice}`)));
    expect((await frame()).length).toBe(0);
    // Authenticated: ApiVersions v0 is answered.
    socket.write(sized(Buffer.concat([Buffer.from([0, 18, 0, 0]), int32(8), Buffer.from([0xff, 0xff])])));
    const versions = await frame();
    expect(versions.readInt32BE(0)).toBe(8);
    expect(versions.readInt16BE(4)).toBe(0);
  });

  it('closes a connection that never authenticates (after its TLS handshake)', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_SSL')!, ca: secure.pki.ca });
    cleanups.push(async () => socket.destroy());
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await waitForLog(secure.logs, (l) => /not authenticated within 400 ms on SASL_SSL/.test(l));
  });

  it('closes a connection that never even starts its TLS handshake', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_SSL')! });
    cleanups.push(async () => socket.destroy());
    await new Promise((resolve) => socket.once('close', resolve));
    await waitForLog(secure.logs, (l) => /SASL_SSL: TLS handshake with .* failed: .*timeout/i.test(l));
  });
});
