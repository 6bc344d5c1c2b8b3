import type { ShareSnapshotValue, ShareUpdateValue } from '../../generated/index.js';
import { AckType } from './acknowledgements.js';
import type { RecordState, RestoredRange, StagedAck, StateChange } from './share-partition.js';

/**
 * What `__share_group_state` says about one share partition: the state the
 * snapshot and the committed updates after it add up to, as Kafka's share
 * coordinator keeps it. Only AVAILABLE (0), ACKNOWLEDGED (2) and ARCHIVED (4)
 * are persisted: ACQUIRED is not (a restart makes such records AVAILABLE again,
 * as in Kafka), and TX_PENDING lives on disk as a transactional ShareUpdate
 * that its marker resolves (see share-state-store.ts).
 */

export const PersistedDeliveryState = { AVAILABLE: 0, ACKNOWLEDGED: 2, ARCHIVED: 4 } as const;
export type PersistedDeliveryState = (typeof PersistedDeliveryState)[keyof typeof PersistedDeliveryState];

export interface PersistedRange {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryState: PersistedDeliveryState;
  deliveryCount: number;
}

export class PersistedShareState {
  /** Sorted, disjoint, adjacent ranges with equal values merged. */
  private ranges: PersistedRange[] = [];

  constructor(
    public startOffset: bigint,
    public snapshotEpoch: number,
    public createTimestamp: bigint,
    /** ShareUpdates written since the last ShareSnapshot; a snapshot is due when it reaches the configured count. */
    public updatesSinceSnapshot = 0,
  ) {}

  static fromSnapshot(value: ShareSnapshotValue): PersistedShareState {
    const state = new PersistedShareState(value.startOffset, value.snapshotEpoch, value.createTimestamp);
    for (const batch of value.stateBatches) state.set(batch.firstOffset, batch.lastOffset, toPersistedState(batch.deliveryState), batch.deliveryCount);
    state.normalize();
    return state;
  }

  clone(): PersistedShareState {
    const copy = new PersistedShareState(this.startOffset, this.snapshotEpoch, this.createTimestamp, this.updatesSinceSnapshot);
    copy.ranges = this.ranges.map((r) => ({ ...r }));
    return copy;
  }

  /**
   * Merges a ShareUpdate. The start offset only moves forward: a
   * transactional update carries the start offset of when it was staged, and
   * its commit marker may come after later updates moved it further.
   */
  applyUpdate(value: ShareUpdateValue): void {
    if (value.startOffset >= 0n && value.startOffset > this.startOffset) this.startOffset = value.startOffset;
    for (const batch of value.stateBatches) this.set(batch.firstOffset, batch.lastOffset, toPersistedState(batch.deliveryState), batch.deliveryCount);
    this.normalize();
  }

  toSnapshot(snapshotEpoch: number, writeTimestamp: bigint): ShareSnapshotValue {
    return {
      snapshotEpoch,
      stateEpoch: 0,
      leaderEpoch: 0,
      startOffset: this.startOffset,
      deliveryCompleteCount: this.deliveryCompleteCount(),
      createTimestamp: this.createTimestamp,
      writeTimestamp,
      stateBatches: this.ranges.map((r) => ({
        firstOffset: r.firstOffset,
        lastOffset: r.lastOffset,
        deliveryState: r.deliveryState,
        deliveryCount: r.deliveryCount,
      })),
    };
  }

  /**
   * Does this state say what `change` says of its offset? Below the start
   * offset it says "finished" (ACKNOWLEDGED or ARCHIVED, no longer which).
   */
  agreesWith(change: StateChange): boolean {
    const finished = change.state === 'ACKNOWLEDGED' || change.state === 'ARCHIVED';
    if (change.offset < this.startOffset) return finished;
    const range = this.ranges.find((r) => r.firstOffset <= change.offset && change.offset <= r.lastOffset);
    if (range === undefined) return false;
    return range.deliveryState === persistedStateOf(change.state) && range.deliveryCount === change.deliveryCount;
  }

  restoredRanges(): RestoredRange[] {
    return this.ranges.map((r) => ({
      firstOffset: r.firstOffset,
      lastOffset: r.lastOffset,
      state: r.deliveryState === 0 ? 'AVAILABLE' : r.deliveryState === 2 ? 'ACKNOWLEDGED' : 'ARCHIVED',
      deliveryCount: r.deliveryCount,
    }));
  }

  /** How many offsets at or above the start offset have finished delivery (the snapshot's DeliveryCompleteCount). */
  private deliveryCompleteCount(): number {
    let count = 0n;
    for (const r of this.ranges) if (r.deliveryState !== 0) count += r.lastOffset - r.firstOffset + 1n;
    return count > 0x7fffffffn ? -1 : Number(count);
  }

  private set(firstOffset: bigint, lastOffset: bigint, deliveryState: PersistedDeliveryState, deliveryCount: number): void {
    if (lastOffset < firstOffset) return;
    const next: PersistedRange[] = [];
    for (const r of this.ranges) {
      if (r.lastOffset < firstOffset || r.firstOffset > lastOffset) {
        next.push(r);
        continue;
      }
      if (r.firstOffset < firstOffset) next.push({ ...r, lastOffset: firstOffset - 1n });
      if (r.lastOffset > lastOffset) next.push({ ...r, firstOffset: lastOffset + 1n });
    }
    next.push({ firstOffset, lastOffset, deliveryState, deliveryCount });
    next.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
    this.ranges = mergeAdjacent(next);
  }

  /** Drops what lies below the start offset and moves the start past leading finished ranges. */
  private normalize(): void {
    for (;;) {
      this.ranges = this.ranges.filter((r) => r.lastOffset >= this.startOffset);
      const first = this.ranges[0];
      if (first !== undefined && first.firstOffset < this.startOffset) this.ranges[0] = { ...first, firstOffset: this.startOffset };
      const head = this.ranges[0];
      if (head === undefined || head.firstOffset !== this.startOffset || head.deliveryState === 0) return;
      this.startOffset = head.lastOffset + 1n;
    }
  }
}

function toPersistedState(state: number): PersistedDeliveryState {
  // Anything else on disk (1 ACQUIRED, 3 ARCHIVING from a newer writer) did not finish delivery: treat it as AVAILABLE.
  return state === 2 || state === 4 ? state : 0;
}

/**
 * StateBatches for a ShareUpdate from the changes of one operation: persisted
 * states only, coalesced.
 *
 * A record that finished (ACKNOWLEDGED or ARCHIVED) in the very operation that
 * moved the start offset past it keeps its batch, although replay drops what
 * lies below the start offset anyway: otherwise the log would only say that
 * the start offset passed it, not how it finished, and a record archived at
 * the delivery-count limit (lock expiry, release) or by a REJECT/GAP could not
 * be told from one that was skipped — an auditor reading the log, such as the
 * chaos checker, would count it as lost.
 */
export function stateBatchesOf(changes: readonly StateChange[], startOffset: bigint): ShareUpdateValue['stateBatches'] {
  const latest = new Map<bigint, StateChange>();
  for (const c of changes) {
    const finished = c.state === 'ACKNOWLEDGED' || c.state === 'ARCHIVED';
    if (c.offset < startOffset && !finished) latest.delete(c.offset);
    else if (finished || c.state === 'AVAILABLE') latest.set(c.offset, c);
    else latest.delete(c.offset);
  }
  const sorted = [...latest.values()].sort((a, b) => (a.offset < b.offset ? -1 : 1));
  return mergeAdjacent(sorted.map((c) => single(c.offset, persistedStateOf(c.state), c.deliveryCount)));
}

/**
 * StateBatches of a transactional ShareUpdate: the acknowledgements as the
 * states they stand for (Accept → ACKNOWLEDGED, Reject → ARCHIVED, Release →
 * AVAILABLE), delivery counts kept. A Release is AVAILABLE here even at the
 * delivery-count limit: the limit that decides is the one in force at the
 * marker, which may differ (share.delivery.count.limit is a group config), so
 * the marker's own ShareUpdate says when a Release was archived
 * (SharePartitionManager.completeTransaction). An ARCHIVED written here could never
 * be taken back if the limit went up: replay would pass it at once.
 */
export function pendingStateBatchesOf(staged: readonly StagedAck[]): ShareUpdateValue['stateBatches'] {
  const sorted = [...staged].sort((a, b) => (a.offset < b.offset ? -1 : 1));
  return mergeAdjacent(
    sorted.map((s) =>
      single(
        s.offset,
        s.type === AckType.ACCEPT
          ? PersistedDeliveryState.ACKNOWLEDGED
          : s.type === AckType.REJECT
            ? PersistedDeliveryState.ARCHIVED
            : PersistedDeliveryState.AVAILABLE,
        s.deliveryCount,
      ),
    ),
  );
}

/** The pending acknowledgement a transactional state batch stands for (the inverse of pendingStateBatchesOf). */
export function pendingAckTypeOf(deliveryState: number): typeof AckType.ACCEPT | typeof AckType.RELEASE | typeof AckType.REJECT {
  return deliveryState === PersistedDeliveryState.ACKNOWLEDGED
    ? AckType.ACCEPT
    : deliveryState === PersistedDeliveryState.ARCHIVED
      ? AckType.REJECT
      : AckType.RELEASE;
}

/** The persisted form of a state; undefined for ACQUIRED and TX_PENDING (stateBatchesOf filters them out). */
function persistedStateOf(state: RecordState): PersistedDeliveryState {
  return PersistedDeliveryState[state as keyof typeof PersistedDeliveryState];
}

/** A state batch of one offset. */
function single(offset: bigint, deliveryState: number, deliveryCount: number): ShareUpdateValue['stateBatches'][number] {
  return { firstOffset: offset, lastOffset: offset, deliveryState, deliveryCount };
}

/**
 * Ranges sorted by first offset, each adjacent one with the same state and
 * delivery count merged into the one before it (which is extended in place).
 */
function mergeAdjacent<R extends { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }>(sorted: readonly R[]): R[] {
  const merged: R[] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.lastOffset + 1n === r.firstOffset && last.deliveryState === r.deliveryState && last.deliveryCount === r.deliveryCount) {
      last.lastOffset = r.lastOffset;
    } else {
      merged.push(r);
    }
  }
  return merged;
}
