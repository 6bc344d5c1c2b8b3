import { AckType, type AckRange, type TxnAckType, ackTypeAt, ackTypeName } from './acknowledgements.js';
import { change, checkAcquired, checkAcquiredBy, finish, isRepeatOf, release, type ProducerOf, type StateChange } from './in-flight-state.js';
import type { InFlightWindow } from './in-flight-window.js';
import { ErrorCode, ShareError } from './share-error.js';

/**
 * The transactional side of a share partition (KIP-1289, DESIGN §5.1–§5.2):
 * TxnShareAcknowledge pins records TX_PENDING, and the transaction's marker
 * resolves them. Kept apart from the ShareFetch/ShareAcknowledge operations
 * because it is the part Kafka's SharePartition does not have.
 */

/** A staged transactional acknowledgement of one offset: what the transactional ShareUpdate records. */
export interface StagedAck {
  offset: bigint;
  type: TxnAckType;
  deliveryCount: number;
}

/** True when some record waits for a marker of this producer. */
export function hasPendingFor(window: InFlightWindow, producerId: bigint): boolean {
  return window.records.some((r) => r.pending?.producerId === producerId);
}

/**
 * Checks a transactional acknowledgement of `producer` without changing
 * anything, so that the caller can write it to the log before applying it.
 * Every offset must be ACQUIRED (by `memberId` when the request names one,
 * v1) with its lock running, and not already pending; otherwise
 * ShareError(INVALID_RECORD_STATE).
 *
 * The one exception is an idempotent retry: an offset already TX_PENDING
 * for this same producer id and epoch with the same acknowledge type (the
 * request was stored but its response lost) is a repeat, as a retried
 * TxnOffsetCommit simply rewrites the same offset. It needs no member check
 * (it was checked when it was stored, and share-group membership does not
 * survive a restart) and no new write; `repeated` counts such offsets.
 * Pending for another producer or epoch, or with another type, stays
 * INVALID_RECORD_STATE.
 *
 * A retry repeats the partition's whole entry, which was staged all or
 * nothing: an entry that names offsets already pending in this transaction
 * next to offsets not yet pending is a second acknowledgement of those
 * offsets, not a retry, and is refused (INVALID_RECORD_STATE). One
 * acknowledgement names an offset, not a delivery: accepting it twice in a
 * transaction could cover two outputs of one record (DESIGN §5.8). Within
 * one request, batches naming an offset twice are already INVALID_REQUEST
 * (validateAckBatches).
 */
export function planTransactional(
  window: InFlightWindow,
  producer: ProducerOf,
  memberId: string | null,
  ranges: readonly AckRange[],
  now: number,
): { staged: StagedAck[]; repeated: number } {
  const staged: StagedAck[] = [];
  let repeated = 0;
  for (const range of ranges) {
    window.checkTracked(range);
    for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
      const record = window.recordAt(offset);
      const type = ackTypeAt(range, offset) as TxnAckType;
      if (record.state === 'TX_PENDING') {
        const owner = record.pending!;
        if (isRepeatOf(owner, producer, type)) {
          repeated++;
          continue;
        }
        const sameTransaction = owner.producerId === producer.producerId && owner.producerEpoch === producer.producerEpoch;
        throw new ShareError(
          ErrorCode.INVALID_RECORD_STATE,
          sameTransaction
            ? `offset ${offset} is already pending in this transaction as ${ackTypeName(owner.type)}, not ${ackTypeName(type)}`
            : `offset ${offset} already has a pending acknowledgement in the transaction of producer ${owner.producerId} epoch ${owner.producerEpoch}`,
        );
      }
      if (memberId === null) checkAcquired(record, offset, now);
      else checkAcquiredBy(record, offset, memberId, now);
      staged.push({ offset, type, deliveryCount: record.deliveryCount });
    }
  }
  if (repeated > 0 && staged.length > 0) {
    const again = ranges.flatMap((r) => [...offsetsOf(r)]).find((o) => window.recordAt(o).state === 'TX_PENDING');
    throw new ShareError(
      ErrorCode.INVALID_RECORD_STATE,
      `offset ${again} is already acknowledged in this transaction; only a retry of the same acknowledgements may name it again`,
    );
  }
  return { staged, repeated };
}

/**
 * Applies a plan of planTransactional (made in the same turn, so still
 * valid): the records become TX_PENDING and their locks stop counting; only
 * the transaction's marker releases them.
 */
export function applyTransactional(window: InFlightWindow, pending: ProducerOf, staged: readonly StagedAck[]): void {
  for (const { offset, type } of staged) {
    const record = window.recordAt(offset);
    record.state = 'TX_PENDING';
    record.lockDeadline = 0;
    record.pending = { producerId: pending.producerId, producerEpoch: pending.producerEpoch, type };
  }
}

/**
 * Resolves the pending acknowledgements of `producerId` (DESIGN §5.2).
 * Commit applies them; abort makes the records AVAILABLE at once, delivery
 * count kept, so that a record failing every time still reaches the limit.
 * Both apply `deliveryCountLimit`, the limit of now (the marker's moment),
 * not the one of when the acknowledgement was staged. A marker of an older
 * epoch than the pending acknowledgement is stale and leaves it alone. The
 * caller advances the start offset afterwards.
 */
export function completeTransaction(
  window: InFlightWindow,
  deliveryCountLimit: number,
  producerId: bigint,
  producerEpoch: number,
  commit: boolean,
): StateChange[] {
  const changes: StateChange[] = [];
  for (const [index, record] of window.records.entries()) {
    const pending = record.pending;
    if (pending === null || pending.producerId !== producerId || pending.producerEpoch > producerEpoch) continue;
    if (!commit || pending.type === AckType.RELEASE) release(record, deliveryCountLimit);
    else finish(record, pending.type === AckType.ACCEPT ? 'ACKNOWLEDGED' : 'ARCHIVED');
    changes.push(change(window.start + BigInt(index), record));
  }
  return changes;
}

function* offsetsOf(range: AckRange): Generator<bigint> {
  for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) yield offset;
}
