import { AckType, type AckRange, type TxnAckType, ackTypeAt, ackTypeName } from './acknowledgements.js';
import { ErrorCode, ShareError } from './share-error.js';

/**
 * The in-flight state of one share partition (group, topic id, partition):
 * KIP-932's record state machine plus DESIGN §5.1's TX_PENDING.
 *
 *   AVAILABLE ──fetch──▶ ACQUIRED ──ACCEPT──▶ ACKNOWLEDGED
 *       ▲                   │ │ └──REJECT/GAP──▶ ARCHIVED
 *       │  RELEASE, lock    │ │
 *       └── expiry, member ─┘ └──TxnShareAcknowledge──▶ TX_PENDING
 *           leaving, session close                         │
 *           (ARCHIVED once the delivery count             commit: ACCEPT → ACKNOWLEDGED,
 *            reached the limit)                                   REJECT → ARCHIVED,
 *                                                                 RELEASE → AVAILABLE
 *                                                         abort:  AVAILABLE
 *                                                         (both: ARCHIVED at the limit
 *                                                          in force at the marker)
 *
 * An AVAILABLE record whose delivery count already reached the limit (the
 * group's limit was lowered after it became AVAILABLE) is archived when a
 * fetch reaches it, never delivered.
 *
 * Pure and synchronous: time comes in as `now`, the log comes in as a
 * LogWindow, and every method that changes persisted state returns the
 * StateChanges for the persistence layer to write. Offsets below startOffset
 * are finished; [startOffset, endOffset) are tracked here; endOffset and
 * beyond have never been fetched.
 */

export type RecordState = 'AVAILABLE' | 'ACQUIRED' | 'ACKNOWLEDGED' | 'ARCHIVED' | 'TX_PENDING';

export interface SharePartitionKey {
  groupId: string;
  topicId: string;
  partition: number;
}

export function sharePartitionKeyString(key: SharePartitionKey): string {
  // Kafka's own form of the key (FindCoordinator key type SHARE).
  return `${key.groupId}:${key.topicId}:${key.partition}`;
}

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

interface InFlightRecord {
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

/** A staged transactional acknowledgement of one offset: what the transactional ShareUpdate records. */
export interface StagedAck {
  offset: bigint;
  type: TxnAckType;
  deliveryCount: number;
}

/** The offsets that a ShareFetch acquired, as AcquiredRecords ranges. */
export interface AcquiredRange {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryCount: number;
}

/**
 * What a fetch read from the data partition's log, as the state machine needs
 * it: offsets in [startOffset, endOffset) were examined, and isAcquirable says
 * which of them are committed data records (not control records, not aborted
 * transactional data, not holes). endOffset never exceeds the last stable offset.
 */
export interface LogWindow {
  startOffset: bigint;
  endOffset: bigint;
  isAcquirable(offset: bigint): boolean;
}

export interface SharePartitionLimits {
  deliveryCountLimit: number;
  recordLockDurationMs: number;
  maxRecordLocks: number;
}

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

export class SharePartition {
  private start: bigint;
  /** records[i] is the state of offset start + i. */
  private records: InFlightRecord[] = [];

  constructor(
    readonly key: SharePartitionKey,
    private readonly limits: SharePartitionLimits,
    startOffset = 0n,
  ) {
    this.start = startOffset;
  }

  /**
   * Rebuilds a share partition from its persisted state: the committed ranges
   * and the transactional acknowledgements still waiting for a marker, which
   * come back TX_PENDING. Offsets inside the window that no range names were
   * never delivered (or their delivery was not persisted) and come back AVAILABLE.
   */
  static restore(
    key: SharePartitionKey,
    limits: SharePartitionLimits,
    startOffset: bigint,
    ranges: readonly RestoredRange[],
    pending: readonly RestoredPendingAck[],
  ): SharePartition {
    const partition = new SharePartition(key, limits, startOffset);
    const at = (offset: bigint): InFlightRecord => {
      while (partition.endOffset <= offset) partition.records.push(available(0));
      return partition.records[Number(offset - startOffset)]!;
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
      if (ack.type === AckType.REJECT && ack.deliveryCount >= limits.deliveryCountLimit) record.pending.orReleaseAtLimit = true;
    }
    partition.advanceStart();
    return partition;
  }

  /** The share-partition start offset: every offset below it is ACKNOWLEDGED or ARCHIVED. */
  get startOffset(): bigint {
    return this.start;
  }

  /** The first offset not yet tracked (never fetched). */
  get endOffset(): bigint {
    return this.start + BigInt(this.records.length);
  }

  /** Where the next fetch must read from: the first AVAILABLE record, else the end offset. */
  nextFetchOffset(): bigint {
    const index = this.records.findIndex((r) => r.state === 'AVAILABLE');
    return index < 0 ? this.endOffset : this.start + BigInt(index);
  }

  /** The state of one offset (for tests and checks); offsets below the start are reported ARCHIVED/ACKNOWLEDGED as 'FINISHED'. */
  stateOf(offset: bigint): RecordState | 'FINISHED' | 'UNTRACKED' {
    if (offset < this.start) return 'FINISHED';
    return this.records[Number(offset - this.start)]?.state ?? 'UNTRACKED';
  }

  deliveryCountOf(offset: bigint): number {
    return offset < this.start ? 0 : (this.records[Number(offset - this.start)]?.deliveryCount ?? 0);
  }

  /** True when some record waits for a marker of this producer. */
  hasPendingFor(producerId: bigint): boolean {
    return this.records.some((r) => r.pending?.producerId === producerId);
  }

  /**
   * Acquires for `memberId` up to `maxRecords` records: first the AVAILABLE
   * records already tracked, then new offsets past the end offset, as long as
   * fewer than maxRecordLocks offsets are in flight. Offsets of the window that
   * are not acquirable (control records, aborted data, holes) are ARCHIVED on
   * the way, so that the start offset can move past them; that needs no
   * persisting, since a replay re-reads the log and archives them again.
   *
   * An AVAILABLE record whose delivery count already reached the limit is
   * ARCHIVED instead of delivered, and its change is pushed to `archived` for
   * the caller to persist (replay cannot re-derive it: the limit is not in the
   * log). Kafka applies its limit only on the way back to AVAILABLE
   * (InFlightState.tryUpdateState, server/share/fetch) and never re-checks on
   * acquire (SharePartition.acquire), since its maxDeliveryCount is fixed per
   * SharePartition; kipgen's group config share.delivery.count.limit can be
   * lowered under AVAILABLE records, and a crash between a marker and the
   * update it leads to can restore one, so acquiring checks again.
   */
  acquire(memberId: string, window: LogWindow, maxRecords: number, now: number, archived: StateChange[] = []): AcquiredRange[] {
    const acquired: { offset: bigint; deliveryCount: number }[] = [];
    const deadline = now + this.limits.recordLockDurationMs;
    const take = (record: InFlightRecord, offset: bigint): void => {
      record.state = 'ACQUIRED';
      record.deliveryCount += 1;
      record.memberId = memberId;
      record.lockDeadline = deadline;
      acquired.push({ offset, deliveryCount: record.deliveryCount });
    };
    const stop = minBig(window.endOffset, this.endOffset);
    for (let offset = maxBig(this.nextFetchOffset(), window.startOffset); offset < stop && acquired.length < maxRecords; offset++) {
      const record = this.records[Number(offset - this.start)]!;
      if (record.state !== 'AVAILABLE') continue;
      if (!window.isAcquirable(offset)) record.state = 'ARCHIVED';
      else if (record.deliveryCount >= this.limits.deliveryCountLimit) {
        finish(record, 'ARCHIVED');
        archived.push(change(offset, record));
      } else take(record, offset);
    }
    // New offsets extend the window contiguously; a hole before the window cannot be judged, so nothing is added then.
    if (this.endOffset >= window.startOffset) {
      while (
        this.endOffset < window.endOffset &&
        acquired.length < maxRecords &&
        this.endOffset - this.start < BigInt(this.limits.maxRecordLocks)
      ) {
        const offset = this.endOffset;
        const record = available(0);
        this.records.push(record);
        if (window.isAcquirable(offset)) take(record, offset);
        else record.state = 'ARCHIVED';
      }
    }
    this.advanceStart();
    return toRanges(acquired);
  }

  /**
   * Applies ShareFetch/ShareAcknowledge acknowledgements of `memberId`,
   * all or nothing: every offset must be ACQUIRED by that member with its lock
   * still running (a GAP may also name an offset already ARCHIVED, such as a
   * control record), else ShareError(INVALID_RECORD_STATE) and nothing changes.
   */
  acknowledge(memberId: string, ranges: readonly AckRange[], now: number): StateChange[] {
    for (const range of ranges) {
      this.checkTracked(range);
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        const record = this.recordAt(offset);
        if (ackTypeAt(range, offset) === AckType.GAP && record.state === 'ARCHIVED') continue;
        this.checkAcquiredBy(record, offset, memberId, now);
      }
    }
    const changes: StateChange[] = [];
    for (const range of ranges) {
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        const record = this.recordAt(offset);
        const type = ackTypeAt(range, offset);
        switch (type) {
          case AckType.ACCEPT:
            finish(record, 'ACKNOWLEDGED');
            break;
          case AckType.REJECT:
          case AckType.GAP:
            if (record.state === 'ARCHIVED') continue; // a GAP for an offset archived at fetch time
            finish(record, 'ARCHIVED');
            break;
          case AckType.RELEASE:
            this.release(record);
            break;
          case AckType.RENEW:
            record.lockDeadline = now + this.limits.recordLockDurationMs;
            continue; // the lock is not persisted
        }
        changes.push(change(offset, record));
      }
    }
    this.advanceStart();
    return changes;
  }

  /**
   * TxnShareAcknowledge: pins the records as TX_PENDING for the producer's
   * transaction (planTransactional, then applyTransactional). Returns what was
   * newly staged (nothing for a pure retry).
   */
  stageTransactional(pending: ProducerOf, memberId: string | null, ranges: readonly AckRange[], now: number): StagedAck[] {
    const { staged } = this.planTransactional(pending, memberId, ranges, now);
    this.applyTransactional(pending, staged);
    return staged;
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
  planTransactional(
    producer: ProducerOf,
    memberId: string | null,
    ranges: readonly AckRange[],
    now: number,
  ): { staged: StagedAck[]; repeated: number } {
    const staged: StagedAck[] = [];
    let repeated = 0;
    for (const range of ranges) {
      this.checkTracked(range);
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        const record = this.recordAt(offset);
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
        if (memberId === null) this.checkAcquired(record, offset, now);
        else this.checkAcquiredBy(record, offset, memberId, now);
        staged.push({ offset, type, deliveryCount: record.deliveryCount });
      }
    }
    if (repeated > 0 && staged.length > 0) {
      const again = ranges
        .flatMap((r) => [...offsetsOf(r)])
        .find((o) => this.recordAt(o).state === 'TX_PENDING');
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
  applyTransactional(pending: ProducerOf, staged: readonly StagedAck[]): void {
    for (const { offset, type } of staged) {
      const record = this.recordAt(offset);
      record.state = 'TX_PENDING';
      record.lockDeadline = 0;
      record.pending = { producerId: pending.producerId, producerEpoch: pending.producerEpoch, type };
    }
  }

  /**
   * Resolves the pending acknowledgements of `producerId` (DESIGN §5.2).
   * Commit applies them; abort makes the records AVAILABLE at once, delivery
   * count kept, so that a record failing every time still reaches the limit.
   * Both apply the delivery-count limit of now (the marker's moment), not the
   * one of when the acknowledgement was staged. A marker of an older epoch
   * than the pending acknowledgement is stale and leaves it alone.
   */
  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): StateChange[] {
    const changes: StateChange[] = [];
    for (const [index, record] of this.records.entries()) {
      const pending = record.pending;
      if (pending === null || pending.producerId !== producerId || pending.producerEpoch > producerEpoch) continue;
      if (!commit || pending.type === AckType.RELEASE) this.release(record);
      else finish(record, pending.type === AckType.ACCEPT ? 'ACKNOWLEDGED' : 'ARCHIVED');
      changes.push(change(this.start + BigInt(index), record));
    }
    this.advanceStart();
    return changes;
  }

  /** Lock expiry: every ACQUIRED record whose lock ran out by `now` is released. */
  expireLocks(now: number): StateChange[] {
    return this.releaseWhere((r) => r.state === 'ACQUIRED' && r.lockDeadline <= now);
  }

  /** A member left, timed out, or closed its share session: its ACQUIRED records are released (TX_PENDING ones stay with their transaction). */
  releaseMember(memberId: string): StateChange[] {
    return this.releaseWhere((r) => r.state === 'ACQUIRED' && r.memberId === memberId);
  }

  /** The earliest lock deadline of an ACQUIRED record, or null; lets the caller schedule expiry. */
  earliestLockDeadline(): number | null {
    let earliest: number | null = null;
    for (const r of this.records) if (r.state === 'ACQUIRED' && (earliest === null || r.lockDeadline < earliest)) earliest = r.lockDeadline;
    return earliest;
  }

  /** Records below the log start offset no longer exist: they are finished (Kafka moves the start offset likewise). */
  moveStartTo(offset: bigint): void {
    if (offset <= this.start) return;
    const drop = minBig(offset - this.start, BigInt(this.records.length));
    this.records.splice(0, Number(drop));
    this.start = offset;
  }

  /** The state as coalesced ranges, for dumps. */
  describe(): { startOffset: bigint; endOffset: bigint; ranges: RangeDescription[] } {
    const ranges: RangeDescription[] = [];
    for (const [index, record] of this.records.entries()) {
      const offset = this.start + BigInt(index);
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
    return { startOffset: this.start, endOffset: this.endOffset, ranges };
  }

  // -------------------------------------------------------------------------

  private releaseWhere(predicate: (record: InFlightRecord) => boolean): StateChange[] {
    const changes: StateChange[] = [];
    for (const [index, record] of this.records.entries()) {
      if (!predicate(record)) continue;
      this.release(record);
      changes.push(change(this.start + BigInt(index), record));
    }
    this.advanceStart();
    return changes;
  }

  /** Back to AVAILABLE for redelivery, or ARCHIVED once the delivery count reached the limit. */
  private release(record: InFlightRecord): void {
    finish(record, record.deliveryCount >= this.limits.deliveryCountLimit ? 'ARCHIVED' : 'AVAILABLE');
  }

  /** Moves the start offset past the leading ACKNOWLEDGED/ARCHIVED records. */
  private advanceStart(): void {
    let n = 0;
    while (n < this.records.length && isFinished(this.records[n]!.state)) n++;
    if (n === 0) return;
    this.records.splice(0, n);
    this.start += BigInt(n);
  }

  private recordAt(offset: bigint): InFlightRecord {
    return this.records[Number(offset - this.start)]!;
  }

  /** Offsets outside [start, end) were never acquired, or have finished: either way they cannot be acknowledged. */
  private checkTracked(range: AckRange): void {
    if (range.firstOffset < this.start || range.lastOffset >= this.endOffset) {
      throw new ShareError(
        ErrorCode.INVALID_RECORD_STATE,
        `offsets ${range.firstOffset}-${range.lastOffset} are not all in flight (in flight: ${this.start}-${this.endOffset - 1n})`,
      );
    }
  }

  private checkAcquired(record: InFlightRecord, offset: bigint, now: number): void {
    if (record.state !== 'ACQUIRED' || record.lockDeadline <= now) {
      throw new ShareError(ErrorCode.INVALID_RECORD_STATE, `offset ${offset} is ${describeState(record, now)}, not ACQUIRED`);
    }
  }

  private checkAcquiredBy(record: InFlightRecord, offset: bigint, memberId: string, now: number): void {
    this.checkAcquired(record, offset, now);
    if (record.memberId !== memberId) {
      throw new ShareError(ErrorCode.INVALID_RECORD_STATE, `offset ${offset} is acquired by another member, not ${memberId}`);
    }
  }
}

function available(deliveryCount: number): InFlightRecord {
  return { state: 'AVAILABLE', deliveryCount, memberId: null, lockDeadline: 0, pending: null };
}

function finish(record: InFlightRecord, state: 'AVAILABLE' | 'ACKNOWLEDGED' | 'ARCHIVED'): void {
  record.state = state;
  record.memberId = null;
  record.lockDeadline = 0;
  record.pending = null;
}

function change(offset: bigint, record: InFlightRecord): StateChange {
  return { offset, state: record.state, deliveryCount: record.deliveryCount };
}

function isFinished(state: RecordState): boolean {
  return state === 'ACKNOWLEDGED' || state === 'ARCHIVED';
}

function describeState(record: InFlightRecord, now: number): string {
  if (record.state === 'ACQUIRED' && record.lockDeadline <= now) return 'ACQUIRED with an expired lock';
  return record.state;
}

function toRanges(offsets: readonly { offset: bigint; deliveryCount: number }[]): AcquiredRange[] {
  const ranges: AcquiredRange[] = [];
  for (const { offset, deliveryCount } of offsets) {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.lastOffset === offset - 1n && last.deliveryCount === deliveryCount) last.lastOffset = offset;
    else ranges.push({ firstOffset: offset, lastOffset: offset, deliveryCount });
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

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function* offsetsOf(range: AckRange): Generator<bigint> {
  for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) yield offset;
}
