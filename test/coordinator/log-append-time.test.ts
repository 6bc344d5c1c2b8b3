/**
 * message.timestamp.type=LogAppendTime, as Kafka's LogValidator applies it:
 * each appended batch gets the timestamp-type attribute bit and its
 * maxTimestamp set to the append time, with its CRC-32C recomputed and its
 * records (timestamp deltas included) left as the producer wrote them; the
 * ProduceResponse carries that time in LogAppendTimeMs (-1 on CreateTime
 * topics); a retried idempotent batch gets the original batch's time
 * (UnifiedLog: appendInfo.setLogAppendTime(duplicate.timestamp)); transaction
 * markers are stamped too. A real broker over TCP on 127.0.0.1, and real
 * partition logs in temp folders with Date.now() pinned.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { PartitionLog } from '../../coordinator/log/partition-log.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import {
  decodeRecordBatches,
  encodeRecordBatch,
  readBatchHeader,
  readControlRecord,
  verifyCrc,
  type RecordBatchHeader,
  type TimestampType,
} from '../../runtime/index.js';
import { ENC, TestClient, addPartitions, endTxn, eventually, initProducer, produce, startTestBroker, tempDir } from './support/broker-harness.js';

/** A fixed instant (November 2023) for producer timestamps: far older than any append time of a run. */
const T = 1_700_000_000_000n;
/** Kafka's RecordBatch.TIMESTAMP_TYPE_MASK: attribute bit 3. */
const TIMESTAMP_TYPE_BIT = 0x08;
/** Where a v2 batch header holds the attributes (int16). */
const ATTRIBUTES_AT = 21;
/** From baseTimestamp (byte 27) on, past maxTimestamp (bytes 35-42): what LogAppendTime must leave alone. */
const BASE_TIMESTAMP_AT = 27;
const AFTER_MAX_TIMESTAMP_AT = 43;

let dataDir: string;
let broker: Broker;
let c: TestClient;

beforeAll(async () => {
  dataDir = tempDir('kipgen-log-append-time-');
  broker = await startTestBroker({ dataDir, topics: [{ name: 'create-time', partitions: 1 }] });
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

/** Records with out-of-order producer timestamps, so the batch's own max is not its first or last. */
function producerBatch(options: { producerId?: bigint; baseSequence?: number; transactional?: boolean; values?: string[] } = {}): Buffer {
  const values = options.values ?? ['a', 'b', 'c'];
  return Buffer.from(
    encodeRecordBatch({
      baseTimestamp: T,
      producerId: options.producerId ?? -1n,
      producerEpoch: options.producerId === undefined ? -1 : 0,
      baseSequence: options.baseSequence ?? -1,
      isTransactional: options.transactional ?? false,
      records: values.map((v, i) => ({ value: ENC.encode(v), timestamp: T + BigInt([0, 5, 2][i % 3]!) })),
    }),
  );
}

/** Whether `stored` is `sent` but for the base offset and the leader epoch the broker stamps (bytes 0-7, 12-15). */
function asSentButEpoch(stored: Buffer, sent: Buffer): boolean {
  return stored.subarray(8, 12).equals(sent.subarray(8, 12)) && stored.subarray(16).equals(sent.subarray(16)) && stored.readInt32BE(12) === 0;
}

async function createTopic(name: string, timestampType?: TimestampType): Promise<void> {
  const configs = timestampType === undefined ? [] : [{ name: 'message.timestamp.type', value: timestampType }];
  const created = await c.call(
    19,
    { topics: [{ name, numPartitions: 1, replicationFactor: -1, assignments: [], configs }], timeoutMs: 5000, validateOnly: false },
    7,
  );
  expect(created.topics[0].errorCode).toBe(0);
}

async function alterTimestampType(name: string, timestampType: TimestampType): Promise<void> {
  const altered = await c.call(
    44,
    {
      resources: [{ resourceType: 2, resourceName: name, configs: [{ name: 'message.timestamp.type', configOperation: 0, value: timestampType }] }],
      validateOnly: false,
    },
    1,
  );
  expect(altered.responses[0].errorCode).toBe(0);
}

/** The partition's stored batches, raw, as Fetch v12 serves them. */
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

/**
 * Checks that `stored` is `sent` stamped with `appendTime`, as Kafka's
 * DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, now) leaves it: bit 3 of
 * the attributes and maxTimestamp changed, a CRC-32C over the new bytes, and
 * every other byte (base timestamp, record timestamp deltas) as sent.
 */
function expectStamped(stored: Buffer, sent: Buffer, appendTime: bigint): RecordBatchHeader {
  const header = readBatchHeader(stored);
  expect(header.timestampType).toBe('LogAppendTime');
  expect(stored.readInt16BE(ATTRIBUTES_AT)).toBe(sent.readInt16BE(ATTRIBUTES_AT) | TIMESTAMP_TYPE_BIT);
  expect(header.maxTimestamp).toBe(appendTime);
  expect(verifyCrc(stored)).toBe(true);
  expect(header.crc).not.toBe(readBatchHeader(sent).crc);
  expect(stored.subarray(BASE_TIMESTAMP_AT, BASE_TIMESTAMP_AT + 8).equals(sent.subarray(BASE_TIMESTAMP_AT, BASE_TIMESTAMP_AT + 8))).toBe(true);
  expect(stored.subarray(AFTER_MAX_TIMESTAMP_AT).equals(sent.subarray(AFTER_MAX_TIMESTAMP_AT))).toBe(true);
  // A consumer's decoder (CRC checked) reports the type and gives every record the append time.
  const [decoded] = decodeRecordBatches(stored).batches;
  expect(decoded!.timestampType).toBe('LogAppendTime');
  expect(decoded!.records.map((r) => r.timestamp)).toEqual(decoded!.records.map(() => appendTime));
  return header;
}

describe('a LogAppendTime topic over the wire', () => {
  it('stamps each batch with the append time it answers in LogAppendTimeMs, even one with year-old producer timestamps, and keeps it across a restart', async () => {
    await createTopic('append-time', 'LogAppendTime');
    const sent = [producerBatch(), producerBatch({ values: ['d', 'e'] })];
    const answers: { logAppendTimeMs: bigint; baseOffset: bigint }[] = [];
    for (const batch of sent) {
      const before = BigInt(Date.now());
      const answer = await produce(c, 'append-time', 0, batch);
      expect(answer.errorCode).toBe(0);
      expect(answer.logAppendTimeMs).toBeGreaterThanOrEqual(before);
      expect(answer.logAppendTimeMs).toBeLessThanOrEqual(BigInt(Date.now()));
      answers.push(answer);
    }
    expect(answers.map((a) => a.baseOffset)).toEqual([0n, 3n]);

    const check = async () => {
      const stored = await rawBatches('append-time');
      expect(stored).toHaveLength(2);
      stored.forEach((batch, i) => expectStamped(batch, sent[i]!, answers[i]!.logAppendTimeMs));
    };
    await check();

    // Recovery CRC-checks every batch: the stamped ones must survive it, and the topic stays LogAppendTime.
    await c.close();
    await broker.close();
    broker = await startTestBroker({ dataDir, topics: [{ name: 'create-time', partitions: 1 }] });
    c = await TestClient.connect(broker.port);
    await check();
    const third = await produce(c, 'append-time', 0, producerBatch());
    expect(third.logAppendTimeMs).not.toBe(-1n);
    expectStamped((await rawBatches('append-time'))[2]!, producerBatch(), third.logAppendTimeMs);
  });

  it('a CreateTime topic keeps the producer’s timestamps and answers -1', async () => {
    const sent = producerBatch();
    const answer = await produce(c, 'create-time', 0, sent);
    expect(answer).toMatchObject({ errorCode: 0, logAppendTimeMs: -1n });
    const [stored] = await rawBatches('create-time');
    expect(asSentButEpoch(stored!, sent)).toBe(true);
    const [decoded] = decodeRecordBatches(stored!).batches;
    expect(decoded!.timestampType).toBe('CreateTime');
    expect(decoded!.maxTimestamp).toBe(T + 5n);
    expect(decoded!.records.map((r) => r.timestamp)).toEqual([T, T + 5n, T + 2n]);
  });

  it('IncrementalAlterConfigs to LogAppendTime applies from the next batch; back to CreateTime stops it', async () => {
    await createTopic('altered');
    expect((await produce(c, 'altered', 0, producerBatch())).logAppendTimeMs).toBe(-1n);
    await alterTimestampType('altered', 'LogAppendTime');
    const sent = producerBatch();
    const stamped = await produce(c, 'altered', 0, sent);
    expect(stamped.logAppendTimeMs).not.toBe(-1n);
    await alterTimestampType('altered', 'CreateTime');
    expect((await produce(c, 'altered', 0, producerBatch())).logAppendTimeMs).toBe(-1n);

    const stored = await rawBatches('altered');
    expect(stored.map((b) => readBatchHeader(b).timestampType)).toEqual(['CreateTime', 'LogAppendTime', 'CreateTime']);
    expectStamped(stored[1]!, sent, stamped.logAppendTimeMs);
  });

  it('a retried idempotent batch is deduplicated and answered with the first append’s time', async () => {
    await createTopic('idempotent', 'LogAppendTime');
    const first = producerBatch({ producerId: 7001n, baseSequence: 0 });
    const original = await produce(c, 'idempotent', 0, first);
    expect(original).toMatchObject({ errorCode: 0, baseOffset: 0n });
    await new Promise((r) => setTimeout(r, 5)); // so that a new append time would differ
    const retry = await produce(c, 'idempotent', 0, first);
    expect(retry).toMatchObject({ errorCode: 0, baseOffset: 0n, logAppendTimeMs: original.logAppendTimeMs });
    const next = await produce(c, 'idempotent', 0, producerBatch({ producerId: 7001n, baseSequence: 3 }));
    expect(next).toMatchObject({ errorCode: 0, baseOffset: 3n });
    expect(next.logAppendTimeMs).toBeGreaterThan(original.logAppendTimeMs);

    const stored = await rawBatches('idempotent');
    expect(stored).toHaveLength(2);
    expectStamped(stored[0]!, first, original.logAppendTimeMs);
  });

  it('transaction markers on a LogAppendTime topic are stamped as well (Kafka validates coordinator appends too)', async () => {
    await createTopic('txn-append-time', 'LogAppendTime');
    const { producerId, producerEpoch } = await initProducer(c, 'lat-txn');
    expect(await addPartitions(c, 'lat-txn', producerId, producerEpoch, 'txn-append-time', [0])).toEqual([0]);
    const sent = Buffer.from(
      encodeRecordBatch({
        baseTimestamp: T,
        producerId,
        producerEpoch,
        baseSequence: 0,
        isTransactional: true,
        records: [{ value: ENC.encode('t'), timestamp: T }],
      }),
    );
    const answer = await produce(c, 'txn-append-time', 0, sent, 'lat-txn');
    expect(answer.errorCode).toBe(0);
    expect(await endTxn(c, 'lat-txn', producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await rawBatches('txn-append-time')).length === 2, 8_000, 'the COMMIT marker');

    const [data, marker] = await rawBatches('txn-append-time');
    expectStamped(data!, sent, answer.logAppendTimeMs);
    const header = readBatchHeader(marker!);
    expect(header.isControl).toBe(true);
    expect(header.timestampType).toBe('LogAppendTime');
    expect(header.maxTimestamp).toBeGreaterThanOrEqual(answer.logAppendTimeMs);
    expect(verifyCrc(marker!)).toBe(true);
    const [decoded] = decodeRecordBatches(marker!).batches;
    expect(readControlRecord(decoded!.records[0]!).type).toBe('COMMIT');
  });
});

describe('PartitionLog with message.timestamp.type=LogAppendTime', () => {
  const opened: PartitionLog[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const log of opened.splice(0)) log.close();
  });

  function openLog(dir: string, timestampType: () => TimestampType): PartitionLog {
    const log = PartitionLog.open(dir, 'events', 'events-id', 0, {
      segmentBytes: 1 << 20,
      producerIdExpirationMs: 86_400_000,
      messageTimestampType: timestampType,
      log: () => {},
    });
    opened.push(log);
    return log;
  }

  it('reads the clock once per append and stamps the batch, the answer and the producer state with that one time', async () => {
    const log = openLog(tempDir(), () => 'LogAppendTime');
    const now = vi.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
    const sent = producerBatch({ producerId: 11n, baseSequence: 0 });
    const info = await log.append(sent);
    expect(now).toHaveBeenCalledTimes(1);
    expect(info).toMatchObject({ baseOffset: 0n, duplicate: false, logAppendTime: 1_800_000_000_000n });
    expect(sent.equals(producerBatch({ producerId: 11n, baseSequence: 0 }))).toBe(true); // the caller's bytes are not touched
    const [stored] = [...log.rawBatches()];
    expectStamped(Buffer.from(stored!.bytes), sent, 1_800_000_000_000n);
    // Kafka's ProducerStateEntry.lastTimestamp is the stored batch's max timestamp: the append time.
    expect(log.producers.describe()[0]!.lastTimestamp).toBe(1_800_000_000_000n);

    now.mockReturnValue(1_800_000_009_999);
    expect(await log.append(sent)).toMatchObject({ baseOffset: 0n, duplicate: true, logAppendTime: 1_800_000_000_000n });
    const marker = await log.appendMarker(11n, 0, false, 0);
    expect(marker.logAppendTime).toBe(1_800_000_009_999n);
    const markerHeader = readBatchHeader([...log.rawBatches()][1]!.bytes);
    expect(markerHeader).toMatchObject({ isControl: true, timestampType: 'LogAppendTime', maxTimestamp: 1_800_000_009_999n });
  });

  it('a CreateTime log answers -1 and stores the batch as sent; its duplicates answer the original max timestamp, as Kafka does', async () => {
    const log = openLog(tempDir(), () => 'CreateTime');
    const sent = producerBatch({ producerId: 12n, baseSequence: 0 });
    expect(await log.append(sent)).toMatchObject({ duplicate: false, logAppendTime: -1n });
    expect(asSentButEpoch(Buffer.from([...log.rawBatches()][0]!.bytes), sent)).toBe(true);
    expect(await log.append(sent)).toMatchObject({ duplicate: true, logAppendTime: T + 5n });
  });
});
