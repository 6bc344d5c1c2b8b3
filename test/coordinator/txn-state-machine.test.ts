/**
 * The transaction coordinator's state machine (coordinator/txn/transaction-state.ts
 * and transaction-metadata.ts), as Kafka's TransactionState.validPreviousStates
 * and TransactionMetadata.prepareTransitionTo / completeTransitionTo define it:
 * every (from, to) pair of the eight states is tried; an illegal one throws and
 * leaves the metadata as it was, a legal one is prepared (pending) and then
 * applied. Then a transition in flight blocks another, and a real coordinator
 * answers CONCURRENT_TRANSACTIONS while one of its writes is in flight.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cluster } from '../../coordinator/cluster.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { LogManager } from '../../coordinator/log/log-manager.js';
import { Metrics } from '../../coordinator/metrics.js';
import type { MarkerSender } from '../../coordinator/txn/marker-sender.js';
import { ProducerIdManager } from '../../coordinator/txn/producer-id-manager.js';
import { TransactionCoordinator } from '../../coordinator/txn/transaction-coordinator.js';
import { TransactionLog } from '../../coordinator/txn/transaction-log.js';
import {
  ALL_TXN_STATES,
  IllegalTransitionError,
  TransactionMetadata,
  TxnState,
  txnStateName,
  type TxnStateCode,
  type TxnTransitMetadata,
} from '../../coordinator/txn/transaction-metadata.js';
import { startTestBroker, tempDir } from './support/broker-harness.js';

const { EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE } = TxnState;

/** Kafka's TransactionState.VALID_PREVIOUS_STATES, written out here as the pairs it allows (from → to). */
const KAFKA_LEGAL = new Set(
  [
    [EMPTY, EMPTY],
    [COMPLETE_COMMIT, EMPTY],
    [COMPLETE_ABORT, EMPTY],
    [ONGOING, ONGOING],
    [EMPTY, ONGOING],
    [COMPLETE_COMMIT, ONGOING],
    [COMPLETE_ABORT, ONGOING],
    [ONGOING, PREPARE_COMMIT],
    [ONGOING, PREPARE_ABORT],
    [PREPARE_EPOCH_FENCE, PREPARE_ABORT],
    [EMPTY, PREPARE_ABORT],
    [COMPLETE_COMMIT, PREPARE_ABORT],
    [COMPLETE_ABORT, PREPARE_ABORT],
    [PREPARE_COMMIT, COMPLETE_COMMIT],
    [PREPARE_ABORT, COMPLETE_ABORT],
    [EMPTY, DEAD],
    [COMPLETE_COMMIT, DEAD],
    [COMPLETE_ABORT, DEAD],
    [ONGOING, PREPARE_EPOCH_FENCE],
  ].map(([from, to]) => `${from}>${to}`),
);

/** States Kafka prepares but never applies: DEAD ends in removal, PREPARE_EPOCH_FENCE is replaced by PREPARE_ABORT. */
const ONLY_PENDING: TxnStateCode[] = [DEAD, PREPARE_EPOCH_FENCE];

/** A transactional id in `state`, as it would be there: a transaction's partitions only while one is open or ending. */
function metadataIn(state: TxnStateCode): TransactionMetadata {
  const open = state === ONGOING || state === PREPARE_COMMIT || state === PREPARE_ABORT || state === PREPARE_EPOCH_FENCE;
  return new TransactionMetadata({
    transactionalId: 'tx',
    state,
    producerId: 7n,
    producerEpoch: 3,
    timeoutMs: 60_000,
    partitions: open ? new Map([['t', new Set([0])]]) : new Map(),
    shareGroups: new Set(),
    startTimestamp: open ? 1_000 : -1,
    lastUpdateTimestamp: 1_000,
    clientTransactionVersion: 2,
    nextProducerId: -1n,
    nextProducerEpoch: -1,
    previousProducerId: -1n,
    lastProducerEpoch: -1,
  });
}

/** What a move to `to` changes, consistent with any state it may come from. */
function changeFor(meta: TransactionMetadata, to: TxnStateCode): Partial<TxnTransitMetadata> {
  switch (to) {
    case EMPTY:
      return { producerEpoch: meta.producerEpoch + 1, partitions: new Map(), startTimestamp: -1 };
    case ONGOING:
      return { partitions: new Map([...meta.partitions, ['u', new Set([1])]]), startTimestamp: meta.startTimestamp < 0 ? 2_000 : meta.startTimestamp };
    case PREPARE_COMMIT:
    case PREPARE_ABORT:
      return { producerEpoch: meta.producerEpoch + 1 };
    case COMPLETE_COMMIT:
    case COMPLETE_ABORT:
      return { partitions: new Map(), startTimestamp: -1 };
    default:
      return {};
  }
}

/** Every field, the pending state too: what "left as it was" compares. */
function observe(meta: TransactionMetadata): Record<string, unknown> {
  return { ...meta, pendingState: meta.pendingState };
}

const pairs = ALL_TXN_STATES.flatMap((from) => ALL_TXN_STATES.map((to) => ({ from, to, name: `${txnStateName(from)} → ${txnStateName(to)}` })));

describe('every (from, to) pair of transaction states', () => {
  it('there are eight states, so 64 pairs, 19 of them legal (as Kafka’s VALID_PREVIOUS_STATES)', () => {
    expect(ALL_TXN_STATES).toHaveLength(8);
    expect(pairs).toHaveLength(64);
    expect(pairs.filter(({ from, to }) => KAFKA_LEGAL.has(`${from}>${to}`))).toHaveLength(19);
  });

  it.each(pairs.filter(({ from, to }) => !KAFKA_LEGAL.has(`${from}>${to}`)))('$name is illegal: refused, the metadata unchanged', ({ from, to }) => {
    const meta = metadataIn(from);
    const before = observe(meta);
    let refusal: unknown;
    try {
      meta.prepareTransitionTo(to, 5_000, changeFor(meta, to));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(IllegalTransitionError);
    expect((refusal as IllegalTransitionError).code).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect((refusal as Error).message).toBe(
      `transactional id tx (${txnStateName(from)}): ${txnStateName(from)} → ${txnStateName(to)} is not a legal transition`,
    );
    expect(observe(meta)).toEqual(before);
    expect(meta.pending).toBe(false);
  });

  it.each(pairs.filter(({ from, to }) => KAFKA_LEGAL.has(`${from}>${to}`) && !ONLY_PENDING.includes(to)))(
    '$name is legal: prepared (pending, nothing applied), then applied',
    ({ from, to }) => {
      const meta = metadataIn(from);
      const before = observe(meta);
      const change = changeFor(meta, to);
      const target = meta.prepareTransitionTo(to, 5_000, change);
      expect(meta.pendingState).toBe(to);
      expect({ ...observe(meta), pendingState: null }).toEqual(before);
      expect(target).toMatchObject({ ...change, state: to, lastUpdateTimestamp: 5_000 });

      meta.completeTransitionTo(target);
      expect(meta.state).toBe(to);
      expect(meta.pending).toBe(false);
      expect(meta).toMatchObject({ ...change, state: to, lastUpdateTimestamp: 5_000 });
    },
  );

  it.each(pairs.filter(({ from, to }) => KAFKA_LEGAL.has(`${from}>${to}`) && ONLY_PENDING.includes(to)))(
    '$name is legal to prepare, but never applied (Kafka’s completeTransitionTo refuses it too)',
    ({ from, to }) => {
      const meta = metadataIn(from);
      const target = meta.prepareTransitionTo(to, 5_000, {});
      expect(meta.pendingState).toBe(to);
      expect(() => meta.completeTransitionTo(target)).toThrow(`${txnStateName(to)} is only ever pending, never applied`);
      expect(meta.state).toBe(from);
      meta.cancelTransition();
      expect(meta.pending).toBe(false);
    },
  );
});

describe('a transition in flight', () => {
  it('blocks another: preparing a second is refused with CONCURRENT_TRANSACTIONS, and the first still completes', () => {
    const meta = metadataIn(ONGOING);
    const commit = meta.prepareAbortOrCommit(true, 2, () => 99n, 5_000);
    const before = observe(meta);
    let refusal: unknown;
    try {
      meta.prepareFenceProducerEpoch(5_001);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(IllegalTransitionError);
    expect((refusal as IllegalTransitionError).code).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect((refusal as Error).message).toBe('transactional id tx: cannot prepare PREPARE_ABORT while the transition to PREPARE_COMMIT is pending');
    expect(observe(meta)).toEqual(before);

    meta.completeTransitionTo(commit);
    expect(meta).toMatchObject({ state: PREPARE_COMMIT, producerEpoch: 4, lastProducerEpoch: 3, pending: false });
  });

  it('is applied only as what was prepared: another target, or none pending, is refused', () => {
    const meta = metadataIn(ONGOING);
    const abort = meta.prepareFenceProducerEpoch(5_000);
    meta.cancelTransition();
    expect(() => meta.completeTransitionTo(abort)).toThrow('completing PREPARE_ABORT with no transition pending');
    meta.prepareAbortOrCommit(true, 2, () => 99n, 5_000);
    expect(() => meta.completeTransitionTo(abort)).toThrow('completing PREPARE_ABORT while the transition to PREPARE_COMMIT is pending');
    expect(meta.state).toBe(ONGOING);
  });

  it('a legal move with an impossible target is refused when applied: partitions never leave an open transaction', () => {
    const meta = metadataIn(ONGOING);
    const target = meta.prepareTransitionTo(ONGOING, 5_000, { partitions: new Map() });
    expect(() => meta.completeTransitionTo(target)).toThrow('transactional id tx (ONGOING): ONGOING → ONGOING: partitions leave an open transaction');
    expect(meta.partitions).toEqual(new Map([['t', new Set([0])]]));
  });
});

const open: { close(): unknown }[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** A transaction coordinator over the logs in `dataDir`, recovered from them (no marker is sent here: a stand-in sender). */
function coordinatorOver(dataDir: string): { tc: TransactionCoordinator; txnLog: TransactionLog; lines: string[] } {
  const cluster = new Cluster({
    nodeId: 0,
    nodes: [{ nodeId: 0, host: '127.0.0.1', port: 9092 }],
    clusterId: 'txn-state-machine-test',
    dataDir,
    topics: [{ name: 'events', partitions: 1 }],
    transactionStatePartitions: 1,
    consumerOffsetsPartitions: 1,
  });
  const lines: string[] = [];
  const logs = new LogManager(cluster, dataDir, 1 << 20, { expirationMs: 86_400_000, checkIntervalMs: 600_000 }, (line) => lines.push(line));
  const txnLog = new TransactionLog(cluster, logs);
  const tc = new TransactionCoordinator({
    cluster,
    txnLog,
    producerIds: new ProducerIdManager(dataDir, 0, 1),
    markers: { send: () => Promise.resolve(), stop: () => {} } as unknown as MarkerSender,
    maxTimeoutMs: 900_000,
    abortCheckIntervalMs: 1_000,
    transactionalIdExpirationMs: 604_800_000,
    removeExpiredTransactionalIdsIntervalMs: 3_600_000,
    retryBackoffMs: 10,
    twoPhaseCommitEnable: true,
    metrics: new Metrics(),
    log: (line) => lines.push(line),
  });
  tc.recover();
  open.push({ close: async () => (await tc.close(), logs.close()) });
  return { tc, txnLog, lines };
}

describe('a move the state machine refuses, reached through a request', () => {
  it('InitProducerId on an id replayed in PREPARE_EPOCH_FENCE (never applied by Kafka, so illegal to leave for EMPTY): UNKNOWN_SERVER_ERROR, logged, the id as it was', async () => {
    const dataDir = tempDir();
    const first = coordinatorOver(dataDir);
    await first.txnLog.write({ ...metadataIn(PREPARE_EPOCH_FENCE), transactionalId: 'tx-f' });
    await open.pop()!.close();

    const { tc, lines } = coordinatorOver(dataDir);
    expect(tc.get('tx-f')).toMatchObject({ state: PREPARE_EPOCH_FENCE, producerId: 7n, producerEpoch: 3 });
    const answer = await tc.initProducerId('tx-f', 60_000, { producerId: -1n, producerEpoch: -1 });
    expect(answer.errorCode).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(tc.get('tx-f')).toMatchObject({ state: PREPARE_EPOCH_FENCE, producerId: 7n, producerEpoch: 3, pending: false });
    expect(lines).toContain(
      'transaction state machine refused a transition: transactional id tx-f (PREPARE_EPOCH_FENCE): PREPARE_EPOCH_FENCE → EMPTY is not a legal transition',
    );
  });
});

describe('the coordinator while a __transaction_state write is in flight', () => {
  it('answers CONCURRENT_TRANSACTIONS to EndTxn and InitProducerId, and the state moves only once the write lands', async () => {
    const broker = await startTestBroker({ dataDir: tempDir(), topics: [{ name: 'events', partitions: 1 }] });
    open.push(broker);
    const tc = broker.transactions;
    const producer = await tc.initProducerId('tx-a', 60_000, { producerId: -1n, producerEpoch: -1 });
    expect(await tc.addPartitions('tx-a', producer.producerId, producer.producerEpoch, [{ topic: 'events', partition: 0 }])).toBe(ErrorCode.NONE);

    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const write = TransactionLog.prototype.write;
    vi.spyOn(TransactionLog.prototype, 'write').mockImplementationOnce(async function (this: TransactionLog, ...args) {
      await gate;
      return write.apply(this, args);
    });
    const commit = tc.endTransaction('tx-a', producer.producerId, producer.producerEpoch, true);
    expect(tc.get('tx-a')).toMatchObject({ state: ONGOING, pendingState: PREPARE_COMMIT });

    expect((await tc.endTransaction('tx-a', producer.producerId, producer.producerEpoch, false)).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect((await tc.initProducerId('tx-a', 60_000, { producerId: -1n, producerEpoch: -1 })).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(tc.get('tx-a')).toMatchObject({ state: ONGOING, pendingState: PREPARE_COMMIT });

    release();
    expect((await commit).errorCode).toBe(ErrorCode.NONE);
    expect(tc.get('tx-a')!.state === PREPARE_COMMIT || tc.get('tx-a')!.state === COMPLETE_COMMIT).toBe(true);
  });
});
