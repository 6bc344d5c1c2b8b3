/**
 * The log of one partition: segment files of RecordBatch v2 batches in
 * `<dataDir>/<topic>-<partition>/`, the producer state, the last stable offset
 * and the aborted-transaction index. One replica per partition, so the high
 * watermark is the log end offset.
 *
 * Writes go to the page cache at once, which survives `kill -9`. When they
 * are fdatasynced is Kafka's flush policy (flush.ts): by default never from an
 * append (the OS writes back, or the flusher task, or a roll or shutdown);
 * with flush.messages 1 before every append resolves, which is what survives a
 * power failure of the node. Markers and the coordinators' internal topics
 * follow the same policy, as in Kafka.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  NO_TIMESTAMP,
  controlRecordBatch,
  decodeRecordBatch,
  readBatchHeader,
  readControlRecord,
  setBatchBaseOffset,
  setBatchMaxTimestamp,
  type RecordBatch,
  type RecordBatchHeader,
  type TimestampType,
} from '../../runtime/index.js';
import type { IsolationLevel, PartitionReader, ReadResult } from '../broker-context.js';
import { ErrorCode, BrokerError } from '../errors.js';
import { DEFAULT_LOG_FLUSH, LogFlushStats, flushPolicyOf, wallClockMs, type FlushPolicy, type LogWriteTrace } from './flush.js';
import { ProducerState, type Duplicate } from './producer-state.js';
import { Segment, SEGMENT_SUFFIX, syncDirectory } from './segment.js';

/**
 * The leader epoch of every partition: one replica each and no leader elections, so it stays 0, the epoch
 * Metadata and ListOffsets report (Kafka's first leader of a new partition has epoch 0 too).
 */
export const LEADER_EPOCH = 0;

export interface PartitionLogOptions {
  /** Roll to a new segment when the active one would grow past this. */
  segmentBytes: number;
  /** The topic's flush.messages / flush.ms, asked at every append. Absent: Kafka's defaults (never). */
  flushPolicy?: () => FlushPolicy;
  /** Where every fsync is counted and timed (the broker's Metrics). Absent: a private one. */
  flushStats?: LogFlushStats;
  /** Sees every append, fsync and marker write with its time (bench:txn --timeline). */
  trace?: LogWriteTrace;
  /** producer.id.expiration.ms: removeExpiredProducers forgets a producer id idle this long (none with an open transaction). */
  producerIdExpirationMs: number;
  /**
   * The topic's message.timestamp.type, asked at every append since
   * IncrementalAlterConfigs may change it (Kafka reads LogConfig the same way).
   * Absent: CreateTime (Kafka's default).
   */
  messageTimestampType?: () => TimestampType;
  log: (line: string) => void;
}

export interface AppendInfo {
  baseOffset: bigint;
  lastOffset: bigint;
  /** True when the batch was a retry of one already in the log (nothing was written). */
  duplicate: boolean;
  /**
   * ProduceResponse's LogAppendTimeMs: the time the batch was stamped with on a
   * LogAppendTime topic, -1 on a CreateTime one; for a duplicate, the max
   * timestamp the original batch was stored with (see append).
   */
  logAppendTime: bigint;
}

export class PartitionLog implements PartitionReader {
  readonly name: string;
  private readonly segments: Segment[] = [];
  readonly producers = new ProducerState();
  private nextOffset = 0n;
  /**
   * The offset below which everything is fdatasynced (Kafka's recovery point). The
   * recovered log counts as flushed: what recovery kept was on disk or in the page
   * cache, and a later flush covers only what this process writes.
   */
  private recoveryPoint = 0n;
  /** When the last fsync that advanced the recovery point ended (Kafka's LocalLog.lastFlushTime; the log's opening at first). */
  private lastFlushMs = Date.now();
  private readonly listeners = new Set<() => void>();
  private readonly flushStats: LogFlushStats;
  /** A new log's directory entry not fsynced yet: the first flush syncs it too (Kafka's LocalLog.flush syncs the directory after new segments). */
  private directoryDirty = false;

  private constructor(
    readonly dir: string,
    readonly topic: string,
    readonly topicId: string,
    readonly partition: number,
    private readonly options: PartitionLogOptions,
  ) {
    this.name = `${topic}-${partition}`;
    this.flushStats = options.flushStats ?? new LogFlushStats();
  }

  /**
   * Opens (creating if needed) and recovers the log: every batch is CRC-checked
   * and replayed into the producer state; the first bad batch and everything
   * after it, in its segment and any later one, is dropped, with a log line.
   */
  static open(dataDir: string, topic: string, topicId: string, partition: number, options: PartitionLogOptions): PartitionLog {
    const dir = path.join(dataDir, `${topic}-${partition}`);
    fs.mkdirSync(dir, { recursive: true });
    const log = new PartitionLog(dir, topic, topicId, partition, options);
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(SEGMENT_SUFFIX) && /^\d{20}\.log$/.test(f))
      .sort();
    let dropping = false;
    for (const file of files) {
      const full = path.join(dir, file);
      if (dropping) {
        const size = fs.statSync(full).size;
        fs.rmSync(full);
        options.log(`${log.name}: recovery dropped segment ${file} (${size} bytes) after a corrupt batch`);
        continue;
      }
      const baseOffset = BigInt(file.slice(0, 20));
      const { segment, report } = Segment.recover(full, baseOffset, log.nextOffset, (bytes, header) => log.replay(bytes, header));
      if (report.droppedBytes > 0) {
        options.log(`${log.name}: recovery truncated ${file} at byte ${segment.size}, dropping ${report.droppedBytes} bytes (${report.reason})`);
        dropping = true;
      }
      if (segment.entries.length === 0 && log.segments.length > 0) {
        segment.delete();
        continue;
      }
      log.segments.push(segment);
      log.nextOffset = segment.nextOffset ?? (segment.baseOffset > log.nextOffset ? segment.baseOffset : log.nextOffset);
    }
    if (log.segments.length === 0) {
      log.segments.push(Segment.create(dir, 0n, false));
      log.directoryDirty = true;
    }
    log.recoveryPoint = log.nextOffset;
    return log;
  }

  private replay(bytes: Uint8Array, header: RecordBatchHeader): void {
    if (header.isControl) {
      const marker = markerOf(bytes);
      // A marker batch's max timestamp is its one control record's timestamp, the one Kafka keeps.
      if (marker !== null)
        this.producers.onMarker(header.producerId, header.producerEpoch, marker.commit, header.baseOffset, header.maxTimestamp, marker.coordinatorEpoch);
    } else {
      this.producers.onBatch(header);
    }
  }

  private flushPolicy(): FlushPolicy {
    return this.options.flushPolicy?.() ?? flushPolicyOf({}, DEFAULT_LOG_FLUSH);
  }

  /** Offsets written since the last fsync (Kafka's LocalLog.unflushedMessages). */
  unflushedMessages(): bigint {
    return this.nextOffset - this.recoveryPoint;
  }

  lastFlushTime(): number {
    return this.lastFlushMs;
  }

  logStartOffset(): bigint {
    return this.segments[0]!.baseOffset;
  }

  logEndOffset(): bigint {
    return this.nextOffset;
  }

  highWatermark(): bigint {
    return this.nextOffset;
  }

  lastStableOffset(): bigint {
    return this.producers.firstUnstableOffset() ?? this.nextOffset;
  }

  /**
   * Forgets the producer ids idle for `producerIdExpirationMs` at `nowMs`
   * (see ProducerState.removeExpired); returns how many. The caller supplies
   * the time: the log manager's timer passes Date.now(), tests a chosen one.
   */
  removeExpiredProducers(nowMs: number): number {
    return this.producers.removeExpired(nowMs, this.options.producerIdExpirationMs);
  }

  /**
   * Appends one batch, from a producer or built by a coordinator (the caller
   * has checked its framing and CRC, and that a transactional producer added
   * this partition to its transaction). Enforces sequences and epochs,
   * assigns offsets and writes it; a retried batch gets its first offsets back.
   * `header` is the batch's header when the caller has already read it.
   */
  async append(batch: Uint8Array, header: RecordBatchHeader = readBatchHeader(batch)): Promise<AppendInfo> {
    const duplicate: Duplicate | null = this.producers.check(header);
    if (duplicate !== null) {
      // Kafka's UnifiedLog.append answers a duplicate with the original batch's BatchMetadata, logAppendTime included:
      // appendInfo.setLogAppendTime(duplicate.timestamp), the max timestamp that batch was stored with. So on a
      // LogAppendTime topic a retry gets the first append's time; on a CreateTime topic, as in Kafka, the original's
      // max (producer) timestamp rather than -1.
      return { baseOffset: duplicate.firstOffset, lastOffset: duplicate.lastOffset, duplicate: true, logAppendTime: duplicate.timestamp };
    }
    return this.write(batch, header, Date.now());
  }

  /**
   * Appends a COMMIT or ABORT marker for a producer. Kafka writes markers with
   * appendAsLeader like any batch, so they follow the flush policy too: no fsync
   * of their own by default.
   */
  async appendMarker(producerId: bigint, producerEpoch: number, commit: boolean, coordinatorEpoch: number): Promise<AppendInfo> {
    this.producers.checkMarker(producerId, producerEpoch);
    const nowMs = Date.now();
    const batch = controlRecordBatch({
      type: commit ? 'COMMIT' : 'ABORT',
      producerId,
      producerEpoch,
      coordinatorEpoch,
      timestamp: BigInt(nowMs),
    });
    // Kafka appends markers with appendAsLeader (AppendOrigin.COORDINATOR), which runs LogValidator with the
    // topic's timestamp type like any other leader append: on a LogAppendTime topic the marker is stamped too.
    const startMs = this.options.trace === undefined ? 0 : wallClockMs();
    const info = await this.write(batch, readBatchHeader(batch), nowMs);
    this.options.trace?.({ kind: 'marker', log: this.name, startMs, ms: wallClockMs() - startMs });
    return info;
  }

  /**
   * Writes `batch` (whose header, as sent, is `sent`) at the next offset. `nowMs`
   * is the append time, read once per append (LogValidator's `now`).
   */
  private async write(batch: Uint8Array, sent: RecordBatchHeader, nowMs: number): Promise<AppendInfo> {
    const startMs = this.options.trace === undefined ? 0 : wallClockMs();
    // Own copy: the request buffer is a view of a socket chunk and the offset is rewritten in place.
    const bytes = Buffer.from(batch);
    const baseOffset = this.nextOffset;
    // Kafka's LogValidator stamps every batch a leader appends, control batches included, with the leader's
    // epoch (batch.setPartitionLeaderEpoch in assignOffsetsNonCompressed and the in-place compressed path); a
    // consumer takes the epoch of the last batch it read into its position and its OffsetCommit
    // (committedLeaderEpoch), so a -1 left by the producer would reach the group's commits.
    setBatchBaseOffset(bytes, 0, baseOffset, LEADER_EPOCH);
    const logAppendTime = this.stampsLogAppendTime() ? BigInt(nowMs) : NO_TIMESTAMP;
    const header = logAppendTime === NO_TIMESTAMP ? withBaseOffset(sent, baseOffset) : stampLogAppendTime(bytes, logAppendTime);
    let segment = this.segments[this.segments.length - 1]!;
    if (segment.size > 0 && segment.size + bytes.length > this.options.segmentBytes) segment = this.roll();
    segment.append(bytes, header);
    this.nextOffset = header.lastOffset + 1n;
    this.replay(bytes, header);
    this.options.trace?.({ kind: 'append', log: this.name, startMs, ms: wallClockMs() - startMs });
    // UnifiedLog.append: `if (localLog.unflushedMessages() >= config().flushInterval) flush(false)`, before the
    // append returns, so with flush.messages 1 the reply waits for the fsync.
    if (Number(this.unflushedMessages()) >= this.flushPolicy().messages) await this.flush();
    for (const listener of this.listeners) listener();
    return { baseOffset, lastOffset: header.lastOffset, duplicate: false, logAppendTime };
  }

  private stampsLogAppendTime(): boolean {
    return this.options.messageTimestampType?.() === 'LogAppendTime';
  }

  /**
   * fdatasyncs what was written up to now, unless it already is (Kafka's
   * UnifiedLog.flush: only when the offset passes the recovery point). Earlier
   * segments were flushed when they rolled, so only the active one can be dirty.
   */
  async flush(): Promise<void> {
    const upTo = this.nextOffset;
    if (upTo <= this.recoveryPoint) return;
    const segment = this.segments[this.segments.length - 1]!;
    const startMs = wallClockMs();
    await segment.flush();
    if (this.directoryDirty) {
      syncDirectory(this.dir);
      this.directoryDirty = false;
    }
    this.flushed(upTo, startMs);
  }

  /** The flusher's check (LogManager.flushDirtyLogs): flushes when the log was last flushed flush.ms or more before `nowMs`. */
  async flushIfDue(nowMs: number): Promise<boolean> {
    if (nowMs - this.lastFlushMs < this.flushPolicy().ms || this.unflushedMessages() === 0n) return false;
    await this.flush();
    return true;
  }

  private flushed(upTo: bigint, startMs: number): void {
    const ms = wallClockMs() - startMs;
    this.flushStats.record(ms);
    this.options.trace?.({ kind: 'fsync', log: this.name, startMs, ms });
    if (upTo > this.recoveryPoint) {
      this.recoveryPoint = upTo;
      this.lastFlushMs = Date.now();
    }
  }

  /**
   * Kafka flushes the old segment when it rolls (UnifiedLog.roll schedules
   * flushUptoOffsetExclusive on the scheduler); kipgen does it at once, as
   * before the flush settings, so earlier segments are never dirty.
   */
  private roll(): Segment {
    const old = this.segments[this.segments.length - 1]!;
    const startMs = wallClockMs();
    old.flushSync();
    this.flushed(this.nextOffset, startMs);
    const segment = Segment.create(this.dir, this.nextOffset, true);
    this.directoryDirty = false;
    this.segments.push(segment);
    this.options.log(`${this.name}: rolled to a new segment at offset ${this.nextOffset} (${old.size} bytes in the previous one)`);
    return segment;
  }

  read(fromOffset: bigint, maxBytes: number, isolation: IsolationLevel = 'read_uncommitted'): ReadResult {
    const start = this.logStartOffset();
    const end = this.nextOffset;
    if (fromOffset < start || fromOffset > end) {
      throw new BrokerError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${fromOffset} is outside ${this.name}'s range [${start}, ${end}]`);
    }
    const lso = this.lastStableOffset();
    const upTo = isolation === 'read_committed' ? lso : end;
    const result = (records: Uint8Array, lastOffset: bigint): ReadResult => ({
      records,
      highWatermark: end,
      lastStableOffset: lso,
      logStartOffset: start,
      abortedTransactions: isolation === 'read_committed' && records.length > 0 ? this.producers.abortedWithin(fromOffset, lastOffset + 1n) : [],
    });
    if (fromOffset >= upTo) return result(new Uint8Array(0), fromOffset);
    const segment = this.segmentFor(fromOffset);
    if (segment === undefined) return result(new Uint8Array(0), fromOffset);
    let index = segment.search(fromOffset);
    const first = segment.entries[index];
    if (first === undefined) return result(new Uint8Array(0), fromOffset);
    let bytes = 0;
    let lastOffset = first.baseOffset;
    for (; index < segment.entries.length; index++) {
      const entry = segment.entries[index]!;
      if (entry.baseOffset >= upTo) break;
      if (bytes > 0 && bytes + entry.size > maxBytes) break;
      bytes += entry.size;
      lastOffset = entry.lastOffset;
    }
    return result(bytes === 0 ? new Uint8Array(0) : segment.read(first.position, bytes), lastOffset);
  }

  private segmentFor(offset: bigint): Segment | undefined {
    let found: Segment | undefined;
    for (const segment of this.segments) {
      if (segment.baseOffset <= offset) found = segment;
      else break;
    }
    // The offset may fall after the last batch of its segment (e.g. an empty active segment).
    if (found !== undefined && found.search(offset) >= found.entries.length) {
      const next = this.segments[this.segments.indexOf(found) + 1];
      if (next !== undefined) return next;
    }
    return found;
  }

  /**
   * ListOffsets by timestamp: the first record with a timestamp at or after
   * `timestamp`, or null when there is none.
   */
  offsetForTimestamp(timestamp: bigint): { offset: bigint; timestamp: bigint } | null {
    for (const segment of this.segments) {
      for (const entry of segment.entries) {
        if (entry.maxTimestamp < timestamp) continue;
        const bytes = segment.read(entry.position, entry.size);
        const header = readBatchHeader(bytes);
        if (header.isControl) continue;
        for (const record of decodeRecordBatch(bytes, 0, { checkCrc: false }).records) {
          if (record.timestamp >= timestamp) return { offset: record.offset, timestamp: record.timestamp };
        }
      }
    }
    return null;
  }

  /** The record with the largest timestamp (ListOffsets MAX_TIMESTAMP, -3), or null for an empty log. */
  maxTimestampOffset(): { offset: bigint; timestamp: bigint } | null {
    let best: { offset: bigint; timestamp: bigint } | null = null;
    for (const segment of this.segments) {
      for (const entry of segment.entries) {
        if (best === null || entry.maxTimestamp > best.timestamp) best = { offset: entry.baseOffset, timestamp: entry.maxTimestamp };
      }
    }
    if (best === null) return null;
    return this.offsetForTimestamp(best.timestamp) ?? best;
  }

  /** Every batch from `fromOffset` to the end, decoded (control batches included). */
  *batches(fromOffset = 0n): Iterable<RecordBatch> {
    for (const segment of this.segments) {
      for (const entry of segment.entries) {
        if (entry.lastOffset < fromOffset) continue;
        yield decodeRecordBatch(segment.read(entry.position, entry.size), 0, { checkCrc: false });
      }
    }
  }

  /** Raw batches from every segment, for the dump tool and replays that decode lazily. */
  *rawBatches(): Iterable<{ segment: string; position: number; bytes: Uint8Array }> {
    for (const segment of this.segments) {
      for (const entry of segment.entries) {
        yield { segment: path.basename(segment.file), position: entry.position, bytes: segment.read(entry.position, entry.size) };
      }
    }
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** fdatasync the active segment (at shutdown, as Kafka flushes every log on a clean shutdown). */
  flushSync(): void {
    const upTo = this.nextOffset;
    if (upTo <= this.recoveryPoint) return;
    const startMs = wallClockMs();
    this.segments[this.segments.length - 1]!.flushSync();
    if (this.directoryDirty) {
      syncDirectory(this.dir);
      this.directoryDirty = false;
    }
    this.flushed(upTo, startMs);
  }

  close(): void {
    for (const segment of this.segments) segment.close();
  }

  segmentCount(): number {
    return this.segments.length;
  }
}

/**
 * The header of a batch whose base offset and leader epoch were just set, without
 * reading it again: only they changed, and the CRC covers neither.
 */
function withBaseOffset(sent: RecordBatchHeader, baseOffset: bigint): RecordBatchHeader {
  return { ...sent, baseOffset, partitionLeaderEpoch: LEADER_EPOCH, lastOffset: BigInt.asIntN(64, baseOffset + BigInt(sent.lastOffsetDelta)) };
}

/**
 * Stamps the batch in `bytes` (base offset already set) with the append time,
 * as Kafka's LogValidator does on a LogAppendTime topic (assignOffsetsNonCompressed,
 * validateMessagesAndAssignOffsetsCompressed: batch.setMaxTimestamp(LOG_APPEND_TIME, now),
 * i.e. DefaultRecordBatch.setMaxTimestamp): the timestamp-type attribute bit and
 * maxTimestamp are set and the CRC-32C recomputed; the records, their timestamp
 * deltas included, are left as the producer wrote them. Readers take every
 * record's timestamp from maxTimestamp. Returns the header as stored, which is
 * the producer's but for those fields and the CRC.
 */
function stampLogAppendTime(bytes: Uint8Array, logAppendTime: bigint): RecordBatchHeader {
  setBatchMaxTimestamp(bytes, 0, 'LogAppendTime', logAppendTime);
  return readBatchHeader(bytes);
}

/** The marker type of a control batch (COMMIT/ABORT), or null for other control records. */
export function markerOf(batch: Uint8Array): { commit: boolean; coordinatorEpoch: number } | null {
  const decoded = decodeRecordBatch(batch, 0, { checkCrc: false });
  const record = decoded.records[0];
  if (record === undefined) return null;
  const control = readControlRecord(record);
  return 'coordinatorEpoch' in control ? { commit: control.type === 'COMMIT', coordinatorEpoch: control.coordinatorEpoch } : null;
}

export { syncDirectory };
