// npm run bench:codec [-- options]
//
// Compares OUR generated codecs (../generated/index.js, see ours.ts) with the hand-written
// protocol code of kafkajs 2.2.4 and @platformatic/kafka 2.12.1, each comparison in fresh
// child processes (--processes; --one-process runs them all in this process), on:
//   1. ProduceRequest, 100 partitions of pre-built RecordBatch v2 (encode to one buffer, and
//      to zero-copy chunks against platformatic's Writer chunk list), and the same from
//      message objects (each peer's own Produce encoder builds the batches)
//   2. MetadataResponse, 1,000 partitions (decode; encode: ours only, no peer has one)
//   3. FetchResponse carrying 1 MiB of records (decode)
//   4. FindCoordinator / EndTxn / InitProducerId requests with header + int32 size (encode)
//   5. TxnShareAcknowledgeRequest (KIP-1289, apiKey 96), 1,000 ack batches (ours only)
//   6. Compression: compress and decompress 1 MiB of records per codec (gzip, snappy, lz4,
//      zstd), the runtime's codecs against @platformatic/kafka's (see compression.ts)
//   7. CRC-32C of the same 1 MiB: the JavaScript fallback (runtime/crc32c.ts, used when the
//      native binding is not installed) against the native @node-rs/crc32
// Each peer runs at the highest version it supports; ours runs at that same version.
// Ours is the JavaScript tsc makes of runtime/ and generated/ (what the packages ship), compiled
// into node_modules/.cache at the start of the run and removed at its end (our-build.ts).
//
// Options:
//   --peers-only        run without generated/ (peers and their checks only)
//   --rounds N          timed rounds per comparison and process (default 5)
//   --processes N       fresh processes per comparison, rounds joined (default 3; see below)
//   --round-ms N        ms per participant per round (default 200)
//   --warmup-ms N       warm-up per participant (default 1000)
//   --settle-ms N       pause after the full GCs around each slice (default 25; 0 = none)
//   --filter REGEX      only comparisons whose "workload api vN op" matches
//   --check-only        equal-work checks only, no timing
//   --json FILE         also write the raw results as JSON
//   --ours PATH         load our codecs from another module instead of the compiled generated/index.js
//   --ours-tree DIR     compile and measure another checkout's runtime/ and generated/ (e.g. a
//                       worktree of an older commit, for before/after figures)
//   --baseline-tree DIR compile another checkout's runtime/ and generated/ as well and run each of
//                       our rows twice in every round, this tree's and the baseline's ("@ baseline"):
//                       before/after ratios taken round by round (see bench/README.md)
//   --source            measure this checkout's TypeScript through tsx instead of tsc's output
//                       (tsx's module wrapper costs a getter call per imported binding; see
//                       our-build.ts)
//   --no-selfcheck      skip checking bench/reference.ts against Kafka's conformance vectors
//   --no-malloc-pin     do not re-run under a fixed glibc mmap threshold (see below)
//   --max-foreign X     redo a timed slice when other processes used more than X (0-1) of
//                       the machine's CPU during it, up to 4 times (default 0.15; 'off')
//   --no-isolate        run every participant in the main thread (default: one worker
//                       thread, i.e. one V8 isolate, per participant; see harness.ts)
//   --check-in-timed-isolate  time each participant in the worker that ran its equal-work
//                       check, as the bench did before December 2026 (default: a fresh
//                       worker; see harness.ts, "Check apart")
//   --one-process       run every comparison in this process (default: fresh child
//                       processes per comparison; see below)
//
// glibc malloc: Node allocates ArrayBuffer backing stores with calloc. Outputs above
// glibc's mmap threshold (128 KiB at start, raised dynamically up to 32 MiB each time a
// larger mmapped chunk is freed) are mmapped and page-faulted afresh on every op. So the
// speed of a 250 KiB encode depended on what an EARLIER participant had allocated and
// freed: measured alone, ours ran 15k ops/s; right after kafkajs, 40k. To give every
// participant the same allocator, the bench re-runs itself with GLIBC_TUNABLES pinning
// mmap_threshold at 32 MiB (the ceiling glibc drifts to in a long-running process).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_MARK, foreignStats, renderMarkdown, runComparisons, summarize, type ComparisonResult } from './harness.js';
import { loadOurs } from './ours.js';
import { BASELINE_JS_ENV, OURS_JS_ENV, compileOurs } from './our-build.js';
import { PEER_VERSIONS } from './peers/versions.js';
import { makePlan, W } from './plan.js';
import { runReferenceSelfcheck } from './reference-selfcheck.js';

function parseArgs(argv: string[]) {
  const o = {
    peersOnly: false,
    rounds: 5,
    processes: 3,
    roundMs: 200,
    warmupMs: 1000,
    filter: null as RegExp | null,
    checkOnly: false,
    json: null as string | null,
    selfcheck: true,
    ours: undefined as string | undefined,
    oursTree: undefined as string | undefined,
    baselineTree: undefined as string | undefined,
    source: false,
    settleMs: 25,
    mallocPin: true,
    isolate: true,
    checkApart: true,
    onePerProcess: true,
    maxForeign: 0.15 as number | null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--peers-only') o.peersOnly = true;
    else if (a === '--rounds') o.rounds = Math.max(1, Number(val()));
    else if (a === '--processes') o.processes = Math.max(1, Number(val()));
    else if (a === '--round-ms') o.roundMs = Math.max(10, Number(val()));
    else if (a === '--warmup-ms') o.warmupMs = Math.max(0, Number(val()));
    else if (a === '--filter') o.filter = new RegExp(val(), 'i');
    else if (a === '--check-only') o.checkOnly = true;
    else if (a === '--json') o.json = val();
    else if (a === '--no-selfcheck') o.selfcheck = false;
    else if (a === '--ours') o.ours = val();
    else if (a === '--ours-tree') o.oursTree = val();
    else if (a === '--source') o.source = true;
    else if (a === '--baseline-tree') o.baselineTree = val();
    else if (a === '--settle-ms') o.settleMs = Math.max(0, Number(val()));
    else if (a === '--no-malloc-pin') o.mallocPin = false;
    else if (a === '--no-isolate') o.isolate = false;
    else if (a === '--check-in-timed-isolate') o.checkApart = false;
    else if (a === '--one-process') o.onePerProcess = false;
    else if (a === '--max-foreign') o.maxForeign = val() === 'off' ? null : Number(argv[i]);
    else if (a === '--help' || a === '-h') {
      console.log(
        'options: --peers-only --rounds N --processes N --round-ms N --warmup-ms N --filter REGEX --check-only --settle-ms N --json FILE --ours PATH --ours-tree DIR --baseline-tree DIR --source --no-selfcheck --no-malloc-pin --no-isolate --check-in-timed-isolate --one-process --max-foreign X|off',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const log = (s: string) => process.stderr.write(s + '\n');

// Interrupted (Ctrl-C, kill): leave through process.exit, so that the 'exit' handlers below
// remove the compiled trees and the results folder; a signal's default action skips them.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.once(signal, () => process.exit(code));

const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864';
if (opts.mallocPin && process.env.KIPGEN_BENCH_MALLOC_PINNED !== '1') {
  const env: NodeJS.ProcessEnv = { ...process.env, KIPGEN_BENCH_MALLOC_PINNED: '1' };
  env.GLIBC_TUNABLES = [process.env.GLIBC_TUNABLES, MALLOC_TUNABLES].filter(Boolean).join(':');
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env });
  process.exit(child.status ?? 1);
}
const mallocNote = process.env.KIPGEN_BENCH_MALLOC_PINNED === '1' ? `GLIBC_TUNABLES=${MALLOC_TUNABLES}` : 'glibc malloc defaults (--no-malloc-pin)';

// ------------------------------------------------------------------ ours: compiled once, by the first process
if (!opts.peersOnly && !opts.source && process.env[OURS_JS_ENV] === undefined) {
  const tree = opts.oursTree ?? fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
  const t0 = performance.now();
  const dir = compileOurs(tree);
  log(`compiled ${tree}'s runtime/ and generated/ with tsc in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  process.env[OURS_JS_ENV] = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  if (opts.baselineTree !== undefined) {
    const base = compileOurs(opts.baselineTree);
    log(`compiled the baseline ${opts.baselineTree}`);
    process.env[BASELINE_JS_ENV] = base;
    process.on('exit', () => rmSync(base, { recursive: true, force: true }));
  }
}
if (opts.baselineTree !== undefined && opts.source) throw new Error('--baseline-tree measures compiled trees; it does not go with --source');
const oursBuild = opts.peersOnly
  ? ''
  : (process.env[OURS_JS_ENV] ? `tsc's JavaScript of ${opts.oursTree ?? 'this checkout'}` : 'TypeScript through tsx (--source)') +
    (opts.baselineTree ? `; rows marked "@ baseline": ${opts.baselineTree}, compiled alike` : '');

// ------------------------------------------------------------------ ours (may not exist yet)
const loaded = opts.peersOnly ? ({ ok: false, reason: '--peers-only' } as const) : await loadOurs(opts.ours);
if (!loaded.ok && !opts.peersOnly) {
  console.error(`Our codecs are not available: ${loaded.reason}.\nRun the peers alone with: npm run bench:codec -- --peers-only`);
  process.exit(2);
}
const ours = loaded.ok && !opts.peersOnly;

// Fresh processes per comparison. A comparison run after others in the same process was
// measured slower than the same comparison run alone: @platformatic/kafka's Metadata v12
// decode at 835 ops/s after the Produce comparisons against 1,700 alone, ours at 12k
// against 17k. Whatever the earlier comparisons leave behind (the main isolate's heap,
// glibc arenas grown by 250 KiB buffers, V8's shared background threads) then weighs on
// every later participant. So by default the parent runs each comparison in a fresh
// child process (KIPGEN_BENCH_COMPARISON = its index in the plan) and merges the results.
// And it does so --processes times: on this machine a process now and then runs one
// participant at half its usual speed for its whole life (seen for ours and for both
// peers, with no other load), so one process's rounds can all be off together. Rounds of
// all the processes are joined before the medians are taken.
const childIndex = process.env.KIPGEN_BENCH_COMPARISON === undefined ? null : Number(process.env.KIPGEN_BENCH_COMPARISON);
const childResultFile = process.env.KIPGEN_BENCH_RESULT_FILE;

// ------------------------------------------------------------------ reference self-check
if (opts.selfcheck && childIndex === null) {
  const sc = runReferenceSelfcheck();
  if (!sc.ok) {
    console.error(`bench/reference.ts disagrees with Kafka's conformance vectors:\n${sc.failures.slice(0, 10).join('\n')}`);
    process.exit(1);
  }
  log(sc.skipped ? `reference self-check skipped: ${sc.skipped}` : `reference self-check: ${sc.checked} Kafka conformance vectors reproduced`);
}

// ------------------------------------------------------------------ plan + run
// Other processes' CPU during the run (Linux): busy jiffies of the machine minus ours.
const busyJiffies = (): number | null => {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return f.reduce((a, b) => a + b, 0) - f[3]! - (f[4] ?? 0); // all but idle and iowait
  } catch {
    return null;
  }
};
const busy0 = busyJiffies();
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
const baseline = opts.baselineTree !== undefined;
const allPlans = makePlan({ ours: ours, oursPath: opts.ours, baseline, filter: opts.filter });
const harnessOptions = {
  rounds: opts.rounds,
  roundMs: opts.roundMs,
  warmupMs: opts.warmupMs,
  settleMs: opts.settleMs,
  checkOnly: opts.checkOnly,
  isolate: opts.isolate,
  checkApart: opts.checkApart,
  planForWorkers: { ours, oursPath: opts.ours, baseline, filter: opts.filter?.source ?? null },
  maxForeign: opts.maxForeign,
  log,
};
let results: ComparisonResult[];
/** CPU used by this process's waited-for children (cutime + cstime in /proc/self/stat): ours, not foreign. */
const childrenCpuSeconds = (): number => {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
};
let childCpuS = 0;
if (childIndex !== null) {
  results = await runComparisons([allPlans[childIndex]!], harnessOptions);
  writeFileSync(childResultFile!, JSON.stringify({ results, foreignStats }));
  process.exit(0);
} else if (opts.onePerProcess && !opts.checkOnly) {
  results = [];
  const dir = mkdtempSync(join(tmpdir(), 'kipgen-bench-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true })); // on success, error or interruption alike
  for (let i = 0; i < allPlans.length; i++) {
    let joined: ComparisonResult | null = null;
    for (let k = 0; k < opts.processes; k++) {
      const file = join(dir, `${i}-${k}.json`);
      const env = { ...process.env, KIPGEN_BENCH_COMPARISON: String(i), KIPGEN_BENCH_RESULT_FILE: file };
      const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: ['ignore', 'ignore', 'inherit'], env });
      if (child.status !== 0) throw new Error(`the child process for comparison ${i} exited with ${child.status ?? child.signal}`);
      const out = JSON.parse(readFileSync(file, 'utf8')) as { results: ComparisonResult[]; foreignStats: typeof foreignStats };
      for (const key of Object.keys(foreignStats) as Array<keyof typeof foreignStats>) foreignStats[key] += out.foreignStats[key];
      const res = out.results[0]!;
      if (joined === null) {
        joined = res;
        continue;
      }
      for (const row of res.rows) {
        const into = joined.rows.find((r) => r.label === row.label);
        if (!into) joined.rows.push(row);
        else if (row.checkError !== null) into.checkError ??= row.checkError;
        else into.opsPerRound.push(...row.opsPerRound);
      }
    }
    summarize(joined!);
    results.push(joined!);
  }
  childCpuS = childrenCpuSeconds();
} else {
  results = await runComparisons(allPlans, harnessOptions);
}
const W1 = W.produce();
const W1b = W.produceSmall();
const W2 = W.metadata();
const W3 = W.fetch();
const W5 = W.txnShareAck();

const busy1 = busyJiffies();
const ownCpuS = (() => {
  const u = process.cpuUsage(cpu0);
  return (u.user + u.system) / 1e6 + childCpuS;
})();
const wallS = (performance.now() - wall0) / 1000;
const foreign = busy0 === null || busy1 === null ? null : Math.max(0, (busy1 - busy0) / 100 - ownCpuS) / (wallS * cpus().length);
const cpu = cpus();
const header = [
  `## Codec benchmark${ours ? '' : ' — peers only (ours not measured' + (loaded.ok ? ')' : `: ${loaded.reason})`)}`,
  '',
  `- ${new Date().toISOString()}, Node ${process.version} (V8 ${process.versions.v8}), ${cpu[0]?.model ?? 'cpu?'} × ${cpu.length}`,
  `- kafkajs ${PEER_VERSIONS.kafkajs.libVersion}, @platformatic/kafka ${PEER_VERSIONS.platformatic.libVersion}${oursBuild ? `; ours: ${oursBuild}` : ''}; ${mallocNote}`,
  `- ${opts.onePerProcess ? `each comparison in ${opts.processes} fresh process${opts.processes === 1 ? '' : 'es'} in turn; ` : 'all comparisons in one process (--one-process); '}` +
    `${opts.isolate ? `each participant in its own worker thread (own V8 isolate), one running at a time, ${opts.checkApart ? 'timed in a fresh one after its check in another' : 'timed in the one that ran its check (--check-in-timed-isolate)'}` : 'all participants in the main thread (--no-isolate)'}; full GC + ${opts.settleMs} ms settle around each slice`,
  `- ${opts.checkOnly ? 'checks only' : `${opts.onePerProcess ? `${opts.processes} processes × ` : ''}${opts.rounds} interleaved rounds × ${opts.roundMs} ms per participant, ${opts.warmupMs} ms warm-up per process; figures are medians over all rounds; MB = 10^6 wire bytes`}`,
  `- workloads: Produce 100 partitions × ${W1.recordsPerBatch} records (${W1.batchBytes.toLocaleString('en-US')} B of batches), small batches 100 × ${W1b.recordsPerBatch} (${W1b.batchBytes.toLocaleString('en-US')} B); ` +
    `Metadata ${W2.partitions.toLocaleString('en-US')} partitions; Fetch ${W3.recordBytes.toLocaleString('en-US')} B of records (${W3.batchCount} batches, ${W3.recordCount} records); ` +
    `TxnShareAcknowledge ${W5.batches.toLocaleString('en-US')} ack batches; ` +
    `Compression ${W.compression().records.length.toLocaleString('en-US')} B of JSON order records (MB/s counts uncompressed bytes, compress and decompress alike)`,
  `- run took ${wallS.toFixed(0)} s; other processes used ${foreign === null ? 'an unknown share' : `${(foreign * 100).toFixed(0)}%`} of the machine's CPU meanwhile` +
    (foreignStats.slices
      ? `; timed slices: ${foreignStats.slices} kept (mean foreign load ${((foreignStats.sumShare / foreignStats.slices) * 100).toFixed(0)}%), ${foreignStats.redone} redone for foreign load > ${opts.maxForeign === null ? 'off' : `${opts.maxForeign * 100}%`}` +
        (foreignStats.acceptedNoisy ? `, **${foreignStats.acceptedNoisy} kept although noisy: figures may be off**` : '')
      : ''),
  `- ratio = ours ops/s ÷ peer ops/s in the same round (>1: ours faster); "equal work" says whether an ours row does what the peer row does`,
];
const md = renderMarkdown(results, header);
console.log(md);
if (baseline) console.log(`\n${renderBaselineRatios(results)}`);
if (opts.json) writeFileSync(opts.json, JSON.stringify({ header, options: { ...opts, filter: opts.filter?.source ?? null }, results }, null, 2));

const failed = results.flatMap((r) => r.rows).filter((r) => r.checkError !== null);
if (failed.length) {
  console.error(`\n${failed.length} participant(s) failed the equal-work check and were not timed.`);
  process.exitCode = 1;
}

/** Each ours row against its "@ baseline" twin: the median of per-round ratios (same round, same machine conditions). */
function renderBaselineRatios(all: ComparisonResult[]): string {
  const lines = [
    '### This tree ÷ baseline, per round',
    '',
    '| workload | API version | op | participant | this tree ops/s | baseline ops/s | ratio (median [min–max]) |',
    '|---|---|---|---|---|---|---|',
  ];
  const ops = (n: number | null | undefined) => (n == null ? '—' : Math.round(n).toLocaleString('en-US'));
  for (const c of all) {
    for (const row of c.rows) {
      const ratio = row.baselineRatio;
      if (!ratio) continue;
      const base = c.rows.find((r) => r.label === `${row.label}${BASELINE_MARK}`);
      lines.push(
        `| ${c.workload} | ${c.api} v${c.version} | ${c.op} | ${row.label} | ${ops(row.medianOps)} | ${ops(base?.medianOps)} | **${ratio.median.toFixed(3)}** [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}] |`,
      );
    }
  }
  return lines.join('\n');
}
