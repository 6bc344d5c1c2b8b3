/**
 * kafkajs 2.2.4 (npm) against `kipgen broker` in a child process: its
 * transactional producer commits, aborts and commits again (with sendOffsets
 * in the first transaction), and its admin client reads metadata. What it
 * wrote is then read back with kipgen's own Fetch codecs, read_committed and
 * read_uncommitted, and compared byte for byte; the committed group offset is
 * read back with OffsetFetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OffsetFetchRequest, OffsetFetchResponse } from '../../generated/index.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../generated/OffsetFetchRequest.js';
import { KafkaConnection } from '../../connection/connection.js';
import { apisUsed, startKipgenBroker, type KipgenBroker, removeTempDirs } from '../interop/support/broker-process.js';
import { readPartition, type ConsumedRecord } from '../interop/support/fetch.js';
import {
  ABORTED,
  COMMITTED_1,
  COMMITTED_2,
  KAFKAJS_CLIENT_ID,
  runKafkajsSession,
  type KafkajsMessage,
  type KafkajsSession,
} from '../interop/support/kafkajs-flow.js';

const TOPIC = 'kafkajs-orders';
const GROUP = 'kafkajs-group';
let broker: KipgenBroker;
let session: KafkajsSession;

beforeAll(async () => {
  broker = await startKipgenBroker({ topics: [`${TOPIC}:2`] });
  session = await runKafkajsSession(broker.port, TOPIC, GROUP, '42');
});

afterAll(async () => {
  const stderr = await broker?.stop();
  removeTempDirs();
  if (stderr !== undefined)
    process.stdout.write(`kafkajs session, APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === KAFKAJS_CLIENT_ID))}\n`);
});

/** As the records come back: key, value, headers in order. */
function shape(records: ConsumedRecord[]): unknown[] {
  return records.map((r) => ({
    key: r.key?.toString('hex') ?? null,
    value: r.value?.toString('hex') ?? null,
    headers: r.headers.map((h) => [h.key, h.value?.toString('hex') ?? null]),
  }));
}
function expected(messages: KafkajsMessage[], partition: number): unknown[] {
  return messages
    .filter((m) => m.partition === partition)
    .map((m) => ({
      key: m.key?.toString('hex') ?? null,
      value: m.value?.toString('hex') ?? null,
      headers: Object.entries(m.headers).map(([k, v]) => [k, v.toString('hex')]),
    }));
}

describe('kafkajs 2.2.4 against kipgen broker', () => {
  it('runs without client-side errors and with no frame refused by the broker', () => {
    // CONCURRENT_TRANSACTIONS right after a commit is retried by kafkajs (as against Kafka); anything else is a failure.
    expect(session.errors.filter((e) => !/concurrent operation on the same transaction/.test(e))).toEqual([]);
    expect(broker.stderr()).not.toMatch(/rejected frame|request failed/);
  });

  it('read_committed (kipgen Fetch codecs) returns the committed records byte for byte and none of the aborted ones', async () => {
    for (const partition of [0, 1]) {
      const read = await readPartition(broker.port, TOPIC, partition, 'read_committed');
      expect(shape(read.records), `partition ${partition}`).toEqual([...expected(COMMITTED_1, partition), ...expected(COMMITTED_2, partition)]);
      expect(read.records.every((r) => r.transactional)).toBe(true);
      // Partition 0 took part in the first two transactions, partition 1 in all three.
      expect(read.markers.map((m) => m.type)).toEqual(partition === 0 ? ['COMMIT', 'ABORT'] : ['COMMIT', 'ABORT', 'COMMIT']);
      expect(read.abortedTransactions).toHaveLength(1);
      expect(read.lastStableOffset).toBe(read.highWatermark);
    }
  });

  it('read_uncommitted sees the aborted records too, in order', async () => {
    for (const partition of [0, 1]) {
      const read = await readPartition(broker.port, TOPIC, partition, 'read_uncommitted');
      expect(shape(read.records)).toEqual([...expected(COMMITTED_1, partition), ...expected(ABORTED, partition), ...expected(COMMITTED_2, partition)]);
    }
  });

  it('sendOffsets committed the group offset with the transaction (OffsetFetch, RequireStable)', async () => {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'kipgen-interop-reader' });
    try {
      const response = await c.send(
        OffsetFetchRequest,
        OffsetFetchRequest.create({
          groups: [createOffsetFetchRequestGroup({ groupId: GROUP, topics: [createOffsetFetchRequestTopics({ name: TOPIC, partitionIndexes: [0, 1] })] })],
          requireStable: true,
        }),
        8,
        OffsetFetchResponse,
      );
      const partitions = response.groups[0]!.topics[0]!.partitions;
      expect(partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode])).toEqual([
        [0, 42n, 0],
        [1, -1n, 0],
      ]);
    } finally {
      await c.close();
    }
  });

  it('admin listTopics and fetchTopicMetadata see the topic, its partitions and leaders', () => {
    expect(session.listTopics).toContain(TOPIC);
    const meta = session.topicMetadata.find((t) => t.name === TOPIC)!;
    expect(meta.partitions.map((p) => [p.partitionId, p.leader, p.replicas, p.isr]).sort()).toEqual([
      [0, 0, [0], [0]],
      [1, 0, [0], [0]],
    ]);
  });

  it('used the transactional APIs (read off the broker request log)', () => {
    const used = apisUsed(broker.requests(), (id) => id === KAFKAJS_CLIENT_ID);
    for (const api of [
      'ApiVersions',
      'Metadata',
      'FindCoordinator',
      'InitProducerId',
      'AddPartitionsToTxn',
      'Produce',
      'AddOffsetsToTxn',
      'TxnOffsetCommit',
      'EndTxn',
    ]) {
      expect(used, api).toHaveProperty(api);
    }
  });
});
