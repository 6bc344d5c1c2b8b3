/**
 * Kafka's own Java clients (kafka-clients 4.4.0) against Apache Kafka 4.4 and
 * against kipgen's broker: the judge (test/kafka/java) runs every scenario —
 * idempotent, transactional, fenced and 2PC producers, offsets committed in a
 * transaction, codecs, max.message.bytes, acks and timestamp lookups, classic, consumer-protocol and read_committed consumers,
 * implicit, explicit and read_committed share consumers, Admin —
 * against both brokers in one JVM, and each scenario's lines must be the same
 * but for the differences test/kafka/differences.json lists with their reason
 * (an unlisted difference fails, so does a listed one that no longer differs).
 *
 * kipgen runs as a child process with the settings that match the harness's
 * Kafka (support/kafka.ts): group.initial.rebalance.delay.ms 0, two-phase
 * commit enabled, an authorizer whose super user is ANONYMOUS (the PLAINTEXT
 * principal), Transactions V2 and share groups (kipgen's defaults).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';
import { kafka } from './support/cluster.js';
import { compareScenario, compileJudge, readDifferences, runJudge, type Comparison, type JudgeRun } from './support/judge.js';

/** The judge's scenarios, in the order it runs them (admin.groups after the consumer and share scenarios). */
const SCENARIOS = [
  'producer.idempotent',
  'producer.transactional',
  'producer.2pc',
  'producer.fencing',
  'producer.offsets_in_transaction',
  'producer.edges',
  'admin.transactions',
  'consumer.classic',
  'consumer.consumer',
  'consumer.read_committed',
  'consumer.static',
  'consumer.regex',
  'share.implicit',
  'share.explicit',
  'share.read_committed',
  'share.delivery_limit',
  'admin.topics',
  'admin.configs',
  'admin.acls',
  'admin.groups',
  'admin.active_groups',
  'admin.cluster',
  'admin.offsets',
];

const differences = readDifferences();
let classesDir: string;
let broker: KipgenBroker;
let run: JudgeRun;
let compileMs = 0;
const table = new Map<string, Comparison>();

beforeAll(async () => {
  // The classes go to a temp folder this file removes: compiling takes seconds, and a cache would need invalidating when the sources change.
  classesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-judge-'));
  const began = Date.now();
  compileJudge(kafka().javaClasspath, classesDir);
  compileMs = Date.now() - began;
  broker = await startKipgenBroker({
    topics: [],
    entry: 'cli',
    logRequests: false,
    config: {
      groupInitialRebalanceDelayMs: 0,
      transactionTwoPhaseCommitEnable: true,
      transactionVersion: 2,
      authorizer: { enabled: true, superUsers: ['User:ANONYMOUS'] },
    },
  });
  // A fresh tag per run: the Kafka may be one kept up across runs (support/serve.ts) that has the names of the last.
  const tag = `k${randomBytes(4).toString('hex')}-`;
  run = await runJudge(kafka().javaClasspath, classesDir, { kafka: kafka().bootstrap, kipgen: `127.0.0.1:${broker.port}` }, 300_000, tag);
}, 360_000);

afterAll(async () => {
  await broker?.stop();
  if (classesDir) fs.rmSync(classesDir, { recursive: true, force: true });
  if (run) {
    const rows = [...table].map(([s, c]) => `| ${s} | ${c.steps} | ${c.same} | ${c.explained.length} | ${c.unexplained.length + c.stale.length} |`);
    process.stdout.write(
      [
        `Kafka judge: javac ${compileMs} ms, one JVM against Kafka 4.4 and kipgen ${run.ms} ms`,
        '| scenario | steps | same | explained differences | failing |',
        '| --- | --- | --- | --- | --- |',
        ...rows,
        '',
      ].join('\n'),
    );
  }
});

describe('Kafka 4.4 Java clients: Apache Kafka 4.4 and kipgen broker print the same lines', () => {
  it('the differences file names only scenarios the judge runs', () => {
    expect(differences.map((d) => d.scenario).filter((s) => !SCENARIOS.includes(s))).toEqual([]);
  });

  it('both brokers ran every scenario and no other', () => {
    for (const target of ['kafka', 'kipgen']) expect([...run.lines.get(target)!.keys()], target).toEqual(SCENARIOS);
  });

  for (const scenario of SCENARIOS) {
    it(scenario, () => {
      const comparison = compareScenario(scenario, run.lines.get('kafka')!.get(scenario) ?? [], run.lines.get('kipgen')!.get(scenario) ?? [], differences);
      table.set(scenario, comparison);
      expect(comparison.unexplained, 'differences not in test/kafka/differences.json').toEqual([]);
      expect(comparison.stale, 'listed differences that no longer differ').toEqual([]);
      expect(comparison.steps).toBeGreaterThan(0);
    });
  }
});
