/**
 * One segment file of a partition log: RecordBatch v2 batches back to back,
 * named after the offset of its first batch (`00000000000000000042.log`), as
 * Kafka names them. There is no index file: recovery scans every batch anyway
 * (to check CRCs and rebuild producer state), so the position of each batch is
 * kept in memory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DecodeError, RECORD_BATCH_OVERHEAD, readBatchHeader, verifyCrc, type RecordBatchHeader } from '../../runtime/index.js';

export interface BatchEntry {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  /** Byte position in the segment file. */
  readonly position: number;
  readonly size: number;
  readonly maxTimestamp: bigint;
}

export const SEGMENT_SUFFIX = '.log';

export function segmentFileName(baseOffset: bigint): string {
  return `${baseOffset.toString().padStart(20, '0')}${SEGMENT_SUFFIX}`;
}

/** What recovery found at the end of a segment. */
export interface RecoveryReport {
  /** Bytes after the last good batch, dropped from the file. */
  droppedBytes: number;
  /** Why they were dropped, e.g. "torn batch" or "CRC mismatch". */
  reason: string | null;
}

export class Segment {
  readonly entries: BatchEntry[] = [];
  private constructor(
    readonly file: string,
    readonly baseOffset: bigint,
    private fd: number,
    public size: number,
  ) {}

  /** Creates an empty segment file (and fsyncs the directory entry when `durable`). */
  static create(dir: string, baseOffset: bigint, durable: boolean): Segment {
    const file = path.join(dir, segmentFileName(baseOffset));
    const fd = fs.openSync(file, 'w+');
    if (durable) syncDirectory(dir);
    return new Segment(file, baseOffset, fd, 0);
  }

  /**
   * Opens an existing segment and checks every batch: a header that does not
   * parse, a batch running past the end of the file (a torn write), a CRC
   * mismatch or an offset going backwards ends the good part, and everything
   * from there is truncated. `onBatch` sees each good batch in order.
   */
  static recover(
    file: string,
    baseOffset: bigint,
    expectedNextOffset: bigint,
    onBatch: (bytes: Uint8Array, header: RecordBatchHeader, entry: BatchEntry) => void,
  ): { segment: Segment; report: RecoveryReport } {
    const fd = fs.openSync(file, 'r+');
    const bytes = fs.readFileSync(file);
    const segment = new Segment(file, baseOffset, fd, 0);
    let at = 0;
    let next = expectedNextOffset;
    let reason: string | null = null;
    while (at < bytes.length) {
      const left = bytes.length - at;
      if (left < RECORD_BATCH_OVERHEAD) {
        reason = `torn batch: ${left} bytes left, fewer than a batch header's ${RECORD_BATCH_OVERHEAD}`;
        break;
      }
      let header: RecordBatchHeader;
      try {
        header = readBatchHeader(bytes, at);
      } catch (error) {
        reason = error instanceof DecodeError ? `unreadable batch header (${error.message})` : String(error);
        break;
      }
      if (header.sizeInBytes > left) {
        reason = `torn batch: it declares ${header.sizeInBytes} bytes, ${left} present`;
        break;
      }
      if (!verifyCrc(bytes, at, header)) {
        reason = `CRC mismatch in the batch at offset ${header.baseOffset}`;
        break;
      }
      if (header.baseOffset < next) {
        reason = `batch offset ${header.baseOffset} goes back below ${next}`;
        break;
      }
      const entry: BatchEntry = {
        baseOffset: header.baseOffset,
        lastOffset: header.lastOffset,
        position: at,
        size: header.sizeInBytes,
        maxTimestamp: header.maxTimestamp,
      };
      onBatch(bytes.subarray(at, at + header.sizeInBytes), header, entry);
      segment.entries.push(entry);
      next = header.lastOffset + 1n;
      at += header.sizeInBytes;
    }
    const droppedBytes = bytes.length - at;
    if (droppedBytes > 0) {
      fs.ftruncateSync(fd, at);
      fs.fsyncSync(fd);
    }
    segment.size = at;
    return { segment, report: { droppedBytes, reason } };
  }

  /** The offset after the last batch, or null when the segment is empty. */
  get nextOffset(): bigint | null {
    const last = this.entries[this.entries.length - 1];
    return last === undefined ? null : last.lastOffset + 1n;
  }

  /** Writes a whole batch at the end (page cache only; see flush). */
  append(bytes: Uint8Array, header: RecordBatchHeader): BatchEntry {
    let written = 0;
    while (written < bytes.length) {
      written += fs.writeSync(this.fd, bytes, written, bytes.length - written, this.size + written);
    }
    const entry: BatchEntry = {
      baseOffset: header.baseOffset,
      lastOffset: header.lastOffset,
      position: this.size,
      size: bytes.length,
      maxTimestamp: header.maxTimestamp,
    };
    this.entries.push(entry);
    this.size += bytes.length;
    return entry;
  }

  read(position: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = fs.readSync(this.fd, out, done, length - done, position + done);
      if (n === 0) throw new Error(`${this.file}: unexpected end of file at ${position + done}`);
      done += n;
    }
    return out;
  }

  /** Index of the first batch whose last offset is at least `offset`, or entries.length. */
  search(offset: bigint): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.lastOffset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** fdatasync: the batches written so far survive a power failure once this resolves. */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => fs.fdatasync(this.fd, (error) => (error ? reject(error) : resolve())));
  }

  flushSync(): void {
    fs.fdatasyncSync(this.fd);
  }

  close(): void {
    if (this.fd >= 0) {
      fs.closeSync(this.fd);
      this.fd = -1;
    }
  }

  /** Removes the file (recovery drops segments after a corrupt one). */
  delete(): void {
    this.close();
    fs.rmSync(this.file, { force: true });
  }
}

export function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
