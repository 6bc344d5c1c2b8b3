/**
 * The five share-transaction metrics of KIP-1289 §3.5, kept per producer and
 * exposed both as a snapshot (`producer.metrics()`) and through prom-client.
 *
 * | KIP name                            | type      | Prometheus name (labels client_id, transactional_id) |
 * | ----------------------------------- | --------- | ---------------------------------------------------- |
 * | share-transaction-active            | gauge     | kafka_producer_share_transaction_active              |
 * | share-transaction-prepare-time-ms   | histogram | kafka_producer_share_transaction_prepare_time_ms     |
 * | share-transaction-commit-time-ms    | histogram | kafka_producer_share_transaction_commit_time_ms      |
 * | share-transaction-abort-total       | counter   | kafka_producer_share_transaction_abort_total         |
 * | share-transaction-timeout-total     | counter   | kafka_producer_share_transaction_timeout_total       |
 *
 * Definitions (a "share transaction" is a transaction in which
 * sendShareAcksToTransaction was called at least once):
 * - active: share transactions open now (0 or 1 per producer): +1 at the
 *   first sendShareAcksToTransaction of a transaction, −1 when it commits,
 *   aborts or the producer fails fatally or closes.
 * - prepare-time-ms: one observation per sendShareAcksToTransaction call, from
 *   the call until its acks are pending on every share coordinator (both
 *   AddShareAcksToTxn and every TxnShareAcknowledge succeeded, retries and
 *   coordinator lookups included). Failed calls are not observed.
 * - commit-time-ms: one observation per committed share transaction, the
 *   EndTxn(COMMIT) round trip (coordinator lookup and retries included; the
 *   flush of pending sends before it is not).
 * - abort-total: share transactions that ended aborted, whether by
 *   abortTransaction()/abortAcknowledgements() or by the coordinator (timeout,
 *   fencing) as learned by the client.
 * - timeout-total: share transactions that timed out: a call in the transaction
 *   failed with INVALID_PRODUCER_EPOCH, PRODUCER_FENCED, TRANSACTION_ABORTABLE
 *   or INVALID_TXN_STATE once the transaction had been open for at least
 *   transaction.timeout.ms (so the coordinator's timeout, not a newer producer,
 *   aborted it), or commit/abort gave up with KafkaTimeoutError (the client's
 *   own deadline, max.block.ms). Counted at most once per transaction.
 */
import { Counter, Gauge, Histogram, register as defaultRegistry } from 'prom-client';
import type { Registry } from 'prom-client';

export const METRIC_NAMES = {
  active: 'share-transaction-active',
  prepareTime: 'share-transaction-prepare-time-ms',
  commitTime: 'share-transaction-commit-time-ms',
  abortTotal: 'share-transaction-abort-total',
  timeoutTotal: 'share-transaction-timeout-total',
} as const;

export const PROMETHEUS_NAMES = {
  active: 'kafka_producer_share_transaction_active',
  prepareTime: 'kafka_producer_share_transaction_prepare_time_ms',
  commitTime: 'kafka_producer_share_transaction_commit_time_ms',
  abortTotal: 'kafka_producer_share_transaction_abort_total',
  timeoutTotal: 'kafka_producer_share_transaction_timeout_total',
} as const;

export const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];

export interface HistogramSnapshot {
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
  avg: number | null;
}

export interface ShareTransactionMetricsSnapshot {
  'share-transaction-active': number;
  'share-transaction-prepare-time-ms': HistogramSnapshot;
  'share-transaction-commit-time-ms': HistogramSnapshot;
  'share-transaction-abort-total': number;
  'share-transaction-timeout-total': number;
}

class Stats {
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;
  observe(value: number): void {
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
  snapshot(): HistogramSnapshot {
    return this.count === 0
      ? { count: 0, sum: 0, min: null, max: null, avg: null }
      : { count: this.count, sum: this.sum, min: this.min, max: this.max, avg: this.sum / this.count };
  }
}

type Labels = { client_id: string; transactional_id: string };

interface PromMetrics {
  active: Gauge<keyof Labels>;
  prepareTime: Histogram<keyof Labels>;
  commitTime: Histogram<keyof Labels>;
  abortTotal: Counter<keyof Labels>;
  timeoutTotal: Counter<keyof Labels>;
}

const LABEL_NAMES = ['client_id', 'transactional_id'] as const;

function promMetrics(registry: Registry): PromMetrics {
  const get = <T>(name: string, make: () => T): T => (registry.getSingleMetric(name) as T | undefined) ?? make();
  const registers = [registry];
  return {
    active: get(
      PROMETHEUS_NAMES.active,
      () =>
        new Gauge({
          name: PROMETHEUS_NAMES.active,
          help: 'Number of active share-group transactions (KIP-1289 share-transaction-active)',
          labelNames: LABEL_NAMES,
          registers,
        }),
    ),
    prepareTime: get(
      PROMETHEUS_NAMES.prepareTime,
      () =>
        new Histogram({
          name: PROMETHEUS_NAMES.prepareTime,
          help: 'Time from sendShareAcksToTransaction until its acks are pending, ms (KIP-1289 share-transaction-prepare-time-ms)',
          labelNames: LABEL_NAMES,
          buckets: LATENCY_BUCKETS_MS,
          registers,
        }),
    ),
    commitTime: get(
      PROMETHEUS_NAMES.commitTime,
      () =>
        new Histogram({
          name: PROMETHEUS_NAMES.commitTime,
          help: 'EndTxn(COMMIT) round trip of share transactions, ms (KIP-1289 share-transaction-commit-time-ms)',
          labelNames: LABEL_NAMES,
          buckets: LATENCY_BUCKETS_MS,
          registers,
        }),
    ),
    abortTotal: get(
      PROMETHEUS_NAMES.abortTotal,
      () =>
        new Counter({
          name: PROMETHEUS_NAMES.abortTotal,
          help: 'Total aborted share ack transactions (KIP-1289 share-transaction-abort-total)',
          labelNames: LABEL_NAMES,
          registers,
        }),
    ),
    timeoutTotal: get(
      PROMETHEUS_NAMES.timeoutTotal,
      () =>
        new Counter({
          name: PROMETHEUS_NAMES.timeoutTotal,
          help: 'Total timed-out share ack transactions (KIP-1289 share-transaction-timeout-total)',
          labelNames: LABEL_NAMES,
          registers,
        }),
    ),
  };
}

/** One producer's share-transaction metrics. */
export class ShareTransactionMetrics {
  private active = 0;
  private readonly prepare = new Stats();
  private readonly commit = new Stats();
  private aborts = 0;
  private timeouts = 0;
  private readonly prom: PromMetrics | null;
  private readonly labels: Labels;

  constructor(options: { clientId: string; transactionalId: string | null; registry?: Registry | null }) {
    this.labels = { client_id: options.clientId, transactional_id: options.transactionalId ?? '' };
    const registry = options.registry === undefined ? defaultRegistry : options.registry;
    this.prom = registry ? promMetrics(registry) : null;
    if (this.prom) {
      // Make every series visible from the start, at zero.
      this.prom.active.set(this.labels, 0);
      this.prom.abortTotal.inc(this.labels, 0);
      this.prom.timeoutTotal.inc(this.labels, 0);
    }
  }

  transactionActive(active: boolean): void {
    const next = active ? 1 : 0;
    if (next === this.active) return;
    this.active = next;
    this.prom?.active.set(this.labels, next);
  }

  recordPrepareTime(ms: number): void {
    this.prepare.observe(ms);
    this.prom?.prepareTime.observe(this.labels, ms);
  }

  recordCommitTime(ms: number): void {
    this.commit.observe(ms);
    this.prom?.commitTime.observe(this.labels, ms);
  }

  recordAbort(): void {
    this.aborts++;
    this.prom?.abortTotal.inc(this.labels);
  }

  recordTimeout(): void {
    this.timeouts++;
    this.prom?.timeoutTotal.inc(this.labels);
  }

  snapshot(): ShareTransactionMetricsSnapshot {
    return {
      'share-transaction-active': this.active,
      'share-transaction-prepare-time-ms': this.prepare.snapshot(),
      'share-transaction-commit-time-ms': this.commit.snapshot(),
      'share-transaction-abort-total': this.aborts,
      'share-transaction-timeout-total': this.timeouts,
    };
  }

  /** Removes this producer's series from the Prometheus registry. */
  close(): void {
    this.transactionActive(false);
    if (!this.prom) return;
    for (const metric of Object.values(this.prom)) (metric as Gauge<keyof Labels>).remove(this.labels);
  }
}
