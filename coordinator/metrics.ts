/**
 * In-memory broker counters: requests per API, error codes seen in responses,
 * frames rejected, transaction outcomes and log fsyncs. Read with `broker.metrics()`.
 */
import { errorCodeName } from './errors.js';
import { LogFlushStats } from './log/flush.js';

export interface MetricsSnapshot {
  /** API name → requests handled. */
  requests: Record<string, number>;
  /** API name → version → requests handled (what clients actually negotiated). */
  requestVersions: Record<string, Record<number, number>>;
  /** `NAME (code)` → times that code appeared anywhere in a response (top level or per partition). */
  errors: Record<string, number>;
  /** Frames refused (oversize, malformed, unsupported API or version) — each closed its connection. */
  rejectedFrames: number;
  connectionsOpened: number;
  transactions: { committed: number; aborted: number; timedOut: number; fenced: number };
  markersSent: number;
  /**
   * Kafka's kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs: fsyncs of
   * partition logs (flush.messages, the flusher, segment rolls, shutdown) and
   * the milliseconds they took, in total and the longest.
   */
  logFlush: { count: number; totalMs: number; maxMs: number };
}

export class Metrics {
  /** API name → version → requests handled; the per-API totals are summed from it in snapshot(). */
  private readonly versions = new Map<string, Map<number, number>>();
  private readonly errors = new Map<number, number>();
  rejectedFrames = 0;
  connectionsOpened = 0;
  readonly transactions = { committed: 0, aborted: 0, timedOut: 0, fenced: 0 };
  markersSent = 0;
  /** Every partition log records its fsyncs here (LogManager passes it on). */
  readonly logFlush = new LogFlushStats();

  countRequest(apiName: string, version: number): void {
    let byVersion = this.versions.get(apiName);
    if (byVersion === undefined) this.versions.set(apiName, (byVersion = new Map()));
    byVersion.set(version, (byVersion.get(version) ?? 0) + 1);
  }

  countError(code: number): void {
    this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
  }

  /** Counts every non-zero `errorCode` / `partitionErrorCode` field in a response body. */
  countResponseErrors(body: unknown): void {
    walk(body, (code) => this.countError(code));
  }

  snapshot(): MetricsSnapshot {
    return {
      requests: Object.fromEntries([...this.versions].map(([api, byVersion]) => [api, sum(byVersion.values())])),
      requestVersions: Object.fromEntries([...this.versions].map(([api, byVersion]) => [api, Object.fromEntries([...byVersion].sort((a, b) => a[0] - b[0]))])),
      errors: Object.fromEntries([...this.errors].map(([code, n]) => [errorCodeName(code), n])),
      rejectedFrames: this.rejectedFrames,
      connectionsOpened: this.connectionsOpened,
      transactions: { ...this.transactions },
      markersSent: this.markersSent,
      logFlush: this.logFlush.snapshot(),
    };
  }
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const n of values) total += n;
  return total;
}

/** Runs once per response: walks the body's own fields without building entry arrays. */
function walk(value: unknown, onError: (code: number) => void): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
  if (Array.isArray(value)) {
    for (const item of value) walk(item, onError);
    return;
  }
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const field = fields[key];
    if (typeof field === 'number') {
      if (field !== 0 && (key === 'errorCode' || key === 'partitionErrorCode')) onError(field);
    } else if (typeof field === 'object') {
      walk(field, onError);
    }
  }
}

/** `ApiVersions v3×2, Metadata v4×5 v12×1, …`: the APIs and versions served, for a log line. */
export function describeRequestVersions(snapshot: MetricsSnapshot): string {
  const parts = Object.entries(snapshot.requestVersions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([api, byVersion]) =>
        `${api} ${Object.entries(byVersion)
          .map(([v, n]) => `v${v}×${n}`)
          .join(' ')}`,
    );
  return parts.length > 0 ? parts.join(', ') : 'none';
}
