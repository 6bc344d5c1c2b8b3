/**
 * The leader stamps every batch it appends with its leader epoch, as Kafka's
 * LogValidator does (batch.setPartitionLeaderEpoch): producer batches, which
 * arrive with -1, and transaction markers alike. Kafka's consumer carries the
 * epoch of the last batch it read into its position and its OffsetCommit, so
 * without it `KafkaConsumer.committed()` lacks the leader epoch Kafka returns
 * (found by the Kafka judge, test/kafka). A real broker over TCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { LEADER_EPOCH } from '../../coordinator/log/partition-log.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import { encodeRecordBatch, readBatchHeader, verifyCrc } from '../../runtime/index.js';
import { ENC, TestClient, addPartitions, endTxn, eventually, initProducer, produce, startTestBroker, tempDir } from './support/broker-harness.js';

/** Where a v2 batch header holds partitionLeaderEpoch (int32), after baseOffset and batchLength. */
const PARTITION_LEADER_EPOCH_AT = 12;

let dataDir: string;
let broker: Broker;
let c: TestClient;

beforeAll(async () => {
  dataDir = tempDir('kipgen-leader-epoch-');
  broker = await startTestBroker({ dataDir, topics: [{ name: 'epochs', partitions: 1 }] });
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

async function rawBatches(topic: string): Promise<Buffer[]> {
  const response = await c.call(
    1,
    {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 22,
      topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 22 })] })],
    },
    12,
  );
  const all = Buffer.from(response.responses[0].partitions[0].records ?? []);
  const out: Buffer[] = [];
  for (let at = 0; at < all.length;) {
    const size = readBatchHeader(all, at).sizeInBytes;
    out.push(all.subarray(at, at + size));
    at += size;
  }
  return out;
}

describe('partition leader epoch of stored batches', () => {
  it('a producer batch sent with -1, a transactional batch and its COMMIT marker are all stored with the leader epoch, and stay so across a restart', async () => {
    const plain = Buffer.from(encodeRecordBatch({ baseTimestamp: 1n, records: [{ value: ENC.encode('a'), timestamp: 1n }] }));
    expect(plain.readInt32BE(PARTITION_LEADER_EPOCH_AT)).toBe(-1);
    expect((await produce(c, 'epochs', 0, plain)).errorCode).toBe(0);

    const { producerId, producerEpoch } = await initProducer(c, 'epoch-txn');
    expect(await addPartitions(c, 'epoch-txn', producerId, producerEpoch, 'epochs', [0])).toEqual([0]);
    const txn = Buffer.from(
      encodeRecordBatch({
        baseTimestamp: 1n,
        producerId,
        producerEpoch,
        baseSequence: 0,
        isTransactional: true,
        records: [{ value: ENC.encode('t'), timestamp: 1n }],
      }),
    );
    expect((await produce(c, 'epochs', 0, txn, 'epoch-txn')).errorCode).toBe(0);
    expect(await endTxn(c, 'epoch-txn', producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await rawBatches('epochs')).length === 3, 8_000, 'the COMMIT marker');

    const check = async () => {
      const stored = await rawBatches('epochs');
      expect(stored.map((b) => readBatchHeader(b).isControl)).toEqual([false, false, true]);
      expect(stored.map((b) => b.readInt32BE(PARTITION_LEADER_EPOCH_AT))).toEqual([LEADER_EPOCH, LEADER_EPOCH, LEADER_EPOCH]);
      expect(stored.map((b) => readBatchHeader(b).partitionLeaderEpoch)).toEqual([0, 0, 0]);
      // The CRC does not cover the epoch: the stamped batches are still valid.
      expect(stored.every((b) => verifyCrc(b))).toBe(true);
    };
    await check();
    await c.close();
    await broker.close();
    broker = await startTestBroker({ dataDir, topics: [{ name: 'epochs', partitions: 1 }] });
    c = await TestClient.connect(broker.port);
    await check();
  });
});
