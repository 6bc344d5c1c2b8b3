/**
 * Transactional-id expiration (Kafka's transactional.id.expiration.ms): the
 * transaction coordinator forgets an id in EMPTY, COMPLETE_COMMIT or
 * COMPLETE_ABORT whose state was last written that long ago, after writing a
 * tombstone for it to `__transaction_state`, as Kafka's
 * TransactionStateManager.removeExpiredTransactionalIds does. A real
 * coordinator over real logs in temp folders (only the marker sender is a
 * stand-in: every partition is local); time is passed in (`now` given to
 * removeExpiredTransactionalIds) or faked, never waited for.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransactionLogKey } from '../../generated/index.js';
import { Cluster, TRANSACTION_STATE_TOPIC } from '../../coordinator/cluster.js';
import { resolveConfig } from '../../coordinator/config.js';
import { decodeCoordinatorKey } from '../../coordinator/coordinator-record-layout.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { LogManager } from '../../coordinator/log/log-manager.js';
import { Metrics } from '../../coordinator/metrics.js';
import type { MarkerSender } from '../../coordinator/txn/marker-sender.js';
import { ProducerIdManager } from '../../coordinator/txn/producer-id-manager.js';
import { TransactionCoordinator, type InitProducerIdResult } from '../../coordinator/txn/transaction-coordinator.js';
import { TransactionLog } from '../../coordinator/txn/transaction-log.js';
import { TxnState, txnStateName, type TxnStateCode } from '../../coordinator/txn/transaction-metadata.js';
import { eventually, startTestBroker, tempDir } from './support/broker-harness.js';

/** Kafka's default transactional.id.expiration.ms (seven days). */
const EXPIRATION_MS = 604_800_000;
/** Kafka's default transaction.remove.expired.transaction.cleanup.interval.ms (one hour). */
const CLEANUP_INTERVAL_MS = 3_600_000;
const NO_PRODUCER = { producerId: -1n, producerEpoch: -1 };

const open: { close(): unknown }[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** Markers are acknowledged when `release` is called (at once by default). */
function markerSender(): { sender: MarkerSender; hold(): void; release(): void } {
  let gate: Promise<void> = Promise.resolve();
  let release = (): void => {};
  const sender = { send: () => gate, stop: () => release() } as unknown as MarkerSender;
  return {
    sender,
    hold: () => (gate = new Promise<void>((resolve) => (release = resolve))),
    release: () => release(),
  };
}

interface Node {
  cluster: Cluster;
  tc: TransactionCoordinator;
  logs: LogManager;
  markers: ReturnType<typeof markerSender>;
  lines: string[];
  close(): Promise<void>;
}

/** A coordinator over the logs in `dataDir`, recovered from them: a restart when the folder was used before. */
function startNode(dataDir: string, transactionStatePartitions = 1): Node {
  const cluster = new Cluster({
    nodeId: 0,
    nodes: [{ nodeId: 0, host: '127.0.0.1', port: 9092 }],
    clusterId: 'txn-expiration-test',
    dataDir,
    topics: [{ name: 'events', partitions: 2 }],
    transactionStatePartitions,
    consumerOffsetsPartitions: 1,
  });
  const lines: string[] = [];
  const logs = new LogManager(cluster, dataDir, 1 << 20, { expirationMs: 86_400_000, checkIntervalMs: 600_000 }, (line) => lines.push(line));
  const markers = markerSender();
  const tc = new TransactionCoordinator({
    cluster,
    txnLog: new TransactionLog(cluster, logs),
    producerIds: new ProducerIdManager(dataDir, 0, 1),
    markers: markers.sender,
    maxTimeoutMs: 900_000,
    abortCheckIntervalMs: 1_000,
    transactionalIdExpirationMs: EXPIRATION_MS,
    removeExpiredTransactionalIdsIntervalMs: CLEANUP_INTERVAL_MS,
    retryBackoffMs: 10,
    twoPhaseCommitEnable: true,
    metrics: new Metrics(),
    log: (line) => lines.push(line),
  });
  tc.recover();
  let closed = false;
  const node: Node = {
    cluster,
    tc,
    logs,
    markers,
    lines,
    async close() {
      if (closed) return;
      closed = true;
      markers.release();
      await tc.close();
      logs.close();
    },
  };
  open.push(node);
  return node;
}

async function init(tc: TransactionCoordinator, id: string, expected = NO_PRODUCER): Promise<InitProducerIdResult> {
  const result = await tc.initProducerId(id, 60_000, expected);
  expect(result.errorCode).toBe(ErrorCode.NONE);
  return result;
}

async function begin(tc: TransactionCoordinator, id: string): Promise<InitProducerIdResult> {
  const producer = await init(tc, id);
  expect(await tc.addPartitions(id, producer.producerId, producer.producerEpoch, [{ topic: 'events', partition: 0 }])).toBe(ErrorCode.NONE);
  return producer;
}

async function end(node: Node, id: string, commit: boolean, waitForCompletion = true): Promise<void> {
  const producer = await begin(node.tc, id);
  expect((await node.tc.endTransaction(id, producer.producerId, producer.producerEpoch, commit)).errorCode).toBe(ErrorCode.NONE);
  const done = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
  if (waitForCompletion) await eventually(() => node.tc.get(id)?.state === done, 5_000, `${id} ${txnStateName(done)}`);
}

function lastUpdate(tc: TransactionCoordinator, id: string): number {
  return tc.get(id)!.lastUpdateTimestamp;
}

/** The transactional ids with a tombstone in `__transaction_state`-0, in log order. */
function tombstones(logs: LogManager): string[] {
  const out: string[] = [];
  for (const batch of logs.get(TRANSACTION_STATE_TOPIC, 0)!.batches()) {
    for (const record of batch.records) if (record.value === null) out.push(decodeCoordinatorKey(TransactionLogKey, record.key!).transactionalId);
  }
  return out;
}

describe('which transactional ids expire, and when', () => {
  it('exactly transactional.id.expiration.ms after the last state change: expired (Kafka’s `<=`); 1 ms sooner: kept', async () => {
    const { tc } = startNode(tempDir());
    await init(tc, 'tx-a');
    const last = lastUpdate(tc, 'tx-a');

    expect(await tc.removeExpiredTransactionalIds(last + EXPIRATION_MS - 1)).toEqual([]);
    expect(tc.get('tx-a')).toBeDefined();
    expect(await tc.removeExpiredTransactionalIds(last + EXPIRATION_MS)).toEqual(['tx-a']);
    expect(tc.get('tx-a')).toBeUndefined();
    expect(await tc.removeExpiredTransactionalIds(last + EXPIRATION_MS)).toEqual([]);
  });

  it('the age counts from the last state change, not from the first', async () => {
    const { tc } = startNode(tempDir());
    await init(tc, 'tx-a');
    const first = lastUpdate(tc, 'tx-a');
    await init(tc, 'tx-a'); // a second InitProducerId writes the state again
    const second = lastUpdate(tc, 'tx-a');
    expect(second).toBeGreaterThanOrEqual(first);
    expect(await tc.removeExpiredTransactionalIds(second + EXPIRATION_MS - 1)).toEqual([]);
    expect(await tc.removeExpiredTransactionalIds(second + EXPIRATION_MS)).toEqual(['tx-a']);
  });

  const expirable: { state: TxnStateCode; setUp: (node: Node, id: string) => Promise<unknown> }[] = [
    { state: TxnState.EMPTY, setUp: (node, id) => init(node.tc, id) },
    { state: TxnState.COMPLETE_COMMIT, setUp: (node, id) => end(node, id, true) },
    { state: TxnState.COMPLETE_ABORT, setUp: (node, id) => end(node, id, false) },
  ];
  it.each(expirable.map((c) => ({ ...c, name: txnStateName(c.state) })))('$name expires', async ({ state, setUp }) => {
    const node = startNode(tempDir());
    await setUp(node, 'tx-a');
    expect(node.tc.get('tx-a')!.state).toBe(state);
    expect(await node.tc.removeExpiredTransactionalIds(lastUpdate(node.tc, 'tx-a') + EXPIRATION_MS)).toEqual(['tx-a']);
    expect(node.tc.get('tx-a')).toBeUndefined();
    expect(tombstones(node.logs)).toEqual(['tx-a']);
  });

  const neverExpiring: { state: TxnStateCode; setUp: (node: Node, id: string) => Promise<unknown> }[] = [
    { state: TxnState.ONGOING, setUp: (node, id) => begin(node.tc, id) },
    { state: TxnState.PREPARE_COMMIT, setUp: (node, id) => (node.markers.hold(), end(node, id, true, false)) },
    { state: TxnState.PREPARE_ABORT, setUp: (node, id) => (node.markers.hold(), end(node, id, false, false)) },
  ];
  it.each(neverExpiring.map((c) => ({ ...c, name: txnStateName(c.state) })))('$name never expires, however old', async ({ state, setUp }) => {
    const node = startNode(tempDir());
    await setUp(node, 'tx-a');
    expect(node.tc.get('tx-a')!.state).toBe(state);
    expect(await node.tc.removeExpiredTransactionalIds(lastUpdate(node.tc, 'tx-a') + 1_000 * EXPIRATION_MS)).toEqual([]);
    expect(node.tc.get('tx-a')!.state).toBe(state);
    expect(tombstones(node.logs)).toEqual([]);
  });

  it('one pass expires every old enough id, in each __transaction_state partition, and leaves the others', async () => {
    const node = startNode(tempDir(), 4);
    const ids = ['tx-1', 'tx-2', 'tx-3', 'tx-4', 'tx-5', 'tx-6'];
    for (const id of ids) await init(node.tc, id);
    await begin(node.tc, 'tx-open');
    expect(new Set(ids.map((id) => node.cluster.transactionPartitionFor(id))).size).toBeGreaterThan(1);
    const latest = Math.max(...ids.map((id) => lastUpdate(node.tc, id)));

    expect((await node.tc.removeExpiredTransactionalIds(latest + EXPIRATION_MS)).sort()).toEqual(ids);
    expect(node.tc.all().map((m) => m.transactionalId)).toEqual(['tx-open']);
  });
});

describe('the tombstone, and what comes after', () => {
  it('is written to __transaction_state: a restarted coordinator no longer knows the id, and still knows the others', async () => {
    const dir = tempDir();
    const first = startNode(dir);
    const old = await init(first.tc, 'tx-gone');
    await begin(first.tc, 'tx-open');
    expect(await first.tc.removeExpiredTransactionalIds(lastUpdate(first.tc, 'tx-gone') + EXPIRATION_MS)).toEqual(['tx-gone']);
    expect(tombstones(first.logs)).toEqual(['tx-gone']);
    await first.close();

    const second = startNode(dir);
    expect(second.tc.get('tx-gone')).toBeUndefined();
    expect(second.tc.get('tx-open')!.state).toBe(TxnState.ONGOING);
    expect(second.lines.join('\n')).toMatch(/transaction coordinator loaded 1 transactional ids/);
    // Starting afresh after the restart too: a producer id never handed out before.
    const fresh = await init(second.tc, 'tx-gone');
    expect(fresh.producerId).not.toBe(old.producerId);
    expect(fresh.producerEpoch).toBe(0);
  });

  it('InitProducerId after expiry starts afresh, as for an unknown id: a new producer id at epoch 0', async () => {
    const { tc } = startNode(tempDir());
    await init(tc, 'tx-a');
    await init(tc, 'tx-a');
    const old = await init(tc, 'tx-a');
    expect(old.producerEpoch).toBe(2);
    expect(await tc.removeExpiredTransactionalIds(lastUpdate(tc, 'tx-a') + EXPIRATION_MS)).toEqual(['tx-a']);

    const fresh = await init(tc, 'tx-a');
    expect(fresh.producerId).not.toBe(old.producerId);
    expect(fresh.producerEpoch).toBe(0);
    expect(tc.get('tx-a')).toMatchObject({ producerId: fresh.producerId, producerEpoch: 0, state: TxnState.EMPTY });
  });

  it('a producer recovering with its expired id and epoch is not fenced: it gets a new producer id (Kafka’s isValidProducerId)', async () => {
    const { tc } = startNode(tempDir());
    const old = await init(tc, 'tx-a');
    expect(await tc.removeExpiredTransactionalIds(lastUpdate(tc, 'tx-a') + EXPIRATION_MS)).toEqual(['tx-a']);

    const fresh = await init(tc, 'tx-a', { producerId: old.producerId, producerEpoch: old.producerEpoch });
    expect(fresh.producerId).not.toBe(old.producerId);
    expect(fresh.producerEpoch).toBe(0);
    // A known id is still fenced for a producer id that is not its own.
    expect((await tc.initProducerId('tx-a', 60_000, { producerId: old.producerId, producerEpoch: old.producerEpoch })).errorCode).toBe(
      ErrorCode.PRODUCER_FENCED,
    );
  });

  it('while the tombstone is written the id is pending: InitProducerId gets CONCURRENT_TRANSACTIONS, an add waits and then finds no id', async () => {
    const { tc } = startNode(tempDir());
    const producer = await init(tc, 'tx-a');
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const writeTombstones = TransactionLog.prototype.writeTombstones;
    vi.spyOn(TransactionLog.prototype, 'writeTombstones').mockImplementation(async function (this: TransactionLog, ...args) {
      await gate;
      return writeTombstones.apply(this, args);
    });

    const expiring = tc.removeExpiredTransactionalIds(lastUpdate(tc, 'tx-a') + EXPIRATION_MS);
    expect((await tc.initProducerId('tx-a', 60_000, NO_PRODUCER)).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    const add = tc.addPartitions('tx-a', producer.producerId, producer.producerEpoch, [{ topic: 'events', partition: 0 }]);
    // A pass while the tombstone is being written does not take the id again.
    expect(await tc.removeExpiredTransactionalIds(lastUpdate(tc, 'tx-a') + EXPIRATION_MS)).toEqual([]);
    release();

    expect(await expiring).toEqual(['tx-a']);
    expect(await add).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    expect(tc.get('tx-a')).toBeUndefined();
  });

  it('an id changed while its tombstone was written is kept in memory', async () => {
    const { tc, lines } = startNode(tempDir());
    await init(tc, 'tx-a');
    const writeTombstones = TransactionLog.prototype.writeTombstones;
    vi.spyOn(TransactionLog.prototype, 'writeTombstones').mockImplementation(async function (this: TransactionLog, ...args) {
      await writeTombstones.apply(this, args);
      // Nothing in kipgen changes a pending id; this stands for what Kafka's check guards against.
      (tc.get('tx-a') as { producerEpoch: number }).producerEpoch++;
    });

    expect(await tc.removeExpiredTransactionalIds(lastUpdate(tc, 'tx-a') + EXPIRATION_MS)).toEqual([]);
    expect(tc.get('tx-a')).toMatchObject({ producerEpoch: 1, pending: false });
    expect(lines.at(-1)).toBe('expired transactional id tx-a changed while its tombstone was written: kept');
  });

  it('when the tombstone cannot be written the id stays, no longer pending, and the next pass expires it', async () => {
    const node = startNode(tempDir());
    const producer = await init(node.tc, 'tx-a');
    vi.spyOn(TransactionLog.prototype, 'writeTombstones').mockRejectedValueOnce(new Error('disk full'));
    const now = lastUpdate(node.tc, 'tx-a') + EXPIRATION_MS;

    expect(await node.tc.removeExpiredTransactionalIds(now)).toEqual([]);
    expect(node.lines.at(-1)).toBe('writing tombstones for expired transactional ids tx-a failed: disk full');
    expect(node.tc.get('tx-a')).toMatchObject({ producerId: producer.producerId, pending: false });
    expect(tombstones(node.logs)).toEqual([]);

    expect(await node.tc.removeExpiredTransactionalIds(now)).toEqual(['tx-a']);
    expect(tombstones(node.logs)).toEqual(['tx-a']);
  });
});

describe('the timer', () => {
  it('runs every transaction.remove.expired.transaction.cleanup.interval.ms with the current time, and close() clears it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const start = Date.UTC(2030, 0, 1);
    vi.setSystemTime(start);
    const node = startNode(tempDir());
    await init(node.tc, 'tx-a'); // last update: `start` (the clock is frozen)
    const pass = vi.spyOn(node.tc, 'removeExpiredTransactionalIds');
    node.tc.start();
    node.tc.startExpiringTransactionalIds(); // a second start adds no timer
    expect(vi.getTimerCount()).toBe(2); // this one and the abort check

    vi.advanceTimersByTime(CLEANUP_INTERVAL_MS - 1);
    expect(pass).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(pass).toHaveBeenCalledTimes(1);
    expect(pass).toHaveBeenLastCalledWith(start + CLEANUP_INTERVAL_MS);
    expect(await pass.mock.results[0]!.value).toEqual([]);

    vi.advanceTimersByTime(EXPIRATION_MS - CLEANUP_INTERVAL_MS); // the 168th pass, exactly seven days on
    expect(pass).toHaveBeenCalledTimes(EXPIRATION_MS / CLEANUP_INTERVAL_MS);
    expect(await pass.mock.results.at(-1)!.value).toEqual(['tx-a']);
    await eventually(() => node.lines.includes(`expired 1 transactional ids idle for ${EXPIRATION_MS} ms or more: tx-a`), 5_000, 'the log line');

    await node.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('broker: the settings and their wiring', () => {
  it('transactionalIdExpirationMs and transactionRemoveExpiredTransactionCleanupIntervalMs: Kafka’s defaults, validated as integers ≥ 1', () => {
    const defaults = resolveConfig({});
    expect(defaults.transactionalIdExpirationMs).toBe(604_800_000);
    expect(defaults.transactionRemoveExpiredTransactionCleanupIntervalMs).toBe(3_600_000);
    expect(resolveConfig({ transactionalIdExpirationMs: 1, transactionRemoveExpiredTransactionCleanupIntervalMs: 1 })).toMatchObject({
      transactionalIdExpirationMs: 1,
      transactionRemoveExpiredTransactionCleanupIntervalMs: 1,
    });
    expect(() => resolveConfig({ transactionalIdExpirationMs: 0 })).toThrow('config: transactionalIdExpirationMs must be an integer in [1, 2147483647], got 0');
    expect(() => resolveConfig({ transactionalIdExpirationMs: 2 ** 31 })).toThrow(
      'config: transactionalIdExpirationMs must be an integer in [1, 2147483647], got 2147483648',
    );
    expect(() => resolveConfig({ transactionRemoveExpiredTransactionCleanupIntervalMs: 1.5 })).toThrow(
      'config: transactionRemoveExpiredTransactionCleanupIntervalMs must be an integer in [1, 2147483647], got 1.5',
    );
    expect(() => resolveConfig({ transactionRemoveExpiredTransactionCleanupIntervalMs: '60000' as unknown as number })).toThrow(
      'config: transactionRemoveExpiredTransactionCleanupIntervalMs must be an integer in [1, 2147483647], got "60000"',
    );
  });

  it('the broker’s coordinator uses both settings', async () => {
    // Only setInterval is faked (the broker's sockets keep real timeouts).
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const pass = vi.spyOn(TransactionCoordinator.prototype, 'removeExpiredTransactionalIds');
    const broker = await startTestBroker({
      dataDir: tempDir(),
      transactionalIdExpirationMs: 5_000,
      transactionRemoveExpiredTransactionCleanupIntervalMs: 60_000,
    });
    open.push(broker);
    const tc = broker.transactions;
    await init(tc, 'tx-a');
    const last = lastUpdate(tc, 'tx-a');
    expect(await tc.removeExpiredTransactionalIds(last + 4_999)).toEqual([]);
    expect(await tc.removeExpiredTransactionalIds(last + 5_000)).toEqual(['tx-a']);

    pass.mockClear();
    vi.advanceTimersByTime(60_000);
    expect(pass).toHaveBeenCalledTimes(1);
    await pass.mock.results[0]!.value;
  });
});
