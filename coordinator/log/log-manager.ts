/**
 * Opens and recovers the log of every partition this node leads, under
 * `<dataDir>/<topic>-<partition>/`. Every log, internal topics included,
 * follows Kafka's flush settings (flush.ts): by default appends go to the page
 * cache, which survives `kill -9`, and the OS flushes; `flush.messages` fsyncs
 * from the append, and the flusher task (startFlusher) fsyncs logs that have
 * waited `flush.ms`.
 *
 * Producer ids idle for `producer.id.expiration.ms` are forgotten once the
 * logs are recovered and then every `producer.id.expiration.check.interval.ms`
 * (startExpiringProducers), as Kafka's logs do.
 */
import * as fs from 'node:fs';
import type { TopicInfo } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { DEFAULT_LOG_FLUSH, LogFlushStats, MAX_TIMER_MS, flushPolicyOf, type LogFlushSettings, type LogWriteTrace } from './flush.js';
import { PartitionLog } from './partition-log.js';

/** When partition logs forget idle producer ids (Kafka's settings of the same names). */
export interface ProducerIdExpiration {
  /** producer.id.expiration.ms */
  expirationMs: number;
  /** producer.id.expiration.check.interval.ms */
  checkIntervalMs: number;
}

/** How the logs flush, where they count it, and who sees each write (bench:txn --timeline). */
export interface LogFlushOptions {
  settings: LogFlushSettings;
  stats: LogFlushStats;
  trace?: LogWriteTrace;
}

export class LogManager {
  private readonly logs = new Map<string, PartitionLog>();
  private expirationTimer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly dataDir: string,
    private readonly segmentBytes: number,
    private readonly producerIds: ProducerIdExpiration,
    private readonly log: (line: string) => void,
    private readonly flush: LogFlushOptions = { settings: DEFAULT_LOG_FLUSH, stats: new LogFlushStats() },
  ) {
    const started = Date.now();
    for (const topic of cluster.topics()) this.openTopic(topic);
    // Kafka leaves expired producers out when it loads a log's producer-state snapshot. kipgen keeps no
    // snapshots and replays every batch, so it expires them right after the replay: a broker that was
    // down longer than the expiration time does not start with producer ids Kafka would have forgotten.
    // Logs opened later (CreateTopics, CreatePartitions) are new; the timer covers them.
    const expired = this.removeExpiredProducers(Date.now());
    // A fresh data directory has nothing to recover: saying "recovered 17 partition logs" of the
    // internal topics just made would suggest state that is not there.
    const withData = [...this.logs.values()].filter((l) => l.logEndOffset() > 0n).length;
    if (withData > 0) {
      log(
        `recovered ${this.logs.size} partition logs (${withData} with records) in ${Date.now() - started} ms from ${dataDir}${expired > 0 ? ` (${expired} idle producer ids expired)` : ''}`,
      );
    }
  }

  /**
   * Forgets, in every log, the producer ids with no open transaction whose
   * last timestamp is `expirationMs` or more before `nowMs`; returns how many.
   */
  removeExpiredProducers(nowMs: number): number {
    let removed = 0;
    for (const partitionLog of this.logs.values()) removed += partitionLog.removeExpiredProducers(nowMs);
    return removed;
  }

  /**
   * Runs removeExpiredProducers(Date.now()) every `checkIntervalMs` until
   * close(). The timer is unref'd: it never keeps the process alive. Kafka
   * schedules one such task per log (UnifiedLog's
   * PeriodicProducerExpirationCheck); one timer over every log does the same.
   */
  startExpiringProducers(): void {
    if (this.expirationTimer !== null) return;
    this.expirationTimer = setInterval(() => {
      const expired = this.removeExpiredProducers(Date.now());
      if (expired > 0) this.log(`expired ${expired} producer ids idle for ${this.producerIds.expirationMs} ms or more`);
    }, this.producerIds.checkIntervalMs);
    this.expirationTimer.unref();
  }

  /**
   * Kafka's "kafka-log-flusher" task (LogManager.flushDirtyLogs): every
   * log.flush.scheduler.interval.ms, flushes each log whose last flush is
   * flush.ms or more ago. Not started with the default interval (never).
   * Unref'd; a failed fsync is logged and retried at the next tick, as Kafka
   * logs and carries on.
   */
  startFlusher(): void {
    const interval = this.flush.settings.schedulerIntervalMs;
    if (this.flushTimer !== null || interval > MAX_TIMER_MS) return;
    let running = false;
    this.flushTimer = setInterval(() => {
      // One pass at a time: a slow disk must not pile passes up.
      if (running) return;
      running = true;
      void this.flushDirtyLogs(Date.now()).finally(() => (running = false));
    }, interval);
    this.flushTimer.unref();
  }

  /** One pass of the flusher at `nowMs`; resolves with how many logs it flushed. */
  async flushDirtyLogs(nowMs: number): Promise<number> {
    let flushed = 0;
    for (const partitionLog of this.logs.values()) {
      try {
        if (await partitionLog.flushIfDue(nowMs)) flushed++;
      } catch (error) {
        this.log(`${partitionLog.name}: flush failed: ${(error as Error).message}`);
      }
    }
    return flushed;
  }

  /** Opens (creating) the logs of this node's partitions of `topic` that are not open yet: after CreateTopics or CreatePartitions. */
  openTopic(topic: TopicInfo): void {
    for (const partition of this.cluster.localPartitions(topic)) {
      if (this.logs.has(key(topic.name, partition))) continue;
      const partitionLog = PartitionLog.open(this.dataDir, topic.name, topic.topicId, partition, {
        segmentBytes: this.segmentBytes,
        // Read at each append, like the timestamp type: a topic's flush.messages / flush.ms changed by
        // IncrementalAlterConfigs applies to the next append, the broker's settings where the topic has none.
        flushPolicy: () => flushPolicyOf(this.cluster.topicConfigs(topic.name), this.flush.settings),
        flushStats: this.flush.stats,
        ...(this.flush.trace === undefined ? {} : { trace: this.flush.trace }),
        producerIdExpirationMs: this.producerIds.expirationMs,
        // Read at each append, so that IncrementalAlterConfigs applies to the next batch, as a LogConfig update does in Kafka.
        messageTimestampType: () => this.cluster.topicByName(topic.name)?.messageTimestampType ?? 'CreateTime',
        log: this.log,
      });
      this.logs.set(key(topic.name, partition), partitionLog);
    }
  }

  /** Closes and removes the logs of a deleted topic (DeleteTopics): its data is gone, as in Kafka. */
  dropTopic(topic: TopicInfo): void {
    for (let partition = 0; partition < topic.partitions; partition++) {
      const partitionLog = this.logs.get(key(topic.name, partition));
      if (partitionLog === undefined) continue;
      this.logs.delete(key(topic.name, partition));
      partitionLog.close();
      fs.rmSync(partitionLog.dir, { recursive: true, force: true });
    }
  }

  /** The log of a partition this node leads, by topic name. */
  get(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(key(topic, partition));
  }

  /** The log of a partition this node leads, by topic name or topic id. */
  find(topicNameOrId: string, partition: number): PartitionLog | undefined {
    const byName = this.logs.get(key(topicNameOrId, partition));
    if (byName !== undefined) return byName;
    const topic = this.cluster.topicById(topicNameOrId);
    return topic === undefined ? undefined : this.logs.get(key(topic.name, partition));
  }

  all(): PartitionLog[] {
    return [...this.logs.values()];
  }

  close(): void {
    if (this.expirationTimer !== null) clearInterval(this.expirationTimer);
    this.expirationTimer = null;
    if (this.flushTimer !== null) clearInterval(this.flushTimer);
    this.flushTimer = null;
    for (const log of this.logs.values()) {
      try {
        log.flushSync();
      } finally {
        log.close();
      }
    }
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
