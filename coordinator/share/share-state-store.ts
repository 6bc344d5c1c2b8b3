import type { ShareUpdateValue } from '../../generated/index.js';
import { readControlRecord, type RecordBatch } from '../../runtime/index.js';
import type { CoordinatorRecord, TransactionalProducer } from '../broker-context.js';
import { decodeShareRecord, encodeSnapshotRecord, encodeTombstone, encodeUpdateRecord } from './share-state-records.js';
import { ErrorCode, ShareError } from './share-error.js';
import { PersistedDeliveryState, PersistedShareState, pendingAckTypeOf, pendingStateBatchesOf, stateBatchesOf } from './persisted-state.js';
import { sharePartitionKeyString, type RestoredPendingAck, type SharePartitionKey, type StagedAck, type StateChange } from './share-partition.js';
import type { StateLog } from './state-log.js';

interface ProducerIdAndEpoch {
  producerId: bigint;
  producerEpoch: number;
}

/**
 * Persistence of share-partition state in this node's `__share_group_state`
 * partition (DESIGN §6):
 *
 * - Every persisted change is a ShareUpdate (a delta; StartOffset −1 when
 *   unchanged). The first write of a share partition, and every
 *   `snapshotUpdateRecords`-th after that, is a full ShareSnapshot instead.
 * - TxnShareAcknowledge writes a transactional ShareUpdate (the producer's id
 *   and epoch on the batch) holding the states the acknowledgements stand for
 *   (a Release is AVAILABLE, whatever its delivery count). It is not merged
 *   until a COMMIT marker follows; an ABORT marker discards it and releases its
 *   records with their delivery counts. That pending record is TX_PENDING's
 *   only form on disk. Neither reading applies the delivery-count limit, which
 *   is not in the log: what the limit in force at the marker archived is
 *   written after the marker as a ShareUpdate of its own (unwritten()).
 * - The producer epoch last seen per producer id (transactional writes and
 *   markers) fences zombies: a TxnShareAcknowledge with an older epoch gets
 *   PRODUCER_FENCED, as a partition's producer state rejects an old epoch.
 *
 * Appends are in the log (fsynced when the flush settings say so, log/flush.ts)
 * when the returned promise resolves. The
 * in-memory views change only after the append succeeded.
 */

export interface ShareStateStoreOptions {
  snapshotUpdateRecords: number;
  now(): number;
}

/** One share partition's change to persist, with the live start offset after it. */
export interface PartitionChanges {
  key: SharePartitionKey;
  startOffset: bigint;
  changes: readonly StateChange[];
}

/** One share partition's transactional acknowledgements. */
export interface PartitionStagedAcks {
  key: SharePartitionKey;
  startOffset: bigint;
  staged: readonly StagedAck[];
}

/** What replay found: each share partition's committed state and the acknowledgements still pending. */
export interface RecoveredSharePartition {
  key: SharePartitionKey;
  /** The committed state; for a share partition known only from pending writes, an empty state at their start offset. */
  state: PersistedShareState;
  pending: RestoredPendingAck[];
}

interface PendingTransaction {
  producerEpoch: number;
  updates: { key: SharePartitionKey; value: ShareUpdateValue }[];
}

export class ShareStateStore {
  private views = new Map<string, { key: SharePartitionKey; state: PersistedShareState }>();
  private pending = new Map<bigint, PendingTransaction>();
  private producerEpochs = new Map<bigint, number>();

  constructor(
    private readonly log: StateLog,
    private readonly options: ShareStateStoreOptions,
  ) {}

  /** Rebuilds the views, pending transactions and producer epochs from the log. */
  recover(): RecoveredSharePartition[] {
    this.views.clear();
    this.pending.clear();
    this.producerEpochs.clear();
    for (const batch of this.log.batches()) this.replayBatch(batch);
    return this.recovered();
  }

  private replayBatch(batch: RecordBatch): void {
    if (batch.isControl) {
      for (const record of batch.records) {
        const control = readControlRecord(record);
        if (control.type !== 'COMMIT' && control.type !== 'ABORT') continue;
        this.seeEpoch(batch.producerId, batch.producerEpoch);
        this.resolve(batch.producerId, batch.producerEpoch, control.type === 'COMMIT');
      }
      return;
    }
    if (batch.isTransactional) {
      const transaction = { producerId: batch.producerId, producerEpoch: batch.producerEpoch };
      this.seeEpoch(transaction.producerId, transaction.producerEpoch);
      for (const record of batch.records) {
        const decoded = decodeShareRecord(record);
        if (decoded.type === 'update') this.addPending(transaction, decoded.key, decoded.value);
      }
      return;
    }
    for (const record of batch.records) {
      const decoded = decodeShareRecord(record);
      switch (decoded.type) {
        case 'snapshot':
          this.views.set(sharePartitionKeyString(decoded.key), {
            key: decoded.key,
            state: PersistedShareState.fromSnapshot(decoded.value),
          });
          break;
        case 'update':
          this.mergeUpdate(decoded.key, decoded.value, true);
          break;
        case 'tombstone':
          this.views.delete(sharePartitionKeyString(decoded.key));
          break;
        case 'other':
          break;
      }
    }
  }

  /** The committed state of a share partition, or undefined if nothing was ever written for it. */
  view(key: SharePartitionKey): PersistedShareState | undefined {
    return this.views.get(sharePartitionKeyString(key))?.state;
  }

  /**
   * The changes that the committed state of `key` does not say (see
   * PersistedShareState.agreesWith): after a marker, what the live partition
   * decided with the delivery-count limit of that moment and the marker alone
   * does not record.
   */
  unwritten(key: SharePartitionKey, changes: readonly StateChange[]): StateChange[] {
    const state = this.view(key);
    return state === undefined ? [...changes] : changes.filter((c) => !state.agreesWith(c));
  }

  /** Producers with transactional acknowledgements awaiting a marker. */
  pendingProducers(): { producerId: bigint; producerEpoch: number; records: number }[] {
    return [...this.pending].map(([producerId, txn]) => ({
      producerId,
      producerEpoch: txn.producerEpoch,
      records: txn.updates.reduce((n, u) => n + u.value.stateBatches.reduce((m, b) => m + Number(b.lastOffset - b.firstOffset + 1n), 0), 0),
    }));
  }

  /**
   * Persists the state changes of several share partitions in one batch (one
   * append). Writes nothing for changes that persist nothing (acquisitions, lock renewals).
   */
  async writeChanges(partitions: readonly PartitionChanges[]): Promise<void> {
    const records: CoordinatorRecord[] = [];
    const nextViews: { id: string; key: SharePartitionKey; state: PersistedShareState }[] = [];
    for (const { key, startOffset, changes } of partitions) {
      const id = sharePartitionKeyString(key);
      const current = this.views.get(id)?.state;
      const stateBatches = stateBatchesOf(changes, startOffset);
      if (stateBatches.length === 0 && current !== undefined && current.startOffset === startOffset) continue;
      const update: ShareUpdateValue = {
        snapshotEpoch: current?.snapshotEpoch ?? 0,
        leaderEpoch: 0,
        startOffset: current !== undefined && current.startOffset === startOffset ? -1n : startOffset,
        deliveryCompleteCount: -1,
        stateBatches,
      };
      const { written, state } = this.nextWrite(key, current, update);
      records.push(...written);
      nextViews.push({ id, key, state });
    }
    if (records.length === 0) return;
    await this.log.append(records);
    for (const { id, key, state } of nextViews) this.views.set(id, { key, state });
  }

  /** Throws PRODUCER_FENCED when a newer epoch of this producer id has already written here. */
  checkProducerEpoch(producerId: bigint, producerEpoch: number): void {
    const known = this.producerEpochs.get(producerId);
    if (known !== undefined && producerEpoch < known) {
      throw new ShareError(ErrorCode.PRODUCER_FENCED, `producer ${producerId} epoch ${producerEpoch} is fenced by epoch ${known}`);
    }
  }

  /** Writes a TxnShareAcknowledge's acknowledgements as one transactional batch of ShareUpdates. */
  async writeTransactional(transaction: TransactionalProducer, partitions: readonly PartitionStagedAcks[]): Promise<void> {
    const updates = partitions
      .filter((p) => p.staged.length > 0)
      .map(({ key, startOffset, staged }) => ({
        key,
        value: {
          snapshotEpoch: this.views.get(sharePartitionKeyString(key))?.state.snapshotEpoch ?? 0,
          leaderEpoch: 0,
          // The start offset of when it was staged; merged only if still ahead (PersistedShareState.applyUpdate).
          startOffset: startOffset,
          deliveryCompleteCount: -1,
          stateBatches: pendingStateBatchesOf(staged),
        } satisfies ShareUpdateValue,
      }));
    if (updates.length === 0) return;
    await this.log.append(
      updates.map((u) => encodeUpdateRecord(u.key, u.value)),
      transaction,
    );
    this.seeEpoch(transaction.producerId, transaction.producerEpoch);
    for (const u of updates) this.addPending(transaction, u.key, u.value);
  }

  /**
   * The marker for this producer was written (by the broker's WriteTxnMarkers):
   * merges its pending updates on commit, drops them on abort.
   */
  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): void {
    this.seeEpoch(producerId, producerEpoch);
    this.resolve(producerId, producerEpoch, commit);
  }

  /** Removes share partitions' state in one append (DeleteShareGroupOffsets; Kafka: ShareCoordinatorShard.deleteState). */
  async deleteState(keys: readonly SharePartitionKey[]): Promise<void> {
    if (keys.length === 0) return;
    await this.log.append(keys.map(encodeTombstone));
    for (const key of keys) this.views.delete(sharePartitionKeyString(key));
  }

  /**
   * Re-initializes share partitions at new start offsets, nothing in flight
   * (AlterShareGroupOffsets; Kafka: ShareCoordinatorShard.initializeState). A
   * full ShareSnapshot, because a ShareUpdate's start offset only moves forward
   * and replay lets a snapshot replace whatever was before it.
   */
  async initializeState(partitions: readonly { key: SharePartitionKey; startOffset: bigint }[]): Promise<void> {
    if (partitions.length === 0) return;
    const now = BigInt(this.options.now());
    const next = partitions.map(({ key, startOffset }) => {
      const state = new PersistedShareState(startOffset, (this.view(key)?.snapshotEpoch ?? 0) + 1, now);
      return { key, state, record: encodeSnapshotRecord(key, state.toSnapshot(state.snapshotEpoch, now)) };
    });
    await this.log.append(next.map((n) => n.record));
    for (const { key, state } of next) this.views.set(sharePartitionKeyString(key), { key, state });
  }

  // -------------------------------------------------------------------------

  /**
   * The records to write for an update: the update itself, or a full snapshot
   * when one is due (or none exists yet). A snapshot holds nothing below its
   * start offset, so when the update finished records that the start offset
   * has already passed, an update naming just those follows the snapshot (same
   * batch, one append): the log then still says how they finished (see
   * stateBatchesOf). Replay merges it as a no-op below the start offset.
   */
  private nextWrite(
    key: SharePartitionKey,
    current: PersistedShareState | undefined,
    update: ShareUpdateValue,
  ): { written: CoordinatorRecord[]; state: PersistedShareState } {
    const now = BigInt(this.options.now());
    const state = current?.clone() ?? new PersistedShareState(update.startOffset < 0n ? 0n : update.startOffset, -1, now);
    state.applyUpdate(update);
    if (current === undefined || state.updatesSinceSnapshot + 1 >= this.options.snapshotUpdateRecords) {
      state.snapshotEpoch += 1;
      state.updatesSinceSnapshot = 0;
      const snapshot = encodeSnapshotRecord(key, state.toSnapshot(state.snapshotEpoch, now));
      const below = update.stateBatches
        .filter((b) => b.firstOffset < state.startOffset)
        .map((b) => (b.lastOffset < state.startOffset ? b : { ...b, lastOffset: state.startOffset - 1n }));
      if (below.length === 0) return { written: [snapshot], state };
      // Replay counts the trailing update toward the next snapshot: so does the live state.
      state.updatesSinceSnapshot = 1;
      const finished: ShareUpdateValue = { ...update, snapshotEpoch: state.snapshotEpoch, startOffset: -1n, stateBatches: below };
      return { written: [snapshot, encodeUpdateRecord(key, finished)], state };
    }
    state.updatesSinceSnapshot += 1;
    return { written: [encodeUpdateRecord(key, update)], state };
  }

  private mergeUpdate(key: SharePartitionKey, value: ShareUpdateValue, countsTowardSnapshot: boolean): void {
    const id = sharePartitionKeyString(key);
    let view = this.views.get(id);
    if (view === undefined) {
      // An update without a snapshot before it: start from its own start offset.
      view = {
        key,
        state: new PersistedShareState(value.startOffset < 0n ? 0n : value.startOffset, value.snapshotEpoch, BigInt(this.options.now())),
      };
      this.views.set(id, view);
    }
    view.state.applyUpdate(value);
    if (countsTowardSnapshot) view.state.updatesSinceSnapshot += 1;
  }

  private addPending(transaction: ProducerIdAndEpoch, key: SharePartitionKey, value: ShareUpdateValue): void {
    const txn = this.pending.get(transaction.producerId);
    if (txn === undefined) this.pending.set(transaction.producerId, { producerEpoch: transaction.producerEpoch, updates: [{ key, value }] });
    else {
      txn.producerEpoch = Math.max(txn.producerEpoch, transaction.producerEpoch);
      txn.updates.push({ key, value });
    }
  }

  /**
   * A marker ends the producer's pending updates. COMMIT merges them. ABORT
   * gives their records back, AVAILABLE with the delivery count they had
   * when staged, as the live abort does (DESIGN §5.2): the marker alone
   * records that, so the counts survive a crash right after the marker was
   * appended. Neither applies the delivery-count limit: the limit in force
   * at the marker is not in the log, and replay must not guess it from the
   * limit of replay time. Records it archived follow the marker as a
   * ShareUpdate; if a crash came first, they come back AVAILABLE at or over
   * the limit and the next fetch archives them (SharePartition.acquire).
   */
  private resolve(producerId: bigint, markerEpoch: number, commit: boolean): void {
    const txn = this.pending.get(producerId);
    // A marker older than the pending writes cannot end their transaction.
    if (txn === undefined || txn.producerEpoch > markerEpoch) return;
    this.pending.delete(producerId);
    for (const { key, value } of txn.updates) this.mergeUpdate(key, commit ? value : abortedUpdateOf(value), false);
  }

  private seeEpoch(producerId: bigint, producerEpoch: number): void {
    const known = this.producerEpochs.get(producerId);
    if (known === undefined || producerEpoch > known) this.producerEpochs.set(producerId, producerEpoch);
  }

  private recovered(): RecoveredSharePartition[] {
    const byKey = new Map<string, RecoveredSharePartition>();
    for (const [id, { key, state }] of this.views) byKey.set(id, { key, state, pending: [] });
    for (const [producerId, txn] of this.pending) {
      for (const { key, value } of txn.updates) {
        const id = sharePartitionKeyString(key);
        let entry = byKey.get(id);
        if (entry === undefined) {
          const state = new PersistedShareState(value.startOffset < 0n ? 0n : value.startOffset, value.snapshotEpoch, BigInt(this.options.now()));
          byKey.set(id, (entry = { key, state, pending: [] }));
        }
        for (const batch of value.stateBatches) {
          for (let offset = batch.firstOffset; offset <= batch.lastOffset; offset++) {
            entry.pending.push({
              offset,
              producerId,
              producerEpoch: txn.producerEpoch,
              type: pendingAckTypeOf(batch.deliveryState),
              deliveryCount: batch.deliveryCount,
            });
          }
        }
      }
    }
    return [...byKey.values()];
  }
}

/** What an aborted transactional update leaves: its records released, delivery counts kept. */
function abortedUpdateOf(value: ShareUpdateValue): ShareUpdateValue {
  return { ...value, stateBatches: value.stateBatches.map((b) => ({ ...b, deliveryState: PersistedDeliveryState.AVAILABLE })) };
}
