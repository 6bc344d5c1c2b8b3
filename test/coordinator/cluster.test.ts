/**
 * A three-node static cluster in three processes. The transaction
 * coordinator and the partition leaders are on different nodes, so
 * transaction verification (AddPartitionsToTxn v4 VerifyOnly) and
 * WriteTxnMarkers cross the wire; a partition leader killed with -9 before
 * the commit gets its marker once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../coordinator/errors.js';
import {
  TestClient,
  addPartitions,
  batch,
  endTxn,
  eventually,
  fetchAll,
  initProducer,
  keyLedBy,
  produce,
  startCluster,
  type TestCluster,
} from './support/broker-harness.js';

const TXN_PARTITIONS = 3;
let cluster: TestCluster;
let clients: TestClient[] = [];

/** A transactional id whose coordinator is node 0 (`__transaction_state` partition 0). */
function txnIdOnNode0(prefix: string): string {
  return keyLedBy(prefix, 0, TXN_PARTITIONS, 3);
}

beforeAll(async () => {
  cluster = await startCluster(3, 'kipgen-node', {
    topics: [{ name: 'out', partitions: 3 }],
    transactionStatePartitions: TXN_PARTITIONS,
    consumerOffsetsPartitions: 3,
    transactionTwoPhaseCommitEnable: true,
  });
  clients = cluster.clients;
});

afterAll(async () => {
  await cluster?.close();
});

describe('three-node cluster', () => {
  it('agrees on leaders and topic ids; FindCoordinator points at the owning node', async () => {
    const views = await Promise.all(clients.map((c) => c.call(3, { topics: [{ name: 'out', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }, 12)));
    for (const v of views) {
      expect(v.brokers).toHaveLength(3);
      expect(v.topics[0].partitions.map((p: any) => p.leaderId)).toEqual([0, 1, 2]);
      expect(v.topics[0].topicId).toBe(views[0].topics[0].topicId);
    }
    const id = txnIdOnNode0('tx-find');
    for (const c of clients) expect((await c.call(10, { key: id, keyType: 1 }, 3)).nodeId).toBe(0);
    expect((await clients[1]!.call(22, { transactionalId: id, transactionTimeoutMs: 5000 }, 4)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
  });

  it('commits a transaction whose partitions live on other nodes: markers cross the wire', async () => {
    const id = txnIdOnNode0('tx-cluster');
    const [tc, leader1, leader2] = clients as [TestClient, TestClient, TestClient];
    const { producerId, producerEpoch } = await initProducer(tc, id, 20_000);
    // Not added yet: node 1 asks node 0 (AddPartitionsToTxn VerifyOnly) and refuses.
    const early = await produce(leader1, 'out', 1, batch({ values: ['early'], producerId, producerEpoch, baseSequence: 0, transactional: true }), id);
    expect(early.errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await addPartitions(tc, id, producerId, producerEpoch, 'out', [1, 2])).toEqual([0, 0]);
    expect((await produce(leader1, 'out', 1, batch({ values: ['one'], producerId, producerEpoch, baseSequence: 0, transactional: true }), id)).errorCode).toBe(
      0,
    );
    expect((await produce(leader2, 'out', 2, batch({ values: ['two'], producerId, producerEpoch, baseSequence: 0, transactional: true }), id)).errorCode).toBe(
      0,
    );
    // KIP-1289: share acks for out-2 go to __share_group_state-2, on node 2.
    const share = await tc.call(95, { transactionalId: id, producerId, producerEpoch, groupId: 'sg', topics: [{ name: 'out', partitions: [2] }] }, 0);
    expect(share.errorCode).toBe(0);
    expect((await fetchAll(leader1, 'out', 1, 'read_committed')).records).toEqual([]);
    expect(await endTxn(tc, id, producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await fetchAll(leader1, 'out', 1, 'read_committed')).records.length === 1, 5000, 'node 1 commit');
    await eventually(async () => (await fetchAll(leader2, 'out', 2, 'read_committed')).records.length === 1, 5000, 'node 2 commit');
    await eventually(async () => (await endTxn(tc, id, producerId, producerEpoch, true)) === 0, 5000, 'COMPLETE_COMMIT');
  });

  it('keeps resending markers to a leader killed with -9 until it is back', async () => {
    const id = txnIdOnNode0('tx-down');
    const tc = clients[0]!;
    const { producerId, producerEpoch } = await initProducer(tc, id, 20_000);
    await addPartitions(tc, id, producerId, producerEpoch, 'out', [2]);
    expect(
      (await produce(clients[2]!, 'out', 2, batch({ values: ['survives'], producerId, producerEpoch, baseSequence: 0, transactional: true }), id)).errorCode,
    ).toBe(0);
    await cluster.kill9(2);
    expect(await endTxn(tc, id, producerId, producerEpoch, true)).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(await endTxn(tc, id, producerId, producerEpoch, true)).toBe(ErrorCode.CONCURRENT_TRANSACTIONS); // still PREPARE_COMMIT
    await cluster.restart(2);
    await eventually(
      async () => (await fetchAll(clients[2]!, 'out', 2, 'read_committed')).records.some((r) => r.value === 'survives'),
      8000,
      'marker after restart',
    );
    await eventually(async () => (await endTxn(tc, id, producerId, producerEpoch, true)) === 0, 5000, 'COMPLETE_COMMIT');
  });

  it('a leader on another node than the coordinator verifies each write of a two-phase producer, so KeepPreparedTxn fences the old epoch there', async () => {
    const id = txnIdOnNode0('tx-keep-remote');
    const [tc, leader1] = clients as [TestClient, TestClient];
    const old = await tc.call(22, { transactionalId: id, transactionTimeoutMs: 20_000, producerId: -1n, producerEpoch: -1, enable2Pc: true }, 6);
    expect(old.errorCode).toBe(0);
    const write = (value: string, producerEpoch: number, baseSequence: number) =>
      leader1.call(
        0,
        {
          transactionalId: id,
          acks: -1,
          timeoutMs: 5000,
          topicData: [
            {
              name: 'out',
              partitionData: [{ index: 1, records: batch({ values: [value], producerId: old.producerId, producerEpoch, baseSequence, transactional: true }) }],
            },
          ],
        },
        12,
      );
    const codeOf = (r: any): number => r.responses[0].partitionResponses[0].errorCode;
    // Node 1 adds out-1 through node 0 (AddPartitionsToTxn v5) with the first write; the second is verified too.
    expect(codeOf(await write('remote-1', old.producerEpoch, 0))).toBe(0);
    expect(codeOf(await write('remote-2', old.producerEpoch, 1))).toBe(0);
    const kept = await tc.call(
      22,
      { transactionalId: id, transactionTimeoutMs: 20_000, producerId: -1n, producerEpoch: -1, enable2Pc: true, keepPreparedTxn: true },
      6,
    );
    expect(kept).toMatchObject({ errorCode: 0, ongoingTxnProducerEpoch: old.producerEpoch });
    expect(codeOf(await write('remote-zombie', old.producerEpoch, 2))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await tc.call(26, { transactionalId: id, producerId: kept.producerId, producerEpoch: kept.producerEpoch, committed: true }, 5)).errorCode).toBe(0);
    await eventually(async () => (await fetchAll(leader1, 'out', 1, 'read_committed')).records.some((r) => r.value === 'remote-2'), 5000, 'node 1 commit');
    const values = (await fetchAll(leader1, 'out', 1, 'read_committed')).records.map((r) => r.value);
    expect(values).toEqual(expect.arrayContaining(['remote-1', 'remote-2']));
    expect(values).not.toContain('remote-zombie');
  });
});
