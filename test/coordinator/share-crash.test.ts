/**
 * KIP-1289's critical case (its section 6, cases 3 and 4) with a real crash:
 * a broker process is killed with SIGKILL after TxnShareAcknowledge and before
 * the transactions end. After the restart the acknowledged records are still
 * pending — not redelivered — until the markers: COMMIT applies them, ABORT
 * makes them available again. A retried TxnShareAcknowledge (its response
 * lost in the crash) succeeds without a second write.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import { ErrorCode } from '../../coordinator/share/share-error.js';
import { TestClient, batch, endTxn, eventually, initProducer, produce, spawnBroker, tempDir, type BrokerProcess } from './support/broker-harness.js';
import { addShareAcksToTxn, delivered, heartbeat, partitionOf, shareFetch, transactionalWrites, txnShareAcknowledge } from './share-wire.js';

let broker: BrokerProcess | undefined;
const clients: TestClient[] = [];

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await broker?.stop();
});

async function connect(port: number): Promise<TestClient> {
  const client = await TestClient.connect(port);
  clients.push(client);
  return client;
}

describe('kill -9 with transactional acknowledgements pending', () => {
  it('keeps them pending across the crash; COMMIT applies them, ABORT makes the records available', async () => {
    const dataDir = tempDir('kipgen-share-crash-');
    const config = {
      dataDir,
      port: 0,
      topics: [{ name: 'work', partitions: 1 }],
      transactionMaxTimeoutMs: 120_000,
      shareGroup: { recordLockDurationMs: 30_000 },
    };
    broker = await spawnBroker(config);
    let c = await connect(broker.port);
    const topics = JSON.parse(fs.readFileSync(path.join(dataDir, 'topics.json'), 'utf8')) as {
      topics: { name: string; topicId: string }[];
    };
    const topicId = topics.topics.find((t) => t.name === 'work')!.topicId;

    expect((await produce(c, 'work', 0, batch({ values: ['a', 'b', 'c', 'd'] }))).errorCode).toBe(0);
    const joined = await heartbeat(c, 'g-crash', 'm1', 0, ['work']);
    expect(joined.errorCode).toBe(0);
    const first = await shareFetch(c, { groupId: 'g-crash', memberId: 'm1', epoch: 0, partitions: [{ topicId, partition: 0 }] });
    expect(delivered(partitionOf(first, topicId, 0)).map((r) => r.value)).toEqual(['a', 'b', 'c', 'd']);

    const producers: Record<string, { producerId: bigint; producerEpoch: number }> = {};
    const ackOf = (transactionalId: string, first: bigint, last: bigint, type: number = AckType.ACCEPT, memberEpoch = joined.memberEpoch) => ({
      groupId: 'g-crash',
      transactionalId,
      producerId: producers[transactionalId]!.producerId,
      producerEpoch: producers[transactionalId]!.producerEpoch,
      memberId: 'm1',
      generationId: memberEpoch,
      partitions: [{ topicId, partition: 0, batches: [{ first, last, type }] }],
    });
    for (const [transactionalId, first, last] of [
      ['tx-commit', 0n, 1n],
      ['tx-abort', 2n, 3n],
    ] as const) {
      const producer = await initProducer(c, transactionalId, 120_000);
      expect(producer.errorCode).toBe(0);
      producers[transactionalId] = producer;
      expect((await addShareAcksToTxn(c, transactionalId, producer.producerId, producer.producerEpoch, 'g-crash', 'work', [0])).errorCode).toBe(0);
      expect((await txnShareAcknowledge(c, ackOf(transactionalId, first, last))).errorCode).toBe(0);
    }

    await broker.kill9();
    broker = await spawnBroker(config);
    c = await connect(broker.port);

    // The client's retry of a TxnShareAcknowledge whose response it never got (the broker died after the
    // fsync): still pending for that producer and epoch after the replay, so it succeeds, although member
    // m1 is unknown to the restarted node, and nothing is written again.
    const retried = await txnShareAcknowledge(c, ackOf('tx-commit', 0n, 1n));
    expect(retried.errorCode).toBe(0);
    expect(retried.topics[0].partitions[0].errorCode).toBe(0);
    // m1 joins again: another type, or another transaction, is refused for those records.
    const rejoined = await heartbeat(c, 'g-crash', 'm1', 0, ['work']);
    const differentType = await txnShareAcknowledge(c, ackOf('tx-commit', 0n, 1n, AckType.REJECT, rejoined.memberEpoch));
    expect(differentType.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    const otherTransaction = await txnShareAcknowledge(c, ackOf('tx-abort', 0n, 1n, AckType.ACCEPT, rejoined.memberEpoch));
    expect(otherTransaction.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    for (const { producerId } of Object.values(producers)) expect(transactionalWrites(dataDir, 0, producerId)).toBe(1);

    // Member m1 is gone with the process, its locks too; the pending records stay pinned.
    await heartbeat(c, 'g-crash', 'm2', 0, ['work']);
    const afterRestart = await shareFetch(c, { groupId: 'g-crash', memberId: 'm2', epoch: 0, partitions: [{ topicId, partition: 0 }] });
    expect(afterRestart.errorCode).toBe(0);
    expect(delivered(partitionOf(afterRestart, topicId, 0))).toEqual([]);

    const commit = producers['tx-commit']!;
    const abort = producers['tx-abort']!;
    expect(await endTxn(c, 'tx-commit', commit.producerId, commit.producerEpoch, true)).toBe(0);
    expect(await endTxn(c, 'tx-abort', abort.producerId, abort.producerEpoch, false)).toBe(0);

    // The aborted acks' records come back with their delivery count kept; the committed ones never do.
    let epoch = 1;
    let redelivered: ReturnType<typeof delivered> = [];
    await eventually(
      async () => {
        const response = await shareFetch(c, { groupId: 'g-crash', memberId: 'm2', epoch: epoch++, partitions: [], maxWaitMs: 200 });
        redelivered = [...redelivered, ...delivered(partitionOf(response, topicId, 0))];
        return redelivered.length >= 2;
      },
      8_000,
      'redelivery after ABORT',
    );
    expect(redelivered.map((r) => [r.offset, r.value, r.deliveryCount])).toEqual([
      [2n, 'c', 2],
      [3n, 'd', 2],
    ]);
    // The committed acks were written once and applied once: 0-1 never come back.
    expect(transactionalWrites(dataDir, 0, commit.producerId)).toBe(1);
    expect(redelivered.some((r) => r.offset < 2n)).toBe(false);
  });
});
