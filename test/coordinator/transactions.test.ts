/**
 * The transaction coordinator and the transactional data path over TCP,
 * against an in-process broker: happy paths and the errors KIP-1289 and
 * DESIGN §5 name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { createTxnOffsetCommitRequestPartition } from '../../generated/TxnOffsetCommitRequest.js';
import { TxnState } from '../../coordinator/txn/transaction-metadata.js';
import {
  TestClient,
  addPartitions,
  batch,
  endTxn,
  eventually,
  fetchAll,
  initProducer,
  produce,
  startTestBroker,
  tempDir,
  withUndeliverableMarkers,
} from './support/broker-harness.js';

let broker: Broker;
let c: TestClient;
const lines: string[] = [];

beforeAll(async () => {
  broker = await startTestBroker(
    {
      dataDir: tempDir(),
      topics: [
        { name: 'out', partitions: 3 },
        { name: 'in', partitions: 2 },
      ],
      transactionMaxTimeoutMs: 60_000,
    },
    lines,
  );
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

describe('transactions over the wire', () => {
  it('commits: output invisible to read_committed until the COMMIT marker, then visible', async () => {
    const { errorCode, producerId, producerEpoch } = await initProducer(c, 'tx-commit');
    expect(errorCode).toBe(0);
    expect(await addPartitions(c, 'tx-commit', producerId, producerEpoch, 'out', [0])).toEqual([0]);
    const p = await produce(c, 'out', 0, batch({ values: ['a', 'b'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-commit');
    expect(p.errorCode).toBe(0);
    const before = await fetchAll(c, 'out', 0, 'read_committed');
    expect(before.records).toEqual([]);
    expect(before.lastStableOffset).toBe(p.baseOffset);
    expect((await fetchAll(c, 'out', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['a', 'b']);
    expect(await endTxn(c, 'tx-commit', producerId, producerEpoch, true)).toBe(0);
    await eventually(() => broker.transactions.get('tx-commit')?.state === TxnState.COMPLETE_COMMIT, 5000, 'COMPLETE_COMMIT');
    const after = await fetchAll(c, 'out', 0, 'read_committed');
    expect(after.records.map((r) => r.value)).toEqual(['a', 'b']);
    expect(after.lastStableOffset).toBe(after.highWatermark);
  });

  it('aborts: read_committed gets AbortedTransactions and skips the records; LSO moves past the marker', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-abort');
    await addPartitions(c, 'tx-abort', producerId, producerEpoch, 'out', [1]);
    await produce(c, 'out', 1, batch({ values: ['x'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-abort');
    expect(await endTxn(c, 'tx-abort', producerId, producerEpoch, false)).toBe(0);
    await eventually(() => broker.transactions.get('tx-abort')?.state === TxnState.COMPLETE_ABORT, 5000, 'COMPLETE_ABORT');
    const fetched = await fetchAll(c, 'out', 1, 'read_committed');
    expect(fetched.abortedTransactions).toEqual([{ producerId, firstOffset: 0n }]);
    expect(fetched.records).toEqual([]);
    expect(fetched.lastStableOffset).toBe(2n); // record + marker
    // DESIGN §5.6: the same result again is an idempotent success, the other result is INVALID_TXN_STATE.
    expect(await endTxn(c, 'tx-abort', producerId, producerEpoch, false)).toBe(0);
    expect(await endTxn(c, 'tx-abort', producerId, producerEpoch, true)).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('EndTxn retried after COMPLETE_COMMIT succeeds; abort of it is INVALID_TXN_STATE; EndTxn with no transaction is INVALID_TXN_STATE', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-idem');
    expect(await endTxn(c, 'tx-idem', producerId, producerEpoch, true)).toBe(ErrorCode.INVALID_TXN_STATE);
    await addPartitions(c, 'tx-idem', producerId, producerEpoch, 'out', [2]);
    expect(await endTxn(c, 'tx-idem', producerId, producerEpoch, true)).toBe(0);
    await eventually(() => broker.transactions.get('tx-idem')?.state === TxnState.COMPLETE_COMMIT);
    expect(await endTxn(c, 'tx-idem', producerId, producerEpoch, true)).toBe(0);
    expect(await endTxn(c, 'tx-idem', producerId, producerEpoch, false)).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('fences a zombie: a second InitProducerId aborts the open transaction; the old epoch gets PRODUCER_FENCED', async () => {
    const a = await initProducer(c, 'tx-zombie');
    await addPartitions(c, 'tx-zombie', a.producerId, a.producerEpoch, 'out', [0]);
    await produce(
      c,
      'out',
      0,
      batch({ values: ['zombie'], producerId: a.producerId, producerEpoch: a.producerEpoch, baseSequence: 0, transactional: true }),
      'tx-zombie',
    );
    // Instance B: the first attempt fences A and answers CONCURRENT_TRANSACTIONS until the abort completes.
    let b = await initProducer(c, 'tx-zombie');
    expect(b.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    await eventually(async () => (b = await initProducer(c, 'tx-zombie')).errorCode === 0, 5000, 'InitProducerId after fencing');
    expect(b.producerId).toBe(a.producerId);
    expect(b.producerEpoch).toBeGreaterThan(a.producerEpoch + 1);
    expect(await endTxn(c, 'tx-zombie', a.producerId, a.producerEpoch, true)).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await addPartitions(c, 'tx-zombie', a.producerId, a.producerEpoch, 'out', [1])).toEqual([ErrorCode.PRODUCER_FENCED]);
    // The zombie's write to the partition is refused: its epoch is older than the marker's.
    const late = await produce(
      c,
      'out',
      0,
      batch({ values: ['late'], producerId: a.producerId, producerEpoch: a.producerEpoch, baseSequence: 1, transactional: true }),
      'tx-zombie',
    );
    expect([ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED]).toContain(late.errorCode);
    const visible = (await fetchAll(c, 'out', 0, 'read_committed')).records.map((r) => r.value);
    expect(visible).not.toContain('zombie');
    expect(broker.metrics().transactions.fenced).toBeGreaterThanOrEqual(1);
  });

  it('refuses a transactional write to a partition not added to the transaction (INVALID_TXN_STATE)', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-unadded');
    const p = await produce(c, 'in', 0, batch({ values: ['nope'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-unadded');
    expect(p.errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(p.errorMessage).toMatch(/not in the ongoing transaction/);
  });

  it('aborts a transaction left open past its timeout and fences its producer', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-timeout', 700);
    await addPartitions(c, 'tx-timeout', producerId, producerEpoch, 'in', [1]);
    await produce(c, 'in', 1, batch({ values: ['stale'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-timeout');
    await eventually(() => broker.transactions.get('tx-timeout')?.state === TxnState.COMPLETE_ABORT, 5000, 'timeout abort');
    expect(await endTxn(c, 'tx-timeout', producerId, producerEpoch, true)).toBe(ErrorCode.PRODUCER_FENCED);
    const fetched = await fetchAll(c, 'in', 1, 'read_committed');
    expect(fetched.records).toEqual([]);
    expect(fetched.lastStableOffset).toBe(fetched.highWatermark);
    expect(broker.metrics().transactions.timedOut).toBeGreaterThanOrEqual(1);
  });

  it('rejects bad InitProducerId input and unknown producers', async () => {
    expect((await initProducer(c, 'tx-bad-timeout', 120_000)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    expect((await initProducer(c, 'tx-bad-timeout', 0)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    expect(await endTxn(c, 'never-initialized', 12345n, 0, true)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const { producerId, producerEpoch } = await initProducer(c, 'tx-mapping');
    expect(await addPartitions(c, 'tx-mapping', producerId + 1n, producerEpoch, 'out', [0])).toEqual([ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
    expect(await addPartitions(c, 'tx-mapping', producerId, producerEpoch, 'nope', [0])).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    const mixed = await c.call(
      24,
      {
        v3AndBelowTransactionalId: 'tx-mapping',
        v3AndBelowProducerId: producerId,
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: [{ name: 'out', partitions: [0, 9] }],
      },
      3,
    );
    expect(mixed.resultsByTopicV3AndBelow[0].resultsByPartition.map((r: any) => r.partitionErrorCode)).toEqual([
      ErrorCode.OPERATION_NOT_ATTEMPTED,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    // A non-transactional (idempotent) producer gets a fresh id each time.
    const idem = await c.call(22, { transactionalId: null, transactionTimeoutMs: 0 }, 4);
    expect(idem.errorCode).toBe(0);
    expect(idem.producerId).toBeGreaterThanOrEqual(0n);
  });

  it('AddPartitionsToTxn v4+ verifies and adds in the batched broker form', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-v4');
    const verify = (verifyOnly: boolean) =>
      c.call(24, { transactions: [{ transactionalId: 'tx-v4', producerId, producerEpoch, verifyOnly, topics: [{ name: 'out', partitions: [2] }] }] }, 5);
    const code = (r: any) => r.resultsByTransaction[0].topicResults[0].resultsByPartition[0].partitionErrorCode;
    expect(code(await verify(true))).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(code(await verify(false))).toBe(0);
    expect(code(await verify(true))).toBe(0);
    expect(await endTxn(c, 'tx-v4', producerId, producerEpoch, false)).toBe(0);
  });

  it('TxnOffsetCommit is pending until the COMMIT marker, dropped on ABORT, read back with OffsetFetch', async () => {
    const group = 'txn-group';
    const commitOffsets = async (txnId: string, pid: bigint, epoch: number, offset: bigint) =>
      c.call(
        28,
        {
          transactionalId: txnId,
          groupId: group,
          producerId: pid,
          producerEpoch: epoch,
          topics: [{ name: 'in', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: offset, committedMetadata: 'm' })] }],
        },
        3,
      );
    const fetchOffset = async (requireStable: boolean) => {
      const r = await c.call(9, { groupId: group, topics: [{ name: 'in', partitionIndexes: [0] }], requireStable }, 7);
      return r.topics[0].partitions[0];
    };
    const { producerId, producerEpoch } = await initProducer(c, 'tx-offsets');
    // Without AddOffsetsToTxn the commit is refused.
    const refused = await commitOffsets('tx-offsets', producerId, producerEpoch, 5n);
    expect(refused.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect((await c.call(25, { transactionalId: 'tx-offsets', producerId, producerEpoch, groupId: group }, 3)).errorCode).toBe(0);
    expect((await commitOffsets('tx-offsets', producerId, producerEpoch, 5n)).topics[0].partitions[0].errorCode).toBe(0);
    expect(await fetchOffset(true)).toMatchObject({ errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT });
    expect(await fetchOffset(false)).toMatchObject({ errorCode: 0, committedOffset: -1n });
    expect(await endTxn(c, 'tx-offsets', producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await fetchOffset(true)).committedOffset === 5n, 5000, 'committed offset');
    // A second transaction that aborts leaves the committed offset alone.
    // Until COMPLETE_COMMIT is written the coordinator answers CONCURRENT_TRANSACTIONS; clients retry.
    await eventually(
      async () => (await c.call(25, { transactionalId: 'tx-offsets', producerId, producerEpoch, groupId: group }, 3)).errorCode === 0,
      5000,
      'AddOffsetsToTxn',
    );
    await commitOffsets('tx-offsets', producerId, producerEpoch, 9n);
    expect(await endTxn(c, 'tx-offsets', producerId, producerEpoch, false)).toBe(0);
    await eventually(async () => (await fetchOffset(true)).errorCode === 0, 5000, 'abort completes');
    expect((await fetchOffset(true)).committedOffset).toBe(5n);
    // v8+ batched groups.
    const v8 = await c.call(9, { groups: [{ groupId: group, topics: null }], requireStable: true }, 8);
    expect(v8.groups[0].topics[0].partitions[0]).toMatchObject({ partitionIndex: 0, committedOffset: 5n, metadata: 'm' });
  });

  it('AddShareAcksToTxn adds the __share_group_state partition of the data partition leader (KIP-1289)', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-share');
    const r = await c.call(95, { transactionalId: 'tx-share', producerId, producerEpoch, groupId: 'sg', topics: [{ name: 'in', partitions: [0, 1] }] }, 0);
    expect(r.errorCode).toBe(0);
    expect(r.results[0].partitions.map((p: any) => p.partitionErrorCode)).toEqual([0, 0]);
    const meta = broker.transactions.get('tx-share')!;
    expect(meta.state).toBe(TxnState.ONGOING);
    expect([...(meta.partitions.get('__share_group_state') ?? [])]).toEqual([0]);
    const unknown = await c.call(
      95,
      { transactionalId: 'tx-share', producerId, producerEpoch, groupId: 'sg', topics: [{ name: 'ghost', partitions: [0] }] },
      0,
    );
    expect(unknown.results[0].partitions[0].partitionErrorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const fenced = await c.call(
      95,
      { transactionalId: 'tx-share', producerId, producerEpoch: producerEpoch - 1, groupId: 'sg', topics: [{ name: 'in', partitions: [0] }] },
      0,
    );
    expect(fenced.errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    // Commit: the marker goes to __share_group_state-0 too.
    expect(await endTxn(c, 'tx-share', producerId, producerEpoch, true)).toBe(0);
    await eventually(() => broker.transactions.get('tx-share')?.state === TxnState.COMPLETE_COMMIT);
  });
});

describe('concurrent transactions', () => {
  it('the next transaction of the same producer, started while the last one is still completing, waits for it instead of getting CONCURRENT_TRANSACTIONS', async () => {
    const { producerId, producerEpoch } = await initProducer(c, 'tx-back-to-back');
    for (let i = 0; i < 5; i++) {
      // EndTxn answers once PREPARE_COMMIT is written; the add is sent at once, while the markers and COMPLETE_COMMIT are being written.
      expect(await addPartitions(c, 'tx-back-to-back', producerId, producerEpoch, 'out', [0, 1, 2])).toEqual([0, 0, 0]);
      expect(await endTxn(c, 'tx-back-to-back', producerId, producerEpoch, true)).toBe(0);
    }
    await eventually(() => broker.transactions.get('tx-back-to-back')?.state === TxnState.COMPLETE_COMMIT, 5000, 'COMPLETE_COMMIT');
  });

  it('answers CONCURRENT_TRANSACTIONS while PREPARE_COMMIT is completing (a marker target is down)', async () => {
    await withUndeliverableMarkers(async (stuck, client) => {
      const { producerId, producerEpoch } = await initProducer(client, 'tx-stuck');
      expect(await addPartitions(client, 'tx-stuck', producerId, producerEpoch, 't', [1])).toEqual([0]);
      expect(await endTxn(client, 'tx-stuck', producerId, producerEpoch, true)).toBe(0);
      expect(stuck.transactions.get('tx-stuck')?.state).toBe(TxnState.PREPARE_COMMIT);
      expect(await endTxn(client, 'tx-stuck', producerId, producerEpoch, true)).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      expect(await endTxn(client, 'tx-stuck', producerId, producerEpoch, false)).toBe(ErrorCode.INVALID_TXN_STATE);
      expect(await addPartitions(client, 'tx-stuck', producerId, producerEpoch, 't', [0])).toEqual([ErrorCode.CONCURRENT_TRANSACTIONS]);
      expect((await initProducer(client, 'tx-stuck')).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    });
  });
});
