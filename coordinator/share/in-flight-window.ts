import type { AckRange } from './acknowledgements.js';
import { isFinished, type InFlightRecord } from './in-flight-state.js';
import { ErrorCode, ShareError } from './share-error.js';

/**
 * The offsets a share partition tracks, [start, end), one record each; the
 * record state machine's operations (share-partition.ts, pending-acks.ts,
 * partition-view.ts) all index and trim it the same way. An array indexed
 * from the start offset rather than Kafka's map of in-flight batches: one
 * record per offset keeps a per-record transition from splitting batches.
 */
export class InFlightWindow {
  /** records[i] is the state of offset start + i. */
  readonly records: InFlightRecord[] = [];

  constructor(public start: bigint) {}

  /** The first offset not yet tracked (never fetched). */
  get endOffset(): bigint {
    return this.start + BigInt(this.records.length);
  }

  /** The record of a tracked offset; the caller has checked it is in [start, end). */
  recordAt(offset: bigint): InFlightRecord {
    return this.records[Number(offset - this.start)]!;
  }

  /** Where the next fetch must read from: the first AVAILABLE record, else the end offset. */
  nextFetchOffset(): bigint {
    const index = this.records.findIndex((r) => r.state === 'AVAILABLE');
    return index < 0 ? this.endOffset : this.start + BigInt(index);
  }

  /** Offsets outside [start, end) were never acquired, or have finished: either way they cannot be acknowledged. */
  checkTracked(range: AckRange): void {
    if (range.firstOffset < this.start || range.lastOffset >= this.endOffset) {
      throw new ShareError(
        ErrorCode.INVALID_RECORD_STATE,
        `offsets ${range.firstOffset}-${range.lastOffset} are not all in flight (in flight: ${this.start}-${this.endOffset - 1n})`,
      );
    }
  }

  /** Moves the start offset past the leading ACKNOWLEDGED/ARCHIVED records. */
  advanceStart(): void {
    let n = 0;
    while (n < this.records.length && isFinished(this.records[n]!.state)) n++;
    if (n === 0) return;
    this.records.splice(0, n);
    this.start += BigInt(n);
  }

  /** Records below the log start offset no longer exist: they are finished (Kafka moves the start offset likewise). */
  moveStartTo(offset: bigint): void {
    if (offset <= this.start) return;
    const drop = minBig(offset - this.start, BigInt(this.records.length));
    this.records.splice(0, Number(drop));
    this.start = offset;
  }
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
