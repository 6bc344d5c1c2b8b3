// The timed loop, shared by the in-thread runner and the worker threads.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Participant } from './harness.js';

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
export const haveGc = gc !== null;

/**
 * Full GC of this isolate, a pause so that V8's background threads (array-buffer
 * sweeping, concurrent marking) finish with it, and another GC. Run before and after each
 * slice, so that a slice neither inherits garbage nor leaves background work behind.
 */
export async function settle(ms: number): Promise<void> {
  if (!gc) return;
  gc();
  if (ms > 0) {
    await new Promise((r) => setTimeout(r, ms));
    gc();
  }
}

/** Run `p` for ~ms milliseconds in inner batches of n ops; returns ops/s. */
export async function slice(p: Participant, n: number, ms: number, settleMs: number): Promise<number> {
  await settle(settleMs);
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
  const rate = ops / ((t - t0) / 1000);
  await settle(settleMs);
  return rate;
}

/** Ops per inner batch so that one batch takes >= ~2 ms (timer reads stay negligible). */
export async function calibrate(p: Participant): Promise<number> {
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
