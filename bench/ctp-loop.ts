/**
 * The consume-transform-produce loops that bench:txn (its explicit-ctp and
 * transactional-ctp modes, bench/txn.bench.ts) and bench:kafka's eos part
 * (bench/kafka/ctp-ours.ts) both time: one module, so the two benches measure
 * the same loop. The client module is a parameter because bench:kafka runs the
 * compiled client and bench:txn the sources.
 *
 *  - explicit-ctp: idempotent producer, await the sends, then acknowledge each
 *    record and commitSync — latency = the sends + commitSync.
 *  - transactional-ctp (KIP-1289 §2.1): begin, the sends, sendShareAcksToTransaction,
 *    commitTransaction — latency = sendShareAcks + commit (the sends are
 *    awaited after the commit, which flushes them).
 * Throughput = records committed / wall time from the first poll's return to the last commit.
 */
import type * as ClientModule from '../client/index.js';
import type { ShareConsumerRecord } from '../client/index.js';

export type CtpMode = 'explicit-ctp' | 'transactional-ctp';

export interface CtpSpec {
  bootstrap: string;
  input: string;
  output: string;
  /** A fresh share group per run; the broker resets new share groups to the earliest offset. */
  group: string;
  /** The transactional producer's id (transactional-ctp). */
  transactionalId: string;
  records: number;
  /** max.poll.records. */
  batch: number;
  /** How long to wait for the first records (joining the group) before the clock starts. */
  warmupMs: number;
  /** The loop stops here even if fewer records were committed; the caller decides whether that fails. */
  runLimitMs: number;
  /** retry.backoff.ms of the consumer and producer; the client's default when absent. */
  retryBackoffMs?: number;
}

export interface CtpRun {
  /** Records committed. */
  records: number;
  /** Commits (one per poll that returned records). */
  commits: number;
  seconds: number;
  /** One latency sample per commit, in ms, sorted. */
  latencies: number[];
}

/** The nearest-rank percentile (`p` in 0..1) of sorted samples; null when there are none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export async function consumeTransformProduce(client: typeof ClientModule, mode: CtpMode, spec: CtpSpec): Promise<CtpRun> {
  const common = {
    bootstrapServers: spec.bootstrap,
    logger: null,
    ...(spec.retryBackoffMs === undefined ? {} : { retryBackoffMs: spec.retryBackoffMs }),
  } as const;
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
    ...(transactional ? { transactionalId: spec.transactionalId } : {}),
    lingerMs: 0,
    metricsRegistry: null,
  });
  const latencies: number[] = [];
  let done = 0;
  let commits = 0;
  try {
    consumer.subscribe([spec.input]);
    if (transactional) await producer.initTransactions();
    let pending: ShareConsumerRecord[] = [];
    const warmDeadline = Date.now() + spec.warmupMs;
    while (pending.length === 0 && Date.now() < warmDeadline) pending = await consumer.poll(200);
    const started = performance.now();
    const limit = Date.now() + spec.runLimitMs;
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
      commits++;
      done += records.length;
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { records: done, commits, seconds, latencies };
  } finally {
    await consumer.close(2_000).catch(() => {});
    await producer.close(2_000).catch(() => {});
  }
}
