/**
 * A Produce request whose record batch is cut short. A Fetch response may end
 * with part of a batch (decodeRecordBatches skips it as partialTailBytes); a
 * Produce request may not: Kafka's ProduceRequest.validateRecords (called by
 * KafkaApis.handleProduceRequest) finds no whole batch in such records —
 * ByteBufferLogInputStream.nextBatch returns null for a batch longer than the
 * bytes left — and answers INVALID_RECORD ("must have at least one record batch
 * per partition"); only a size field below the record overhead or above the
 * largest message is CorruptRecordException (CORRUPT_MESSAGE). Our broker's
 * check is produce/batch-validation.ts checkFraming (the declared size against the
 * bytes sent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { encodeRecordBatch } from '../../runtime/index.js';
import { TestClient, fetchAll, produce, startTestBroker } from './support/broker-harness.js';

let broker: Broker;
let c: TestClient;

beforeAll(async () => {
  broker = await startTestBroker({ topics: [{ name: 'cut', partitions: 1 }] });
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

describe('Produce with a record batch cut short', () => {
  it('is refused with INVALID_RECORD, stores nothing, and the next whole batch lands at offset 0', async () => {
    const whole = encodeRecordBatch({ records: [{ value: Buffer.from('a'.repeat(40)) }, { value: Buffer.from('b') }] });
    const refused = await produce(c, 'cut', 0, whole.subarray(0, whole.length - 10));
    expect(refused.errorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(refused.errorMessage).toBe(`the record batch declares ${whole.length} bytes but ${whole.length - 10} were sent`);
    expect((await fetchAll(c, 'cut', 0, 'read_uncommitted')).records).toEqual([]);
    const stored = await produce(c, 'cut', 0, whole);
    expect([stored.errorCode, stored.baseOffset]).toEqual([0, 0n]);
  });
});
