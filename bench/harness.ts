// Benchmark harness: equal-work checks, interleaved timed rounds, Markdown report.
//
// Method. For each comparison (one workload at one API version) the participants (ours
// and the peer that supports that version) first pass an equal-work check, untimed:
// encoders must produce exactly the reference bytes (bench/reference.ts, itself checked
// against Kafka's conformance vectors), decoders must give a value that normalizes to the
// canonical one. A participant failing its check is not timed. Then each participant is
// calibrated (ops per inner batch so that a batch takes >= ~2 ms) and warmed up, and the
// comparison runs R rounds; in every round each participant runs for T ms, in an order
// rotated from round to round, with a full GC and a settle pause before and after each
// slice. Reported: median ops/s over rounds, the MB/s it implies (MB = 10^6 wire bytes
// produced or consumed), the spread (max-min)/median, and for ours the median of the
// per-round ratios ours/peer with their min-max (same round = same machine conditions).
//
// Isolation. By default each participant runs in its own worker thread: one process, but
// one V8 isolate (heap, GC heuristics, JIT state) per participant, and only one of them
// running at a time. Sharing one isolate made results depend on who ran before: V8 sizes
// its heap limits from recent history, so ours' 250 KiB Produce encode ran at 40k ops/s
// right after a kafkajs slice (no major GC) but 25k after its own (a dozen major GCs per
// 200 ms slice), the same code and the same input. --no-isolate runs everything in the
// main thread, as before.
//
// Check apart. A participant is checked in one worker and timed in another, fresh one
// that has run nothing but the participant's own op (--check-in-timed-isolate: as before,
// in the same worker; --no-isolate: both in the main thread). The check normalizes the output
// with the bench's code while the output is still alive, and that shaped V8's heuristics
// for the rest of the isolate's life: a garbage collection during it finds every object
// of the decode still alive, and V8 then allocates what those allocation sites make
// directly in the old generation (allocation-site pretenuring). Fetch v17 with its records
// parsed, ours, timed in the isolate that ran the check: 3 of 16 isolates ran at ~630
// ops/s against ~2,000; timed in a fresh one: 0 of 16. kafkajs' Fetch v11 decode ran at
// 245–283 ops/s after the check and 173–218 without it (8 isolates each).
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Lib } from './types.js';
import type { ComparisonPlan, ParticipantPlan } from './plan.js';
import { calibrate, slice } from './timing.js';

/** A participant ready to run: made by ParticipantPlan.make(). */
export interface Participant {
  version: number;
  /** true when the op returns a Promise (kafkajs): the loop awaits each call. */
  async: boolean;
  op: () => unknown;
  /** Untimed equal-work check: null when it passes, else what differs. */
  check: () => Promise<string | null>;
  note?: string;
}

export interface ParticipantResult {
  lib: Lib;
  role: 'ours' | 'peer';
  label: string;
  equalWork: string;
  note?: string;
  checkError: string | null;
  opsPerRound: number[];
  medianOps: number | null;
  mbPerSec: number | null;
  spread: number | null;
  ratio: { median: number; min: number; max: number } | null;
  /** Ours rows run with --baseline-tree: per-round ratios to the row's "@ baseline" twin. */
  baselineRatio?: { median: number; min: number; max: number } | null;
}

/** The label of a baseline row (--baseline-tree): its current row's, marked. */
export const BASELINE_MARK = ' @ baseline';

export interface ComparisonResult {
  workload: string;
  api: string;
  version: number;
  op: 'encode' | 'encodeChunks' | 'decode';
  bytesPerOp: number;
  skipped?: string;
  rows: ParticipantResult[];
}

export interface HarnessOptions {
  rounds: number;
  roundMs: number;
  warmupMs: number;
  settleMs: number;
  checkOnly: boolean;
  /** Run each participant in its own worker thread (default). */
  isolate: boolean;
  /** With isolate: time each participant in a fresh worker, not the one that ran its check (default). */
  checkApart: boolean;
  /** What a worker needs to make the same plan as the main thread. */
  planForWorkers: { ours: boolean; oursPath?: string; baseline?: boolean; filter: string | null };
  /** Redo a timed slice when other processes took more than this share of the machine during it (null: never). */
  maxForeign: number | null;
  log: (line: string) => void;
}

/** What the harness saw of other processes' CPU use during the timed slices. */
export const foreignStats = { slices: 0, redone: 0, acceptedNoisy: 0, sumShare: 0 };

// Other processes' share of the machine during an interval (Linux /proc/stat; null elsewhere).
function busyJiffies(): number | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    return f.reduce((a, b) => a + b, 0) - f[3]! - (f[4] ?? 0);
  } catch {
    return null;
  }
}
const NCPU = cpus().length;
async function measureForeign<T>(f: () => Promise<T>): Promise<{ value: T; share: number | null }> {
  const b0 = busyJiffies();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const b1 = busyJiffies();
  const u = process.cpuUsage(c0);
  const wall = (performance.now() - t0) / 1000;
  if (b0 === null || b1 === null) return { value, share: null };
  const foreignCpuS = Math.max(0, (b1 - b0) / 100 - (u.user + u.system) / 1e6);
  return { value, share: foreignCpuS / (wall * NCPU) };
}

// ------------------------------------------------------------------ runners

interface Runner {
  note?: string;
  check(): Promise<string | null>;
  calibrate(): Promise<number>;
  slice(n: number, ms: number): Promise<number>;
  close(): Promise<void>;
}

class NotApplicableError extends Error {}

async function inThreadRunner(pp: ParticipantPlan, settleMs: number): Promise<Runner> {
  let p: Participant;
  try {
    p = await pp.make();
  } catch (e) {
    if ((e as Error)?.name === 'NotApplicable') throw new NotApplicableError((e as Error).message);
    throw e;
  }
  return {
    note: p.note,
    check: () => p.check(),
    calibrate: () => calibrate(p),
    slice: (n, ms) => slice(p, n, ms, settleMs),
    close: async () => {},
  };
}

const WORKER_BOOT = new URL('./worker-boot.mjs', import.meta.url);

function workerRunner(pp: ParticipantPlan, opts: HarnessOptions): Promise<Runner> {
  return new Promise((resolveReady, rejectReady) => {
    const worker = new Worker(WORKER_BOOT, {
      workerData: { key: pp.key, plan: opts.planForWorkers, settleMs: opts.settleMs },
      execArgv: [], // tsx is registered by worker-boot.mjs
    });
    let nextId = 1;
    const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>(); // eslint-disable-line @typescript-eslint/no-explicit-any
    const call = <T>(cmd: string, extra: object = {}): Promise<T> =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, cmd, ...extra });
      });
    let ready = false;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a worker's message: structured-cloned data, read by its type
    worker.on('message', (m: any) => {
      if (!ready) {
        ready = true;
        if (m.type === 'ready') {
          resolveReady({
            note: m.note,
            check: () => call<string | null>('check'),
            calibrate: () => call<number>('calibrate'),
            slice: (n, ms) => call<number>('slice', { n, ms }),
            close: async () => {
              await worker.terminate();
            },
          });
        } else {
          void worker.terminate();
          rejectReady(m.notApplicable ? new NotApplicableError(m.message) : new Error(m.message));
        }
        return;
      }
      const w = pending.get(m.id);
      if (!w) return;
      pending.delete(m.id);
      if (m.ok) w.resolve(m.value);
      else w.reject(new Error(m.error));
    });
    worker.on('error', (e) => {
      if (!ready) {
        ready = true;
        rejectReady(e);
      }
      for (const w of pending.values()) w.reject(e);
      pending.clear();
    });
  });
}

// ------------------------------------------------------------------ run

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const firstLines = (e: unknown) =>
  String((e as Error)?.stack ?? e)
    .split('\n')
    .slice(0, 3)
    .join(' | ');

/**
 * Fills in each timed row's median ops/s, MB/s and spread, and for ours the
 * ratios to the peer's round taken in the same round (the same index of
 * opsPerRound, also when rounds from several processes were joined).
 */
export function summarize(res: ComparisonResult): void {
  const timed = res.rows.filter((r) => r.checkError === null && r.opsPerRound.length > 0);
  const peer = timed.find((r) => r.role === 'peer');
  for (const r of timed) {
    r.medianOps = median(r.opsPerRound);
    r.mbPerSec = (r.medianOps * res.bytesPerOp) / 1e6;
    r.spread = (Math.max(...r.opsPerRound) - Math.min(...r.opsPerRound)) / r.medianOps;
    if (r.role === 'ours' && peer) r.ratio = roundRatios(r, peer);
    const baseline = timed.find((b) => b.label === `${r.label}${BASELINE_MARK}`);
    if (baseline) r.baselineRatio = roundRatios(r, baseline);
  }
}

/**
 * Ratios of `r` to `other` round by round (the same index of opsPerRound: the same round of
 * the same process), summarized; null unless both ran the same rounds.
 */
export function roundRatios(
  r: Pick<ParticipantResult, 'opsPerRound'>,
  other: Pick<ParticipantResult, 'opsPerRound'>,
): { median: number; min: number; max: number } | null {
  if (r.opsPerRound.length === 0 || r.opsPerRound.length !== other.opsPerRound.length) return null;
  const ratios = r.opsPerRound.map((x, i) => x / other.opsPerRound[i]!);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

export async function runComparisons(plans: ComparisonPlan[], opts: HarnessOptions): Promise<ComparisonResult[]> {
  const results: ComparisonResult[] = [];
  for (const comp of plans) {
    const title = `${comp.workload} — ${comp.api} v${comp.version} ${comp.op}`;
    const res: ComparisonResult = { workload: comp.workload, api: comp.api, version: comp.version, op: comp.op, bytesPerOp: comp.bytesPerOp, rows: [] };
    results.push(res);
    if (comp.skipped || comp.participants.length === 0) {
      res.skipped = comp.skipped ?? 'no participant';
      opts.log(`skip  ${title}: ${res.skipped}`);
      continue;
    }
    // 1. make the participants (each in its own worker unless --no-isolate), check them,
    //    and give those that pass a fresh worker to be timed in (see "Check apart" above)
    const makeRunner = (pp: ParticipantPlan): Promise<Runner> => (opts.isolate ? workerRunner(pp, opts) : inThreadRunner(pp, opts.settleMs));
    const made = await Promise.all(
      comp.participants.map(async (pp) => {
        try {
          return { pp, runner: await makeRunner(pp), err: null as string | null };
        } catch (e) {
          if (e instanceof NotApplicableError) return null;
          return { pp, runner: null, err: `could not be made: ${firstLines(e)}` };
        }
      }),
    );
    const live: Array<{ pp: ParticipantPlan; runner: Runner; r: ParticipantResult }> = [];
    for (const m of made) {
      if (!m) continue;
      let err = m.err;
      let runner = m.runner;
      if (runner && err === null) {
        try {
          err = await runner.check();
        } catch (e) {
          err = `threw: ${firstLines(e)}`;
        }
      }
      if (runner && err === null && opts.isolate && opts.checkApart && !opts.checkOnly) {
        await runner.close();
        try {
          runner = await makeRunner(m.pp);
        } catch (e) {
          runner = null;
          err = `could not be made again for timing: ${firstLines(e)}`;
        }
      }
      const r: ParticipantResult = {
        lib: m.pp.lib,
        role: m.pp.role,
        label: m.pp.label,
        equalWork: m.pp.equalWork,
        note: runner?.note,
        checkError: err,
        opsPerRound: [],
        medianOps: null,
        mbPerSec: null,
        spread: null,
        ratio: null,
      };
      res.rows.push(r);
      opts.log(`check ${title} / ${m.pp.label}: ${err === null ? 'ok' : 'FAILED — ' + err}`);
      if (err === null && runner) live.push({ pp: m.pp, runner, r });
      else await runner?.close();
    }
    try {
      if (opts.checkOnly || live.length === 0) continue;
      // 2. calibrate + warm up, one at a time
      const batch = new Map<Runner, number>();
      for (const { runner } of live) {
        const n = await runner.calibrate();
        batch.set(runner, n);
        if (opts.warmupMs > 0) await runner.slice(n, opts.warmupMs);
      }
      // 3. interleaved rounds, order rotated each round
      for (let round = 0; round < opts.rounds; round++) {
        const k = round % live.length;
        for (const x of [...live.slice(k), ...live.slice(0, k)]) {
          // a slice during which other processes took a large share of the CPU is redone (up to 4 times)
          for (let attempt = 0; ; attempt++) {
            const { value, share } = await measureForeign(() => x.runner.slice(batch.get(x.runner)!, opts.roundMs));
            const noisy = share !== null && opts.maxForeign !== null && share > opts.maxForeign;
            if (noisy && attempt < 4) {
              foreignStats.redone++;
              await new Promise((r) => setTimeout(r, 500));
              continue;
            }
            foreignStats.slices++;
            foreignStats.sumShare += share ?? 0;
            if (noisy) foreignStats.acceptedNoisy++;
            x.r.opsPerRound.push(value);
            break;
          }
        }
      }
      // 4. stats
      summarize(res);
      for (const { pp, r } of live) opts.log(`time  ${title} / ${pp.label}: ${fmtOps(r.medianOps!)} ops/s`);
    } finally {
      for (const { runner } of live) await runner.close();
    }
  }
  return results;
}

// ------------------------------------------------------------------ report

export function fmtOps(x: number): string {
  if (x >= 100) return Math.round(x).toLocaleString('en-US');
  return x.toPrecision(3);
}
const fmtMB = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const fmtBytes = (n: number): string => (n >= 10_000 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function renderMarkdown(results: ComparisonResult[], header: string[]): string {
  const out: string[] = [...header, ''];
  out.push('| # | workload | API version | op | bytes/op | participant | equal work | check | median ops/s | MB/s | spread | ours/peer (median [min–max]) |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const notes: string[] = [];
  const noteIndex = new Map<string, number>();
  const noteRef = (n?: string): string => {
    if (!n) return '';
    if (!noteIndex.has(n)) {
      notes.push(n);
      noteIndex.set(n, notes.length);
    }
    return ` [${noteIndex.get(n)}]`;
  };
  results.forEach((c, i) => {
    const head = `| ${i + 1} | ${c.workload} | ${c.api} v${c.version} | ${c.op} | ${fmtBytes(c.bytesPerOp)} `;
    if (c.skipped) {
      out.push(`${head}| _${c.skipped}_ | — | — | — | — | — | — |`);
      return;
    }
    for (const r of c.rows) {
      const check =
        r.checkError === null ? (r.medianOps === null ? 'ok (not timed)' : 'ok') : `**FAILED**: ${r.checkError.replaceAll('|', '\\|').slice(0, 160)}`;
      const ops = r.medianOps === null ? '—' : fmtOps(r.medianOps);
      const mb = r.mbPerSec === null ? '—' : fmtMB(r.mbPerSec);
      const spread = r.spread === null ? '—' : `${(r.spread * 100).toFixed(0)}%`;
      const ratio = r.ratio
        ? `**${r.ratio.median.toFixed(2)}×** [${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)}]`
        : r.role === 'ours' && r.medianOps !== null
          ? 'absolute only'
          : '';
      out.push(`${head}| ${r.label}${noteRef(r.note)} | ${r.equalWork} | ${check} | ${ops} | ${mb} | ${spread} | ${ratio} |`);
    }
  });
  if (notes.length) {
    out.push('', 'Notes:');
    notes.forEach((n, i) => out.push(`${i + 1}. ${n}`));
  }
  return out.join('\n');
}
