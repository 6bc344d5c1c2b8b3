/**
 * When partition logs fsync: Kafka's flush settings, with Kafka's defaults.
 *
 * Kafka does not fsync per write. UnifiedLog.append flushes once the log holds
 * `flush.messages` unflushed offsets (LocalLog.unflushedMessages: log end offset
 * minus recovery point), and LogManager's "kafka-log-flusher" task flushes, every
 * `log.flush.scheduler.interval.ms`, each log last flushed `flush.ms` or more ago
 * (LogManager.flushDirtyLogs). All three default to Long.MAX_VALUE: never; the OS
 * writes the page cache back, which a killed process does not lose. The topic
 * configs `flush.messages` / `flush.ms` default to the broker's
 * `log.flush.interval.messages` / `log.flush.interval.ms`, and an unset
 * `log.flush.interval.ms` to `log.flush.scheduler.interval.ms` (storage
 * LogConfig, server-common ServerLogConfigs). Kafka's internal topics
 * (`__transaction_state`, `__consumer_offsets`, `__share_group_state`) follow
 * the same settings, and so do kipgen's.
 *
 * kipgen keeps these as JavaScript numbers: "never" is Number.MAX_SAFE_INTEGER
 * (Kafka's Long.MAX_VALUE is not a safe integer); a topic config of
 * 9223372036854775807 reads as a larger number and means never as well.
 */

/** The broker-wide settings (BrokerConfig carries them under Kafka's names). */
export interface LogFlushSettings {
  /** log.flush.interval.messages (Kafka: Long.MAX_VALUE). 1: fsync before every append resolves. */
  intervalMessages: number;
  /** log.flush.interval.ms (Kafka: unset, which means log.flush.scheduler.interval.ms). */
  intervalMs: number | null;
  /** log.flush.scheduler.interval.ms (Kafka: Long.MAX_VALUE): how often the flusher looks for logs due. */
  schedulerIntervalMs: number;
}

/** What one log follows, read at each append (IncrementalAlterConfigs changes apply to the next one, as a LogConfig update in Kafka). */
export interface FlushPolicy {
  /** flush.messages: flush when this many offsets are unflushed. */
  messages: number;
  /** flush.ms: the flusher flushes a log last flushed this long ago. */
  ms: number;
}

export const NEVER = Number.MAX_SAFE_INTEGER;

export const DEFAULT_LOG_FLUSH: LogFlushSettings = { intervalMessages: NEVER, intervalMs: null, schedulerIntervalMs: NEVER };

/**
 * The longest period setInterval takes; a scheduler interval beyond it (24.8
 * days) is treated as never. Kafka with its default runs the flusher once,
 * log.initial.task.delay.ms (30 s) after start, and then never; kipgen skips
 * that single run, which with default flush.ms finds nothing due anyway.
 */
export const MAX_TIMER_MS = 0x7fffffff;

/** A topic's policy: its own flush.messages / flush.ms when set, else the broker's. */
export function flushPolicyOf(topicConfigs: Readonly<Record<string, string>>, broker: LogFlushSettings): FlushPolicy {
  const messages = topicConfigs['flush.messages'];
  const ms = topicConfigs['flush.ms'];
  return {
    messages: messages === undefined ? broker.intervalMessages : Number(messages),
    ms: ms === undefined ? (broker.intervalMs ?? broker.schedulerIntervalMs) : Number(ms),
  };
}

/**
 * Kafka's LogFlushStats.LogFlushRateAndTimeMs (LogSegment.flush times every
 * segment flush with it): how many fsyncs the logs made and how long they
 * took. kipgen's Metrics owns one; every partition log records into it.
 */
export class LogFlushStats {
  count = 0;
  totalMs = 0;
  maxMs = 0;

  record(ms: number): void {
    this.count++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  snapshot(): { count: number; totalMs: number; maxMs: number } {
    return { count: this.count, totalMs: this.totalMs, maxMs: this.maxMs };
  }
}

/**
 * One timed step of a log, for `traceLogWrites` (bench:txn --timeline): an
 * append to the page cache, an fsync, or a transaction marker written (its
 * fsync included when the policy asks for one). `startMs` is wall-clock
 * milliseconds with sub-millisecond precision (performance.timeOrigin +
 * performance.now()), comparable across processes on one machine.
 */
export interface LogWriteEvent {
  kind: 'append' | 'fsync' | 'marker';
  log: string;
  startMs: number;
  ms: number;
}

export type LogWriteTrace = (event: LogWriteEvent) => void;

export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
