/**
 * Producer-id expiration (Kafka's producer.id.expiration.ms): a partition log
 * forgets a producer with no open transaction once its last timestamp (the max
 * timestamp of its last batch, or its last marker's) is that old, as Kafka's
 * ProducerStateManager.removeExpiredProducers does. Real logs in temp folders;
 * time is passed in (record timestamps chosen by the test, `nowMs` given to
 * removeExpiredProducers), never waited for. Also: the log manager's pass after
 * recovery and its timer, the broker's wiring, and the share-state log's
 * verified groups, which must not outlive their transaction.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BrokerContext, ShareCoordinator, TransactionalProducer } from '../../coordinator/broker-context.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { Cluster } from '../../coordinator/cluster.js';
import { resolveConfig } from '../../coordinator/config.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { LogManager } from '../../coordinator/log/log-manager.js';
import { PartitionLog } from '../../coordinator/log/partition-log.js';
import type { ShareStateLog } from '../../coordinator/broker-share-state-log.js';
import { TxnState } from '../../coordinator/txn/transaction-metadata.js';
import { encodeRecordBatch } from '../../runtime/index.js';
import { ENC, FAST, TestClient, endTxn, eventually, initProducer, produce, startTestBroker, tempDir } from './support/broker-harness.js';
import { addShareAcksToTxn } from './share-wire.js';

/** Kafka's default producer.id.expiration.ms. */
const EXPIRATION_MS = 86_400_000;
/** A fixed instant (November 2023) for record timestamps: more than a day before any run of this file. */
const T = 1_700_000_000_000;

const opened: { close(): void }[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const log of opened.splice(0)) log.close();
});

function openLog(dir: string): PartitionLog {
  const log = PartitionLog.open(dir, 'events', 'events-id', 0, { segmentBytes: 1 << 20, producerIdExpirationMs: EXPIRATION_MS, log: () => {} });
  opened.push(log);
  return log;
}

interface Spec {
  producerId: bigint;
  producerEpoch?: number;
  baseSequence: number;
  /** One record per timestamp; the batch's max timestamp is the largest. */
  timestamps: number[];
  transactional?: boolean;
}

function producerBatch(spec: Spec): Uint8Array {
  return encodeRecordBatch({
    baseTimestamp: BigInt(Math.min(...spec.timestamps)),
    producerId: spec.producerId,
    producerEpoch: spec.producerEpoch ?? 0,
    baseSequence: spec.baseSequence,
    isTransactional: spec.transactional ?? false,
    records: spec.timestamps.map((ts, i) => ({ value: ENC.encode(`v${i}`), timestamp: BigInt(ts) })),
  });
}

function producers(log: PartitionLog): Map<bigint, { lastTimestamp: bigint; lastSequence: number; txnFirstOffset: bigint | null }> {
  return new Map(log.producers.describe().map((p) => [p.producerId, p]));
}

describe('ProducerState / PartitionLog: which producers expire, and when', () => {
  it('an idle idempotent producer is forgotten once producer.id.expiration.ms has passed since its last batch’s max timestamp', async () => {
    const log = openLog(tempDir());
    // Records out of timestamp order: the max (T + 7000), not the first or the last, is the batch's timestamp.
    await log.append(producerBatch({ producerId: 1n, baseSequence: 0, timestamps: [T - 5_000, T + 7_000, T] }));
    await log.append(producerBatch({ producerId: 2n, baseSequence: 0, timestamps: [T + EXPIRATION_MS] }));
    expect(producers(log).get(1n)!.lastTimestamp).toBe(BigInt(T + 7_000));

    expect(log.removeExpiredProducers(T + 7_000 + EXPIRATION_MS - 1)).toBe(0);
    expect([...producers(log).keys()]).toEqual([1n, 2n]);
    // Exactly the expiration time: expired (Kafka's `>=`); producer 2 wrote later and stays.
    expect(log.removeExpiredProducers(T + 7_000 + EXPIRATION_MS)).toBe(1);
    expect([...producers(log).keys()]).toEqual([2n]);
    expect(log.removeExpiredProducers(T + 7_000 + EXPIRATION_MS)).toBe(0);
  });

  it('the last timestamp is the last batch’s, even when it is older than the one before (Kafka assigns it, it keeps no maximum)', async () => {
    const log = openLog(tempDir());
    await log.append(producerBatch({ producerId: 1n, baseSequence: 0, timestamps: [T] }));
    await log.append(producerBatch({ producerId: 1n, baseSequence: 1, timestamps: [T - 60_000] }));
    expect(producers(log).get(1n)!.lastTimestamp).toBe(BigInt(T - 60_000));
    expect(log.removeExpiredProducers(T - 60_000 + EXPIRATION_MS)).toBe(1);
  });

  it('a producer with an open transaction never expires; once its ABORT marker is written it does, and the aborted-transaction index keeps the abort', async () => {
    const log = openLog(tempDir());
    await log.append(producerBatch({ producerId: 5n, baseSequence: 0, timestamps: [T, T], transactional: true })); // offsets 0-1
    await log.append(producerBatch({ producerId: 6n, baseSequence: 0, timestamps: [T] })); // offset 2

    expect(log.removeExpiredProducers(T + 100 * EXPIRATION_MS)).toBe(1); // producer 6 only
    expect([...producers(log).keys()]).toEqual([5n]);
    expect(producers(log).get(5n)!.txnFirstOffset).toBe(0n);
    expect(log.lastStableOffset()).toBe(0n);
    expect(log.producers.hasOngoingTransaction(5n, 0)).toBe(true);

    await log.appendMarker(5n, 0, false, 0); // offset 3, stamped with the clock
    const markerWritten = Date.now();
    expect(log.lastStableOffset()).toBe(4n);
    // The marker's timestamp is now the producer's last timestamp, not the data batch's T.
    expect(log.removeExpiredProducers(T + EXPIRATION_MS)).toBe(0);
    expect(log.removeExpiredProducers(markerWritten + EXPIRATION_MS)).toBe(1);
    expect(log.producers.describe()).toEqual([]);

    expect(log.producers.abortedWithin(0n, 4n)).toEqual([{ producerId: 5n, firstOffset: 0n }]);
    const read = log.read(0n, 1 << 20, 'read_committed');
    expect(read.lastStableOffset).toBe(4n);
    expect(read.abortedTransactions).toEqual([{ producerId: 5n, firstOffset: 0n }]);
  });

  it('after recovery from disk the replay restores last timestamps and open transactions, and expiry applies to them', async () => {
    const dir = tempDir();
    const first = openLog(dir);
    await first.append(producerBatch({ producerId: 1n, baseSequence: 0, timestamps: [T, T + 1_000] })); // offsets 0-1
    await first.append(producerBatch({ producerId: 2n, baseSequence: 0, timestamps: [T + EXPIRATION_MS / 2] })); // offset 2
    await first.append(producerBatch({ producerId: 3n, baseSequence: 0, timestamps: [T], transactional: true })); // offset 3, left open
    await first.append(producerBatch({ producerId: 4n, baseSequence: 0, timestamps: [T], transactional: true })); // offset 4
    await first.appendMarker(4n, 0, false, 0); // offset 5
    first.flushSync();
    first.close();
    opened.splice(opened.indexOf(first), 1);

    const log = openLog(dir);
    const before = producers(log);
    expect([...before.keys()].sort()).toEqual([1n, 2n, 3n, 4n]);
    expect(before.get(1n)!.lastTimestamp).toBe(BigInt(T + 1_000));
    expect(before.get(2n)!.lastTimestamp).toBe(BigInt(T + EXPIRATION_MS / 2));
    expect(before.get(3n)!.txnFirstOffset).toBe(3n);
    // Not yet expired, producer 1 is held to its sequence.
    await expect(log.append(producerBatch({ producerId: 1n, baseSequence: 5, timestamps: [T + 2_000] }))).rejects.toMatchObject({
      code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });

    expect(log.removeExpiredProducers(T + 1_000 + EXPIRATION_MS - 1)).toBe(0);
    expect(log.removeExpiredProducers(T + 1_000 + EXPIRATION_MS)).toBe(1);
    expect([...producers(log).keys()].sort()).toEqual([2n, 3n, 4n]);
    expect(log.removeExpiredProducers(T + 100 * EXPIRATION_MS)).toBe(1); // producer 2; 3 is open, 4's marker is recent
    expect([...producers(log).keys()].sort()).toEqual([3n, 4n]);
    expect(log.lastStableOffset()).toBe(3n);
    expect(log.read(0n, 1 << 20, 'read_committed').abortedTransactions).toEqual([]); // nothing below the LSO was aborted
    expect(log.producers.abortedWithin(0n, 6n)).toEqual([{ producerId: 4n, firstOffset: 4n }]);

    // Expired, producer 1 is new to the partition: sequence 5 is taken.
    const info = await log.append(producerBatch({ producerId: 1n, baseSequence: 5, timestamps: [T + 2_000] }));
    expect(info).toMatchObject({ baseOffset: 6n, duplicate: false });
    expect(producers(log).get(1n)!.lastSequence).toBe(5);
  });
});

describe('an expired producer that writes again is new to the partition, as in Kafka', () => {
  /** A log where producer 1 (epoch 3) wrote sequences 0-4 at offsets 0-4 at time T. */
  async function withProducer(): Promise<PartitionLog> {
    const log = openLog(tempDir());
    await log.append(producerBatch({ producerId: 1n, producerEpoch: 3, baseSequence: 0, timestamps: [T, T, T, T, T] }));
    return log;
  }
  const expire = (log: PartitionLog): void => expect(log.removeExpiredProducers(T + EXPIRATION_MS)).toBe(1);

  // The same batch, sent before and after producer 1 expires: what the partition remembered of it decides the first answer.
  it.each([
    {
      name: 'sequence 0 again (a restarted idempotent producer that kept its id and epoch): refused before, taken after',
      batch: { producerEpoch: 3, baseSequence: 0, timestamps: [T + 1] },
      before: { code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER },
      after: { baseOffset: 5n, duplicate: false },
    },
    {
      name: 'a retry of its last batch: answered with the original offsets before, written a second time after (no memory of it is left)',
      batch: { producerEpoch: 3, baseSequence: 0, timestamps: [T, T, T, T, T] },
      before: { baseOffset: 0n, lastOffset: 4n, duplicate: true },
      after: { baseOffset: 5n, lastOffset: 9n, duplicate: false },
    },
    {
      name: 'an older epoch: INVALID_PRODUCER_EPOCH before, taken after (the fencing is forgotten too)',
      batch: { producerEpoch: 2, baseSequence: 0, timestamps: [T + 1] },
      before: { code: ErrorCode.INVALID_PRODUCER_EPOCH },
      after: { baseOffset: 5n, duplicate: false },
    },
  ])('$name', async ({ batch, before, after }) => {
    const log = await withProducer();
    const bytes = producerBatch({ producerId: 1n, ...batch });
    if ('code' in before) await expect(log.append(bytes)).rejects.toMatchObject(before);
    else expect(await log.append(bytes)).toMatchObject(before);
    expire(log);
    expect(await log.append(bytes)).toMatchObject(after);
  });

  it('a non-zero sequence with a gap: OUT_OF_ORDER_SEQUENCE_NUMBER before, taken after, and checked from there on', async () => {
    const log = await withProducer();
    const gap = producerBatch({ producerId: 1n, producerEpoch: 3, baseSequence: 7, timestamps: [T + 1] });
    await expect(log.append(gap)).rejects.toMatchObject({ code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expire(log);
    expect(await log.append(gap)).toMatchObject({ baseOffset: 5n, duplicate: false });
    await expect(log.append(producerBatch({ producerId: 1n, producerEpoch: 3, baseSequence: 9, timestamps: [T + 2] }))).rejects.toMatchObject({
      code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    });
    expect(await log.append(producerBatch({ producerId: 1n, producerEpoch: 3, baseSequence: 8, timestamps: [T + 2] }))).toMatchObject({ baseOffset: 6n });
  });

  it('transactional: after a committed transaction and expiry, a batch with a non-zero sequence is taken and opens a new transaction', async () => {
    const log = openLog(tempDir());
    await log.append(producerBatch({ producerId: 9n, baseSequence: 0, timestamps: [T], transactional: true })); // offset 0
    await log.appendMarker(9n, 0, true, 0); // offset 1
    const markerWritten = Date.now();
    expect(log.lastStableOffset()).toBe(2n);
    const next = producerBatch({ producerId: 9n, baseSequence: 3, timestamps: [T + 1], transactional: true });
    await expect(log.append(next)).rejects.toMatchObject({ code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });

    expect(log.removeExpiredProducers(markerWritten + EXPIRATION_MS)).toBe(1);
    expect(log.producers.isResentMarker(9n, 0, true)).toBe(false); // a resent COMMIT would now be written again, as Kafka writes it
    expect(await log.append(next)).toMatchObject({ baseOffset: 2n, duplicate: false });
    expect(log.producers.ongoingTransactionStart(9n, 0)).toBe(2n);
    expect(log.lastStableOffset()).toBe(2n);
  });
});

describe('LogManager: expiry after recovery, and on a timer', () => {
  function cluster(dataDir: string): Cluster {
    return new Cluster({
      nodeId: 0,
      nodes: [{ nodeId: 0, host: '127.0.0.1', port: 9092 }],
      clusterId: 'expiration-test',
      dataDir,
      topics: [{ name: 'events', partitions: 1 }],
      transactionStatePartitions: 1,
      consumerOffsetsPartitions: 1,
    });
  }
  function manager(dataDir: string, lines: string[]): LogManager {
    const logs = new LogManager(cluster(dataDir), dataDir, 1 << 20, { expirationMs: EXPIRATION_MS, checkIntervalMs: 600_000 }, (line) => lines.push(line));
    opened.push(logs);
    return logs;
  }

  it('recovering the logs expires the producers idle longer than producer.id.expiration.ms at startup', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const first = manager(dir, lines);
    await first.get('events', 0)!.append(producerBatch({ producerId: 1n, baseSequence: 0, timestamps: [T] }));
    await first.get('events', 0)!.append(producerBatch({ producerId: 2n, baseSequence: 0, timestamps: [Date.now()] }));
    first.close();
    opened.splice(opened.indexOf(first), 1);
    expect(lines.join('\n')).not.toMatch(/idle producer ids expired/);

    const second = manager(dir, lines);
    expect(lines.at(-1)).toMatch(/^recovered \d+ partition logs \(\d+ with records\) in \d+ ms from .* \(1 idle producer ids expired\)$/);
    expect(
      second
        .get('events', 0)!
        .producers.describe()
        .map((p) => p.producerId),
    ).toEqual([2n]);
  });

  it('the timer expires producers every producer.id.expiration.check.interval.ms, and close() clears it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const start = T + 10 * EXPIRATION_MS;
    vi.setSystemTime(start);
    const lines: string[] = [];
    const logs = manager(tempDir(), lines);
    logs.startExpiringProducers();
    expect(vi.getTimerCount()).toBe(1);
    await logs.get('events', 0)!.append(producerBatch({ producerId: 1n, baseSequence: 0, timestamps: [start] }));

    vi.advanceTimersByTime(EXPIRATION_MS - 600_000); // the last check ran one interval short of the expiration
    expect(
      logs
        .get('events', 0)!
        .producers.describe()
        .map((p) => p.producerId),
    ).toEqual([1n]);
    vi.advanceTimersByTime(600_000);
    expect(logs.get('events', 0)!.producers.describe()).toEqual([]);
    expect(lines.at(-1)).toBe(`expired 1 producer ids idle for ${EXPIRATION_MS} ms or more`);

    logs.close();
    opened.splice(opened.indexOf(logs), 1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('broker: the settings, the pass at startup and the timer', () => {
  it('producerIdExpirationMs and producerIdExpirationCheckIntervalMs: Kafka’s defaults, validated as integers ≥ 1', () => {
    const defaults = resolveConfig({});
    expect(defaults.producerIdExpirationMs).toBe(86_400_000);
    expect(defaults.producerIdExpirationCheckIntervalMs).toBe(600_000);
    expect(resolveConfig({ producerIdExpirationMs: 5_000, producerIdExpirationCheckIntervalMs: 100 })).toMatchObject({
      producerIdExpirationMs: 5_000,
      producerIdExpirationCheckIntervalMs: 100,
    });
    expect(() => resolveConfig({ producerIdExpirationMs: 0 })).toThrow('config: producerIdExpirationMs must be an integer in [1, 2147483647], got 0');
    expect(() => resolveConfig({ producerIdExpirationCheckIntervalMs: 1.5 })).toThrow(
      'config: producerIdExpirationCheckIntervalMs must be an integer in [1, 2147483647], got 1.5',
    );
  });

  it('a restarted broker has forgotten the producer that wrote more than a day ago (by its records’ timestamps), not the recent one', async () => {
    const dataDir = tempDir();
    const lines: string[] = [];
    const config = { dataDir, topics: [{ name: 'events', partitions: 1 }] };
    let broker: Broker = await startTestBroker(config, lines);
    let c = await TestClient.connect(broker.port);
    try {
      const old = await c.call(22, { transactionalId: null, transactionTimeoutMs: -1 }, 4);
      const fresh = await c.call(22, { transactionalId: null, transactionTimeoutMs: -1 }, 4);
      expect(
        (await produce(c, 'events', 0, producerBatch({ producerId: old.producerId, producerEpoch: old.producerEpoch, baseSequence: 0, timestamps: [T] })))
          .errorCode,
      ).toBe(0);
      expect(
        (
          await produce(
            c,
            'events',
            0,
            producerBatch({ producerId: fresh.producerId, producerEpoch: fresh.producerEpoch, baseSequence: 0, timestamps: [Date.now()] }),
          )
        ).errorCode,
      ).toBe(0);
      const gap = (p: { producerId: bigint; producerEpoch: number }) =>
        producerBatch({ producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: 5, timestamps: [Date.now()] });
      expect((await produce(c, 'events', 0, gap(old))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);

      await c.close();
      await broker.close();
      broker = await startTestBroker(config, lines);
      c = await TestClient.connect(broker.port);
      expect(lines.join('\n')).toMatch(/recovered \d+ partition logs \(\d+ with records\) in \d+ ms from .* \(1 idle producer ids expired\)/);
      expect((await produce(c, 'events', 0, gap(old))).errorCode).toBe(ErrorCode.NONE);
      expect((await produce(c, 'events', 0, gap(fresh))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    } finally {
      await c.close();
      await broker.close();
    }
  });

  it('a running broker expires producers on its producerIdExpirationCheckIntervalMs timer', async () => {
    // Only setInterval is faked (the broker's sockets keep real timeouts): advancing it runs the check at once.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const lines: string[] = [];
    const broker = await startTestBroker(
      { dataDir: tempDir(), topics: [{ name: 'events', partitions: 1 }], producerIdExpirationCheckIntervalMs: 60_000 },
      lines,
    );
    const c = await TestClient.connect(broker.port);
    try {
      const p = await c.call(22, { transactionalId: null, transactionTimeoutMs: -1 }, 4);
      expect(
        (await produce(c, 'events', 0, producerBatch({ producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: 0, timestamps: [T] })))
          .errorCode,
      ).toBe(0);
      const gap = producerBatch({ producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: 5, timestamps: [Date.now()] });
      expect((await produce(c, 'events', 0, gap)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      vi.advanceTimersByTime(60_000);
      expect(lines).toContain(`[kipgen node 0] expired 1 producer ids idle for ${EXPIRATION_MS} ms or more`);
      expect((await produce(c, 'events', 0, gap)).errorCode).toBe(ErrorCode.NONE);
    } finally {
      await c.close();
      await broker.close();
    }
  });
});

describe('ShareStateLog: the groups verified for a transaction go with the transaction', () => {
  /** A share coordinator that serves nothing: the test writes to the share-state log itself. */
  const idle: ShareCoordinator = { recover: async () => {}, completeTransaction: async () => {}, dump: () => '', close: async () => {} };
  const record = { key: ENC.encode('key'), value: ENC.encode('value') };

  it('an entry per producer while its transaction is open; removed when its COMMIT or ABORT marker is written', async () => {
    let ctx: BrokerContext | undefined;
    const broker = await startBroker(
      { host: '127.0.0.1', port: 0, ...FAST, dataDir: tempDir(), topics: [{ name: 'data', partitions: 1 }] },
      { shareCoordinator: (context) => ((ctx = context), idle), log: () => {} },
    );
    const c = await TestClient.connect(broker.port);
    try {
      const shareLog = ctx!.shareStateLog as ShareStateLog;
      const begin = async (transactionalId: string, groupId: string): Promise<TransactionalProducer> => {
        const { errorCode, producerId, producerEpoch } = await initProducer(c, transactionalId);
        expect(errorCode).toBe(0);
        expect((await addShareAcksToTxn(c, transactionalId, producerId, producerEpoch, groupId, 'data', [0])).errorCode).toBe(0);
        return { transactionalId, producerId, producerEpoch, groupId };
      };
      const end = async (txn: TransactionalProducer, commit: boolean): Promise<void> => {
        expect(await endTxn(c, txn.transactionalId, txn.producerId, txn.producerEpoch, commit)).toBe(0);
        // COMPLETE_* is written once every marker was appended (and the log's append listeners ran).
        const done = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
        await eventually(() => broker.transactions.get(txn.transactionalId)?.state === done, 5_000, `${txn.transactionalId} complete`);
      };

      const a = await begin('tx-a', 'g1');
      const b = await begin('tx-b', 'g1');
      await shareLog.append([record], a);
      await shareLog.append([record], a);
      await shareLog.append([record], b);
      expect(shareLog.verifiedTransactionCount()).toBe(2);
      // A group the transaction did not add is still refused (the remembered g1 does not stand for it).
      await expect(shareLog.append([record], { ...a, groupId: 'g2' })).rejects.toMatchObject({ code: ErrorCode.INVALID_TXN_STATE });
      expect(shareLog.verifiedTransactionCount()).toBe(2);

      await end(a, true);
      expect(shareLog.verifiedTransactionCount()).toBe(1); // b's transaction is still open
      await end(b, false);
      expect(shareLog.verifiedTransactionCount()).toBe(0);

      // The next transaction of a producer is verified afresh and remembered again, then forgotten with it.
      const again = await begin('tx-a', 'g1');
      await shareLog.append([record], again);
      expect(shareLog.verifiedTransactionCount()).toBe(1);
      await end(again, true);
      expect(shareLog.verifiedTransactionCount()).toBe(0);
      expect(shareLog.lastStableOffset()).toBe(shareLog.logEndOffset());
    } finally {
      await c.close();
      await broker.close();
    }
  });
});
