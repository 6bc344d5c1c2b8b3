/**
 * What decodes must be answerable. A request string that
 * decodes (bad UTF-8 bytes become U+FFFD, three bytes each) to more than a
 * string can carry is refused when decoded, not when its echo fails to
 * encode; a producer's batch that decodes but cannot be rebuilt on a topic
 * that recompresses gets LogValidator's codes, not UNKNOWN_SERVER_ERROR; and
 * the runtime says precisely which decoded batches re-encode to their bytes.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import { createMetadataRequestTopic } from '../../generated/MetadataRequest.js';
import { DecodeError, EncodeError, Reader, crc32c, decodeRecordBatch, decodeRecordBatches, encodeRecordBatch } from '../../runtime/index.js';
import { TestClient, produce, startTestBroker } from '../coordinator/support/broker-harness.js';

/** Offsets and timestamps of every record stored in partition 0 of `topic`. */
async function stored(c: TestClient, topic: string): Promise<[bigint, bigint][]> {
  const response = await c.call(
    1,
    {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })] })],
    },
    12,
  );
  return decodeRecordBatches(response.responses[0].partitions[0].records).batches.flatMap((b) =>
    b.records.map((r) => [r.offset, r.timestamp] as [bigint, bigint]),
  );
}

/** A Metadata v1 request frame (size prefix included) asking for one topic whose name is `name`'s bytes. */
function metadataFrame(name: Buffer, correlationId: number): Buffer {
  const clientId = Buffer.from('hostile');
  const head = Buffer.alloc(4 + 8 + 2 + clientId.length + 4 + 2);
  let at = 4;
  at = head.writeInt16BE(3, at); // Metadata
  at = head.writeInt16BE(1, at);
  at = head.writeInt32BE(correlationId, at);
  at = head.writeInt16BE(clientId.length, at);
  at += clientId.copy(head, at);
  at = head.writeInt32BE(1, at); // one topic
  head.writeInt16BE(name.length, at);
  const frame = Buffer.concat([head, name]);
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

const INVALID_NAME = Buffer.alloc(11_000, 0xff); // 11,000 bytes that are no UTF-8: 33,000 bytes once each is U+FFFD

describe('a request string that cannot be echoed', () => {
  it('is refused when decoded, naming the field, rather than decoded into a string no response can carry', () => {
    const body = metadataFrame(INVALID_NAME, 1).subarray(4 + 8 + 2 + 7);
    let error: unknown;
    try {
      MetadataRequest.read(new Reader(body), 1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as Error).message).toMatch(
      /topics\[0\]\.name: string of 11000 bytes is not valid UTF-8, and with U\+FFFD for each bad sequence it would take 33000 bytes, more than a string can carry \(32767\)/,
    );
  });

  it('valid UTF-8 and short invalid strings decode as before (U+FFFD), and re-encode', () => {
    const request = MetadataRequest.read(new Reader(metadataFrame(Buffer.from([0x61, 0xff, 0x62]), 1).subarray(4 + 8 + 2 + 7)), 1);
    expect(request.topics![0]!.name).toBe('a\ufffdb');
    const long = '\u00e9'.repeat(16_000); // 32,000 bytes of valid UTF-8
    const encoded = MetadataRequest.encode(MetadataRequest.create({ topics: [createMetadataRequestTopic({ name: long })] }), 1);
    expect(MetadataRequest.decode(encoded, 1).topics![0]!.name).toBe(long);
  });

  describe('against a broker', () => {
    let broker: Broker;
    let dataDir: string;
    const lines: string[] = [];
    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-echo-'));
      broker = await startTestBroker({ dataDir }, lines);
    });
    afterAll(async () => {
      await broker?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('the connection is closed with a one-line reason (no internal error, no stack trace), and the broker goes on serving', async () => {
      await new Promise<void>((resolve) => {
        const socket = net.connect(broker.port, '127.0.0.1', () => socket.write(metadataFrame(INVALID_NAME, 9)));
        socket.on('error', () => {});
        socket.on('data', () => {});
        socket.on('close', () => resolve());
      });
      const refused = lines.filter((l) => l.includes('correlation id 9'));
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatch(/rejected frame .*malformed Metadata v1 request \(correlation id 9\): .*string of 11000 bytes is not valid UTF-8/);
      expect(lines.join('\n')).not.toMatch(/internal error|request failed|EncodeError/);
      const client = await TestClient.connect(broker.port);
      try {
        const metadata = await client.connection.send(MetadataRequest, MetadataRequest.create({ topics: null }), 1, MetadataResponse);
        expect(metadata.brokers).toHaveLength(1);
      } finally {
        await client.close();
      }
    });
  });
});

/** Two records at timestamps 100 and 101, then the batch's baseTimestamp set to `base` (records: base, base + 1). */
function batchWithBase(base: bigint, offsetDeltas?: [number, number]): Buffer {
  const bytes = Buffer.from(
    encodeRecordBatch({
      records: [
        { value: Buffer.from('a'), timestamp: 100n },
        { value: Buffer.from('b'), timestamp: 101n },
      ],
    }),
  );
  bytes.writeBigInt64BE(base, 27);
  if (offsetDeltas !== undefined) {
    // Each record: length varint, attributes, timestampDelta varint, offsetDelta varint (zigzag).
    bytes[61 + 3] = offsetDeltas[0] * 2;
    const second = 61 + 1 + bytes[61]! / 2;
    bytes[second + 3] = offsetDeltas[1] * 2;
  }
  bytes.writeUInt32BE(crc32c(bytes.subarray(21)), 17);
  return bytes;
}

describe('producer batches that decode but cannot be rebuilt', () => {
  let broker: Broker;
  let dataDir: string;
  let c: TestClient;
  const lines: string[] = [];
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-hostile-batches-'));
    broker = await startTestBroker(
      {
        dataDir,
        topics: [
          { name: 'as-sent', partitions: 1 },
          { name: 'recompress', partitions: 1, compressionType: 'gzip' },
        ],
      },
      lines,
    );
    c = await TestClient.connect(broker.port);
  });
  afterAll(async () => {
    await c?.close();
    await broker?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('negative timestamps on a topic that recompresses: INVALID_TIMESTAMP with a record error each (Kafka: UNKNOWN_SERVER_ERROR from MemoryRecordsBuilder)', async () => {
    const batch = batchWithBase(-10n);
    expect(decodeRecordBatch(batch).records.map((r) => r.timestamp)).toEqual([-10n, -9n]);
    const response = await produce(c, 'recompress', 0, batch);
    expect(response.errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(response.errorMessage).toBe('One or more records have been rejected due to invalid timestamp');
    expect(response.recordErrors.map((e: { batchIndex: number; batchIndexErrorMessage: string }) => [e.batchIndex, e.batchIndexErrorMessage])).toEqual([
      [0, expect.stringMatching(/^Timestamp -10 of message with offset 0 is negative/)],
      [1, expect.stringMatching(/^Timestamp -9 of message with offset 1 is negative/)],
    ]);
    expect(lines.join('\n')).not.toMatch(/produce to recompress-0 failed/);
  });

  it('the same batch on a topic that stores batches as sent is accepted as Kafka accepts it, its maxTimestamp set from the records', async () => {
    const response = await produce(c, 'as-sent', 0, batchWithBase(-10n));
    expect(response.errorCode).toBe(0);
    expect(await stored(c, 'as-sent')).toEqual([
      [0n, -10n],
      [1n, -9n],
    ]);
  });

  it('duplicate offset deltas on a topic that recompresses are renumbered, as Kafka rebuilds such batches', async () => {
    const batch = batchWithBase(1_700_000_000_000n, [0, 0]);
    expect(decodeRecordBatch(batch).records.map((r) => r.offset)).toEqual([0n, 0n]);
    const response = await produce(c, 'recompress', 0, batch);
    expect(response.errorCode).toBe(0);
    expect(await stored(c, 'recompress')).toEqual([
      [0n, 1_700_000_000_000n],
      [1n, 1_700_000_000_001n],
    ]);
  });
});

describe('which decoded batches re-encode to their bytes (RecordBatchInput)', () => {
  it('a batch as encodeRecordBatch writes it re-encodes to the same bytes', () => {
    const bytes = encodeRecordBatch({
      baseOffset: 5n,
      producerId: 3n,
      producerEpoch: 1,
      baseSequence: 0,
      records: [{ value: Buffer.from('x'), timestamp: 7n, headers: [{ key: 'k', value: null }] }],
    });
    expect(Buffer.from(encodeRecordBatch(decodeRecordBatch(bytes))).equals(Buffer.from(bytes))).toBe(true);
  });

  it('offsets that do not increase and timestamps below -1 are refused (EncodeError naming the record), as Kafka’s MemoryRecordsBuilder refuses them', () => {
    expect(() => encodeRecordBatch(decodeRecordBatch(batchWithBase(100n, [0, 0])))).toThrow(EncodeError);
    expect(() => encodeRecordBatch(decodeRecordBatch(batchWithBase(100n, [0, 0])))).toThrow(/records\[1\]: offset 0 does not follow 0/);
    expect(() => encodeRecordBatch(decodeRecordBatch(batchWithBase(-10n)))).toThrow(/records\[0\]: invalid negative timestamp -10/);
  });

  it('a maxTimestamp that disagrees with the records is rewritten from them', () => {
    const bytes = Buffer.from(encodeRecordBatch({ records: [{ value: Buffer.from('x'), timestamp: 7n }] }));
    bytes.writeBigInt64BE(99n, 35);
    bytes.writeUInt32BE(crc32c(bytes.subarray(21)), 17);
    const again = decodeRecordBatch(encodeRecordBatch(decodeRecordBatch(bytes)));
    expect([decodeRecordBatch(bytes).maxTimestamp, again.maxTimestamp]).toEqual([99n, 7n]);
  });
});
