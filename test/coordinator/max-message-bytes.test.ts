/**
 * max.message.bytes, as Kafka's UnifiedLog.analyzeAndValidateRecords applies
 * it: a produced batch larger than the topic's limit is refused with
 * MESSAGE_TOO_LARGE (Kafka's client: RecordTooLargeException) and nothing is
 * stored; IncrementalAlterConfigs changes the limit for the next batch; an
 * unset limit is Kafka's default, 1048588. Found by the Kafka judge
 * (test/kafka: kipgen stored a batch Kafka refuses). A real broker over TCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../coordinator/cluster.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { encodeRecordBatch } from '../../runtime/index.js';
import { ENC, TestClient, fetchAll, produce, startTestBroker, tempDir } from './support/broker-harness.js';

let broker: Broker;
let c: TestClient;

beforeAll(async () => {
  broker = await startTestBroker({ dataDir: tempDir('kipgen-max-message-bytes-'), topics: [{ name: 'unlimited', partitions: 1 }] });
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

function batchOf(valueBytes: number): Buffer {
  return Buffer.from(encodeRecordBatch({ baseTimestamp: 1n, records: [{ value: ENC.encode('v'.repeat(valueBytes)), timestamp: 1n }] }));
}

describe('max.message.bytes on Produce', () => {
  it('refuses a batch larger than the topic limit with MESSAGE_TOO_LARGE, stores nothing of it, and follows a change of the limit', async () => {
    const created = await c.call(
      19,
      {
        topics: [{ name: 'small', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [{ name: 'max.message.bytes', value: '200' }] }],
        timeoutMs: 5000,
        validateOnly: false,
      },
      7,
    );
    expect(created.topics[0].errorCode).toBe(0);
    const fits = batchOf(10);
    const large = batchOf(1000);
    expect(fits.length).toBeLessThanOrEqual(200);
    expect((await produce(c, 'small', 0, fits)).errorCode).toBe(0);
    const refused = await produce(c, 'small', 0, large);
    expect(refused.errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect(refused.errorMessage).toContain('max.message.bytes (200)');
    expect((await fetchAll(c, 'small', 0, 'read_uncommitted')).records).toHaveLength(1);

    const altered = await c.call(
      44,
      {
        resources: [{ resourceType: 2, resourceName: 'small', configs: [{ name: 'max.message.bytes', configOperation: 0, value: '2000' }] }],
        validateOnly: false,
      },
      1,
    );
    expect(altered.responses[0].errorCode).toBe(0);
    expect((await produce(c, 'small', 0, large)).errorCode).toBe(0);
    expect((await fetchAll(c, 'small', 0, 'read_uncommitted')).records).toHaveLength(2);
  });

  it('an unset limit is Kafka’s default, 1048588 bytes', async () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(1_048_588);
    expect((await produce(c, 'unlimited', 0, batchOf(1_000_000))).errorCode).toBe(0);
    expect((await produce(c, 'unlimited', 0, batchOf(1_048_600))).errorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
  });
});
