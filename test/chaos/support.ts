/**
 * Shared helpers of the chaos tests: clusters of real broker processes behind
 * fault proxies (chaos/harness.ts), job processes (chaos/ctp-job.ts), the
 * independent checker (chaos/checker.ts), and bounded waits.
 */
import { afterEach } from 'vitest';
import { check, isClean, summaryLine, type CheckReport } from '../../chaos/checker.js';
import { ChaosCluster, spawnJob, type ChaosClusterOptions, type JobOptions, type ManagedProcess } from '../../chaos/harness.js';
import { seedInput } from '../../chaos/seed.js';

export { check, isClean, summaryLine };
export const LOCK_MS = 1_500;
export const TXN_TIMEOUT_MS = 3_000;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

export async function cluster(options: Partial<ChaosClusterOptions> & { topics: ChaosClusterOptions['topics'] }): Promise<ChaosCluster> {
  const c = await ChaosCluster.start({ nodes: 1, echo: process.env.KIPGEN_CHAOS_ECHO === '1', ...options });
  cleanups.push(() => c.close());
  return c;
}

export function job(c: ChaosCluster, options: Partial<JobOptions> & { name: string; transactionalId: string }, extra: string[] = []): ManagedProcess {
  const j = spawnJob({
    bootstrap: c.bootstrap,
    group: 'g',
    input: 'in',
    output: 'out',
    echo: process.env.KIPGEN_CHAOS_ECHO === '1',
    ...options,
    extra: ['--transaction-timeout-ms', String(TXN_TIMEOUT_MS), '--max-runtime-ms', '90000', ...(options.extra ?? []), ...extra],
  });
  cleanups.push(() => j.kill9());
  return j;
}

export { seedInput };

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Polls `fn` until it returns a truthy value (bounded by `ms`). */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, ms: number, what: string, everyMs = 200): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(everyMs);
  }
}

/** Waits until every input record has exactly-once output and committed ack (the checker is clean and stable). */
export async function awaitComplete(c: ChaosCluster, ms: number, options: { group?: string; input?: string; output?: string } = {}): Promise<CheckReport> {
  let last = null as CheckReport | null;
  try {
    return await eventually(
      async () => {
        last = await check({ bootstrap: c.bootstrap, group: options.group ?? 'g', input: options.input ?? 'in', output: options.output ?? 'out' });
        return last.stable && last.outputs >= last.inputs && last.pending === 0 && last.lost === 0 ? last : null;
      },
      ms,
      'every input processed exactly once',
      300,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nlast: ${last ? summaryLine(last) + ' ' + JSON.stringify(last.examples) : 'none'}`);
  }
}

/** Waits until every record of `ids` has exactly one visible output and a committed ack (a transaction applied exactly once). */
export async function awaitApplied(c: ChaosCluster, group: string, ids: readonly string[], ms: number, what: string): Promise<CheckReport> {
  return eventually(
    async () => {
      const r = await snapshot(c, group);
      return ids.every((id) => r.verdicts.get(id)?.outputs === 1 && r.verdicts.get(id)?.state === 'acknowledged') ? r : null;
    },
    ms,
    what,
  );
}

/** The checker's view now (no waiting). */
export function snapshot(c: ChaosCluster, group = 'g'): Promise<CheckReport> {
  return check({ bootstrap: c.bootstrap, group, input: 'in', output: 'out' });
}

export type JobEvent = Record<string, any> & { event: string; at: number };

/** Every (job, event) with a `sources` list containing one of `sources`. */
export function deliveriesOf(jobs: ManagedProcess[], sources: string[], event = 'polled'): Array<{ job: string; e: JobEvent }> {
  const wanted = new Set(sources);
  const out: Array<{ job: string; e: JobEvent }> = [];
  for (const j of jobs) for (const e of j.events) if (e.event === event && (e.sources as string[]).some((s) => wanted.has(s))) out.push({ job: j.name, e });
  return out;
}

/** Final assertion helper: a one-line summary plus the examples, for failure messages. */
export function explain(report: CheckReport): string {
  return `${summaryLine(report)} ${JSON.stringify(report.examples)}`;
}
