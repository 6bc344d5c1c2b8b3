/**
 * KIP-1289's "transactional vs non-transactional" system test: records per
 * second and commit latency (p50/p99) for implicit, explicit and
 * transactional share acknowledgement, at several batch sizes (max poll
 * records), all against one broker process in one run. Printed as a
 * Markdown table with the ratios.
 *
 *   npm run bench:txn [-- --records 2000] [--batches 10,100,500] [--modes implicit,explicit,transactional,explicit-ctp,transactional-ctp]
 *                     [--retry-backoff-ms N] [--tv 1,2] [--json]
 *   npm run bench:txn -- --timeline [--batch 100] [--records 3000] [--log-flush-interval-messages 1]
 *
 * --timeline: where one transactional commit's time goes (bench/txn-timeline.ts).
 *
 * Modes (each run uses a fresh share group over the same seeded input topic):
 *  - implicit:          poll; acks ride on the next poll (no commit call; no latency column)
 *  - explicit:          poll; acknowledge() each record; commitSync() per poll — latency = commitSync
 *  - transactional:     poll; TransactionalShareAcknowledger.commitAcknowledgements() per poll
 *                       (begin → AddShareAcksToTxn + TxnShareAcknowledge → EndTxn) — latency = that call
 *  - explicit-ctp:      consume-transform-produce without transactions: idempotent producer, await the
 *                       sends, then acknowledge + commitSync — latency = send-await + commitSync
 *  - transactional-ctp: KIP §2.1: begin, send outputs, sendShareAcksToTransaction, commitTransaction —
 *                       latency = sendShareAcks + commit
 *                       (both -ctp loops are bench/ctp-loop.ts, which bench:kafka's eos part runs too)
 * Throughput = records acknowledged / wall time from the first poll to the last commit.
 *
 * The transactional modes run once per transaction protocol (`--tv`): against
 * a broker that finalizes `transaction.version` 2 (Transactions V2: no
 * AddPartitionsToTxn/AddOffsetsToTxn, epoch bump at EndTxn) and against one
 * pinned to 1 (the classic protocol), so TV1 and TV2 rows stand side by side.
 * The other modes do not depend on it and run against the TV2 broker.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as client from '../client/index.js';
import { KafkaShareConsumer, ShareAcknowledgements, TransactionalShareAcknowledger, type ShareConsumerRecord } from '../client/index.js';
import { seedInput } from '../chaos/seed.js';
import { consumeTransformProduce, percentile } from './ctp-loop.js';
import { startBenchBroker, type BenchBroker } from './txn-broker.js';
import { runTimeline } from './txn-timeline.js';

type Mode = 'implicit' | 'explicit' | 'transactional' | 'explicit-ctp' | 'transactional-ctp';
const ALL_MODES: Mode[] = ['implicit', 'explicit', 'transactional', 'explicit-ctp', 'transactional-ctp'];

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RECORDS = Number(opt('records') ?? 2_000);
const BATCHES = (opt('batches') ?? '10,100,500').split(',').map(Number);
const MODES = (opt('modes') ?? ALL_MODES.join(',')).split(',') as Mode[];
const JSON_OUT = argv.includes('--json');
/** retry.backoff.ms of every client (default: the client's own default). */
const RETRY_BACKOFF_MS = opt('retry-backoff-ms') === undefined ? undefined : Number(opt('retry-backoff-ms'));
const RUN_LIMIT_MS = 60_000;
const TVS = (opt('tv') ?? '1,2').split(',').map(Number);

interface Result {
  mode: Mode;
  /** The broker's transaction.version for transactional modes; null for the others. */
  tv: number | null;
  batch: number;
  records: number;
  seconds: number;
  rps: number;
  commits: number;
  p50: number | null;
  p99: number | null;
}

async function run(bootstrap: string, mode: Mode, tv: number | null, batch: number, runId: number): Promise<Result> {
  const common = { bootstrapServers: bootstrap, logger: null, ...(RETRY_BACKOFF_MS === undefined ? {} : { retryBackoffMs: RETRY_BACKOFF_MS }) } as const;
  const groupId = `bench-${mode}-${batch}-${runId}`;
  if (mode === 'explicit-ctp' || mode === 'transactional-ctp') {
    const r = await consumeTransformProduce(client, mode, {
      bootstrap,
      input: 'bench-in',
      output: 'bench-out',
      group: groupId,
      transactionalId: `bench-tx-${runId}`,
      records: RECORDS,
      batch,
      warmupMs: 15_000,
      runLimitMs: RUN_LIMIT_MS,
      retryBackoffMs: RETRY_BACKOFF_MS,
    });
    const [p50, p99] = [percentile(r.latencies, 0.5), percentile(r.latencies, 0.99)];
    return { mode, tv, batch, records: r.records, seconds: r.seconds, rps: r.records / r.seconds, commits: r.commits, p50, p99 };
  }
  const ackMode = mode === 'implicit' ? 'implicit' : mode.startsWith('transactional') ? 'transactional' : 'explicit';
  const consumer = new KafkaShareConsumer({ ...common, groupId, acknowledgementMode: ackMode, maxPollRecords: batch, fetchMaxWaitMs: 100 });
  const acker =
    mode === 'transactional' ? new TransactionalShareAcknowledger({ ...common, transactionalId: `bench-acks-${runId}`, metricsRegistry: null }) : null;
  const latencies: number[] = [];
  let done = 0;
  let commits = 0;
  try {
    consumer.subscribe(['bench-in']);
    await acker?.initTransactions();
    // Warm-up: join the group and see the first records before the clock starts.
    let pending: ShareConsumerRecord[] = [];
    const warmDeadline = Date.now() + 15_000;
    while (pending.length === 0 && Date.now() < warmDeadline) pending = await consumer.poll(200);
    const started = performance.now();
    const limit = Date.now() + RUN_LIMIT_MS;
    while (done < RECORDS && Date.now() < limit) {
      const records = pending.length > 0 ? pending : await consumer.poll(200);
      pending = [];
      if (records.length === 0) continue;
      const t0 = performance.now();
      switch (mode) {
        case 'implicit':
          break;
        case 'explicit':
          for (const r of records) consumer.acknowledge(r, 'accept');
          await consumer.commitSync();
          break;
        case 'transactional':
          await acker!.commitAcknowledgements(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
          break;
      }
      if (mode !== 'implicit') latencies.push(performance.now() - t0);
      if (mode !== 'implicit') commits++;
      done += records.length;
    }
    if (mode === 'implicit') {
      // The last poll's records are accepted by the next poll (or close): include that round trip.
      await consumer.poll(0);
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { mode, tv, batch, records: done, seconds, rps: done / seconds, commits, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  } finally {
    await consumer.close(2_000).catch(() => {});
    await acker?.close(2_000).catch(() => {});
  }
}

const fmt = (n: number | null, digits = 1): string => (n === null ? '—' : n.toFixed(digits));
const ratio = (a: number | null | undefined, b: number | null | undefined): string => (a && b ? `${(a / b).toFixed(2)}×` : '—');

const isTransactional = (mode: Mode): boolean => mode === 'transactional' || mode === 'transactional-ctp';
const label = (r: Pick<Result, 'mode' | 'tv'>): string => (r.tv === null ? r.mode : `${r.mode} TV${r.tv}`);

async function main(): Promise<void> {
  const brokers = new Map<number, BenchBroker>();
  try {
    for (const tv of new Set([2, ...TVS])) {
      const broker = await startBenchBroker(tv);
      brokers.set(tv, broker);
      await seedInput(broker.bootstrap, 'bench-in', RECORDS);
    }
    const results: Result[] = [];
    let runId = 0;
    for (const batch of BATCHES) {
      for (const mode of MODES) {
        for (const tv of isTransactional(mode) ? TVS : [null]) {
          const r = await run(brokers.get(tv ?? 2)!.bootstrap, mode, tv, batch, runId++);
          results.push(r);
          process.stderr.write(
            `  ${label(r)} batch=${batch}: ${r.records} records in ${r.seconds.toFixed(2)} s, ${r.rps.toFixed(0)} rec/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms\n`,
          );
        }
      }
    }
    if (JSON_OUT) {
      process.stdout.write(JSON.stringify(results, null, 2) + '\n');
      return;
    }
    const lines: string[] = [];
    lines.push(`## Transactional vs non-transactional share acknowledgement (${RECORDS} records per run, one broker process, ${os.cpus().length} cores)`);
    lines.push('');
    lines.push('| batch | mode | records/s | commits | commit p50 ms | commit p99 ms |');
    lines.push('| ---: | --- | ---: | ---: | ---: | ---: |');
    for (const r of results) lines.push(`| ${r.batch} | ${label(r)} | ${r.rps.toFixed(0)} | ${r.commits} | ${fmt(r.p50)} | ${fmt(r.p99)} |`);
    lines.push('');
    lines.push(
      '| batch | protocol | throughput transactional/explicit | transactional/implicit | transactional-ctp/explicit-ctp | p50 latency transactional/explicit | p50 transactional-ctp/explicit-ctp |',
    );
    lines.push('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const batch of BATCHES) {
      for (const tv of TVS) {
        const get = (m: Mode) => results.find((r) => r.batch === batch && r.mode === m && (r.tv === null || r.tv === tv));
        lines.push(
          `| ${batch} | TV${tv} | ${ratio(get('transactional')?.rps, get('explicit')?.rps)} | ${ratio(get('transactional')?.rps, get('implicit')?.rps)} | ` +
            `${ratio(get('transactional-ctp')?.rps, get('explicit-ctp')?.rps)} | ${ratio(get('transactional')?.p50, get('explicit')?.p50)} | ` +
            `${ratio(get('transactional-ctp')?.p50, get('explicit-ctp')?.p50)} |`,
        );
      }
    }
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const { proc, dir } of brokers.values()) {
      await proc.stop(3_000);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

(argv.includes('--timeline') ? runTimeline(argv) : main()).catch((error: Error) => {
  process.stderr.write(`bench:txn failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
