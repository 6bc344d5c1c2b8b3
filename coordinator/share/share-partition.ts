import { AckType, type AckRange, ackTypeAt } from './acknowledgements.js';
import {
  available,
  change,
  checkAcquiredBy,
  finish,
  release,
  type InFlightRecord,
  type ProducerOf,
  type RecordState,
  type StateChange,
} from './in-flight-state.js';
import { InFlightWindow, maxBig, minBig } from './in-flight-window.js';
import { applyTransactional, completeTransaction, hasPendingFor, planTransactional, type StagedAck } from './pending-acks.js';
import { describeWindow, restoreInto, type RangeDescription, type RestoredPendingAck, type RestoredRange } from './partition-view.js';

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
 *
 * The parts live by concern, as Kafka's SharePartition keeps InFlightState,
 * InFlightBatch and PersisterStateBatch apart: one record's state and
 * transitions in in-flight-state.ts, the tracked offsets in
 * in-flight-window.ts, the transactional acknowledgements in pending-acks.ts,
 * restore and dumps in partition-view.ts. This class holds the
 * ShareFetch/ShareAcknowledge operations and the partition's one entry point;
 * the names re-exported below keep importers on this module.
 */

export { isRepeatOf, type PendingAck, type ProducerOf, type RecordState, type StateChange } from './in-flight-state.js';
export type { StagedAck } from './pending-acks.js';
export type { RangeDescription, RestoredPendingAck, RestoredRange } from './partition-view.js';

export interface SharePartitionKey {
  groupId: string;
  topicId: string;
  partition: number;
}

export function sharePartitionKeyString(key: SharePartitionKey): string {
  // Kafka's own form of the key (FindCoordinator key type SHARE).
  return `${key.groupId}:${key.topicId}:${key.partition}`;
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

export class SharePartition {
  private readonly window: InFlightWindow;

  constructor(
    readonly key: SharePartitionKey,
    private readonly limits: SharePartitionLimits,
    startOffset = 0n,
  ) {
    this.window = new InFlightWindow(startOffset);
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
    restoreInto(partition.window, limits.deliveryCountLimit, ranges, pending);
    partition.window.advanceStart();
    return partition;
  }

  /** The share-partition start offset: every offset below it is ACKNOWLEDGED or ARCHIVED. */
  get startOffset(): bigint {
    return this.window.start;
  }

  /** The first offset not yet tracked (never fetched). */
  get endOffset(): bigint {
    return this.window.endOffset;
  }

  /** Where the next fetch must read from: the first AVAILABLE record, else the end offset. */
  nextFetchOffset(): bigint {
    return this.window.nextFetchOffset();
  }

  /** The state of one offset (for tests and checks); offsets below the start are reported ARCHIVED/ACKNOWLEDGED as 'FINISHED'. */
  stateOf(offset: bigint): RecordState | 'FINISHED' | 'UNTRACKED' {
    const { start, records } = this.window;
    if (offset < start) return 'FINISHED';
    return records[Number(offset - start)]?.state ?? 'UNTRACKED';
  }

  deliveryCountOf(offset: bigint): number {
    const { start, records } = this.window;
    return offset < start ? 0 : (records[Number(offset - start)]?.deliveryCount ?? 0);
  }

  /** True when some record waits for a marker of this producer. */
  hasPendingFor(producerId: bigint): boolean {
    return hasPendingFor(this.window, producerId);
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
  acquire(memberId: string, log: LogWindow, maxRecords: number, now: number, archived: StateChange[] = []): AcquiredRange[] {
    const window = this.window;
    const acquired: { offset: bigint; deliveryCount: number }[] = [];
    const deadline = now + this.limits.recordLockDurationMs;
    const take = (record: InFlightRecord, offset: bigint): void => {
      record.state = 'ACQUIRED';
      record.deliveryCount += 1;
      record.memberId = memberId;
      record.lockDeadline = deadline;
      acquired.push({ offset, deliveryCount: record.deliveryCount });
    };
    const stop = minBig(log.endOffset, window.endOffset);
    for (let offset = maxBig(window.nextFetchOffset(), log.startOffset); offset < stop && acquired.length < maxRecords; offset++) {
      const record = window.recordAt(offset);
      if (record.state !== 'AVAILABLE') continue;
      if (!log.isAcquirable(offset)) record.state = 'ARCHIVED';
      else if (record.deliveryCount >= this.limits.deliveryCountLimit) {
        finish(record, 'ARCHIVED');
        archived.push(change(offset, record));
      } else take(record, offset);
    }
    // New offsets extend the window contiguously; a hole before the window cannot be judged, so nothing is added then.
    if (window.endOffset >= log.startOffset) {
      while (window.endOffset < log.endOffset && acquired.length < maxRecords && window.endOffset - window.start < BigInt(this.limits.maxRecordLocks)) {
        const offset = window.endOffset;
        const record = available(0);
        window.records.push(record);
        if (log.isAcquirable(offset)) take(record, offset);
        else record.state = 'ARCHIVED';
      }
    }
    window.advanceStart();
    return toRanges(acquired);
  }

  /**
   * Applies ShareFetch/ShareAcknowledge acknowledgements of `memberId`,
   * all or nothing: every offset must be ACQUIRED by that member with its lock
   * still running (a GAP may also name an offset already ARCHIVED, such as a
   * control record), else ShareError(INVALID_RECORD_STATE) and nothing changes.
   */
  acknowledge(memberId: string, ranges: readonly AckRange[], now: number): StateChange[] {
    const window = this.window;
    for (const range of ranges) {
      window.checkTracked(range);
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        const record = window.recordAt(offset);
        if (ackTypeAt(range, offset) === AckType.GAP && record.state === 'ARCHIVED') continue;
        checkAcquiredBy(record, offset, memberId, now);
      }
    }
    const changes: StateChange[] = [];
    for (const range of ranges) {
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        const record = window.recordAt(offset);
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
            release(record, this.limits.deliveryCountLimit);
            break;
          case AckType.RENEW:
            record.lockDeadline = now + this.limits.recordLockDurationMs;
            continue; // the lock is not persisted
        }
        changes.push(change(offset, record));
      }
    }
    window.advanceStart();
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

  /** Checks a transactional acknowledgement without changing anything (see pending-acks.ts planTransactional). */
  planTransactional(producer: ProducerOf, memberId: string | null, ranges: readonly AckRange[], now: number): { staged: StagedAck[]; repeated: number } {
    return planTransactional(this.window, producer, memberId, ranges, now);
  }

  /** Applies a plan of planTransactional made in the same turn: the records become TX_PENDING. */
  applyTransactional(pending: ProducerOf, staged: readonly StagedAck[]): void {
    applyTransactional(this.window, pending, staged);
  }

  /** Resolves the pending acknowledgements of `producerId` at its marker (see pending-acks.ts completeTransaction). */
  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): StateChange[] {
    const changes = completeTransaction(this.window, this.limits.deliveryCountLimit, producerId, producerEpoch, commit);
    this.window.advanceStart();
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
    for (const r of this.window.records) if (r.state === 'ACQUIRED' && (earliest === null || r.lockDeadline < earliest)) earliest = r.lockDeadline;
    return earliest;
  }

  /** Records below the log start offset no longer exist: they are finished (Kafka moves the start offset likewise). */
  moveStartTo(offset: bigint): void {
    this.window.moveStartTo(offset);
  }

  /** The state as coalesced ranges, for dumps. */
  describe(): { startOffset: bigint; endOffset: bigint; ranges: RangeDescription[] } {
    return { startOffset: this.window.start, endOffset: this.window.endOffset, ranges: describeWindow(this.window) };
  }

  private releaseWhere(predicate: (record: InFlightRecord) => boolean): StateChange[] {
    const window = this.window;
    const changes: StateChange[] = [];
    for (const [index, record] of window.records.entries()) {
      if (!predicate(record)) continue;
      release(record, this.limits.deliveryCountLimit);
      changes.push(change(window.start + BigInt(index), record));
    }
    window.advanceStart();
    return changes;
  }
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
