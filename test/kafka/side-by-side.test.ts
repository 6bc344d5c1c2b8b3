/**
 * The two brokers side by side: every sequence of the corpus
 * (support/side-by-side-corpus.ts) runs at the lowest and at the highest
 * version of each API both brokers serve, against Apache Kafka 4.4 and
 * against kipgen's broker set up as Kafka is here (one node, Transactions V2,
 * two-phase commit on, share groups, an authorizer whose only super user is
 * the PLAINTEXT principal, alice on a SASL listener with no ACLs). Every
 * response is normalised (support/side-by-side.ts says what) and compared
 * field by field.
 *
 * side-by-side-differences.json lists the differences we keep, each with its
 * kind and reason: a difference not listed fails, and so does a listed one
 * that no longer occurs. The coverage test also fails when an API either
 * broker advertises is missing at one of its two versions, unless listed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { userConfig } from '../../coordinator/auth/credentials.js';
import { apiByKey } from '../../generated/index.js';
import { kafka, unique } from './support/cluster.js';
import { corpus, randomUuidString, type Level, type Sequence } from './support/side-by-side-corpus.js';
import { advertised, diff, endpoint, matcher, Session, warmUp, type ExplainedDifference, type Step, type Target } from './support/side-by-side.js';

const DIFFERENCES_FILE = path.join(path.dirname(new URL(import.meta.url).pathname), 'side-by-side-differences.json');
const explained = JSON.parse(fs.readFileSync(DIFFERENCES_FILE, 'utf8')) as ExplainedDifference[];

let broker: Broker;
let dataDir: string;
let targets: Record<'kafka' | 'kipgen', Target>;
const versions = { kafka: new Map<number, [number, number]>(), kipgen: new Map<number, [number, number]>() };
/** Per sequence and level: the steps of each broker, or the error that stopped it. */
const results = new Map<string, { kafka: Step[]; kipgen: Step[]; error?: string }>();
const found: Array<{ id: string; kafka: string; kipgen: string }> = [];
let elapsedMs = 0;

function common(apiKey: number, level: Level): number {
  const k = versions.kafka.get(apiKey);
  const o = versions.kipgen.get(apiKey)!;
  // An API Kafka lacks (KIP-1289's) is sent at our version: Kafka's answer (a closed connection) is the listed difference.
  if (k === undefined) return level === 'lowest' ? o[0] : o[1];
  return level === 'lowest' ? Math.max(k[0], o[0]) : Math.min(k[1], o[1]);
}

async function runOn(target: Target, seq: Sequence, level: Level, base: string): Promise<Step[]> {
  const s = new Session(target);
  const uuids = new Map<string, string>();
  try {
    await seq.run({
      s,
      level,
      v: (k) => common(k, level),
      name: (suffix) => `${base}-${suffix}`,
      uuid: (suffix) => uuids.get(suffix) ?? (uuids.set(suffix, randomUuidString()), uuids.get(suffix)!),
    });
    return s.steps;
  } finally {
    await s.close();
  }
}

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

const key = (seq: Sequence, level: Level): string => `${seq.name} @${level}`;

beforeAll(async () => {
  const info = kafka();
  const alice = info.saslSsl.users.find((u) => u.username === 'alice')!;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-side-by-side-'));
  broker = await startBroker(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      // As the harness's Kafka: one partition for the internal topics, no initial rebalance delay, TV2 with
      // two-phase commit, share-group heartbeats every second, consumer-group heartbeats every 200 ms, Kafka's
      // maximum transaction timeout.
      transactionStatePartitions: 1,
      consumerOffsetsPartitions: 1,
      groupInitialRebalanceDelayMs: 0,
      transactionVersion: 2,
      transactionTwoPhaseCommitEnable: true,
      transactionMaxTimeoutMs: 900_000,
      shareGroup: { heartbeatIntervalMs: 1_000 },
      groupConsumerHeartbeatIntervalMs: 200,
      groupConsumerMinHeartbeatIntervalMs: 100,
      listeners: [{ name: 'SASL_PLAINTEXT', port: 0 }],
      sasl: { mechanisms: ['PLAIN', 'SCRAM-SHA-512'], users: [userConfig('alice', alice.password, ['SCRAM-SHA-512'])] },
      authorizer: { enabled: true, superUsers: ['User:ANONYMOUS'], allowEveryoneIfNoAclFound: false },
    },
    { log: () => undefined },
  );
  targets = {
    kafka: { name: 'kafka', plaintext: endpoint(info.bootstrap), sasl: endpoint(info.saslSsl.bootstrap, { ca: info.saslSsl.caPem }), user: alice },
    kipgen: { name: 'kipgen', plaintext: endpoint(`127.0.0.1:${broker.port}`), sasl: endpoint(`127.0.0.1:${broker.ports.get('SASL_PLAINTEXT')}`), user: alice },
  };
  await Promise.all([warmUp(targets.kafka), warmUp(targets.kipgen)]);
  versions.kafka = await advertised(targets.kafka.plaintext);
  versions.kipgen = await advertised(targets.kipgen.plaintext);

  const began = Date.now();
  const jobs = corpus.flatMap((seq) => (['lowest', 'highest'] as const).map((level) => ({ seq, level })));
  await pool(jobs, 4, async ({ seq, level }) => {
    const base = unique(`sbs-${seq.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 24)}-${level[0]}`);
    const [k, o] = await Promise.allSettled([runOn(targets.kafka, seq, level, base), runOn(targets.kipgen, seq, level, base)]);
    const error = [k, o]
      .map((r, i) => (r.status === 'rejected' ? `${i === 0 ? 'kafka' : 'kipgen'}: ${(r.reason as Error).stack}` : ''))
      .filter(Boolean)
      .join('\n');
    results.set(key(seq, level), {
      kafka: k.status === 'fulfilled' ? k.value : [],
      kipgen: o.status === 'fulfilled' ? o.value : [],
      error: error || undefined,
    });
  });
  elapsedMs = Date.now() - began;
}, 300_000);

afterAll(async () => {
  await broker?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

function differencesOf(seq: Sequence, level: Level): Array<{ id: string; kafka: string; kipgen: string }> {
  const r = results.get(key(seq, level))!;
  const out: Array<{ id: string; kafka: string; kipgen: string }> = [];
  const n = Math.max(r.kafka.length, r.kipgen.length);
  for (let i = 0; i < n; i++) {
    const a = r.kafka[i];
    const b = r.kipgen[i];
    const label = a?.label ?? b!.label;
    if (a === undefined || b === undefined || a.label !== b.label) {
      out.push({
        id: `${key(seq, level)} › ${label} › (step ${i})`,
        kafka: a ? `${a.label} v${a.version}` : '(absent)',
        kipgen: b ? `${b.label} v${b.version}` : '(absent)',
      });
      continue;
    }
    for (const d of diff(a.response, b.response)) out.push({ id: `${key(seq, level)} › ${label} v${a.version} › ${d.path}`, kafka: d.kafka, kipgen: d.kipgen });
  }
  return out;
}

const listedFor = (id: string): ExplainedDifference | undefined => explained.find((e) => matcher(e.id).test(id));

describe('Kafka 4.4 and kipgen side by side', () => {
  for (const seq of corpus) {
    for (const level of ['lowest', 'highest'] as const) {
      it(`${seq.name} @${level}`, () => {
        const r = results.get(key(seq, level))!;
        expect(r.error, 'the sequence ran to its end on both brokers').toBeUndefined();
        const diffs = differencesOf(seq, level);
        found.push(...diffs);
        const unlisted = diffs.filter((d) => listedFor(d.id) === undefined).map((d) => `${d.id}: kafka ${d.kafka}, kipgen ${d.kipgen}`);
        expect(unlisted, `differences not in ${path.basename(DIFFERENCES_FILE)}`).toEqual([]);
      });
    }
  }

  it('coverage: every API both brokers advertise at its lowest and highest common version; APIs only one advertises are listed', () => {
    const sent = new Map<number, Set<number>>();
    for (const r of results.values())
      for (const s of [...r.kafka, ...r.kipgen]) (sent.get(s.apiKey) ?? sent.set(s.apiKey, new Set()).get(s.apiKey)!).add(s.version);
    const missing: string[] = [];
    const table: string[] = [];
    for (const k of new Set([...versions.kafka.keys(), ...versions.kipgen.keys()])) {
      const name = apiByKey(k)?.name ?? `API ${k}`;
      if (!versions.kipgen.has(k) || !versions.kafka.has(k)) {
        const id = `coverage › ${name} (${k}) › advertised by ${versions.kafka.has(k) ? 'kafka' : 'kipgen'} only`;
        found.push({ id, kafka: String(versions.kafka.has(k)), kipgen: String(versions.kipgen.has(k)) });
        if (listedFor(id) === undefined) missing.push(id);
        continue;
      }
      const lo = common(k, 'lowest');
      const hi = common(k, 'highest');
      const got = sent.get(k) ?? new Set();
      for (const v of new Set([lo, hi])) if (!got.has(v)) missing.push(`${name} (${k}) v${v} was not sent`);
      const steps = [...results.values()].reduce((n, r) => n + r.kafka.filter((s) => s.apiKey === k).length, 0);
      table.push(`${String(k).padStart(3)} ${name.padEnd(24)} v${lo}${hi !== lo ? ` and v${hi}` : ''}: ${steps} requests per broker`);
    }
    const requests = [...results.values()].reduce((n, r) => n + r.kafka.length, 0);
    process.stdout.write(`side by side: ${requests} requests per broker compared in ${elapsedMs} ms\n${table.join('\n')}\n`);
    expect(missing).toEqual([]);
  });

  it('every listed difference still occurs', () => {
    const stale = explained.filter((e) => !found.some((d) => matcher(e.id).test(d.id))).map((e) => e.id);
    const byKind = new Map<string, number>();
    for (const d of found) {
      const kind = listedFor(d.id)?.kind ?? 'unlisted';
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    }
    // KIPGEN_SIDE_BY_SIDE_DUMP=<file>: every difference found, with both values, for writing or reviewing the list.
    const dump = process.env.KIPGEN_SIDE_BY_SIDE_DUMP;
    if (dump) {
      fs.writeFileSync(
        dump,
        JSON.stringify(
          found.map((d) => ({ ...d, listed: listedFor(d.id)?.id ?? null })),
          null,
          1,
        ),
      );
      fs.writeFileSync(`${dump}.steps.json`, JSON.stringify(Object.fromEntries(results), null, 1));
    }
    process.stdout.write(`side by side: ${found.length} field differences by kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
    expect(stale, `entries of ${path.basename(DIFFERENCES_FILE)} that match no difference`).toEqual([]);
  });
});
