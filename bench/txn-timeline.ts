/**
 * `npm run bench:txn -- --timeline`: where the time of one consume-transform-
 * produce commit goes, step by step.
 *
 *   npm run bench:txn -- --timeline [--batch 100] [--records 3000] [--mode transactional-ctp|explicit-ctp]
 *                                   [--tv 2] [--log-flush-interval-messages N]
 *
 * The loop is bench:txn's (transactional-ctp: begin, one send per record,
 * sendShareAcksToTransaction, commitTransaction; explicit-ctp: sends, acknowledge,
 * commitSync). The clients reach the broker through bench/rpc-tap.ts, a
 * process that times every request/response pair at the socket; the broker
 * runs with traceLogWrites and reports every append, fsync and marker write.
 * All three processes stamp wall-clock milliseconds with sub-millisecond
 * precision, so their events share one time line.
 *
 * Printed: the steps of a typical commit (the one with the median duration),
 * relative to its start, from beginTransaction to the start of the next one
 * (markers written after the EndTxn answer, and the poll for the next batch,
 * fall there); then per kind (RPC waits, fsyncs, marker writes, appends) the
 * mean over every commit of the run (means, so that the rows add up).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KafkaProducer, KafkaShareConsumer, ShareAcknowledgements, type ShareConsumerRecord } from '../client/index.js';
import { freePorts, ROOT, spawnManaged, type ManagedProcess } from '../chaos/harness.js';
import { seedInput } from '../chaos/seed.js';
import { startBenchBroker, type BenchBroker } from './txn-broker.js';

type Mode = 'transactional-ctp' | 'explicit-ctp';

interface Rpc {
  rpc: string;
  v: number;
  client: string | null;
  startMs: number;
  endMs: number;
}

interface LogWrite {
  kind: 'append' | 'fsync' | 'marker';
  log: string;
  startMs: number;
  ms: number;
}

/** One commit of the loop, in wall-clock ms: its start, the call of the ack/commit step, the end. */
interface Commit {
  startMs: number;
  commitMs: number;
  endMs: number;
}

const wallClockMs = (): number => performance.timeOrigin + performance.now();

export async function runTimeline(argv: string[]): Promise<void> {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const batch = Number(opt('batch') ?? 100);
  const records = Number(opt('records') ?? 3_000);
  const mode = (opt('mode') ?? 'transactional-ctp') as Mode;
  const tv = Number(opt('tv') ?? 2);
  const flushMessages = opt('log-flush-interval-messages');
  if (mode !== 'transactional-ctp' && mode !== 'explicit-ctp') throw new Error(`--mode ${mode}: transactional-ctp or explicit-ctp`);
  for (const [name, value] of [
    ['batch', batch],
    ['records', records],
    ['tv', tv],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  }

  const [tapPort] = await freePorts(1);
  let broker: BenchBroker | null = null;
  let tap: ManagedProcess | null = null;
  try {
    broker = await startBenchBroker(tv, {
      advertisedPort: tapPort!,
      config: { traceLogWrites: true, ...(flushMessages === undefined ? {} : { logFlushIntervalMessages: Number(flushMessages) }) },
    });
    const writes: LogWrite[] = [];
    let pendingText = '';
    // The broker's stderr is kept only in part by the harness: read the trace lines as they come.
    broker.proc.child.stderr!.on('data', (chunk: string) => {
      pendingText += chunk;
      const lines = pendingText.split('\n');
      pendingText = lines.pop()!;
      for (const line of lines) {
        const at = line.indexOf('log-write ');
        if (at >= 0) writes.push(JSON.parse(line.slice(at + 'log-write '.length)) as LogWrite);
      }
    });
    tap = spawnManaged('rpc-tap', ['--import', 'tsx', path.join(ROOT, 'bench/rpc-tap.ts'), String(tapPort), String(broker.port)]);
    await tap.waitFor((e) => e.event === 'listening', 30_000, 'the rpc tap');
    await seedInput(broker.bootstrap, 'bench-in', records);

    const commits = await loop(broker.bootstrap, mode, batch, records);
    // The last markers and answers may still be on their way to the logs.
    await new Promise((r) => setTimeout(r, 300));
    const rpcs = tap.lines.filter((l) => l.startsWith('{"rpc"')).map((l) => JSON.parse(l) as Rpc);
    process.stdout.write(report({ mode, tv, batch, records, flushMessages: flushMessages ?? 'default (never)' }, commits, rpcs, writes));
  } finally {
    await tap?.stop(2_000);
    if (broker !== null) {
      await broker.proc.stop(3_000);
      fs.rmSync(broker.dir, { recursive: true, force: true });
    }
  }
}

async function loop(bootstrap: string, mode: Mode, batch: number, total: number): Promise<Commit[]> {
  const common = { bootstrapServers: bootstrap, logger: null } as const;
  const consumer = new KafkaShareConsumer({
    ...common,
    groupId: `timeline-${mode}`,
    acknowledgementMode: mode === 'transactional-ctp' ? 'transactional' : 'explicit',
    maxPollRecords: batch,
    fetchMaxWaitMs: 100,
  });
  const producer = new KafkaProducer({
    ...common,
    lingerMs: 0,
    metricsRegistry: null,
    ...(mode === 'transactional-ctp' ? { transactionalId: 'timeline-tx' } : {}),
  });
  const commits: Commit[] = [];
  try {
    consumer.subscribe(['bench-in']);
    if (mode === 'transactional-ctp') await producer.initTransactions();
    let pending: ShareConsumerRecord[] = [];
    const warmDeadline = Date.now() + 15_000;
    while (pending.length === 0 && Date.now() < warmDeadline) pending = await consumer.poll(200);
    let done = 0;
    const limit = Date.now() + 120_000;
    while (done < total && Date.now() < limit) {
      const polled = pending.length > 0 ? pending : await consumer.poll(200);
      pending = [];
      if (polled.length === 0) continue;
      const startMs = wallClockMs();
      let commitMs: number;
      if (mode === 'transactional-ctp') {
        producer.beginTransaction();
        const sends = polled.map((r) => producer.send({ topic: 'bench-out', key: r.key, value: r.value }));
        commitMs = wallClockMs();
        await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(polled, 'accept'), consumer.groupMetadata());
        await producer.commitTransaction();
        await Promise.all(sends);
      } else {
        await Promise.all(polled.map((r) => producer.send({ topic: 'bench-out', key: r.key, value: r.value })));
        commitMs = wallClockMs();
        for (const r of polled) consumer.acknowledge(r, 'accept');
        await consumer.commitSync();
      }
      commits.push({ startMs, commitMs, endMs: wallClockMs() });
      done += polled.length;
    }
    return commits;
  } finally {
    await consumer.close(2_000).catch(() => {});
    await producer.close(2_000).catch(() => {});
  }
}

interface Totals {
  commitMs: number;
  rpcWaitMs: number;
  clientOnlyMs: number;
  rpcs: Map<string, { count: number; ms: number }>;
  kinds: Map<string, { count: number; ms: number }>;
}

/** The length of the union of intervals, each clipped to [from, to]. */
function unionMs(intervals: Array<[number, number]>, from: number, to: number): number {
  const clipped = intervals
    .map(([a, b]) => [Math.max(a, from), Math.min(b, to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of clipped) {
    if (a > end) {
      total += b - a;
      end = b;
    } else if (b > end) {
      total += b - end;
      end = b;
    }
  }
  return total;
}

function totalsOf(commit: Commit, nextStartMs: number, rpcs: Rpc[], writes: LogWrite[]): Totals {
  const inTxn = rpcs.filter((r) => r.endMs > commit.startMs && r.startMs < commit.endMs);
  const rpcWaitMs = unionMs(
    inTxn.map((r) => [r.startMs, r.endMs]),
    commit.startMs,
    commit.endMs,
  );
  const byRpc = new Map<string, { count: number; ms: number }>();
  for (const r of inTxn.filter((x) => x.startMs >= commit.startMs)) {
    const entry = byRpc.get(r.rpc) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += r.endMs - r.startMs;
    byRpc.set(r.rpc, entry);
  }
  // Broker writes until the next commit starts: the markers of this one land after EndTxn is answered.
  const kinds = new Map<string, { count: number; ms: number }>();
  for (const w of writes.filter((x) => x.startMs >= commit.startMs && x.startMs < nextStartMs)) {
    const entry = kinds.get(w.kind) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += w.ms;
    kinds.set(w.kind, entry);
  }
  const commitMs = commit.endMs - commit.startMs;
  return { commitMs, rpcWaitMs, clientOnlyMs: commitMs - rpcWaitMs, rpcs: byRpc, kinds };
}

/** Means, not medians, so that the rows add up: RPC wait + client alone = commit. */
function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

const f = (ms: number): string => ms.toFixed(2);

function report(
  run: { mode: Mode; tv: number; batch: number; records: number; flushMessages: string },
  commits: Commit[],
  rpcs: Rpc[],
  writes: LogWrite[],
): string {
  if (commits.length < 3) throw new Error(`only ${commits.length} commits: too few for a timeline`);
  // The first commits warm the connections up; the last has no next start.
  const measured = commits.slice(2, -1);
  const totals = measured.map((c, i) => totalsOf(c, commits[i + 3]!.startMs, rpcs, writes));
  const typicalIndex = totals.map((t, i) => [t.commitMs, i] as const).sort((a, b) => a[0] - b[0])[Math.floor((totals.length - 1) / 2)]![1];
  const typical = measured[typicalIndex]!;
  const nextStart = commits[typicalIndex + 3]!.startMs;
  const out: string[] = [];
  out.push(`## Timeline of one ${run.mode} commit (TV${run.tv}, batch ${run.batch}, ${run.records} records, log.flush.interval.messages ${run.flushMessages})`);
  out.push('');
  out.push(
    `The commit with the median duration of ${measured.length}: ${f(typical.endMs - typical.startMs)} ms from ${run.mode === 'transactional-ctp' ? 'beginTransaction to commitTransaction resolved' : 'the first send to commitSync resolved'}; ms relative to its start.`,
  );
  out.push('');
  out.push('| start ms | end ms | ms | where | step |');
  out.push('| ---: | ---: | ---: | --- | --- |');
  const rows: Array<{ start: number; end: number; where: string; what: string }> = [];
  rows.push({
    start: typical.commitMs,
    end: typical.commitMs,
    where: 'client',
    what: run.mode === 'transactional-ctp' ? 'sendShareAcksToTransaction + commitTransaction called' : 'acknowledge + commitSync called',
  });
  rows.push({ start: typical.endMs, end: typical.endMs, where: 'client', what: 'commit resolved' });
  for (const r of rpcs.filter((x) => x.startMs >= typical.startMs && x.startMs < nextStart)) {
    rows.push({ start: r.startMs, end: r.endMs, where: `RPC ${r.client ?? ''}`, what: `${r.rpc} v${r.v}` });
  }
  for (const w of writes.filter((x) => x.startMs >= typical.startMs && x.startMs < nextStart)) {
    rows.push({ start: w.startMs, end: w.startMs + w.ms, where: 'broker', what: `${w.kind} ${w.log}` });
  }
  rows.sort((a, b) => a.start - b.start || a.end - b.end);
  for (const row of rows) {
    out.push(`| ${f(row.start - typical.startMs)} | ${f(row.end - typical.startMs)} | ${f(row.end - row.start)} | ${row.where} | ${row.what} |`);
  }
  out.push('');
  out.push(`Per commit, mean over ${measured.length} commits (RPCs started within the commit; broker writes until the next commit starts):`);
  out.push('');
  out.push('| kind | count | ms |');
  out.push('| --- | ---: | ---: |');
  out.push(`| commit (start to resolved) | 1 | ${f(mean(totals.map((t) => t.commitMs)))} |`);
  out.push(`| waiting on at least one RPC | — | ${f(mean(totals.map((t) => t.rpcWaitMs)))} |`);
  out.push(`| client with no RPC in flight | — | ${f(mean(totals.map((t) => t.clientOnlyMs)))} |`);
  const rpcNames = [...new Set(totals.flatMap((t) => [...t.rpcs.keys()]))].sort();
  for (const name of rpcNames) {
    out.push(
      `| RPC ${name} (round trips, summed) | ${mean(totals.map((t) => t.rpcs.get(name)?.count ?? 0)).toFixed(1)} | ${f(mean(totals.map((t) => t.rpcs.get(name)?.ms ?? 0)))} |`,
    );
  }
  for (const kind of ['fsync', 'marker', 'append']) {
    out.push(
      `| broker ${kind} | ${mean(totals.map((t) => t.kinds.get(kind)?.count ?? 0)).toFixed(1)} | ${f(mean(totals.map((t) => t.kinds.get(kind)?.ms ?? 0)))} |`,
    );
  }
  return out.join('\n') + '\n';
}
