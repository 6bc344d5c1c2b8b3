/**
 * KIP-368 re-authentication: the broker gives each SASL session a lifetime
 * (connections.max.reauth.ms, or the OAuth token's own), the client
 * re-authenticates on the same connection before it ends, and a client that
 * does not is disconnected at its next request.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  KafkaProducer,
  KafkaShareConsumer,
  ShareAcknowledgements,
  TransactionalShareAcknowledger,
  type Logger,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { authenticate } from '../../client/sasl/authenticate.js';
import { unsecuredJws } from '../../coordinator/auth/oauth.js';
import { ApiVersionsRequest, MetadataRequest } from '../../generated/index.js';
import { KafkaConnection, NetworkError } from '../../connection/connection.js';
import { readCommitted } from '../client/support/brokers.js';
import { startSecureBroker, USERS, waitForLog, type SecureBroker } from './support.js';

const LIFETIME_MS = 1_000;
let secure: SecureBroker;
beforeAll(async () => {
  secure = await startSecureBroker({ sasl: { connectionsMaxReauthMs: LIFETIME_MS } });
});
afterAll(async () => {
  await secure?.close();
});
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const push = (m: string): void => void lines.push(m);
  return { lines, debug: push, info: push, warn: push, error: push };
}

describe('re-authentication (KIP-368)', () => {
  it('a transaction spanning several session lifetimes commits on the same connections (SCRAM, SASL_SSL)', async () => {
    const logger = recordingLogger();
    const p = new KafkaProducer({
      bootstrapServers: secure.bootstrap('SASL_SSL'),
      ssl: { ca: secure.pki.ca },
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: USERS.alice },
      transactionalId: 'reauth-tx',
      lingerMs: 1,
      logger,
      metricsRegistry: null,
    });
    cleanups.push(() => p.close(1_000));
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'events', key: 'a', value: 'reauth-1' });
    const connectionsBefore = secure.broker.metrics().connectionsOpened;
    await sleep(LIFETIME_MS * 2.5);
    await p.send({ topic: 'events', key: 'b', value: 'reauth-2' });
    await p.commitTransaction();
    expect(secure.broker.metrics().connectionsOpened).toBe(connectionsBefore);
    expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'events')).toEqual(expect.arrayContaining(['reauth-1', 'reauth-2']));
    expect(logger.lines.filter((l) => /^re-authenticated to node \d+ with SCRAM-SHA-512/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(secure.logs.some((l) => /session of User:alice expired/.test(l))).toBe(false);
  });

  it('a share consumer and a TransactionalShareAcknowledger keep working across re-authentications; the acks commit', async () => {
    const security = { ssl: { ca: secure.pki.ca }, sasl: { mechanism: 'SCRAM-SHA-256', username: 'bob', password: USERS.bob } } as const;
    const seed = new KafkaProducer({ bootstrapServers: secure.bootstrap('PLAINTEXT'), lingerMs: 1, logger: null, metricsRegistry: null });
    await Promise.all(['r1', 'r2', 'r3'].map((value) => seed.send({ topic: 'in', value })));
    await seed.close();
    const consumer = new KafkaShareConsumer({
      bootstrapServers: secure.bootstrap('SASL_SSL'),
      ...security,
      groupId: 'reauth-share',
      acknowledgementMode: 'transactional',
      fetchMaxWaitMs: 50,
      logger: null,
    });
    cleanups.push(() => consumer.close(1_000));
    const acknowledger = new TransactionalShareAcknowledger({
      bootstrapServers: secure.bootstrap('SASL_SSL'),
      ...security,
      transactionalId: 'reauth-acks',
      logger: null,
      metricsRegistry: null,
    });
    cleanups.push(() => acknowledger.close());
    consumer.subscribe(['in']);
    const records: ShareConsumerRecord[] = [];
    for (let i = 0; i < 20 && records.length < 3; i++) records.push(...(await consumer.poll(200)));
    expect(records.map((r) => Buffer.from(r.value!).toString()).sort()).toEqual(['r1', 'r2', 'r3']);
    await acknowledger.initTransactions();
    const connectionsBefore = secure.broker.metrics().connectionsOpened;
    await sleep(LIFETIME_MS * 2.5);
    await acknowledger.commitAcknowledgements(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
    // Accepted in a committed transaction: not delivered again.
    expect(await consumer.poll(300)).toEqual([]);
    expect(secure.logs.some((l) => /session of User:bob expired/.test(l))).toBe(false);
    expect(secure.broker.metrics().connectionsOpened).toBe(connectionsBefore);
  });

  it('an OAuth session lasts no longer than its token, and the provider is asked again', async () => {
    let calls = 0;
    const p = new KafkaProducer({
      bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
      sasl: {
        mechanism: 'OAUTHBEARER',
        oauthBearerProvider: () => {
          calls++;
          return { value: unsecuredJws('carol', 600) };
        },
      },
      lingerMs: 1,
      logger: null,
      metricsRegistry: null,
    });
    cleanups.push(() => p.close(1_000));
    await p.send({ topic: 'events', value: 'oauth-1' });
    await sleep(1_500);
    await p.send({ topic: 'events', value: 'oauth-2' });
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(secure.logs.some((l) => /session of User:carol expired/.test(l))).toBe(false);
  });

  it('a client that does not re-authenticate is disconnected at its next request after the session ends', async () => {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')! });
    cleanups.push(() => c.close());
    const versions = (await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3)) as {
      apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[];
    };
    const range = (key: number): readonly [number, number] | undefined => {
      const k = versions.apiKeys.find((a) => a.apiKey === key);
      return k ? [k.minVersion, k.maxVersion] : undefined;
    };
    const outcome = await authenticate(c, { mechanism: 'PLAIN', username: 'bob', password: USERS.bob }, { handshake: range(17), authenticate: range(36) });
    expect(outcome.sessionLifetimeMs).toBe(LIFETIME_MS);
    await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12);
    await sleep(LIFETIME_MS + 200);
    const error = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    await waitForLog(secure.logs, (l) => /Metadata after the session of User:bob expired/.test(l));
  });
});
