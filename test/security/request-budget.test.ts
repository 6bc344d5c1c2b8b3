/**
 * A frame's bytes are not what it costs once decoded. A
 * 39 MiB Produce v3 frame of 6.8 million empty topic entries grew the broker
 * by 1.4 GiB; two at once, on a broker whose heap is 512 MiB, must leave it
 * serving (coordinator/server/request-budget.ts).
 */
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
  MetadataRequest,
  MetadataResponse,
  ProduceRequest,
  ProduceResponse,
  RequestHeader,
} from '../../generated/index.js';
import { createPartitionProduceData, createTopicProduceData } from '../../generated/ProduceRequest.js';
import { KafkaConnection } from '../../connection/connection.js';
import { gzipSync } from 'node:zlib';
import { DecodeError, RECORD_BATCH_OVERHEAD, Reader, crc32c, encodeRecordBatch } from '../../runtime/index.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { ELEMENT_COST_BYTES, RequestMemoryPool, defaultMaxRequestElements, defaultQueuedMaxRequestBytes } from '../../coordinator/server/request-budget.js';
import { startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';
import { TestClient, batch, produce, startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';

const ENTRIES = 6_800_000;

/** A Produce v3 request frame (size prefix included) whose topicData holds `entries` empty topics. */
function emptyTopicsFrame(entries: number, correlationId: number): Buffer {
  const clientId = Buffer.from('hostile');
  const head = Buffer.alloc(4 + 8 + 2 + clientId.length + 2 + 2 + 4 + 4);
  let at = 4;
  at = head.writeInt16BE(0, at); // Produce
  at = head.writeInt16BE(3, at);
  at = head.writeInt32BE(correlationId, at);
  at = head.writeInt16BE(clientId.length, at);
  at += clientId.copy(head, at);
  at = head.writeInt16BE(-1, at); // transactionalId: null
  at = head.writeInt16BE(1, at); // acks
  at = head.writeInt32BE(5000, at);
  head.writeInt32BE(entries, at);
  // Each entry: an empty name (int16 0) and no partitions (int32 0): six zero bytes.
  const frame = Buffer.concat([head, Buffer.alloc(entries * 6)]);
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

/** A gzip batch of `count` minimal records (no key, value or headers): 8-10 bytes each inflated, an eighth of that sent. */
function minimalRecordsBatch(count: number): Buffer {
  const zigzag = (n: number): number[] => {
    const out: number[] = [];
    let v = n * 2;
    while (v >= 0x80) {
      out.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
    return out;
  };
  const chunks: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const delta = zigzag(i);
    const body = [0, 0, ...delta, 1, 1, 0]; // attributes, timestampDelta 0, offsetDelta, key -1, value -1, no headers
    chunks.push(Buffer.from([...zigzag(body.length), ...body]));
  }
  const body = gzipSync(Buffer.concat(chunks));
  const template = Buffer.from(encodeRecordBatch({ baseTimestamp: BigInt(Date.now()), records: [{ value: Buffer.from('x') }] })).subarray(
    0,
    RECORD_BATCH_OVERHEAD,
  );
  const out = Buffer.concat([template, body]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(1, 21); // gzip
  out.writeInt32BE(count - 1, 23);
  out.writeInt32BE(count, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

describe('the decoder’s element budget', () => {
  it('a request whose arrays claim more elements than the budget fails before they are built, naming the budget', () => {
    const frame = emptyTopicsFrame(1000, 1).subarray(4);
    const reader = new Reader(frame);
    reader.elementBudget = 999;
    RequestHeader.read(reader, ProduceRequest.headerVersion(3));
    expect(() => ProduceRequest.read(reader, 3)).toThrow(DecodeError);
    const again = new Reader(frame);
    again.elementBudget = 999;
    RequestHeader.read(again, ProduceRequest.headerVersion(3));
    expect(() => ProduceRequest.read(again, 3)).toThrow(
      /topicData: array claims 1000 elements, more than the 999 this message may still create \(its element budget\)/,
    );
  });

  it('nested arrays draw on one budget; within it the request decodes as before', () => {
    const request = ProduceRequest.create({
      acks: 1,
      timeoutMs: 1000,
      topicData: Array.from({ length: 3 }, (_, t) =>
        createTopicProduceData({ name: `t${t}`, partitionData: Array.from({ length: 4 }, (_, p) => createPartitionProduceData({ index: p, records: null })) }),
      ),
    });
    const body = ProduceRequest.encode(request, 3);
    const fits = new Reader(body);
    fits.elementBudget = 15; // 3 topics + 12 partitions
    expect(ProduceRequest.read(fits, 3).topicData.flatMap((t) => t.partitionData)).toHaveLength(12);
    expect(fits.elementBudget).toBe(0);
    const over = new Reader(body);
    over.elementBudget = 14;
    expect(() => ProduceRequest.read(over, 3)).toThrow(/topicData\[2\]\.partitionData: array claims 4 elements, more than the 3/);
  });

  it('by default one request’s elements never cost more than the whole default pool', () => {
    expect(defaultMaxRequestElements() * ELEMENT_COST_BYTES).toBeLessThanOrEqual(defaultQueuedMaxRequestBytes());
    expect(defaultMaxRequestElements()).toBeLessThanOrEqual(1_000_000);
  });
});

describe('the pool of requests in flight (queued.max.request.bytes)', () => {
  it('grants while any memory is left, as Kafka’s non-strict SimpleMemoryPool, and wakes waiters on release', async () => {
    const pool = new RequestMemoryPool(100);
    pool.take(60);
    expect(pool.exhausted).toBe(false);
    pool.take(60); // over the capacity: non-strict
    expect(pool.exhausted).toBe(true);
    let woken = false;
    const waiting = pool.whenAvailable().then(() => (woken = true));
    await Promise.resolve();
    expect(woken).toBe(false);
    pool.release(60);
    await waiting;
    expect([woken, pool.usedBytes]).toEqual([true, 60]);
    expect(new RequestMemoryPool(-1).exhausted).toBe(false);
  });
});

describe('a pool smaller than any request (queued.max.request.bytes = 1)', () => {
  it('still serves concurrent clients, none lost: non-strict admission (a request is admitted whenever memory is left) cannot deadlock', async () => {
    const broker = await startTestBroker({ dataDir: tempDir('kipgen-budget-'), queuedMaxRequestBytes: 1, topics: [{ name: 'small-pool', partitions: 1 }] });
    const clients = await Promise.all(Array.from({ length: 8 }, () => TestClient.connect(broker.port)));
    try {
      const answers = await Promise.all(
        clients.flatMap((c, i) =>
          Array.from({ length: 5 }, (_, j) => produce(c, 'small-pool', 0, batch({ values: [`c${i}-${j}`] })).then((r) => r.errorCode as number)),
        ),
      );
      expect(answers).toEqual(Array.from({ length: 40 }, () => 0));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await broker.close();
    }
  });
});

describe('two 39 MiB frames of 6.8 M empty topic entries at once, against a broker with a 512 MiB heap', () => {
  let broker: KipgenBroker;
  beforeAll(async () => {
    broker = await startKipgenBroker({ topics: ['budget:1'], entry: 'cli', logRequests: false, env: { NODE_OPTIONS: '--max-old-space-size=512' } });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('both are refused as over the element budget, the broker keeps serving another client, and its memory stays bounded', async () => {
    const frame = emptyTopicsFrame(ENTRIES, 7);
    expect(frame.length).toBeGreaterThan(38.9 * 1024 * 1024);
    const rssBefore = broker.rss();
    const attack = (): Promise<void> =>
      new Promise((resolve) => {
        const socket = net.connect(broker.port, '127.0.0.1', () => socket.write(frame));
        socket.on('error', () => {});
        socket.on('data', () => {});
        socket.on('close', () => resolve());
      });
    const closed = Promise.all([attack(), attack()]);

    const client = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'healthy', requestTimeoutMs: 30_000 });
    try {
      await closed; // the broker closed both hostile connections
      expect(broker.alive()).toBe(true);
      const metadata = await client.send(MetadataRequest, MetadataRequest.create({ topics: null }), 9, MetadataResponse);
      expect(metadata.topics.map((t) => t.name)).toContain('budget');
      const produced = await client.send(
        ProduceRequest,
        ProduceRequest.create({
          acks: -1,
          timeoutMs: 5000,
          topicData: [
            createTopicProduceData({
              name: 'budget',
              partitionData: [createPartitionProduceData({ index: 0, records: encodeRecordBatch({ records: [{ value: Buffer.from('still serving') }] }) })],
            }),
          ],
        }),
        9,
        ProduceResponse,
      );
      expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    } finally {
      await client.close();
    }
    expect(broker.stderr(), broker.stderr()).toMatch(
      /malformed Produce v3 request \(correlation id 7\): ProduceRequest\.topicData: array claims 6800000 elements, more than the \d+ this message may still create \(its element budget\)/,
    );
    // The two frames themselves are 80 MiB; their decoded entries would have been some 2.8 GiB.
    expect(broker.rss() - rssBefore).toBeLessThan(400 * 1024 * 1024);
  });

  it('a gzip batch of 6 M minimal records (60 MB inflated, all of which the broker decodes) is RECORD_LIST_TOO_LARGE, and the broker lives', async () => {
    const bomb = minimalRecordsBatch(6_000_000);
    expect(bomb.length).toBeLessThan(16 * 1024 * 1024); // 60 MB of records, inflated
    const again = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'bomber', requestTimeoutMs: 30_000 });
    try {
      // The ~8 MB batch is past the topic's default max.message.bytes (1 MiB), which Kafka checks first
      // (MESSAGE_TOO_LARGE): raise it, so that the record count is what refuses the batch.
      const altered = await again.send(
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsRequest.create({
          resources: [
            { resourceType: 2, resourceName: 'budget', configs: [{ name: 'max.message.bytes', configOperation: 0, value: String(64 * 1024 * 1024) }] },
          ],
        }),
        1,
        IncrementalAlterConfigsResponse,
      );
      expect(altered.responses[0]!.errorCode).toBe(0);
      const answer = await again.send(
        ProduceRequest,
        ProduceRequest.create({
          acks: 1,
          timeoutMs: 5000,
          topicData: [createTopicProduceData({ name: 'budget', partitionData: [createPartitionProduceData({ index: 0, records: bomb })] })],
        }),
        9,
        ProduceResponse,
      );
      const partition = answer.responses[0]!.partitionResponses[0]!;
      expect(partition.errorCode).toBe(ErrorCode.RECORD_LIST_TOO_LARGE);
      expect(partition.errorMessage).toMatch(
        /the record batch holds 6000000 records, more than the \d+ the broker decodes in one batch \(maxRequestElements\)/,
      );
    } finally {
      await again.close();
    }
    expect(broker.alive()).toBe(true);
  });
});
