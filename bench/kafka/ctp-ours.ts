/**
 * Our side of bench:kafka's eos part: bench:txn's consume-transform-produce loops
 * (bench/ctp-loop.ts, its explicit-ctp and transactional-ctp modes) run with the
 * compiled client against bench:txn's own broker (bench/txn-broker.ts), so that
 * their ratio sits beside Kafka's exactly-once / at-least-once ratio in one run.
 */
import type * as ClientModule from '../../client/index.js';
import { consumeTransformProduce, percentile, type CtpMode } from '../ctp-loop.js';
import type { LoopResult } from './java.js';

export type OurCtpMode = CtpMode;

export interface OurCtpSpec {
  bootstrap: string;
  input: string;
  output: string;
  /** A fresh share group per run; the broker resets new share groups to the earliest offset. */
  group: string;
  records: number;
  /** max.poll.records. */
  batch: number;
}

/** bench:txn's run limit is a minute; a loaded machine needs more, and a run that stops short fails here instead of reporting fewer records. */
const RUN_LIMIT_MS = 300_000;

export async function consumeTransformProduceOurs(client: typeof ClientModule, mode: OurCtpMode, spec: OurCtpSpec): Promise<LoopResult> {
  const run = await consumeTransformProduce(client, mode, { ...spec, transactionalId: `bench-tx-${spec.group}`, warmupMs: 60_000, runLimitMs: RUN_LIMIT_MS });
  if (run.records < spec.records) throw new Error(`${mode}: ${run.records} of ${spec.records} records of ${spec.input} in ${RUN_LIMIT_MS / 60_000} minutes`);
  return { records: run.records, seconds: run.seconds, p50Ms: percentile(run.latencies, 0.5), p99Ms: percentile(run.latencies, 0.99) };
}
