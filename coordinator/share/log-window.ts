import { RECORD_BATCH_OVERHEAD, decodeRecordBatch, readBatchHeader, readControlRecord, type RecordBatchHeader } from '../../runtime/index.js';
import type { ReadResult } from '../broker-context.js';
import type { AcquiredRange, LogWindow } from './share-partition.js';

/**
 * Turns a read_committed read of a data partition into what a share fetch
 * needs: which offsets are acquirable (committed data records: not control
 * records, not aborted transactional data, not holes left by compaction), and
 * the raw batches to send for the offsets acquired.
 *
 * Aborted data is recognised as Kafka's consumer does it: the read lists the
 * aborted transactions (producer id, first offset) overlapping it; a
 * transactional batch of such a producer after that first offset is aborted,
 * until that producer's ABORT marker.
 */

interface BatchInfo {
  header: RecordBatchHeader;
  /** Position of the batch in ReadResult.records. */
  position: number;
  /** Offsets of the records it holds, when not every offset of its range is a record (compacted); null means all of them. */
  presentOffsets: Set<bigint> | null;
  acquirable: boolean;
}

export class LogRead {
  private constructor(
    private readonly bytes: Uint8Array,
    private readonly batches: BatchInfo[],
    readonly window: LogWindow,
  ) {}

  /**
   * Indexes `read` (the batches from the one holding `fromOffset`), clipped to
   * [fromOffset, upTo): the last stable offset for read_committed, the high
   * watermark for read_uncommitted. A trailing partial batch is ignored.
   */
  static index(read: ReadResult, fromOffset: bigint, upTo: bigint = read.lastStableOffset): LogRead {
    const bytes = read.records;
    const aborted = [...read.abortedTransactions].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
    const abortedProducers = new Set<bigint>();
    let nextAborted = 0;
    const batches: BatchInfo[] = [];
    let end = fromOffset;
    for (let position = 0; position + RECORD_BATCH_OVERHEAD <= bytes.length;) {
      const header = readBatchHeader(bytes, position);
      if (position + header.sizeInBytes > bytes.length) break;
      if (header.baseOffset >= upTo) break;
      while (nextAborted < aborted.length && aborted[nextAborted]!.firstOffset <= header.lastOffset) {
        abortedProducers.add(aborted[nextAborted++]!.producerId);
      }
      let acquirable = true;
      let presentOffsets: Set<bigint> | null = null;
      if (header.isControl) {
        acquirable = false;
        if (header.isTransactional && isAbortMarker(bytes, position)) abortedProducers.delete(header.producerId);
      } else if (header.isTransactional && abortedProducers.has(header.producerId)) {
        acquirable = false;
      } else if (header.recordCount !== header.lastOffsetDelta + 1) {
        presentOffsets = new Set(decodeRecordBatch(bytes, position).records.map((r) => r.offset));
      }
      batches.push({ header, position, presentOffsets, acquirable });
      if (header.lastOffset + 1n > end) end = header.lastOffset + 1n;
      position += header.sizeInBytes;
    }
    if (end > upTo) end = upTo;
    const window: LogWindow = {
      startOffset: fromOffset,
      endOffset: end,
      isAcquirable: (offset) => {
        const batch = findBatch(batches, offset);
        return batch !== undefined && batch.acquirable && (batch.presentOffsets === null || batch.presentOffsets.has(offset));
      },
    };
    return new LogRead(bytes, batches, window);
  }

  /** The raw batches holding any of the acquired offsets, concatenated, or null when there are none. */
  recordsFor(acquired: readonly AcquiredRange[]): Uint8Array | null {
    if (acquired.length === 0) return null;
    const parts: Uint8Array[] = [];
    for (const { header, position } of this.batches) {
      if (acquired.some((r) => r.firstOffset <= header.lastOffset && r.lastOffset >= header.baseOffset)) {
        parts.push(this.bytes.subarray(position, position + header.sizeInBytes));
      }
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

function findBatch(batches: readonly BatchInfo[], offset: bigint): BatchInfo | undefined {
  let low = 0;
  let high = batches.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const { header } = batches[mid]!;
    if (offset < header.baseOffset) high = mid - 1;
    else if (offset > header.lastOffset) low = mid + 1;
    else return batches[mid];
  }
  return undefined;
}

function isAbortMarker(bytes: Uint8Array, position: number): boolean {
  const batch = decodeRecordBatch(bytes, position);
  return batch.records.some((record) => readControlRecord(record).type === 'ABORT');
}
