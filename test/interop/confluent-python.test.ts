/**
 * confluent-kafka-python (Debian's python3-confluent-kafka, on librdkafka)
 * against `kipgen broker` in a child process: a transactional producer
 * commits (with send_offsets_to_transaction), aborts, and commits again;
 * kipgen's own read_committed Fetch then sees exactly the committed records.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OffsetFetchRequest, OffsetFetchResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { requireInteropTool, DEBIAN_PYTHON as PYTHON } from './support/tools.js';
import { ROOT, apisUsed, run, startKipgenBroker, type KipgenBroker, removeTempDirs } from './support/broker-process.js';
import { readPartition } from './support/fetch.js';

/** Debian's interpreter: python3-confluent-kafka installs into its dist-packages (a pyenv python3 on PATH would not see it). */
const CLIENT_ID = 'confluent-python-interop';
const TOPIC = 'python-payments';
const GROUP = 'python-group';
let broker: KipgenBroker;
let outcome: { confluent_kafka: string; librdkafka: string; errors: string[] };
let stderr = '';

beforeAll(async () => {
  requireInteropTool('confluent-kafka-python');
  broker = await startKipgenBroker({ topics: [`${TOPIC}:2`] });
  const result = await run(PYTHON, [path.join(ROOT, 'test/interop/support/confluent_txn.py'), `127.0.0.1:${broker.port}`, TOPIC, GROUP], { timeoutMs: 60_000 });
  stderr = result.stderr;
  if (result.code !== 0) throw new Error(`confluent_txn.py exited ${result.code ?? result.signal}:\n${result.stderr}\nbroker:\n${broker.stderr()}`);
  outcome = JSON.parse(result.stdout.toString('utf8').trim().split('\n').pop()!) as typeof outcome;
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
  if (outcome) {
    process.stdout.write(
      `confluent-kafka-python ${outcome.confluent_kafka} (librdkafka ${outcome.librdkafka}): APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`,
    );
  }
});

describe('confluent-kafka-python transactional producer against kipgen broker', () => {
  it('completes its transactions without delivery errors', () => {
    expect(outcome.errors).toEqual([]);
    expect(stderr).not.toMatch(/%[0-3]\|/); // librdkafka errors/criticals on stderr
    expect(broker.stderr()).not.toMatch(/rejected frame|request failed/);
  });

  it('read_committed (kipgen Fetch codecs) sees exactly the committed records, byte for byte', async () => {
    const p0 = await readPartition(broker.port, TOPIC, 0, 'read_committed');
    expect(p0.records.map((r) => [r.key?.toString() ?? null, r.value?.toString(), r.headers.map((h) => [h.key, h.value?.toString('hex') ?? null])])).toEqual([
      [
        'py-k0',
        'py-committed-0',
        [
          ['h', '00ff'],
          ['n', null],
        ],
      ],
      ['py-k2', 'py-committed-2', []],
    ]);
    expect(p0.markers.map((m) => m.type)).toEqual(['COMMIT', 'ABORT', 'COMMIT']);
    const p1 = await readPartition(broker.port, TOPIC, 1, 'read_committed');
    expect(p1.records.map((r) => [r.key, r.value?.toString('hex')])).toEqual([[null, Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('hex')]]);
    expect(p1.markers.map((m) => m.type)).toEqual(['COMMIT', 'ABORT']);
    expect(p1.abortedTransactions).toHaveLength(1);
  });

  it('read_uncommitted also sees the aborted records', async () => {
    const p0 = await readPartition(broker.port, TOPIC, 0, 'read_uncommitted');
    expect(p0.records.map((r) => r.value?.toString())).toEqual(['py-committed-0', 'py-aborted-0', 'py-committed-2']);
  });

  it('send_offsets_to_transaction committed the group offset', async () => {
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'kipgen-interop-reader' });
    try {
      const r = await c.send(
        OffsetFetchRequest,
        OffsetFetchRequest.create({ groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0] }], requireStable: true }),
        7,
        OffsetFetchResponse,
      );
      expect(r.topics[0]!.partitions[0]).toMatchObject({ committedOffset: 7n, errorCode: 0 });
    } finally {
      await c.close();
    }
  });

  it('used the transactional APIs (read off the broker request log)', () => {
    const used = apisUsed(broker.requests(), (id) => id === CLIENT_ID);
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
