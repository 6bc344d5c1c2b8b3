/**
 * KIP-1289 on a three-node static cluster, three broker processes, with every
 * role on its own node: the transaction coordinator of the transactional ids
 * is node 0, the share group's coordinator (heartbeats) node 1, and the data
 * partitions of `work` are led by nodes 0, 1 and 2 — partition 2's share
 * partition sits on node 2, which is neither coordinator. Everything goes
 * over the wire: ShareGroupHeartbeat to the group coordinator, ShareFetch and
 * TxnShareAcknowledge to each share-partition leader, InitProducerId,
 * AddShareAcksToTxn and EndTxn to the transaction coordinator, and the
 * markers from node 0 to the other nodes' `__share_group_state` partitions
 * as WriteTxnMarkers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode as BrokerError } from '../../coordinator/errors.js';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import { ErrorCode } from '../../coordinator/share/share-error.js';
import { TestClient, batch, endTxn, eventually, initProducer, keyLedBy, produce, startCluster, type TestCluster } from './support/broker-harness.js';
import { addShareAcksToTxn, delivered, heartbeat, partitionOf, shareFetch, shareStateBatches, transactionalWrites, txnShareAcknowledge } from './share-wire.js';

const NODES = 3;
const TXN_PARTITIONS = 3;
const OFFSETS_PARTITIONS = 3;
const TC = 0;
const GC = 1;
const REMOTE = 2; // leads work-2 and so holds its share state: neither coordinator

let cluster: TestCluster;
let clients: TestClient[] = [];
let topicId = '';

/** A key whose partition (of `partitions`) is led by `node`. */
function keyOnNode(prefix: string, node: number, partitions: number): string {
  return keyLedBy(prefix, node, partitions, NODES);
}

const GROUP = keyOnNode('sg', GC, OFFSETS_PARTITIONS);

/** Share sessions: the epoch each (node, member) sends next. */
const sessions = new Map<string, number>();

/** ShareFetch from `node` for `member` on the work partitions that node leads; returns what it delivered per partition. */
async function fetchOn(node: number, member: string, partitions: number[] = [node]) {
  const id = `${node}/${member}`;
  const epoch = sessions.get(id) ?? 0;
  const response = await shareFetch(clients[node]!, {
    groupId: GROUP,
    memberId: member,
    epoch,
    partitions: epoch === 0 ? partitions.map((partition) => ({ topicId, partition })) : [],
  });
  expect(response.errorCode).toBe(0);
  sessions.set(id, epoch + 1);
  return new Map(partitions.map((p) => [p, delivered(partitionOf(response, topicId, p))]));
}

async function produceTo(partition: number, values: string[]): Promise<bigint> {
  const result = await produce(clients[partition % NODES]!, 'work', partition, batch({ values }));
  expect(result.errorCode).toBe(0);
  return result.baseOffset;
}

/** InitProducerId and AddShareAcksToTxn on the transaction coordinator (node 0). */
async function beginShareTransaction(transactionalId: string, partitions: number[]) {
  const producer = await initProducer(clients[TC]!, transactionalId, 20_000);
  expect(producer.errorCode).toBe(0);
  const added = await addShareAcksToTxn(clients[TC]!, transactionalId, producer.producerId, producer.producerEpoch, GROUP, 'work', partitions);
  expect(added.errorCode).toBe(0);
  return { transactionalId, producerId: producer.producerId as bigint, producerEpoch: producer.producerEpoch as number };
}

type Txn = Awaited<ReturnType<typeof beginShareTransaction>>;

function acks(txn: Txn, memberId: string, generationId: number, partition: number, first: bigint, last: bigint, type: number = AckType.ACCEPT) {
  return {
    groupId: GROUP,
    transactionalId: txn.transactionalId,
    producerId: txn.producerId,
    producerEpoch: txn.producerEpoch,
    memberId,
    generationId,
    partitions: [{ topicId, partition, batches: [{ first, last, type }] }],
  };
}

/** EndTxn again until it answers NONE: the transaction is COMPLETE, every marker was acknowledged (applied). */
async function completed(txn: Txn, commit: boolean, what: string): Promise<void> {
  await eventually(async () => (await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, commit)) === 0, 10_000, what);
}

beforeAll(async () => {
  cluster = await startCluster(NODES, 'kipgen-share-node', {
    topics: [{ name: 'work', partitions: NODES }],
    transactionStatePartitions: TXN_PARTITIONS,
    consumerOffsetsPartitions: OFFSETS_PARTITIONS,
    // Long locks: records that come back do so because of an abort, never an expiry.
    shareGroup: { recordLockDurationMs: 60_000 },
  });
  clients = cluster.clients;
  const metadata = await clients[0]!.call(3, { topics: [{ name: 'work', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }, 12);
  topicId = metadata.topics[0].topicId;
});

afterAll(async () => {
  await cluster?.close();
});

describe('KIP-1289 across three nodes', () => {
  let memberEpoch = 0;

  it('routes each role to its node: TC, group coordinator, share-partition leaders', async () => {
    const txnId = keyOnNode('tx-route', TC, TXN_PARTITIONS);
    for (const c of clients) {
      expect((await c.call(10, { key: txnId, keyType: 1 }, 3)).nodeId).toBe(TC);
      expect((await c.call(10, { key: GROUP, keyType: 0 }, 3)).nodeId).toBe(GC);
      for (let p = 0; p < NODES; p++) {
        const share = await c.call(10, { keyType: 2, coordinatorKeys: [`${GROUP}:${topicId}:${p}`] }, 6);
        expect(share.coordinators[0].nodeId).toBe(p);
      }
    }
    expect((await heartbeat(clients[TC]!, GROUP, 'm1', 0, ['work'])).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    const joined = await heartbeat(clients[GC]!, GROUP, 'm1', 0, ['work']);
    expect(joined.errorCode).toBe(0);
    expect(joined.assignment.topicPartitions).toEqual([{ topicId, partitions: [0, 1, 2] }]);
    memberEpoch = joined.memberEpoch;
    // m2 fetches too: ShareFetch on the group coordinator's node (1) needs it in the group.
    expect((await heartbeat(clients[GC]!, GROUP, 'm2', 0, ['work'])).errorCode).toBe(0);
  });

  it('(a) commits acks of all three share partitions; the markers reach every node, nothing is redelivered', async () => {
    for (let p = 0; p < NODES; p++) expect(await produceTo(p, [`p${p}-a`, `p${p}-b`])).toBe(0n);
    for (let p = 0; p < NODES; p++) expect((await fetchOn(p, 'm1')).get(p)!.map((r) => r.value)).toEqual([`p${p}-a`, `p${p}-b`]);

    const txn = await beginShareTransaction(keyOnNode('tx-a', TC, TXN_PARTITIONS), [0, 1, 2]);
    for (let p = 0; p < NODES; p++) {
      const r = await txnShareAcknowledge(clients[p]!, acks(txn, 'm1', memberEpoch, p, 0n, 1n));
      expect(r.errorCode).toBe(0);
      expect(r.topics[0].partitions[0]).toMatchObject({ partition: p, errorCode: 0 });
    }
    // Pending: nobody else gets them.
    for (let p = 0; p < NODES; p++) expect((await fetchOn(p, 'm2')).get(p)).toEqual([]);

    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, true)).toBe(0);
    await completed(txn, true, 'COMPLETE_COMMIT of (a)');
    for (let p = 0; p < NODES; p++) {
      // The marker is in that node's own __share_group_state partition, after the one transactional write.
      const onDisk = shareStateBatches(cluster.configs[p]!.dataDir!, p).filter((b) => b.producerId === txn.producerId);
      expect(onDisk.filter((b) => !b.control)).toHaveLength(1);
      expect(onDisk.some((b) => b.control)).toBe(true);
      // ACKNOWLEDGED there: never redelivered; the next record is.
      expect(await produceTo(p, [`p${p}-c`])).toBe(2n);
      expect((await fetchOn(p, 'm2')).get(p)!.map((r) => [r.offset, r.value, r.deliveryCount])).toEqual([[2n, `p${p}-c`, 1]]);
    }
  });

  it('(b) a TxnShareAcknowledge sent to a node that does not lead the partition gets NOT_COORDINATOR for it', async () => {
    const txn = await beginShareTransaction(keyOnNode('tx-b', TC, TXN_PARTITIONS), [1, 2]);
    // m2 holds offset 2 of work-1 (led by node 1) and of work-2 (led by node 2); node 1 is asked for both.
    // (v0: no member named, so only the records' state is checked.)
    const v0 = await txnShareAcknowledge(
      clients[GC]!,
      {
        ...acks(txn, '', -1, REMOTE, 2n, 2n),
        partitions: [
          { topicId, partition: 1, batches: [{ first: 2n, last: 2n, type: AckType.ACCEPT }] },
          { topicId, partition: REMOTE, batches: [{ first: 2n, last: 2n, type: AckType.ACCEPT }] },
        ],
      },
      0,
    );
    expect(v0.errorCode).toBe(0);
    expect(v0.topics[0].partitions.map((p: any) => [p.partition, p.errorCode])).toEqual([
      [1, 0],
      [REMOTE, ErrorCode.NOT_COORDINATOR],
    ]);
    // The TC is no share coordinator of work-2 either; its leader is, and takes it.
    expect((await txnShareAcknowledge(clients[TC]!, acks(txn, '', -1, REMOTE, 2n, 2n), 0)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await txnShareAcknowledge(clients[REMOTE]!, acks(txn, '', -1, REMOTE, 2n, 2n), 0)).errorCode).toBe(0);
    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, true)).toBe(0);
    await completed(txn, true, 'COMPLETE_COMMIT of (b)');
  });

  it('(c) an abort makes the records available at once on the remote leader, delivery count kept', async () => {
    expect(await produceTo(REMOTE, ['r-d', 'r-e'])).toBe(3n);
    expect((await fetchOn(REMOTE, 'm1')).get(REMOTE)!.map((r) => r.offset)).toEqual([3n, 4n]);
    const txn = await beginShareTransaction(keyOnNode('tx-c', TC, TXN_PARTITIONS), [REMOTE]);
    expect((await txnShareAcknowledge(clients[REMOTE]!, acks(txn, 'm1', memberEpoch, REMOTE, 3n, 4n))).errorCode).toBe(0);
    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, false)).toBe(0);
    await completed(txn, false, 'COMPLETE_ABORT of (c)');
    // Locks run for 60 s: only the abort can have freed them.
    const again = (await fetchOn(REMOTE, 'm3')).get(REMOTE)!;
    expect(again.map((r) => [r.offset, r.value, r.deliveryCount])).toEqual([
      [3n, 'r-d', 2],
      [4n, 'r-e', 2],
    ]);
  });

  it('(d) the TC resends the COMMIT marker to a share-partition leader killed with -9 until it is back; applied once', async () => {
    // m3 holds work-2 offsets 3-4 (from (c)); they go into a transaction, then node 2 dies.
    const txn = await beginShareTransaction(keyOnNode('tx-d', TC, TXN_PARTITIONS), [REMOTE]);
    expect((await txnShareAcknowledge(clients[REMOTE]!, acks(txn, '', -1, REMOTE, 3n, 4n), 0)).errorCode).toBe(0);
    await cluster.kill9(REMOTE);

    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, true)).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    // Still PREPARE_COMMIT: node 2 has not acknowledged its marker.
    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, true)).toBe(BrokerError.CONCURRENT_TRANSACTIONS);

    await cluster.restart(REMOTE);
    for (const key of [...sessions.keys()]) if (key.startsWith(`${REMOTE}/`)) sessions.delete(key);
    await completed(txn, true, 'COMPLETE_COMMIT of (d) after the restart');

    // Written once, committed: 3-4 are never delivered again; what follows them is.
    expect(transactionalWrites(cluster.configs[REMOTE]!.dataDir!, REMOTE, txn.producerId)).toBe(1);
    expect(await produceTo(REMOTE, ['r-f'])).toBe(5n);
    expect((await fetchOn(REMOTE, 'm4')).get(REMOTE)!.map((r) => [r.offset, r.value, r.deliveryCount])).toEqual([[5n, 'r-f', 1]]);
    // A retry of the acks, as a client whose response was lost would send: committed already, so refused.
    const late = await txnShareAcknowledge(clients[REMOTE]!, acks(txn, '', -1, REMOTE, 3n, 4n), 0);
    expect(late.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
  });

  it('(e) a transaction holding acks for one group is refused another group’s acks on a remote share-partition leader (verified with the TC over the wire)', async () => {
    const other = keyOnNode('sg-other', GC, OFFSETS_PARTITIONS);
    expect((await heartbeat(clients[GC]!, other, 'o1', 0, ['work'])).errorCode).toBe(0);
    const open = await shareFetch(clients[REMOTE]!, { groupId: other, memberId: 'o1', epoch: 0, partitions: [{ topicId, partition: REMOTE }] });
    expect(open.errorCode).toBe(0);
    const offset = await produceTo(REMOTE, ['r-other']);
    let got: { offset: bigint }[] = delivered(partitionOf(open, topicId, REMOTE));
    for (let epoch = 1; !got.some((r) => r.offset === offset) && epoch < 20; epoch++) {
      got = delivered(partitionOf(await shareFetch(clients[REMOTE]!, { groupId: other, memberId: 'o1', epoch, partitions: [] }), topicId, REMOTE));
    }
    expect(got.map((r) => r.offset)).toContain(offset);
    // The transaction adds GROUP's acks for work-2: node 2's __share_group_state partition is in it, the other group is not.
    const txn = await beginShareTransaction(keyOnNode('tx-e', TC, TXN_PARTITIONS), [REMOTE]);
    const forOther = { ...acks(txn, '', -1, REMOTE, offset, offset), groupId: other };
    const refused = await txnShareAcknowledge(clients[REMOTE]!, forOther, 0);
    const code = refused.errorCode !== 0 ? refused.errorCode : refused.topics[0].partitions[0].errorCode;
    expect(code).toBe(BrokerError.INVALID_TXN_STATE);
    // Once the transaction adds the other group too, the same acks are taken.
    expect((await addShareAcksToTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, other, 'work', [REMOTE])).errorCode).toBe(0);
    expect((await txnShareAcknowledge(clients[REMOTE]!, forOther, 0)).errorCode).toBe(0);
    expect(await endTxn(clients[TC]!, txn.transactionalId, txn.producerId, txn.producerEpoch, false)).toBe(0);
    await completed(txn, false, 'COMPLETE_ABORT of (e)');
  });
});
