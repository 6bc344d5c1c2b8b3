/**
 * Smaller holes: the TLS handshake counts toward
 * the authentication timeout; OAUTHBEARER refuses an authorization id that is
 * not the token's principal; connections.max.idle.ms; TLS protocols and
 * cipher suites; a client id does not make a client a peer broker; a failed
 * TLS handshake is logged with the peer's address.
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../connection/connection.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { resolveConfig } from '../../coordinator/config.js';
import { unsecuredJws } from '../../coordinator/auth/oauth.js';
import { AuthenticationFailed, createSaslServer } from '../../coordinator/auth/sasl-server.js';
import { CredentialStore } from '../../coordinator/auth/credentials.js';
import { unsecuredJwsValidator } from '../../coordinator/auth/oauth.js';
import { ApiVersionsRequest, CreateTopicsRequest, CreateTopicsResponse, MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { freePorts, tempDir } from '../coordinator/support/broker-harness.js';
import { startSecureBroker, testPki, waitForLog, type SecureBroker } from './support.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const closed = (socket: net.Socket): Promise<void> => new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

describe('one broker, short timeouts', () => {
  let secure: SecureBroker;
  beforeAll(async () => {
    secure = await startSecureBroker({ connectionsMaxIdleMs: 1_000, sasl: { authenticationTimeoutMs: 600 } });
  });
  afterAll(async () => {
    await secure?.close();
  });

  it('the TLS handshake counts toward the authentication timeout: the clock starts at the TCP accept', async () => {
    const raw = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_SSL')! });
    cleanups.push(async () => raw.destroy());
    await new Promise((resolve) => raw.once('connect', resolve));
    const connectedAt = Date.now();
    // Half the timeout passes before the handshake starts; then the client never authenticates.
    await new Promise((resolve) => setTimeout(resolve, 350));
    const socket = tls.connect({ socket: raw, ca: secure.pki.ca, servername: 'localhost' });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    await closed(socket);
    const elapsed = Date.now() - connectedAt;
    // From the accept: about 600 ms. Counted from the handshake's end it would be about 950 ms.
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(850);
    await waitForLog(secure.logs, (l) => /not authenticated within 600 ms on SASL_SSL/.test(l));
  });

  it('a failed TLS handshake is logged with the peer address, also when the client reset the connection', async () => {
    const raw = net.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SSL')! });
    cleanups.push(async () => raw.destroy());
    raw.on('error', () => {});
    await new Promise((resolve) => raw.once('connect', resolve));
    const port = raw.localPort!;
    // The start of a ClientHello, then a reset.
    raw.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40, 0x01]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    raw.resetAndDestroy();
    const line = await waitForLog(secure.logs, (l) => l.includes(`TLS handshake with 127.0.0.1:${port} failed`));
    expect(line).toMatch(/SSL: TLS handshake with 127\.0\.0\.1:\d+ failed: the connection closed before the handshake completed; closing the connection/);
    expect(secure.logs.filter((l) => l.includes('undefined:undefined'))).toEqual([]);
  });

  for (const listener of ['PLAINTEXT', 'SSL'] as const) {
    it(`closes a ${listener} connection idle for connections.max.idle.ms, and logs it`, async () => {
      const c = await KafkaConnection.connect({
        host: '127.0.0.1',
        port: secure.broker.ports.get(listener)!,
        requestTimeoutMs: 5_000,
        tls: listener === 'SSL' ? { ca: secure.pki.ca, servername: 'localhost' } : null,
      });
      cleanups.push(() => c.close());
      await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3);
      await c.closed;
      await waitForLog(secure.logs, (l) =>
        new RegExp(`${listener}, User:ANONYMOUS\\) idle for 1000 ms \\(connections\\.max\\.idle\\.ms\\); closing it`).test(l),
      );
    });
  }

  it('a connection in use is not idle', async () => {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: secure.broker.port, requestTimeoutMs: 5_000 });
    cleanups.push(() => c.close());
    let gone = false;
    void c.closed.then(() => (gone = true));
    for (let i = 0; i < 8; i++) {
      await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(gone).toBe(false);
  });
});

describe('ssl.cipherSuites and ssl.enabledProtocols', () => {
  let secure: SecureBroker;
  beforeAll(async () => {
    secure = await startSecureBroker();
  });
  afterAll(async () => {
    await secure?.close();
  });

  const handshake = (port: number, options: tls.ConnectionOptions): Promise<string> =>
    new Promise((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: secure.pki.ca, servername: 'localhost', ...options });
      socket.once('secureConnect', () => {
        const outcome = `ok ${socket.getProtocol()} ${socket.getCipher().name}`;
        socket.destroy();
        resolve(outcome);
      });
      socket.once('error', (error) => resolve(`failed: ${error.message}`));
    });

  it('by default a TLS 1.2 client offering only CBC suites is refused; GCM and TLS 1.3 are served', async () => {
    const port = secure.broker.ports.get('SSL')!;
    expect(await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA' })).toMatch(
      /^failed: .*(handshake failure|no shared cipher)/i,
    );
    expect(await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' })).toBe('ok TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256');
    expect(await handshake(port, {})).toMatch(/^ok TLSv1\.3 /);
  });

  it('configured lists replace the defaults (Kafka names), and TLSv1.3 alone refuses TLS 1.2 clients', async () => {
    const pki = await testPki();
    const only13 = await startSecureBroker({ ssl: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, enabledProtocols: ['TLSv1.3'] } });
    cleanups.push(() => only13.close());
    expect(await handshake(only13.broker.ports.get('SSL')!, { maxVersion: 'TLSv1.2' })).toMatch(/^failed: /);
    expect(await handshake(only13.broker.ports.get('SSL')!, {})).toMatch(/^ok TLSv1\.3 /);
    const cbc = await startSecureBroker({
      ssl: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256'], enabledProtocols: ['TLSv1.2'] },
    });
    cleanups.push(() => cbc.close());
    expect(await handshake(cbc.broker.ports.get('SSL')!, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256' })).toBe(
      'ok TLSv1.2 ECDHE-ECDSA-AES128-SHA256',
    );
  });

  it('unknown suites and protocols are configuration errors naming them', async () => {
    const pki = await testPki();
    const config = (ssl: object) => ({ port: 0, listeners: [{ name: 'SSL', port: 0 }], ssl: { key: pki.server.key, cert: pki.server.cert, ...ssl } });
    expect(() => resolveConfig(config({ cipherSuites: ['TLS_FAKE_WITH_NOTHING'] }))).toThrow(/ssl\.cipherSuites: TLS_FAKE_WITH_NOTHING is not a cipher suite/);
    expect(() => resolveConfig(config({ enabledProtocols: ['TLSv1.1'] }))).toThrow(/ssl\.enabledProtocols: "TLSv1\.1" is not one of TLSv1\.2, TLSv1\.3/);
    expect(() => resolveConfig(config({ cipherSuites: [] }))).toThrow(/ssl\.cipherSuites must be a non-empty list/);
  });
});

describe('OAUTHBEARER authorization id', () => {
  const server = () => createSaslServer('OAUTHBEARER', { credentials: new CredentialStore([]), oauthBearerValidator: unsecuredJwsValidator() });
  const first = (authzid: string) => Buffer.from(`n,${authzid},\u0001auth=Bearer ${unsecuredJws('carol', 60_000)}\u0001\u0001`);

  it('an authzid naming another principal is refused (Kafka: OAuthBearerSaslServer)', async () => {
    await expect(server().evaluate(first('a=admin'))).rejects.toThrow(AuthenticationFailed);
    await expect(server().evaluate(first('a=admin'))).rejects.toThrow(/authorization id "admin" is not the token's principal "carol"/);
  });

  it("no authzid, or the token's own principal, is accepted", async () => {
    expect(await server().evaluate(first(''))).toMatchObject({ complete: true, user: 'carol' });
    expect(await server().evaluate(first('a=carol'))).toMatchObject({ complete: true, user: 'carol' });
  });
});

describe('a client id does not make a client a peer broker', () => {
  it('a change asked on a client listener by client id kipgen-broker-1 is still passed on to node 1', async () => {
    const [p0, p1, c0, c1] = await freePorts(4);
    const cluster = [
      { nodeId: 0, host: '127.0.0.1', port: p0! },
      { nodeId: 1, host: '127.0.0.1', port: p1! },
    ];
    const brokers: Broker[] = [];
    cleanups.push(async () => {
      for (const b of brokers) await b.close();
    });
    for (const [nodeId, clientPort] of [
      [0, c0!],
      [1, c1!],
    ] as const) {
      brokers.push(
        await startBroker(
          {
            nodeId,
            cluster,
            dataDir: tempDir('kipgen-peer-'),
            listeners: [{ name: 'CLIENT', port: clientPort, securityProtocol: 'PLAINTEXT' }],
            transactionStatePartitions: 2,
            consumerOffsetsPartitions: 2,
            requestTimeoutMs: 3_000,
          },
          { shareCoordinator: null, log: () => {} },
        ),
      );
    }
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: c0!, clientId: 'kipgen-broker-1', requestTimeoutMs: 5_000 });
    cleanups.push(() => c.close());
    const created = await c.send(
      CreateTopicsRequest,
      CreateTopicsRequest.create({ topics: [{ name: 'posed', numPartitions: 2, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 5_000 }),
      7,
      CreateTopicsResponse,
    );
    expect(created.topics[0]!.errorCode).toBe(0);
    const other = await KafkaConnection.connect({ host: '127.0.0.1', port: c1!, requestTimeoutMs: 5_000 });
    cleanups.push(() => other.close());
    const metadata = await other.send(
      MetadataRequest,
      MetadataRequest.create({ topics: [{ name: 'posed', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false }),
      12,
      MetadataResponse,
    );
    expect(metadata.topics[0]!.errorCode).toBe(0);
    expect(metadata.topics[0]!.partitions).toHaveLength(2);
  });
});
