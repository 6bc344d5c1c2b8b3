// Benchmark harness: equal-work checks, interleaved timed rounds, Markdown report.
//
// Method. For each comparison (one workload at one API version) the participants (ours
// and the peer that supports that version) first pass an equal-work check, untimed:
// encoders must produce exactly the reference bytes (bench/reference.ts, itself checked
// against Kafka's conformance vectors), decoders must give a value that normalizes to the
// canonical one. A participant failing its check is not timed. Then each participant is
// calibrated (ops per inner batch so that a batch takes >= ~2 ms) and warmed up, and the
// comparison runs R rounds; in every round each participant runs for T ms, in an order
// rotated from round to round, after a full GC when one can be had. Reported: median
// ops/s over rounds, the MB/s it implies (MB = 10^6 bytes of wire bytes produced or
// consumed), the spread (max-min)/median, and for ours the median of the per-round
// ratios ours/peer with their min-max (same round = same machine conditions).
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DecodeCase, EncodeCase, Lib } from './types.js';
import { bytesDiff, valueDiff } from './normalize.js';

export interface Participant {
  lib: Lib;
  role: 'ours' | 'peer';
  label: string;
  version: number;
  async: boolean;
  op: () => unknown;
  /** Untimed equal-work check: null when it passes, else what differs. */
  check: () => Promise<string | null>;
  /** For ours rows: does this row do the same work as the peer row? ('yes' or 'no: why'). */
  equalWork: string;
  note?: string;
}

export interface Comparison {
  workload: string;
  api: string;
  version: number;
  op: 'encode' | 'decode';
  /** Wire bytes produced (encode) or consumed (decode) per op. */
  bytesPerOp: number;
  participants: Participant[];
  /** Shown instead of figures when nothing runs (e.g. ours-only workload in --peers-only). */
  skipped?: string;
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
}

export interface ComparisonResult {
  workload: string;
  api: string;
  version: number;
  op: 'encode' | 'decode';
  bytesPerOp: number;
  skipped?: string;
  rows: ParticipantResult[];
}

export interface HarnessOptions {
  rounds: number;
  roundMs: number;
  warmupMs: number;
  checkOnly: boolean;
  log: (line: string) => void;
}

// ------------------------------------------------------------------ participants from cases

export function encodeParticipant(
  lib: Lib,
  role: 'ours' | 'peer',
  label: string,
  c: EncodeCase,
  expected: Uint8Array,
  equalWork = role === 'peer' ? '—' : 'yes',
): Participant {
  return {
    lib,
    role,
    label,
    version: c.version,
    async: c.async,
    op: c.encode,
    check: async () => {
      const got = await c.encode();
      if (!(got instanceof Uint8Array)) return `encode returned ${typeof got}, not a Uint8Array`;
      return bytesDiff(expected, got);
    },
    equalWork,
    note: c.note,
  };
}

export function decodeParticipant(
  lib: Lib,
  role: 'ours' | 'peer',
  label: string,
  c: DecodeCase,
  input: Buffer,
  canonical: unknown,
  equalWork = role === 'peer' ? '—' : 'yes',
): Participant {
  return {
    lib,
    role,
    label,
    version: c.version,
    async: c.async,
    op: () => c.decode(input),
    check: async () => valueDiff(canonical, c.normalize(await c.decode(input))),
    equalWork,
    note: c.note,
  };
}

// ------------------------------------------------------------------ timing

let sink: unknown; // keeps results alive so no call can be dropped
export const getSink = () => sink;

const gc: (() => void) | null = (() => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
})();

async function slice(p: Participant, n: number, ms: number): Promise<number> {
  gc?.();
  const op = p.op;
  const t0 = performance.now();
  const end = t0 + ms;
  let t = t0;
  let ops = 0;
  if (p.async) {
    do {
      for (let i = 0; i < n; i++) sink = await op();
      ops += n;
      t = performance.now();
    } while (t < end);
  } else {
    do {
      for (let i = 0; i < n; i++) sink = op();
      ops += n;
      t = performance.now();
    } while (t < end);
  }
  return ops / ((t - t0) / 1000);
}

async function calibrate(p: Participant): Promise<number> {
  let n = 1;
  for (;;) {
    const t0 = performance.now();
    if (p.async) for (let i = 0; i < n; i++) sink = await p.op();
    else for (let i = 0; i < n; i++) sink = p.op();
    const dt = performance.now() - t0;
    if (dt >= 2 || n >= 1 << 20) return n;
    n *= dt < 0.25 ? 8 : 2;
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runComparisons(comps: Comparison[], opts: HarnessOptions): Promise<ComparisonResult[]> {
  const results: ComparisonResult[] = [];
  for (const comp of comps) {
    const title = `${comp.workload} — ${comp.api} v${comp.version} ${comp.op}`;
    const res: ComparisonResult = { ...comp, rows: [] };
    delete (res as Partial<Comparison>).participants;
    results.push(res);
    if (comp.skipped || comp.participants.length === 0) {
      res.skipped = comp.skipped ?? 'no participant';
      opts.log(`skip  ${title}: ${res.skipped}`);
      continue;
    }
    // 1. equal-work checks
    const runnable: Participant[] = [];
    const byP = new Map<Participant, ParticipantResult>();
    for (const p of comp.participants) {
      let err: string | null;
      try {
        err = await p.check();
      } catch (e) {
        err = `threw: ${(e as Error)?.stack?.split('\n').slice(0, 3).join(' | ') ?? e}`;
      }
      const r: ParticipantResult = {
        lib: p.lib,
        role: p.role,
        label: p.label,
        equalWork: p.equalWork,
        note: p.note,
        checkError: err,
        opsPerRound: [],
        medianOps: null,
        mbPerSec: null,
        spread: null,
        ratio: null,
      };
      res.rows.push(r);
      byP.set(p, r);
      opts.log(`check ${title} / ${p.label}: ${err === null ? 'ok' : 'FAILED — ' + err}`);
      if (err === null) runnable.push(p);
    }
    if (opts.checkOnly || runnable.length === 0) continue;

    // 2. calibrate + warm up
    const batch = new Map<Participant, number>();
    for (const p of runnable) {
      batch.set(p, await calibrate(p));
      await slice(p, batch.get(p)!, opts.warmupMs);
    }
    // 3. interleaved rounds
    for (let round = 0; round < opts.rounds; round++) {
      const k = round % runnable.length;
      const order = [...runnable.slice(k), ...runnable.slice(0, k)];
      for (const p of order) byP.get(p)!.opsPerRound.push(await slice(p, batch.get(p)!, opts.roundMs));
    }
    // 4. stats
    const peer = runnable.find((p) => p.role === 'peer');
    for (const p of runnable) {
      const r = byP.get(p)!;
      r.medianOps = median(r.opsPerRound);
      r.mbPerSec = (r.medianOps * comp.bytesPerOp) / 1e6;
      r.spread = (Math.max(...r.opsPerRound) - Math.min(...r.opsPerRound)) / r.medianOps;
      if (p.role === 'ours' && peer) {
        const pr = byP.get(peer)!.opsPerRound;
        const ratios = r.opsPerRound.map((x, i) => x / pr[i]!);
        r.ratio = { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
      }
      opts.log(`time  ${title} / ${p.label}: ${fmtOps(r.medianOps)} ops/s`);
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
      const check = r.checkError === null ? (r.medianOps === null ? 'ok (not timed)' : 'ok') : `**FAILED**: ${r.checkError.replaceAll('|', '\\|').slice(0, 160)}`;
      const ops = r.medianOps === null ? '—' : fmtOps(r.medianOps);
      const mb = r.mbPerSec === null ? '—' : fmtMB(r.mbPerSec);
      const spread = r.spread === null ? '—' : `${(r.spread * 100).toFixed(0)}%`;
      const ratio = r.ratio ? `**${r.ratio.median.toFixed(2)}×** [${r.ratio.min.toFixed(2)}–${r.ratio.max.toFixed(2)}]` : r.role === 'ours' && r.medianOps !== null ? 'absolute only' : '';
      out.push(`${head}| ${r.label}${noteRef(r.note)} | ${r.equalWork} | ${check} | ${ops} | ${mb} | ${spread} | ${ratio} |`);
    }
  });
  if (notes.length) {
    out.push('', 'Notes:');
    notes.forEach((n, i) => out.push(`${i + 1}. ${n}`));
  }
  return out.join('\n');
}
