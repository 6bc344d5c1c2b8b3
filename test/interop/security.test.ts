/**
 * Real clients against a kipgen broker's SASL_SSL listener (certificates made
 * for the run): kcat and confluent-kafka-python (both librdkafka) with PLAIN,
 * SCRAM-SHA-256 and SCRAM-SHA-512, and kafkajs with `ssl` + `sasl`. Each
 * produces; what arrived is read back with kipgen's own client on the
 * PLAINTEXT listener. A wrong password must fail the client, not hang it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommitted } from '../client/support/brokers.js';
import { startSecureBroker, USERS, type SecureBroker } from '../security/support.js';
import { removeTempDirs, requireTool, run, tempDir } from './support/broker-process.js';
import { DEBIAN_PYTHON as PYTHON } from './support/tools.js';

const SCRAM = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
let secure: SecureBroker;
let caFile: string;
const results: string[] = [];

beforeAll(async () => {
  requireTool('kcat', ['-V'], 'kcat');
  requireTool(PYTHON, ['-c', 'import confluent_kafka'], 'python3-confluent-kafka');
  secure = await startSecureBroker();
  caFile = path.join(tempDir('kipgen-interop-tls-'), 'ca.pem');
  fs.writeFileSync(caFile, secure.pki.ca);
});

afterAll(async () => {
  await secure?.close();
  removeTempDirs();
  process.stdout.write(`security interop:\n  ${results.join('\n  ')}\n`);
});

function librdkafkaConfig(mechanism: string, password: string): Record<string, string> {
  return {
    'security.protocol': 'SASL_SSL',
    'sasl.mechanisms': mechanism,
    'sasl.username': 'alice',
    'sasl.password': password,
    'ssl.ca.location': caFile,
  };
}

const kcatArgs = (config: Record<string, string>): string[] => Object.entries(config).flatMap(([k, v]) => ['-X', `${k}=${v}`]);

describe('kcat (librdkafka) over SASL_SSL', () => {
  for (const mechanism of SCRAM) {
    it(`produces and consumes with ${mechanism}`, async () => {
      const value = `kcat-${mechanism}-${Date.now()}`;
      const args = ['-b', secure.bootstrap('SASL_SSL'), ...kcatArgs(librdkafkaConfig(mechanism, USERS.alice)), '-t', 'events', '-p', '0'];
      const produced = await run('kcat', ['-P', ...args], { input: `${value}\n`, timeoutMs: 30_000 });
      expect(produced.code, produced.stderr.toString()).toBe(0);
      const consumed = await run('kcat', ['-C', ...args, '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 30_000 });
      expect(consumed.code, consumed.stderr.toString()).toBe(0);
      expect(consumed.stdout.toString().split('\n')).toContain(value);
      results.push(`kcat ${mechanism} SASL_SSL: produce + consume OK`);
    });
  }

  it('fails with a wrong password instead of hanging', async () => {
    const result = await run('kcat', ['-L', '-m', '5', '-b', secure.bootstrap('SASL_SSL'), ...kcatArgs(librdkafkaConfig('SCRAM-SHA-256', 'wrong'))], {
      timeoutMs: 30_000,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr.toString()).toMatch(/Authentication failed|SASL authentication error/);
    results.push('kcat SCRAM-SHA-256 wrong password: refused');
  });
});

describe('confluent-kafka-python (librdkafka) over SASL_SSL', () => {
  const script = `
import json, sys
from confluent_kafka import Producer
conf = json.loads(sys.argv[1])
errors = []
p = Producer(conf)
p.produce('events', value=sys.argv[2].encode(), partition=1, on_delivery=lambda err, msg: errors.append(str(err)) if err else None)
left = p.flush(20)
print(json.dumps({"errors": errors, "left": left}))
`;
  for (const mechanism of SCRAM) {
    it(`produces with ${mechanism}`, async () => {
      const value = `python-${mechanism}-${Date.now()}`;
      const config = { 'bootstrap.servers': secure.bootstrap('SASL_SSL'), ...librdkafkaConfig(mechanism, USERS.alice) };
      const result = await run(PYTHON, ['-c', script, JSON.stringify(config), value], { timeoutMs: 60_000 });
      expect(result.code, result.stderr.toString()).toBe(0);
      expect(JSON.parse(result.stdout.toString().trim().split('\n').pop()!), `${result.stderr}\n${secure.logs.slice(-10).join('\n')}`).toEqual({
        errors: [],
        left: 0,
      });
      expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'events')).toContain(value);
      results.push(`confluent-kafka-python ${mechanism} SASL_SSL: produce OK`);
    });
  }
});

describe('kafkajs with ssl + sasl', () => {
  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`produces with ${mechanism}`, async () => {
      const kafka = new Kafka({
        clientId: 'kafkajs-security',
        brokers: [secure.bootstrap('SASL_SSL')],
        ssl: { ca: [secure.pki.ca] },
        sasl: { mechanism, username: 'bob', password: USERS.bob } as never,
        logLevel: logLevel.NOTHING,
      });
      const producer = kafka.producer();
      await producer.connect();
      try {
        const value = `kafkajs-${mechanism}-${Date.now()}`;
        await producer.send({ topic: 'events', messages: [{ value, partition: 0 }] });
        expect(await readCommitted(secure.bootstrap('PLAINTEXT'), 'events')).toContain(value);
        results.push(`kafkajs ${mechanism} SASL_SSL: produce OK`);
      } finally {
        await producer.disconnect();
      }
    });
  }

  it('rejects a wrong password with its authentication error', async () => {
    const kafka = new Kafka({
      clientId: 'kafkajs-security',
      brokers: [secure.bootstrap('SASL_SSL')],
      ssl: { ca: [secure.pki.ca] },
      sasl: { mechanism: 'scram-sha-512', username: 'bob', password: 'wrong' },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const producer = kafka.producer();
    const error = await producer.connect().catch((e: unknown) => e);
    expect((error as Error).name).toBe('KafkaJSSASLAuthenticationError');
    results.push('kafkajs scram-sha-512 wrong password: KafkaJSSASLAuthenticationError');
  });
});
