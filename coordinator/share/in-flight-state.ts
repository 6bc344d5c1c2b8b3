import { AckType, type TxnAckType } from './acknowledgements.js';
import { ErrorCode, ShareError } from './share-error.js';

/**
 * One in-flight record's state and the transitions every operation of a
 * share partition shares, kept apart from the partition's operations as
 * Kafka keeps InFlightState (server/share/fetch) apart from SharePartition.
 * Records are mutated in place: acquisition and acknowledgement touch one
 * record per offset, and an object per transition would be garbage per record.
 */

export type RecordState = 'AVAILABLE' | 'ACQUIRED' | 'ACKNOWLEDGED' | 'ARCHIVED' | 'TX_PENDING';

export interface ProducerOf {
  producerId: bigint;
  producerEpoch: number;
}

/** A transactional acknowledgement waiting for its transaction's marker. */
export interface PendingAck {
  producerId: bigint;
  producerEpoch: number;
  type: TxnAckType;
  /**
   * Set on a pending Reject restored from disk at the delivery-count limit.
   * Logs written before the limit moved to the marker stored a pending Release
   * at the limit as ARCHIVED, the state a Reject gets too, so such a log cannot
   * tell the two apart; a repeat of either type is taken as the same
   * acknowledgement. (A pending Release is now always stored as AVAILABLE.)
   */
  orReleaseAtLimit?: boolean;
}

/** Is an acknowledgement of `type` by `producer` a repeat of this pending one (an idempotent retry)? */
export function isRepeatOf(pending: PendingAck, producer: ProducerOf, type: number): boolean {
  return (
    pending.producerId === producer.producerId &&
    pending.producerEpoch === producer.producerEpoch &&
    (pending.type === type || (pending.orReleaseAtLimit === true && type === AckType.RELEASE))
  );
}

export interface InFlightRecord {
  state: RecordState;
  /** Deliveries so far, the current one included while ACQUIRED. */
  deliveryCount: number;
  /** The member holding the lock while ACQUIRED; kept while TX_PENDING (for dumps), null otherwise. */
  memberId: string | null;
  /** When the acquisition lock runs out (ms); only meaningful while ACQUIRED. */
  lockDeadline: number;
  /** The pending acknowledgement while TX_PENDING. */
  pending: PendingAck | null;
}

/** A record's state after a change, for the persistence layer (which keeps only AVAILABLE, ACKNOWLEDGED and ARCHIVED). */
export interface StateChange {
  offset: bigint;
  state: RecordState;
  deliveryCount: number;
}

export function available(deliveryCount: number): InFlightRecord {
  return { state: 'AVAILABLE', deliveryCount, memberId: null, lockDeadline: 0, pending: null };
}

/** Leaves ACQUIRED/TX_PENDING: the lock and the pending acknowledgement go with the state they belonged to. */
export function finish(record: InFlightRecord, state: 'AVAILABLE' | 'ACKNOWLEDGED' | 'ARCHIVED'): void {
  record.state = state;
  record.memberId = null;
  record.lockDeadline = 0;
  record.pending = null;
}

/** Back to AVAILABLE for redelivery, or ARCHIVED once the delivery count reached the limit. */
export function release(record: InFlightRecord, deliveryCountLimit: number): void {
  finish(record, record.deliveryCount >= deliveryCountLimit ? 'ARCHIVED' : 'AVAILABLE');
}

export function change(offset: bigint, record: InFlightRecord): StateChange {
  return { offset, state: record.state, deliveryCount: record.deliveryCount };
}

export function isFinished(state: RecordState): boolean {
  return state === 'ACKNOWLEDGED' || state === 'ARCHIVED';
}

/** Only a record whose lock still runs may be acknowledged: an expired lock is as good as released, even before expiry ran. */
export function checkAcquired(record: InFlightRecord, offset: bigint, now: number): void {
  if (record.state !== 'ACQUIRED' || record.lockDeadline <= now) {
    throw new ShareError(ErrorCode.INVALID_RECORD_STATE, `offset ${offset} is ${describeState(record, now)}, not ACQUIRED`);
  }
}

export function checkAcquiredBy(record: InFlightRecord, offset: bigint, memberId: string, now: number): void {
  checkAcquired(record, offset, now);
  if (record.memberId !== memberId) {
    throw new ShareError(ErrorCode.INVALID_RECORD_STATE, `offset ${offset} is acquired by another member, not ${memberId}`);
  }
}

function describeState(record: InFlightRecord, now: number): string {
  if (record.state === 'ACQUIRED' && record.lockDeadline <= now) return 'ACQUIRED with an expired lock';
  return record.state;
}
