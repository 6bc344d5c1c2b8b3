/**
 * A kipgen broker with every kind of listener at once (PLAINTEXT primary,
 * SSL, SASL_PLAINTEXT, SASL_SSL), users stored as SCRAM credentials, test
 * certificates made for the run, and its log lines kept for assertions.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import type { BrokerConfigInput } from '../../coordinator/config.js';
import { userConfig } from '../../coordinator/auth/credentials.js';
import { makeTestPki, type TestPki } from './certificates.js';

export const USERS = { alice: 'alice-secret', bob: 'bob-secret', carol: 'carol-secret', dave: 'dave-secret', admin: 'admin-secret' } as const;

export interface SecureBroker {
  broker: Broker;
  pki: TestPki;
  logs: string[];
  dataDir: string;
  /** `127.0.0.1:<port>` of a listener. */
  bootstrap(listener: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'): string;
  close(): Promise<void>;
}

let pkiOnce: Promise<TestPki> | null = null;
export function testPki(): Promise<TestPki> {
  return (pkiOnce ??= makeTestPki());
}

export async function startSecureBroker(config: BrokerConfigInput = {}): Promise<SecureBroker> {
  const pki = await testPki();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-security-'));
  const logs: string[] = [];
  const broker = await startBroker(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      transactionAbortCheckIntervalMs: 100,
      markerRetryBackoffMs: 20,
      topics: [
        { name: 'events', partitions: 2 },
        { name: 'orders', partitions: 1 },
        { name: 'audit', partitions: 1 },
        { name: 'in', partitions: 1 },
        { name: 'out', partitions: 1 },
      ],
      listeners: [
        { name: 'SSL', port: 0 },
        { name: 'SASL_PLAINTEXT', port: 0 },
        { name: 'SASL_SSL', port: 0 },
      ],
      ssl: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, clientAuth: 'requested' },
      ...config,
      sasl: {
        mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'],
        users: Object.entries(USERS).map(([name, password]) => userConfig(name, password)),
        ...config.sasl,
      },
    },
    { log: (line) => logs.push(line) },
  );
  return {
    broker,
    pki,
    logs,
    dataDir,
    bootstrap: (listener) => `127.0.0.1:${broker.ports.get(listener)}`,
    async close() {
      await broker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resolves when `predicate` holds for some log line, or fails after `ms`. */
export async function waitForLog(logs: string[], predicate: (line: string) => boolean, ms = 3_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const line = logs.find(predicate);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no log line matched within ${ms} ms; log:\n${logs.slice(-20).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
