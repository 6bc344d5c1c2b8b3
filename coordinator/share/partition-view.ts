import { AckType, ackTypeName } from './acknowledgements.js';
import { available, type InFlightRecord, type PendingAck, type RecordState } from './in-flight-state.js';
import { maxBig, type InFlightWindow } from './in-flight-window.js';

/**
 * A share partition seen from outside: rebuilt from its persisted ranges
 * (restore; Kafka's SharePartition.maybeInitialize builds its cachedState from
 * PersisterStateBatch ranges likewise), and described as coalesced ranges for
 * dumps. Both walk the whole window once, off the fetch/acknowledge path, so
 * they live apart from the per-record operations.
 */

/** A persisted range that restore() starts from. */
export interface RestoredRange {
  firstOffset: bigint;
  lastOffset: bigint;
  state: 'AVAILABLE' | 'ACKNOWLEDGED' | 'ARCHIVED';
  deliveryCount: number;
}

/** A pending transactional acknowledgement found in the log with no marker yet. */
export interface RestoredPendingAck extends PendingAck {
  offset: bigint;
  deliveryCount: number;
}

/** One coalesced range of the dump. */
export interface RangeDescription {
  firstOffset: bigint;
  lastOffset: bigint;
  state: RecordState;
  deliveryCount: number;
  memberId?: string;
  lockDeadline?: number;
  pending?: { producerId: bigint; producerEpoch: number; ackType: string };
}

/**
 * Fills an empty window from the committed ranges and the transactional
 * acknowledgements still waiting for a marker, which come back TX_PENDING.
 * Offsets inside the window that no range names were never delivered (or
 * their delivery was not persisted) and come back AVAILABLE. The caller
 * advances the start offset afterwards.
 */
export function restoreInto(
  window: InFlightWindow,
  deliveryCountLimit: number,
  ranges: readonly RestoredRange[],
  pending: readonly RestoredPendingAck[],
): void {
  const startOffset = window.start;
  const at = (offset: bigint): InFlightRecord => {
    while (window.endOffset <= offset) window.records.push(available(0));
    return window.records[Number(offset - startOffset)]!;
  };
  for (const range of ranges) {
    for (let offset = maxBig(range.firstOffset, startOffset); offset <= range.lastOffset; offset++) {
      const record = at(offset);
      record.state = range.state;
      record.deliveryCount = range.deliveryCount;
    }
  }
  for (const ack of pending) {
    if (ack.offset < startOffset) continue; // cannot happen with a consistent log: a pending record pins the start offset
    const record = at(ack.offset);
    record.state = 'TX_PENDING';
    record.deliveryCount = ack.deliveryCount;
    record.pending = { producerId: ack.producerId, producerEpoch: ack.producerEpoch, type: ack.type };
    if (ack.type === AckType.REJECT && ack.deliveryCount >= deliveryCountLimit) record.pending.orReleaseAtLimit = true;
  }
}

/** The window as coalesced ranges, for dumps. */
export function describeWindow(window: InFlightWindow): RangeDescription[] {
  const ranges: RangeDescription[] = [];
  for (const [index, record] of window.records.entries()) {
    const offset = window.start + BigInt(index);
    const description: RangeDescription = {
      firstOffset: offset,
      lastOffset: offset,
      state: record.state,
      deliveryCount: record.deliveryCount,
    };
    if (record.state === 'ACQUIRED') {
      description.memberId = record.memberId!;
      description.lockDeadline = record.lockDeadline;
    }
    if (record.pending !== null) {
      if (record.memberId !== null) description.memberId = record.memberId;
      description.pending = {
        producerId: record.pending.producerId,
        producerEpoch: record.pending.producerEpoch,
        ackType: ackTypeName(record.pending.type),
      };
    }
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.lastOffset === offset - 1n && sameDescription(last, description)) last.lastOffset = offset;
    else ranges.push(description);
  }
  return ranges;
}

function sameDescription(a: RangeDescription, b: RangeDescription): boolean {
  return (
    a.state === b.state &&
    a.deliveryCount === b.deliveryCount &&
    a.memberId === b.memberId &&
    a.lockDeadline === b.lockDeadline &&
    a.pending?.producerId === b.pending?.producerId &&
    a.pending?.producerEpoch === b.pending?.producerEpoch &&
    a.pending?.ackType === b.pending?.ackType
  );
}
