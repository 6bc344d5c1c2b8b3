/**
 * Persistence of share-partition state in `__share_group_state`, through the
 * stand-alone StandaloneStateLog (a real append-only file): ShareUpdate deltas,
 * ShareSnapshots, transactional updates resolved by markers, producer fencing,
 * torn tails, and Kafka's coordinator-record layout on disk.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import { decodeShareRecord } from '../../coordinator/share/share-state-records.js';
import { ErrorCode, ShareError } from '../../coordinator/share/share-error.js';
import { StandaloneStateLog } from '../../coordinator/share/standalone-state-log.js';
import { SharePartition, type StateChange } from '../../coordinator/share/share-partition.js';
import { ShareStateStore } from '../../coordinator/share/share-state-store.js';
import { ShareSnapshotKey, ShareUpdateValue } from '../../generated/index.js';
import { finalState, replayShareState } from '../../chaos/checker.js';

const KEY = { groupId: 'g', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 3 };
const LIMITS = { deliveryCountLimit: 3, recordLockDurationMs: 30_000, maxRecordLocks: 200 };
const TXN = { transactionalId: 'tx', producerId: 42n, producerEpoch: 1 };
const T0 = 1_000_000;
const window = (start: bigint, end: bigint) => ({ startOffset: start, endOffset: end, isAcquirable: () => true });

const opened: StandaloneStateLog[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-share-'));
  dirs.push(dir);
  return path.join(dir, '__share_group_state-0.log');
}

async function openStore(file: string, snapshotUpdateRecords = 500): Promise<{ log: StandaloneStateLog; store: ShareStateStore }> {
  const log = await StandaloneStateLog.open(file);
  opened.push(log);
  return { log, store: new ShareStateStore(log, { snapshotUpdateRecords, now: () => T0 }) };
}

/** Restarts: closes the log, reopens the file, replays. */
async function reopen(file: string, log: StandaloneStateLog, snapshotUpdateRecords = 500) {
  await log.close();
  opened.splice(opened.indexOf(log), 1);
  const next = await openStore(file, snapshotUpdateRecords);
  return { ...next, recovered: next.store.recover() };
}

function change(offset: bigint, state: StateChange['state'], deliveryCount: number): StateChange {
  return { offset, state, deliveryCount };
}

function recordTypes(log: StandaloneStateLog): string[] {
  const out: string[] = [];
  for (const batch of log.batches()) {
    if (batch.isControl) out.push('marker');
    else for (const r of batch.records) out.push((batch.isTransactional ? 'txn-' : '') + decodeShareRecord(r).type);
  }
  return out;
}

describe('share state persistence', () => {
  it('writes a snapshot first, then ShareUpdate deltas, then a snapshot every N updates; replay rebuilds the state', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file, 3);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(0n, 'AVAILABLE', 1), change(1n, 'AVAILABLE', 1)] }]);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(2n, 'ARCHIVED', 1)] }]);
    await store.writeChanges([{ key: KEY, startOffset: 1n, changes: [change(0n, 'ACKNOWLEDGED', 2)] }]);
    await store.writeChanges([{ key: KEY, startOffset: 1n, changes: [change(1n, 'AVAILABLE', 2)] }]);
    // Nothing to persist (an acquisition) writes nothing.
    await store.writeChanges([{ key: KEY, startOffset: 1n, changes: [change(5n, 'ACQUIRED', 1)] }]);
    expect(recordTypes(log)).toEqual(['snapshot', 'update', 'update', 'snapshot']);

    const updates = [...log.batches()].slice(1, 3).map((b) => decodeShareRecord(b.records[0]!));
    expect(updates.map((u) => u.type === 'update' && u.value.startOffset)).toEqual([-1n, 1n]); // −1 when unchanged

    const { recovered } = await reopen(file, log, 3);
    expect(recovered).toHaveLength(1);
    const { state } = recovered[0]!;
    expect(state.startOffset).toBe(1n);
    expect(state.restoredRanges()).toEqual([
      { firstOffset: 1n, lastOffset: 1n, state: 'AVAILABLE', deliveryCount: 2 },
      { firstOffset: 2n, lastOffset: 2n, state: 'ARCHIVED', deliveryCount: 1 },
    ]);
  });

  it('lays records out as Kafka does: int16 record type + key v0, int16 version + value', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(0n, 'ACKNOWLEDGED', 1)] }]);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(3n, 'ARCHIVED', 2)] }]);
    const [snapshot, update] = [...log.batches()].map((b) => b.records[0]!);
    expect([...snapshot!.key!.subarray(0, 2)]).toEqual([0, 0]);
    expect(ShareSnapshotKey.decode(snapshot!.key!.subarray(2), 0)).toMatchObject(KEY);
    expect([...update!.key!.subarray(0, 2)]).toEqual([0, 1]);
    expect([...update!.value!.subarray(0, 2)]).toEqual([0, 0]);
    expect(ShareUpdateValue.decode(update!.value!.subarray(2), 0).stateBatches).toEqual([
      { firstOffset: 3n, lastOffset: 3n, deliveryState: 4, deliveryCount: 2 },
    ]);
  });

  it('a transactional update with no marker comes back as pending acks after a restart', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    const sp = new SharePartition(KEY, LIMITS, 0n);
    sp.acquire('m1', window(0n, 4n), 100, T0);
    const { staged } = sp.planTransactional(TXN, 'm1', [{ firstOffset: 0n, lastOffset: 2n, types: [AckType.ACCEPT, AckType.REJECT, AckType.RELEASE] }], T0);
    await store.writeTransactional(TXN, [{ key: KEY, startOffset: 0n, staged }]);
    expect(recordTypes(log)).toEqual(['txn-update']);
    expect(store.pendingProducers()).toEqual([{ producerId: 42n, producerEpoch: 1, records: 3 }]);

    const { recovered, store: after } = await reopen(file, log);
    expect(recovered[0]!.pending).toEqual([
      { offset: 0n, producerId: 42n, producerEpoch: 1, type: AckType.ACCEPT, deliveryCount: 1 },
      { offset: 1n, producerId: 42n, producerEpoch: 1, type: AckType.REJECT, deliveryCount: 1 },
      { offset: 2n, producerId: 42n, producerEpoch: 1, type: AckType.RELEASE, deliveryCount: 1 },
    ]);
    const restored = SharePartition.restore(KEY, LIMITS, recovered[0]!.state.startOffset, recovered[0]!.state.restoredRanges(), recovered[0]!.pending);
    expect([0n, 1n, 2n, 3n].map((o) => restored.stateOf(o))).toEqual(['TX_PENDING', 'TX_PENDING', 'TX_PENDING', 'UNTRACKED']);
    // Pending acks are not redelivered.
    expect(restored.acquire('m2', window(0n, 4n), 100, T0)).toEqual([{ firstOffset: 3n, lastOffset: 3n, deliveryCount: 1 }]);
    expect(() => after.checkProducerEpoch(42n, 0)).toThrow(ShareError); // the epoch survives the restart too
  });

  it('COMMIT marker: the pending update counts, on replay too, even after a snapshot written in between', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file, 2);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(5n, 'AVAILABLE', 1)] }]); // snapshot
    await store.writeTransactional(TXN, [{ key: KEY, startOffset: 0n, staged: [{ offset: 0n, type: AckType.ACCEPT, deliveryCount: 1 }] }]);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(6n, 'ARCHIVED', 1)] }]); // update
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(7n, 'ARCHIVED', 1)] }]); // snapshot (without the pending ack)
    await log.appendMarker(42n, 1, true);
    store.completeTransaction(42n, 1, true);
    expect(store.view(KEY)!.startOffset).toBe(1n);
    expect(recordTypes(log)).toEqual(['snapshot', 'txn-update', 'update', 'snapshot', 'marker']);

    const { recovered } = await reopen(file, log, 2);
    expect(recovered[0]!.pending).toEqual([]);
    expect(recovered[0]!.state.startOffset).toBe(1n);
    expect(recovered[0]!.state.restoredRanges().map((r) => [r.firstOffset, r.state])).toEqual([
      [5n, 'AVAILABLE'],
      [6n, 'ARCHIVED'],
    ]);
  });

  it('ABORT marker: the pending update is discarded and its records released with their delivery counts, on replay too', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeTransactional(TXN, [{ key: KEY, startOffset: 0n, staged: [{ offset: 0n, type: AckType.ACCEPT, deliveryCount: 2 }] }]);
    await log.appendMarker(42n, 1, false);
    store.completeTransaction(42n, 1, false);
    expect(store.pendingProducers()).toEqual([]);
    const released = [{ firstOffset: 0n, lastOffset: 0n, state: 'AVAILABLE', deliveryCount: 2 }];
    expect(store.view(KEY)!.restoredRanges()).toEqual(released);
    expect(recordTypes(log)).toEqual(['txn-update', 'marker']); // the marker says it all: nothing else is written
    const { recovered } = await reopen(file, log);
    expect(recovered.flatMap((r) => r.pending)).toEqual([]);
    expect(recovered.flatMap((r) => r.state.restoredRanges())).toEqual(released);
  });

  it('keeps the delivery counts of an ABORT even when the process died right after appending the marker', async () => {
    // The broker's crash-after-marker-append point: the marker is on disk, completeTransaction never ran.
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(0n, 'AVAILABLE', 1)] }]);
    await store.writeTransactional(TXN, [
      {
        key: KEY,
        startOffset: 0n,
        staged: [
          { offset: 0n, type: AckType.ACCEPT, deliveryCount: 2 },
          { offset: 1n, type: AckType.RELEASE, deliveryCount: LIMITS.deliveryCountLimit },
        ],
      },
    ]);
    await log.appendMarker(42n, 1, false);
    const { recovered } = await reopen(file, log);
    const restored = SharePartition.restore(KEY, LIMITS, recovered[0]!.state.startOffset, recovered[0]!.state.restoredRanges(), []);
    // Offset 0 comes back with its count (not 1, not 0); offset 1 failed as often as allowed: archived.
    expect(restored.acquire('m', window(0n, 3n), 100, T0)).toEqual([
      { firstOffset: 0n, lastOffset: 0n, deliveryCount: 3 },
      { firstOffset: 2n, lastOffset: 2n, deliveryCount: 1 },
    ]);
    expect(restored.stateOf(1n)).toBe('ARCHIVED');
  });

  it('a record finished by the write that moves the start offset past it keeps its terminal state in the log (archived at the limit is never "skipped")', async () => {
    // Regression (chaos soak seed 5, `lost=8 ack-without-output=8`, state done-unknown): records archived at the
    // delivery-count limit at the head of the partition were written as "start offset 8" alone, which any reader
    // of the log (the chaos checker) must count as lost: nothing says they were archived.
    const file = tempFile();
    const { log, store } = await openStore(file);
    const sp = new SharePartition(KEY, { ...LIMITS, deliveryCountLimit: 1, recordLockDurationMs: 1_000 }, 0n);
    sp.acquire('m1', window(0n, 10n), 5, T0); // offsets 0-4, delivery count 1 = the limit
    await store.writeChanges([{ key: KEY, startOffset: sp.startOffset, changes: [change(9n, 'AVAILABLE', 0)] }]); // first write: a snapshot
    const expired = sp.expireLocks(T0 + 1_000); // lock expiry at the limit: ARCHIVED, and the start offset moves to 5
    expect(sp.startOffset).toBe(5n);
    await store.writeChanges([{ key: KEY, startOffset: sp.startOffset, changes: expired }]);
    // The same again through a write that is a snapshot (the first write of another share partition).
    const other = { ...KEY, partition: 4 };
    const sp2 = new SharePartition(other, { ...LIMITS, deliveryCountLimit: 1, recordLockDurationMs: 1_000 }, 0n);
    sp2.acquire('m1', window(0n, 10n), 3, T0);
    await store.writeChanges([
      { key: other, startOffset: sp2.startOffset, changes: sp2.acknowledge('m1', [{ firstOffset: 0n, lastOffset: 2n, types: [AckType.REJECT] }], T0) },
    ]);
    expect(sp2.startOffset).toBe(3n);

    const states = replayShareState([[...log.batches()]], KEY.groupId, KEY.topicId);
    expect([0n, 1n, 2n, 3n, 4n].map((o) => finalState(states.get(KEY.partition), o).state)).toEqual(Array(5).fill('archived'));
    expect(finalState(states.get(KEY.partition), 5n).state).toBe('available');
    expect([0n, 1n, 2n].map((o) => finalState(states.get(4), o).state)).toEqual(Array(3).fill('archived'));
    // Replay of the broker's own store agrees (the extra batches below the start offset change nothing).
    const { recovered } = await reopen(file, log);
    expect(recovered.map((r) => [r.key.partition, r.state.startOffset])).toEqual([
      [3, 5n],
      [4, 3n],
    ]);
  });

  it('a marker older than the pending write does not resolve it; a bumped epoch (TV2) does', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeTransactional({ ...TXN, producerEpoch: 5 }, [
      { key: KEY, startOffset: 0n, staged: [{ offset: 0n, type: AckType.ACCEPT, deliveryCount: 1 }] },
    ]);
    await log.appendMarker(42n, 4, true);
    let { recovered, log: log2 } = await reopen(file, log);
    expect(recovered[0]!.pending).toHaveLength(1);
    await log2.appendMarker(42n, 6, true);
    ({ recovered } = await reopen(file, log2));
    expect(recovered[0]!.pending).toEqual([]);
    expect(recovered[0]!.state.startOffset).toBe(1n);
  });

  it('fences a producer epoch older than one already written: PRODUCER_FENCED', async () => {
    const { store } = await openStore(tempFile());
    await store.writeTransactional({ ...TXN, producerEpoch: 3 }, [
      { key: KEY, startOffset: 0n, staged: [{ offset: 0n, type: AckType.ACCEPT, deliveryCount: 1 }] },
    ]);
    let code = 0;
    try {
      store.checkProducerEpoch(42n, 2);
    } catch (error) {
      code = (error as ShareError).code;
    }
    expect(code).toBe(ErrorCode.PRODUCER_FENCED);
    expect(() => store.checkProducerEpoch(42n, 3)).not.toThrow();
    expect(() => store.checkProducerEpoch(43n, 0)).not.toThrow();
  });

  it('truncates a torn tail at the last whole batch and keeps appending after it', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(0n, 'AVAILABLE', 2)] }]);
    const good = fs.statSync(file).size;
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(1n, 'AVAILABLE', 3)] }]);
    await log.close();
    opened.splice(opened.indexOf(log), 1);
    fs.truncateSync(file, fs.statSync(file).size - 5); // a write cut short by a crash
    const { store: after, log: log2 } = await openStore(file);
    expect(fs.statSync(file).size).toBe(good);
    const [recovered] = after.recover();
    expect(recovered!.state.restoredRanges()).toEqual([{ firstOffset: 0n, lastOffset: 0n, state: 'AVAILABLE', deliveryCount: 2 }]);
    await after.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(4n, 'ARCHIVED', 1)] }]);
    expect([...log2.batches()].map((b) => b.baseOffset)).toEqual([0n, 1n]);
  });

  it('a tombstone removes a share partition’s state', async () => {
    const file = tempFile();
    const { log, store } = await openStore(file);
    await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [change(0n, 'AVAILABLE', 2)] }]);
    await store.deleteState([KEY]);
    expect(store.view(KEY)).toBeUndefined();
    const { recovered } = await reopen(file, log);
    expect(recovered).toEqual([]);
  });
});
