/**
 * Our side of bench:kafka's eos part: bench:txn's consume-transform-produce loops
 * (its explicit-ctp and transactional-ctp modes, bench/txn.bench.ts) run with the
 * compiled client against bench:txn's own broker (bench/txn-broker.ts), so that
 * their ratio sits beside Kafka's exactly-once / at-least-once ratio in one run.
 *
 * The loops are written again here rather than imported: txn.bench.ts runs its
 * main() on import and holds its modes for its own measurements. They must stay
 * the same loops; what each step does and what the latency covers is said below,
 * as it is in txn.bench.ts.
 */
import type * as ClientModule from '../../client/index.js';
import type { ShareConsumerRecord } from '../../client/index.js';
import type { LoopResult } from './java.js';

export type OurCtpMode = 'explicit-ctp' | 'transactional-ctp';

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

/** bench:txn's RUN_LIMIT_MS is a minute; a loaded machine needs more, and a run that stops short fails here instead of reporting fewer records. */
const RUN_LIMIT_MS = 300_000;

function percentile(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/**
 * explicit-ctp: idempotent producer, await the sends, then acknowledge each record and commitSync — latency = sends + commitSync.
 * transactional-ctp (KIP-1289 §2.1): begin, the sends, sendShareAcksToTransaction, commitTransaction — latency = sendShareAcks + commit.
 * Throughput = records committed / wall time from the first poll's return to the last commit.
 */
export async function consumeTransformProduceOurs(client: typeof ClientModule, mode: OurCtpMode, spec: OurCtpSpec): Promise<LoopResult> {
  const common = { bootstrapServers: spec.bootstrap, logger: null } as const;
  const transactional = mode === 'transactional-ctp';
  const consumer = new client.KafkaShareConsumer({
    ...common,
    groupId: spec.group,
    acknowledgementMode: transactional ? 'transactional' : 'explicit',
    maxPollRecords: spec.batch,
    fetchMaxWaitMs: 100,
  });
  const producer = new client.KafkaProducer({
    ...common,
    ...(transactional ? { transactionalId: `bench-tx-${spec.group}` } : {}),
    lingerMs: 0,
    metricsRegistry: null,
  });
  const latencies: number[] = [];
  let done = 0;
  try {
    consumer.subscribe([spec.input]);
    if (transactional) await producer.initTransactions();
    // As bench:txn: join the group and see the first records before the clock starts.
    let pending: ShareConsumerRecord[] = [];
    const warmDeadline = Date.now() + 60_000;
    while (pending.length === 0 && Date.now() < warmDeadline) pending = await consumer.poll(200);
    const started = performance.now();
    const limit = Date.now() + RUN_LIMIT_MS;
    while (done < spec.records && Date.now() < limit) {
      const records = pending.length > 0 ? pending : await consumer.poll(200);
      pending = [];
      if (records.length === 0) continue;
      if (transactional) {
        producer.beginTransaction();
        const sends = records.map((r) => producer.send({ topic: spec.output, key: r.key, value: r.value }));
        const c0 = performance.now();
        await producer.sendShareAcksToTransaction(client.ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
        await producer.commitTransaction();
        await Promise.all(sends);
        latencies.push(performance.now() - c0);
      } else {
        const t0 = performance.now();
        await Promise.all(records.map((r) => producer.send({ topic: spec.output, key: r.key, value: r.value })));
        for (const r of records) consumer.acknowledge(r, 'accept');
        await consumer.commitSync();
        latencies.push(performance.now() - t0);
      }
      done += records.length;
    }
    const ms = performance.now() - started;
    if (done < spec.records) throw new Error(`${mode}: ${done} of ${spec.records} records of ${spec.input} in ${RUN_LIMIT_MS / 60_000} minutes`);
    latencies.sort((a, b) => a - b);
    return { records: done, seconds: ms / 1000, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
  } finally {
    await consumer.close(2_000).catch(() => {});
    await producer.close(2_000).catch(() => {});
  }
}
