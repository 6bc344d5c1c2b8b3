/**
 * share.delivery.count.limit changed while records wait: the limit that
 * decides is the one in force when a record goes back to AVAILABLE — for a
 * transactional acknowledgement, at its transaction's marker — and the log
 * says what it decided, so that `__share_group_state`, the live share
 * partition, a restart and an independent reader of the log (the chaos
 * checker's replay) all agree; and acquiring never delivers a record whose
 * delivery count already reached the limit.
 *
 * Regression: a Release pending in a transaction, the limit
 * lowered from 10 to 2 with IncrementalAlterConfigs, commit. The transactional
 * update said AVAILABLE (limit 10 at staging) while the live partition
 * archived the records, and the next write only moved the start offset past
 * them: never processed, yet done (the checker: lost; a restart kept it so).
 * Or, when the live limit was still the one read at the last fetch, the
 * records came back AVAILABLE and were delivered above the new limit.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { finalState, replayShareState } from '../../chaos/checker.js';
import type { BrokerContext } from '../../coordinator/broker-context.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import { ManualClock } from '../../coordinator/share/clock.js';
import { StandaloneStateLog } from '../../coordinator/share/standalone-state-log.js';
import { createShareCoordinator, type KipgenShareCoordinator } from '../../coordinator/share/index.js';
import { SharePartition, type StateChange } from '../../coordinator/share/share-partition.js';
import { ShareStateStore } from '../../coordinator/share/share-state-store.js';
import { FAST, TestClient, batch, endTxn, eventually, initProducer, produce, tempDir } from './support/broker-harness.js';
import { addShareAcksToTxn, delivered, heartbeat, partitionOf, shareFetch, txnShareAcknowledge } from './share-wire.js';

const KEY = { groupId: 'g', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 0 };
const T0 = 1_000_000;
const window = (start: bigint, end: bigint) => ({ startOffset: start, endOffset: end, isAcquirable: () => true });

describe('SharePartition: acquiring checks the delivery-count limit', () => {
  it('archives an AVAILABLE record whose delivery count reached a lowered limit, reports it for the log, and delivers the rest', () => {
    const limits = { deliveryCountLimit: 10, recordLockDurationMs: 30_000, maxRecordLocks: 200 };
    const sp = new SharePartition(KEY, limits, 0n);
    sp.acquire('m', window(0n, 4n), 2, T0); // 0-1: count 1
    sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 1n, types: [AckType.RELEASE] }], T0);
    sp.acquire('m', window(0n, 4n), 1, T0); // 0: count 2
    sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 0n, types: [AckType.RELEASE] }], T0);
    expect([sp.stateOf(0n), sp.deliveryCountOf(0n), sp.stateOf(1n), sp.deliveryCountOf(1n)]).toEqual(['AVAILABLE', 2, 'AVAILABLE', 1]);

    limits.deliveryCountLimit = 2; // the group's config changed (SharePartitionManager shares this object with the group's partitions)
    const archived: StateChange[] = [];
    expect(sp.acquire('m', window(0n, 4n), 10, T0, archived)).toEqual([
      { firstOffset: 1n, lastOffset: 1n, deliveryCount: 2 },
      { firstOffset: 2n, lastOffset: 3n, deliveryCount: 1 },
    ]);
    expect(archived).toEqual([{ offset: 0n, state: 'ARCHIVED', deliveryCount: 2 }]);
    expect(sp.startOffset).toBe(1n);
  });
});

describe('the limit in force at the marker, on disk (StandaloneStateLog)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a pending Release is stored as AVAILABLE whatever its count; after a crash right after the marker the next fetch archives it, and the log says so', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-share-limit-'));
    dirs.push(dir);
    const file = path.join(dir, '__share_group_state-0.log');
    const limits = { deliveryCountLimit: 2, recordLockDurationMs: 30_000, maxRecordLocks: 200 };
    let log = await StandaloneStateLog.open(file);
    try {
      let store = new ShareStateStore(log, { snapshotUpdateRecords: 500, now: () => T0 });
      await store.writeChanges([{ key: KEY, startOffset: 0n, changes: [{ offset: 0n, state: 'AVAILABLE', deliveryCount: 1 }] }]);
      // Release of offset 0 at count 2 = the limit: on disk it says AVAILABLE (the marker's limit decides), not ARCHIVED.
      await store.writeTransactional({ transactionalId: 'tx', producerId: 42n, producerEpoch: 1 }, [
        { key: KEY, startOffset: 0n, staged: [{ offset: 0n, type: AckType.RELEASE, deliveryCount: 2 }] },
      ]);
      await log.appendMarker(42n, 1, true);
      // The process dies here: completeTransaction never ran, the marker's ShareUpdate was never written.
      await log.close();
      log = await StandaloneStateLog.open(file);
      store = new ShareStateStore(log, { snapshotUpdateRecords: 500, now: () => T0 });
      const [recovered] = store.recover();
      const sp = SharePartition.restore(KEY, limits, recovered!.state.startOffset, recovered!.state.restoredRanges(), recovered!.pending);
      expect([sp.stateOf(0n), sp.deliveryCountOf(0n)]).toEqual(['AVAILABLE', 2]);

      const archived: StateChange[] = [];
      expect(sp.acquire('m', window(0n, 2n), 10, T0, archived)).toEqual([{ firstOffset: 1n, lastOffset: 1n, deliveryCount: 1 }]);
      await store.writeChanges([{ key: KEY, startOffset: sp.startOffset, changes: archived }]);
      const states = replayShareState([[...log.batches()]], KEY.groupId, KEY.topicId);
      expect(finalState(states.get(0), 0n).state).toBe('archived');
      expect(store.recover()[0]!.state.startOffset).toBe(1n);
    } finally {
      await log.close();
    }
  });
});

describe('over TCP: share.delivery.count.limit changed by IncrementalAlterConfigs while a Release waits in a transaction', () => {
  const TOPICS = ['lower-commit', 'lower-abort', 'raise-commit'];
  let dataDir: string;
  let broker: Broker;
  let ctx: BrokerContext;
  let sc: KipgenShareCoordinator;
  let c: TestClient;
  const clock = new ManualClock(Date.now());

  async function start(): Promise<void> {
    broker = await startBroker(
      {
        host: '127.0.0.1',
        port: 0,
        ...FAST,
        dataDir,
        topics: TOPICS.map((name) => ({ name, partitions: 1 })),
        shareGroup: {
          recordLockDurationMs: 30_000,
          deliveryCountLimit: 10,
          sessionTimeoutMs: 45_000,
          heartbeatIntervalMs: 5_000,
          maxRecordLocks: 200,
          isolationLevel: 'read_committed',
          autoOffsetReset: 'earliest',
        },
      },
      {
        shareCoordinator: (context) => {
          ctx = context;
          sc = createShareCoordinator(context, { clock, housekeeping: false });
          return sc;
        },
        log: () => {},
      },
    );
    c = await TestClient.connect(broker.port);
  }

  async function restart(): Promise<void> {
    await c.close();
    await broker.close();
    await start();
  }

  beforeAll(async () => {
    dataDir = tempDir('kipgen-share-limit-');
    await start();
  });

  afterAll(async () => {
    await c?.close();
    await broker?.close();
  });

  const topicId = (name: string): string => ctx.cluster.topicByName(name)!.topicId;

  async function setDeliveryCountLimit(groupId: string, limit: number): Promise<void> {
    const r = await c.call(
      44,
      {
        resources: [{ resourceType: 32, resourceName: groupId, configs: [{ name: 'share.delivery.count.limit', configOperation: 0, value: String(limit) }] }],
        validateOnly: false,
      },
      1,
    );
    expect(r.responses[0].errorCode).toBe(0);
  }

  /** How the chaos checker, replaying this node's `__share_group_state` on its own, sees offsets 0-4 of `topic`. */
  function checkerStates(groupId: string, topic: string): string[] {
    const states = replayShareState([[...ctx.shareStateLog.batches()]], groupId, topicId(topic));
    return [0n, 1n, 2n, 3n, 4n].map((o) => finalState(states.get(0), o).state);
  }

  function startOffsetOf(groupId: string): bigint | undefined {
    return sc.describe().partitions.find((p) => p.key.groupId === groupId)?.state.startOffset;
  }

  /**
   * Five records of `topic` delivered twice to member m1 of `groupId` (a
   * ShareFetch, then RELEASE piggybacked on the next one), and that second
   * delivery acknowledged RELEASE in a transaction of its own: pending.
   */
  async function releasePending(topic: string, groupId: string, transactionalId: string) {
    expect((await produce(c, topic, 0, batch({ values: ['a', 'b', 'c', 'd', 'e'] }))).errorCode).toBe(0);
    await heartbeat(c, groupId, 'm1', 0, [topic]);
    const member = await heartbeat(c, groupId, 'm1', 1, null);
    const producer = await initProducer(c, transactionalId);
    expect((await addShareAcksToTxn(c, transactionalId, producer.producerId, producer.producerEpoch, groupId, topic, [0])).errorCode).toBe(0);
    const t = topicId(topic);
    const first = await shareFetch(c, { groupId, memberId: 'm1', epoch: 0, partitions: [{ topicId: t, partition: 0 }] });
    expect(delivered(partitionOf(first, t, 0)).map((r) => r.deliveryCount)).toEqual([1, 1, 1, 1, 1]);
    const second = await shareFetch(c, {
      groupId,
      memberId: 'm1',
      epoch: 1,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 4n, types: [AckType.RELEASE] }] }],
    });
    expect(delivered(partitionOf(second, t, 0)).map((r) => r.deliveryCount)).toEqual([2, 2, 2, 2, 2]);
    const acked = await txnShareAcknowledge(c, {
      groupId,
      transactionalId,
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      memberId: 'm1',
      generationId: member.memberEpoch,
      partitions: [{ topicId: t, partition: 0, batches: [{ first: 0n, last: 4n, type: AckType.RELEASE }] }],
    });
    expect(acked.errorCode).toBe(0);
    return producer;
  }

  /** Ends the transaction and waits for the marker to reach the share coordinator. */
  async function end(transactionalId: string, producer: { producerId: bigint; producerEpoch: number }, commit: boolean): Promise<void> {
    expect(await endTxn(c, transactionalId, producer.producerId, producer.producerEpoch, commit)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'the marker');
    // Housekeeping runs on the share partitions' queue after the marker's work, its write included (the clock stands still: it expires nothing).
    await sc.housekeeping();
  }

  /** What a new member of `groupId` is given from `topic` now. */
  async function deliveriesTo(groupId: string, topic: string, memberId: string): Promise<[string, number][]> {
    await heartbeat(c, groupId, memberId, 0, [topic]);
    const client = await TestClient.connect(broker.port);
    try {
      const r = await shareFetch(client, { groupId, memberId, epoch: 0, partitions: [{ topicId: topicId(topic), partition: 0 }] });
      return delivered(partitionOf(r, topicId(topic), 0)).map((x) => [x.value, x.deliveryCount]);
    } finally {
      await client.close();
    }
  }

  it('lowered from 10 to 2, COMMIT: the records are archived, in the log as in memory, never delivered again, and a restart agrees', async () => {
    const producer = await releasePending('lower-commit', 'g-lc', 'tx-lc');
    await setDeliveryCountLimit('g-lc', 2);
    await end('tx-lc', producer, true);

    expect(startOffsetOf('g-lc')).toBe(5n);
    // One ShareUpdate after the marker says what the limit at the marker archived.
    expect([...ctx.shareStateLog.batches()].slice(-2).map((b) => b.isControl)).toEqual([true, false]);
    expect(checkerStates('g-lc', 'lower-commit')).toEqual(Array(5).fill('archived'));
    expect(await deliveriesTo('g-lc', 'lower-commit', 'm2')).toEqual([]);

    await restart();
    expect(startOffsetOf('g-lc')).toBe(5n);
    expect(checkerStates('g-lc', 'lower-commit')).toEqual(Array(5).fill('archived'));
    expect(await deliveriesTo('g-lc', 'lower-commit', 'm3')).toEqual([]);
  });

  it('lowered from 10 to 2, ABORT: the records are archived (count kept, at the new limit), in the log as in memory, and a restart agrees', async () => {
    const producer = await releasePending('lower-abort', 'g-la', 'tx-la');
    await setDeliveryCountLimit('g-la', 2);
    await end('tx-la', producer, false);

    expect(startOffsetOf('g-la')).toBe(5n);
    expect(checkerStates('g-la', 'lower-abort')).toEqual(Array(5).fill('archived'));
    expect(await deliveriesTo('g-la', 'lower-abort', 'm2')).toEqual([]);

    await restart();
    expect(startOffsetOf('g-la')).toBe(5n);
    expect(await deliveriesTo('g-la', 'lower-abort', 'm3')).toEqual([]);
  });

  it('raised from 2 to 10, COMMIT: the released records come back AVAILABLE and are delivered again, in the log as in memory, and a restart agrees', async () => {
    await setDeliveryCountLimit('g-rc', 2);
    const producer = await releasePending('raise-commit', 'g-rc', 'tx-rc');
    await setDeliveryCountLimit('g-rc', 10);
    await end('tx-rc', producer, true);

    expect(startOffsetOf('g-rc')).toBe(0n);
    expect(sc.describe().partitions.find((p) => p.key.groupId === 'g-rc')!.state.ranges).toEqual([
      { firstOffset: 0n, lastOffset: 4n, state: 'AVAILABLE', deliveryCount: 2 },
    ]);
    expect(checkerStates('g-rc', 'raise-commit')).toEqual(Array(5).fill('available'));
    // The update of the Release already says AVAILABLE: the marker is the last thing written.
    expect([...ctx.shareStateLog.batches()].at(-1)!.isControl).toBe(true);

    await restart();
    expect(startOffsetOf('g-rc')).toBe(0n);
    expect(await deliveriesTo('g-rc', 'raise-commit', 'm2')).toEqual([
      ['a', 3],
      ['b', 3],
      ['c', 3],
      ['d', 3],
      ['e', 3],
    ]);
  });
});
