/**
 * Randomized soak: a three-node cluster (three broker processes behind fault
 * proxies), several consume-transform-produce jobs, and a fault schedule drawn
 * from a seed — kill -9 of a node or a job (restarted later), a cut or
 * black-holed link between two nodes (healed later). After the fault window
 * everything is healed and restarted, the jobs drain the input, and the
 * independent checker must report zero lost and zero duplicated (and no
 * output without its ack, no ack without its output, nothing pending).
 *
 *   npm run chaos -- --runs R --seed S [--records N] [--jobs J] [--faults F] [--window-ms W] [--delivery-count-limit L] [--redelivery] [--verbose] [--keep-data DIR]
 *
 * Run r uses seed S + r, so any failing run can be replayed alone with
 * `--runs 1 --seed <its seed>`. Exit code 1 when any run is not clean.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { check, isClean, summaryLine, type CheckReport } from './checker.js';
import { ChaosCluster, ROOT, spawnJob, spawnManaged, type ManagedProcess } from './harness.js';
import { seedInput } from './seed.js';
import { parseFlags } from './args.js';

/** mulberry32: a small, seedable PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Fault =
  | { at: number; kind: 'kill-node'; node: number; downMs: number }
  | { at: number; kind: 'kill-job'; job: number; downMs: number }
  | { at: number; kind: 'stall-job'; job: number; downMs: number }
  | { at: number; kind: 'cut-link' | 'stall-link'; a: number; b: number; downMs: number };

export interface SoakOptions {
  seed: number;
  records?: number;
  jobs?: number;
  nodes?: number;
  faults?: number;
  /** Faults start within this window after the jobs start. */
  windowMs?: number;
  /** Bound on the drain after the last fault healed. */
  drainMs?: number;
  log?: (line: string) => void;
  echo?: boolean;
  /** Keep the cluster's data here (for `kipgen dump-log`) instead of a temp dir removed at the end. */
  keepDir?: string;
  /** The share group's delivery-count limit (default: the harness's, 10). Low values make the soak archive records. */
  deliveryCountLimit?: number;
  /**
   * 'ctp' (default): consume-transform-produce jobs (chaos/ctp-job.ts).
   * 'checkpoint': Flink-style checkpointing jobs (chaos/checkpoint-job.ts), each
   * with its own checkpoint file kept across its restarts, so kills land
   * between prepare and checkpoint completion, between completion and commit, …
   */
  jobKind?: 'ctp' | 'checkpoint';
  /** The brokers' finalized transaction.version (the clients follow it): 2 (default) or 1. */
  transactionVersion?: number;
  /** Checkpointing jobs enable KIP-939 two-phase commit (their prepared transactions outlive the timeout). */
  twoPhaseCommit?: boolean;
  /**
   * Records come back inside the transaction that holds them: REDELIVERY_STALLS `stall-job`
   * faults black-hole a job's traffic for longer than the share session timeout, so the group times its
   * member out mid-transaction; with checkpointing jobs the record lock is REDELIVERY_LOCK_MS and job 0
   * polls REDELIVERY_POLL_GAP_MS apart (a checkpoint interval longer than the lock). One job only: when
   * every job leaves its records unlocked for part of each checkpoint, the jobs take each other's records,
   * most checkpoints abort, and the delivery-count limit archives up to a third of the input (exactly once
   * still holds; measured over seeds 771203–771212).
   */
  redelivery?: boolean;
}

export const REDELIVERY_LOCK_MS = 400;
export const REDELIVERY_POLL_GAP_MS = 600;
export const REDELIVERY_STALLS = 2;
/** Longer than the chaos share session timeout (2.5 s) plus the broker's 1 s housekeeping. */
export const REDELIVERY_STALL_MS = 4_500;

export interface SoakResult {
  seed: number;
  faults: Fault[];
  report: CheckReport;
  clean: boolean;
  durationMs: number;
  commits: number;
  jobStarts: number;
  /** Records delivered again (delivery count > 1) and transactions aborted or fenced: evidence that the faults bit. */
  redeliveries: number;
  abortedOrFenced: number;
  /** Transactions that failed with CommitFailedError: the member's records came back inside them. */
  commitFailed: number;
  nodeRestarts: number;
}

export function faultSchedule(seed: number, options: { faults: number; windowMs: number; nodes: number; jobs: number }): Fault[] {
  const rand = prng(seed);
  const pick = (n: number) => Math.floor(rand() * n);
  const faults: Fault[] = [];
  for (let i = 0; i < options.faults; i++) {
    const at = Math.round(rand() * options.windowMs);
    const downMs = 300 + Math.round(rand() * 2_000);
    const r = rand();
    if (r < 0.35) faults.push({ at, kind: 'kill-job', job: pick(options.jobs), downMs });
    else if (r < 0.65) faults.push({ at, kind: 'kill-node', node: pick(options.nodes), downMs });
    else {
      const a = pick(options.nodes);
      const b = (a + 1 + pick(options.nodes - 1)) % options.nodes;
      faults.push({ at, kind: rand() < 0.5 ? 'cut-link' : 'stall-link', a, b, downMs });
    }
  }
  return faults.sort((x, y) => x.at - y.at);
}

/**
 * The `stall-job` faults of the redelivery mode, drawn from their own stream of the seed so that the
 * other faults of a seed stay what they are without the mode.
 */
export function redeliveryStalls(seed: number, options: { windowMs: number; jobs: number }): Fault[] {
  const rand = prng(seed ^ 0x5eed_34);
  return Array.from({ length: REDELIVERY_STALLS }, () => ({
    at: Math.round(rand() * options.windowMs),
    kind: 'stall-job' as const,
    job: Math.floor(rand() * options.jobs),
    downMs: REDELIVERY_STALL_MS,
  }));
}

const describeFault = (f: Fault): string =>
  f.kind === 'kill-node'
    ? `@${f.at}ms kill -9 node ${f.node} for ${f.downMs}ms`
    : f.kind === 'kill-job' || f.kind === 'stall-job'
      ? `@${f.at}ms ${f.kind === 'kill-job' ? 'kill -9' : 'stall'} job ${f.job} for ${f.downMs}ms`
      : `@${f.at}ms ${f.kind} ${f.a}<->${f.b} for ${f.downMs}ms`;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const records = options.records ?? 300;
  const jobCount = options.jobs ?? 3;
  const nodes = options.nodes ?? 3;
  const windowMs = options.windowMs ?? 8_000;
  const faults = faultSchedule(options.seed, { faults: options.faults ?? 4, windowMs, nodes, jobs: jobCount });
  if (options.redelivery) faults.push(...redeliveryStalls(options.seed, { windowMs, jobs: jobCount }));
  faults.sort((x, y) => x.at - y.at);
  const checkpointJobs = options.jobKind === 'checkpoint';
  const flavour =
    `${options.jobKind ?? 'ctp'} jobs, transaction.version ${options.transactionVersion ?? 2}${options.twoPhaseCommit ? ', 2PC' : ''}` +
    `${options.redelivery ? ', redelivery' : ''}`;
  log(`soak seed=${options.seed} (${flavour}): ${faults.map(describeFault).join('; ')}`);
  const cluster = await ChaosCluster.start({
    nodes,
    topics: [
      { name: 'in', partitions: 3 },
      { name: 'out', partitions: 3 },
    ],
    echo: options.echo,
    dir: options.keepDir,
    shareGroup: {
      ...(options.deliveryCountLimit !== undefined ? { deliveryCountLimit: options.deliveryCountLimit } : {}),
      ...(options.redelivery && checkpointJobs ? { recordLockDurationMs: REDELIVERY_LOCK_MS } : {}),
    },
    config: { transactionVersion: options.transactionVersion ?? 2, ...(options.twoPhaseCommit ? { transactionTwoPhaseCommitEnable: true } : {}) },
  });
  const jobs: ManagedProcess[] = [];
  /** Each job's client id now (its proxy rules match it). */
  const clientIds: string[] = [];
  const all: ManagedProcess[] = [];
  let jobStarts = 0;
  const startJob = (i: number): void => {
    jobStarts++;
    const j = checkpointJobs
      ? spawnManaged(
          `ckpt${i}-${jobStarts}`,
          [
            '--import',
            'tsx',
            path.join(ROOT, 'chaos/checkpoint-job.ts'),
            '--bootstrap',
            cluster.bootstrap,
            '--group',
            'soak',
            '--input',
            'in',
            '--output',
            'out',
            '--transactional-id',
            `soak-ckpt-${i}`,
            '--checkpoint-file',
            path.join(cluster.dir, `checkpoint-${i}.json`),
            '--client-id',
            `ckpt${i}-${jobStarts}`,
            '--max-poll-records',
            '8',
            '--polls-per-checkpoint',
            '2',
            '--transaction-timeout-ms',
            '3000',
            '--max-runtime-ms',
            '120000',
            ...(options.twoPhaseCommit ? ['--two-phase-commit'] : []),
            ...(options.redelivery && i === 0 ? ['--poll-gap-ms', String(REDELIVERY_POLL_GAP_MS)] : []),
          ],
          {},
          options.echo,
        )
      : spawnJob({
          name: `job${i}-${jobStarts}`,
          bootstrap: cluster.bootstrap,
          group: 'soak',
          input: 'in',
          output: 'out',
          // A restarted job keeps its transactional id, as a real deployment does: it fences its predecessor.
          transactionalId: `soak-tx-${i}`,
          extra: [
            '--max-poll-records',
            '8',
            '--txn-pause-ms',
            '40',
            '--transaction-timeout-ms',
            '3000',
            '--max-block-ms',
            '8000',
            '--request-timeout-ms',
            '3000',
            '--max-runtime-ms',
            '120000',
          ],
          echo: options.echo,
        });
    jobs[i] = j;
    clientIds[i] = checkpointJobs ? `ckpt${i}-${jobStarts}` : `job-job${i}-${jobStarts}`;
    all.push(j);
    // A job that exits on its own (fenced, fatal) is restarted, as a supervisor would.
    void j.exited.then(({ code }) => {
      if (jobs[i] === j && code !== null && code !== 0 && !stopping) setTimeout(() => !stopping && jobs[i] === j && startJob(i), 300);
    });
  };
  let stopping = false;
  const timers: NodeJS.Timeout[] = [];
  try {
    // A third of the input up front, the rest fed in chunks through the fault window, so that faults hit
    // a job in the middle of its work. A chunk that fails (its leader is down) is not retried: the values
    // stay unique, and the checker counts the inputs from the log, whatever made it there.
    const upfront = Math.floor(records / 3);
    await seedInput(cluster.bootstrap, 'in', upfront);
    for (let i = 0; i < jobCount; i++) startJob(i);
    const chunks = Math.max(1, Math.floor(windowMs / 400));
    const chunk = Math.ceil((records - upfront) / chunks);
    const feeding = (async () => {
      for (let next = upfront, k = 0; next < records && k < chunks * 2; k++) {
        await sleep(400);
        const n = Math.min(chunk, records - next);
        await seedInput(cluster.bootstrap, 'in', n, next).catch((error: Error) => log(`feeding ${n} records failed (skipped): ${error.message}`));
        next += n;
      }
    })();
    // Play the schedule.
    const playing = faults.map(
      (f) =>
        new Promise<void>((resolve) => {
          timers.push(
            setTimeout(async () => {
              try {
                if (f.kind === 'kill-node') {
                  if (!cluster.isRunning(f.node)) return resolve();
                  await cluster.killNode(f.node);
                  await sleep(f.downMs);
                  if (!cluster.isRunning(f.node)) await cluster.startNode(f.node);
                } else if (f.kind === 'stall-job') {
                  // Every node's proxy holds the job's traffic (heartbeats included): the group times the member out.
                  const id = `stall-job-${f.job}-${f.at}`;
                  const clientId = clientIds[f.job]!;
                  for (const n of cluster.nodes) n.proxy.addRule({ id, mode: 'stall', clientId });
                  await sleep(f.downMs);
                  for (const n of cluster.nodes) n.proxy.removeRule(id);
                } else if (f.kind === 'kill-job') {
                  const j = jobs[f.job]!;
                  await j.kill9();
                  await sleep(f.downMs);
                  if (jobs[f.job] === j) startJob(f.job);
                } else {
                  cluster.partition(f.a, f.b, f.kind === 'cut-link' ? 'cut' : 'stall');
                  await sleep(f.downMs);
                  cluster.healLink(f.a, f.b);
                }
              } catch (error) {
                log(`fault ${describeFault(f)} failed: ${(error as Error).message}`);
              }
              resolve();
            }, f.at),
          );
        }),
    );
    await Promise.all([...playing, feeding]);
    // Heal everything, make sure every node and every job is up, then drain.
    cluster.healAll();
    for (const n of cluster.nodes) if (!cluster.isRunning(n.nodeId)) await cluster.startNode(n.nodeId);
    for (let i = 0; i < jobCount; i++) if (!jobs[i]!.running) startJob(i);
    const deadline = Date.now() + (options.drainMs ?? 45_000);
    let report: CheckReport | null = null;
    for (;;) {
      report = await check({ bootstrap: cluster.bootstrap, group: 'soak', input: 'in', output: 'out' }).catch(() => null);
      if (report && report.stable && report.pending === 0 && report.outputs >= report.inputs - report.archived && report.lost === 0) break;
      if (Date.now() > deadline) break;
      await sleep(500);
    }
    stopping = true;
    await Promise.all(jobs.map((j) => j.stop(3_000)));
    // Final verdict after the jobs are gone, once open transactions settled.
    report = await check({ bootstrap: cluster.bootstrap, group: 'soak', input: 'in', output: 'out', settleMs: 8_000 });
    const events = all.flatMap((j) => j.events);
    const commits = events.filter((e) => e.event === 'committed' || e.event === 'checkpoint-complete').length;
    const redeliveries = events.filter((e) => e.event === 'polled').reduce((n, e) => n + (e.deliveryCounts as number[]).filter((c) => c > 1).length, 0);
    const abortedOrFenced = events.filter(
      (e) => e.event === 'aborted' || e.event === 'fenced' || (e.event === 'recovered' && String(e.outcome).startsWith('aborted')),
    ).length;
    const commitFailed = events.filter(
      (e) => (e.event === 'aborted' || e.event === 'failed') && typeof e.error === 'string' && e.error.startsWith('CommitFailedError'),
    ).length;
    const nodeRestarts = cluster.nodes.reduce((n, node) => n + node.starts - 1, 0);
    const result: SoakResult = {
      seed: options.seed,
      faults,
      report,
      clean: isClean(report),
      durationMs: Date.now() - started,
      commits,
      jobStarts,
      redeliveries,
      abortedOrFenced,
      commitFailed,
      nodeRestarts,
    };
    log(
      `soak seed=${options.seed} (${flavour}): ${summaryLine(report)} | commits=${commits} aborted/fenced=${abortedOrFenced} commit-failed=${commitFailed} redelivered=${redeliveries} ` +
        `job-starts=${jobStarts} node-restarts=${nodeRestarts} ${result.durationMs}ms${result.clean ? '' : ' ' + JSON.stringify(report.examples)}`,
    );
    return result;
  } finally {
    stopping = true;
    for (const t of timers) clearTimeout(t);
    await Promise.all(all.map((j) => j.kill9()));
    await cluster.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = Object.fromEntries(parseFlags(process.argv.slice(2)));
  const runs = Number(args.runs ?? 3);
  const seed = Number(args.seed ?? 1);
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000 || !Number.isInteger(seed)) {
    process.stderr.write(
      'usage: npm run chaos -- --runs R (1..1000) --seed S [--records N] [--jobs J] [--faults F] [--window-ms W] [--job-kind ctp|checkpoint] [--transaction-version 1|2] [--two-phase-commit] [--redelivery] [--verbose]\n',
    );
    process.exit(2);
  }
  const results: SoakResult[] = [];
  let stop = false;
  process.once('SIGINT', () => (stop = true));
  for (let r = 0; r < runs && !stop; r++) {
    const result = await runSoak({
      seed: seed + r,
      records: args.records ? Number(args.records) : undefined,
      jobs: args.jobs ? Number(args.jobs) : undefined,
      faults: args.faults ? Number(args.faults) : undefined,
      windowMs: args['window-ms'] ? Number(args['window-ms']) : undefined,
      deliveryCountLimit: args['delivery-count-limit'] ? Number(args['delivery-count-limit']) : undefined,
      jobKind: args['job-kind'] === 'checkpoint' ? 'checkpoint' : 'ctp',
      transactionVersion: args['transaction-version'] ? Number(args['transaction-version']) : undefined,
      twoPhaseCommit: args['two-phase-commit'] === 'true',
      redelivery: args.redelivery === 'true',
      log: (line) => process.stdout.write(line + '\n'),
      echo: args.verbose === 'true',
      keepDir: args['keep-data'] ? `${args['keep-data']}/seed-${seed + r}` : undefined,
    });
    results.push(result);
  }
  const bad = results.filter((r) => !r.clean);
  const lost = results.reduce((n, r) => n + r.report.lost, 0);
  const duplicated = results.reduce((n, r) => n + r.report.duplicated, 0);
  process.stdout.write(
    `soak: ${results.length} run(s), seeds ${seed}..${seed + results.length - 1}, lost=${lost} duplicated=${duplicated}, ` +
      `${results.length - bad.length} clean, ${bad.length} not clean${bad.length ? ` (seeds ${bad.map((r) => r.seed).join(', ')})` : ''}\n`,
  );
  process.exit(bad.length === 0 ? 0 : 1);
}
