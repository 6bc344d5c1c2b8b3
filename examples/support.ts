/**
 * What the three examples share and what is not the point of any of them: a
 * broker to run against (an embedded one in a temp folder, or `--bootstrap`),
 * the input records, a small reader that reads a topic the way a
 * read_committed (or read_uncommitted) consumer would, polling helpers,
 * checkpoint files, the exactly-once check, and printing. The examples
 * themselves are in the files next to this one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import { startBroker, type Broker } from '../coordinator/broker.js';
import { writeFileAtomic } from '../coordinator/cluster.js';
import type { RecordHeader } from '../runtime/record-batch.js';
import { Admin } from '../client/admin.js';
import type { ConfigResource } from '../client/admin/config-types.js';
import { TopicExistsError } from '../client/errors.js';
import { consoleLogger, type Logger } from '../client/cluster.js';
import { KafkaConsumer } from '../client/kafka-consumer.js';
import type { ShareTransactionMetricsSnapshot } from '../client/metrics.js';
import { KafkaProducer } from '../client/producer.js';
import type { KafkaShareConsumer } from '../client/share-consumer.js';
import type { ShareConsumerRecord } from '../client/share/acknowledgements.js';
import type { PreparedTransaction } from '../client/transaction-manager.js';

/** How an example is run: `kipgen example <name> [--bootstrap host:port] [--verbose]`, or from a test. */
export interface ExampleOptions {
  /** A running kipgen broker (`host:port`); default: an embedded broker in a temp folder. */
  bootstrap?: string;
  /** Where the narrative goes; default console.log. */
  print?: (line: string) => void;
  /** Also print the broker's log lines and the clients' info messages (to stderr). */
  verbose?: boolean;
}

/** What every example returns: whether its own checks passed, and what failed. */
export interface ExampleSummary {
  example: string;
  ok: boolean;
  /** The checks that failed, in words; empty when ok. */
  problems: string[];
  durationMs: number;
  /** The one line printed last. */
  line: string;
}

interface TopicSpec {
  name: string;
  partitions: number;
}

/** The broker an example runs against, and this run's identity. */
export interface ExampleEnvironment {
  bootstrap: string;
  embedded: boolean;
  /** A short id written into every record this run produces (header `run`), so that a shared broker's older records can be told apart. */
  runId: string;
  /**
   * A group or transactional id for this run: `base` on the embedded broker,
   * `base-<runId>` on a shared one (so that runs do not fence each other).
   */
  unique(base: string): string;
  /**
   * `unique(base)` for a share group, configured as the KIP-1289 flows need:
   * share.isolation.level=read_committed (only committed output is consumed)
   * and share.auto.offset.reset=earliest (records produced before the first
   * fetch count). Kafka's defaults are read_uncommitted and latest, so this is
   * what an application sets too (Admin.incrementalAlterConfigs on the GROUP).
   */
  shareGroup(base: string): Promise<string>;
  /** Folder for checkpoint files (a temp folder, removed at the end). */
  stateDir: string;
  /** The clients' logger: warnings and errors to stderr. */
  logger: Logger;
  /** Log lines of the embedded broker (printed on failure, or live with --verbose). */
  brokerLog: string[];
  print: (line: string) => void;
  /** When the example started (before the broker did), for the duration it reports. */
  startedAt: number;
  /** Closes the embedded broker and removes the temp folder. */
  close(): Promise<void>;
}

/**
 * Starts an embedded broker in a temp folder, or uses the running one at
 * `bootstrap`, and creates `topics` there with Admin.createTopics (a topic
 * that exists already is used as it is); returns where to connect. Share
 * groups heartbeat every 250 ms on the embedded broker so that members get
 * their assignment quickly.
 */
async function openEnvironment(topics: TopicSpec[], options: ExampleOptions): Promise<ExampleEnvironment> {
  const startedAt = Date.now();
  const print = options.print ?? ((line: string) => console.log(line));
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-example-'));
  const runId = randomBytes(3).toString('hex');
  const brokerLog: string[] = [];
  const logger: Logger = options.verbose ? { ...consoleLogger, info: (m) => console.error(`[kipgen] INFO ${m}`) } : consoleLogger;
  let broker: Broker | null = null;
  let bootstrap: string;
  try {
    if (options.bootstrap !== undefined) {
      bootstrap = options.bootstrap;
    } else {
      broker = await startBroker(
        {
          port: 0,
          dataDir: path.join(stateDir, 'broker'),
          // The checkpointing examples prepare transactions: two-phase commit (KIP-939; off by default, as in Kafka).
          transactionTwoPhaseCommitEnable: true,
          // KIP-1289 flows read committed output from the start; Kafka's group-config defaults are latest and read_uncommitted.
          shareGroup: { heartbeatIntervalMs: 250, isolationLevel: 'read_committed', autoOffsetReset: 'earliest' },
        },
        {
          log: (line) => {
            brokerLog.push(line);
            if (options.verbose) process.stderr.write(`${line}\n`);
          },
        },
      );
      bootstrap = `127.0.0.1:${broker.port}`;
    }
    await createTopics(bootstrap, topics);
  } catch (error) {
    await broker?.close();
    fs.rmSync(stateDir, { recursive: true, force: true });
    throw error;
  }
  return {
    bootstrap,
    embedded: broker !== null,
    runId,
    unique: (base) => (broker !== null ? base : `${base}-${runId}`),
    async shareGroup(base) {
      const groupId = broker !== null ? base : `${base}-${runId}`;
      await configureShareGroup(bootstrap, groupId, { 'share.isolation.level': 'read_committed', 'share.auto.offset.reset': 'earliest' });
      return groupId;
    },
    stateDir,
    logger,
    brokerLog,
    print,
    startedAt,
    async close() {
      try {
        await broker?.close();
      } finally {
        fs.rmSync(stateDir, { recursive: true, force: true });
      }
    },
  };
}

/** Where the example runs, in one line. */
export function describeEnvironment(env: ExampleEnvironment): string {
  return env.embedded
    ? `embedded kipgen broker on ${env.bootstrap} (data in ${env.stateDir}/broker, removed at the end)`
    : `kipgen broker at ${env.bootstrap} (records of this run carry header run=${env.runId})`;
}

/** Sets group configs with Admin.incrementalAlterConfigs (a GROUP resource); throws with the broker's reason if refused. */
async function configureShareGroup(bootstrap: string, groupId: string, configs: Record<string, string>): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
  try {
    const group: ConfigResource = { type: 'GROUP', name: groupId };
    const result = await admin.incrementalAlterConfigs([[group, Object.entries(configs).map(([name, value]) => ({ name, value, opType: 'SET' as const }))]]);
    const refused = result.errors().get(group);
    if (refused) throw new Error(`the broker at ${bootstrap} refused the configs of share group ${groupId}: ${refused.message}`);
  } finally {
    await admin.close();
  }
}

/** Creates the example's topics with Admin.createTopics; one that exists already (TopicExistsError) is used as it is. */
async function createTopics(bootstrap: string, topics: TopicSpec[]): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
  try {
    const result = await admin.createTopics(topics.map((t) => ({ name: t.name, numPartitions: t.partitions })));
    for (const [name, error] of result.errors()) {
      if (!(error instanceof TopicExistsError)) throw new Error(`the broker at ${bootstrap} could not create topic ${name}: ${error.message}`);
    }
  } finally {
    await admin.close();
  }
}

// ---------------------------------------------------------------------------
// Records

/**
 * The example's input: `count` records `make(i)` to `topic`, values as JSON,
 * each with header `run` (this run's id), from a plain (idempotent) producer.
 */
export async function produceInput(env: ExampleEnvironment, topic: string, count: number, make: (i: number) => { key: string; value: unknown }): Promise<void> {
  const producer = new KafkaProducer({
    bootstrapServers: env.bootstrap,
    lingerMs: 1,
    metricsRegistry: null,
    logger: env.logger,
  });
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const { key, value } = make(i);
      return producer.send({ topic, key, value: JSON.stringify(value), headers: { run: env.runId } });
    }),
  );
  await producer.close();
}

/** UTF-8 text of a key or value. */
export function text(bytes: Uint8Array | null): string {
  return bytes === null ? '' : Buffer.from(bytes).toString('utf8');
}

/** The value of header `key`, as text (undefined when absent). */
export function header(record: { headers: RecordHeader[] }, key: string): string | undefined {
  const h = record.headers.find((x) => x.key === key);
  return h === undefined ? undefined : text(h.value);
}

/** Whether this run produced the record (header `run`); always true on an embedded broker. */
export function isThisRun(env: ExampleEnvironment, record: { headers: RecordHeader[] }): boolean {
  return header(record, 'run') === env.runId;
}

/** `partition@offset` of a record. */
export function position(record: { partition: number; offset: bigint }): string {
  return `${record.partition}@${record.offset}`;
}

/**
 * Polls until `enough(all records so far)` holds, or throws after `timeoutMs`.
 * Returns what each poll returned, in order (an empty poll is left out).
 */
export async function pollUntil(
  consumer: KafkaShareConsumer,
  enough: (records: ShareConsumerRecord[]) => boolean,
  timeoutMs: number,
  what: string,
): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const all: ShareConsumerRecord[] = [];
  while (!enough(all)) {
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (got ${all.length} records)`);
    all.push(...(await consumer.poll(Math.min(500, deadline - Date.now()))));
  }
  return all;
}

// ---------------------------------------------------------------------------
// Reading a topic as a consumer with an isolation level would

interface TopicRecord {
  partition: number;
  offset: bigint;
  key: string;
  value: string;
  headers: RecordHeader[];
}

/**
 * Reads every record of `topic` with a KafkaConsumer assigned all its
 * partitions, at isolation level read_committed (only records of committed
 * transactions, up to the last stable offset; aborted ones skipped by the
 * consumer's abort index) or read_uncommitted (every data record in the log,
 * aborted ones included), polling until each partition's end offset. Waits up
 * to `waitMs` for open transactions on the topic to finish (last stable
 * offset = high watermark).
 */
export async function readTopic(bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', waitMs = 3_000): Promise<TopicRecord[]> {
  const deadline = Date.now() + waitMs;
  const common = { bootstrapServers: bootstrap, logger: null, autoOffsetReset: 'earliest', enableAutoCommit: false, fetchMaxWaitMs: 50 } as const;
  const consumer = new KafkaConsumer({ ...common, isolationLevel: isolation });
  // The high watermark, to tell when no transaction is open on the topic.
  const uncommitted = new KafkaConsumer({ ...common, isolationLevel: 'read_uncommitted' });
  try {
    const partitions = (await consumer.partitionsFor(topic)).map(({ partition }) => ({ topic, partition }));
    let ends = await consumer.endOffsets(partitions);
    for (;;) {
      const highWatermarks = await uncommitted.endOffsets(partitions);
      if ([...highWatermarks].every(([key, hw]) => ends.get(key) === hw) || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
      ends = await consumer.endOffsets(partitions);
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    const out: TopicRecord[] = [];
    const reached = async () => {
      for (const tp of partitions) if ((await consumer.position(tp)) < ends.get(`${tp.topic}-${tp.partition}`)!) return false;
      return true;
    };
    while (!(await reached())) {
      for (const r of await consumer.poll(200)) {
        if (r.offset >= ends.get(`${r.topic}-${r.partition}`)!) continue;
        out.push({ partition: r.partition, offset: r.offset, key: text(r.key), value: text(r.value), headers: r.headers });
      }
    }
    return out.sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : 1));
  } finally {
    await Promise.all([consumer.close(), uncommitted.close()]);
  }
}

// ---------------------------------------------------------------------------
// Checkpoint files (the framework's state backend, in miniature)

/** Writes `state` as JSON (bigints as strings), atomically (`writeFileAtomic`: temp file, fsync, rename, directory fsync). */
export function saveCheckpoint(dir: string, checkpointId: number, state: unknown): string {
  const file = path.join(dir, `checkpoint-${checkpointId}.json`);
  const json = JSON.stringify(state, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  writeFileAtomic(file, json);
  return file;
}

/**
 * A checkpoint whose snapshot is taken but which is not complete yet (other
 * tasks may still fail to snapshot): `checkpoint-N.pending.json`, which
 * latestCheckpoint() ignores until completeCheckpoint() renames it.
 */
export function savePendingCheckpoint(dir: string, checkpointId: number, state: unknown): string {
  const file = path.join(dir, `checkpoint-${checkpointId}.pending.json`);
  const json = JSON.stringify(state, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  writeFileAtomic(file, json);
  return file;
}

/** Every task snapshotted checkpoint N: it is complete, and the one a restart restores. */
export function completeCheckpoint(dir: string, checkpointId: number): string {
  const file = path.join(dir, `checkpoint-${checkpointId}.json`);
  fs.renameSync(path.join(dir, `checkpoint-${checkpointId}.pending.json`), file);
  return file;
}

/** The newest complete checkpoint file in `dir`, parsed (null if none). */
export function latestCheckpoint<T>(dir: string): { checkpointId: number; state: T } | null {
  const ids = fs
    .readdirSync(dir)
    .map((f) => /^checkpoint-(\d+)\.json$/.exec(f)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
  if (ids.length === 0) return null;
  const state = JSON.parse(fs.readFileSync(path.join(dir, `checkpoint-${ids[0]}.json`), 'utf8')) as T;
  return { checkpointId: ids[0]!, state };
}

/** A PreparedTransaction as stored in a checkpoint file (JSON has no bigint); storeTransaction / restoreTransaction convert. */
export interface StoredTransaction {
  transactionalId: string;
  producerId: string;
  producerEpoch: number;
}

export function storeTransaction(prepared: PreparedTransaction): StoredTransaction {
  return { ...prepared, producerId: prepared.producerId.toString() };
}

export function restoreTransaction(stored: StoredTransaction): PreparedTransaction {
  return {
    transactionalId: stored.transactionalId,
    producerId: BigInt(stored.producerId),
    producerEpoch: stored.producerEpoch,
  };
}

// ---------------------------------------------------------------------------
// Checking

/** The exactly-once check: how many of `expected` are missing from `ids`, and how many of `ids` are repeats. */
export function exactlyOnce(ids: readonly number[], expected: readonly number[]): { lost: number; duplicated: number } {
  const seen = new Set(ids);
  return { lost: expected.filter((id) => !seen.has(id)).length, duplicated: ids.length - seen.size };
}

// ---------------------------------------------------------------------------
// Printing

/** The acks of a ShareAcknowledgements-like list, e.g. `sensor-readings-0: 0-2 accept, 3 reject`. */
export function describeAcks(
  partitions: Array<{
    topic: string;
    partition: number;
    batches: Array<{ firstOffset: bigint; lastOffset: bigint; acknowledgeType: string }>;
  }>,
): string {
  return partitions
    .map(
      (p) =>
        `${p.topic}-${p.partition}: ` +
        p.batches.map((b) => `${b.firstOffset === b.lastOffset ? b.firstOffset : `${b.firstOffset}-${b.lastOffset}`} ${b.acknowledgeType}`).join(', '),
    )
    .join('; ');
}

/** The five KIP-1289 §3.5 metrics, one per line. */
export function formatMetrics(m: ShareTransactionMetricsSnapshot): string[] {
  const histogram = (h: ShareTransactionMetricsSnapshot['share-transaction-prepare-time-ms']): string =>
    h.count === 0 ? 'count 0' : `count ${h.count}, avg ${h.avg!.toFixed(1)} ms, max ${h.max!.toFixed(1)} ms`;
  return [
    `share-transaction-active            ${m['share-transaction-active']}`,
    `share-transaction-prepare-time-ms   ${histogram(m['share-transaction-prepare-time-ms'])}`,
    `share-transaction-commit-time-ms    ${histogram(m['share-transaction-commit-time-ms'])}`,
    `share-transaction-abort-total       ${m['share-transaction-abort-total']}`,
    `share-transaction-timeout-total     ${m['share-transaction-timeout-total']}`,
  ];
}

/**
 * The registry's Prometheus text exposition, what a scrape would get.
 * Histogram `_bucket` lines are left out unless `buckets` (they are 16 per
 * histogram); the number left out is said at the end.
 */
export async function prometheusText(registry: Registry, buckets = false): Promise<string[]> {
  const lines = (await registry.metrics()).split('\n').filter((l) => l !== '');
  if (buckets) return lines;
  const kept = lines.filter((l) => !/_bucket\{/.test(l));
  const left = lines.length - kept.length;
  return left > 0 ? [...kept, `# (${left} _bucket lines left out)`] : kept;
}

/**
 * Runs an example: opens its environment (see openEnvironment), runs `body`
 * in it and closes it afterwards; prints the broker's log to stderr when the
 * example failed.
 */
export async function runExample<T extends ExampleSummary>(
  topics: TopicSpec[],
  options: ExampleOptions,
  body: (env: ExampleEnvironment) => Promise<T>,
): Promise<T> {
  const env = await openEnvironment(topics, options);
  let failed = true;
  try {
    const summary = await body(env);
    failed = !summary.ok;
    return summary;
  } finally {
    if (failed && !options.verbose && env.brokerLog.length > 0) {
      process.stderr.write(`--- broker log ---\n${env.brokerLog.join('\n')}\n--- end of broker log ---\n`);
    }
    await env.close();
  }
}

/**
 * Prints the line every example ends with — OK with `facts`, or FAILED with
 * the problems — and returns the common part of its summary.
 */
export function finish(env: ExampleEnvironment, example: string, facts: string, problems: string[]): ExampleSummary {
  const ok = problems.length === 0;
  const durationMs = Date.now() - env.startedAt;
  const seconds = (durationMs / 1000).toFixed(1);
  const line = ok ? `${example}: OK — ${facts} (${seconds} s)` : `${example}: FAILED — ${problems.join('; ')} (${seconds} s)`;
  env.print(line);
  return { example, ok, problems, durationMs, line };
}
