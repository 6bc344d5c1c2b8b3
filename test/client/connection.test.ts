import { afterEach, describe, expect, it, vi } from 'vitest';
import * as net from 'node:net';
import { ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse } from '../../generated/index.js';
import { KafkaConnection, NetworkError, RequestTimeoutError } from '../../connection/connection.js';
import { encodeRecordBatch } from '../../runtime/record-batch.js';
import { createPartitionProduceData, createTopicProduceData } from '../../generated/ProduceRequest.js';
import { FakeServer, respond } from './support/fake-server.js';

let server: FakeServer | undefined;
let connection: KafkaConnection | undefined;

afterEach(async () => {
  await connection?.close();
  await server?.close();
  connection = undefined;
  server = undefined;
});

async function open(options: Partial<Parameters<typeof KafkaConnection.connect>[0]> = {}): Promise<KafkaConnection> {
  connection = await KafkaConnection.connect({
    host: '127.0.0.1',
    port: server!.port,
    clientId: 'test-client',
    ...options,
  });
  return connection;
}

describe('KafkaConnection', () => {
  it('sends ApiVersions with the right headers and reads the v0 response header', async () => {
    server = await FakeServer.start(() => respond({ apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }], throttleTimeMs: 7 }));
    const conn = await open();
    const response = await conn.send(ApiVersionsRequest, ApiVersionsRequest.create({ clientSoftwareName: 'kipgen' }), 3, ApiVersionsResponse);
    expect(response.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, maxVersion: 4 })]);
    expect(response.throttleTimeMs).toBe(7);
    expect(server.received[0]).toMatchObject({ apiKey: 18, apiVersion: 3, clientId: 'test-client' });
    expect(server.received[0]!.body.clientSoftwareName).toBe('kipgen');
  });

  it('accepts a v0 ApiVersions answer to a newer version (UNSUPPORTED_VERSION, KIP-511)', async () => {
    server = await FakeServer.start(() => respond({ errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] }, { version: 0 }));
    const conn = await open();
    const response = await conn.send(ApiVersionsRequest, ApiVersionsRequest.create(), 4, ApiVersionsResponse);
    expect(response.errorCode).toBe(35);
    expect(response.apiKeys[0]!.maxVersion).toBe(2);
  });

  it('pipelines many requests and matches every response to its request', async () => {
    const count = 200;
    const releases: Array<() => void> = [];
    server = await FakeServer.start(
      (request) =>
        new Promise((resolve) => {
          // Hold every reply until all requests are in flight together.
          releases.push(() => resolve(respond({ throttleTimeMs: request.body.topics[0].name.length, clusterId: request.body.topics[0].name })));
          if (releases.length === count) for (const release of releases) release();
        }),
    );
    const conn = await open();
    const promises = Array.from({ length: count }, (_, i) =>
      conn.send(MetadataRequest, MetadataRequest.create({ topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: `t${'x'.repeat(i)}` }] }), 12, MetadataResponse),
    );
    expect(conn.pendingCount).toBe(count);
    const responses = await Promise.all(promises);
    responses.forEach((response, i) => {
      expect(response.clusterId).toBe(`t${'x'.repeat(i)}`);
      expect(response.throttleTimeMs).toBe(i + 1);
    });
    expect(conn.pendingCount).toBe(0);
    // Correlation ids are distinct and increasing.
    const ids = server.received.map((r) => r.correlationId);
    expect(new Set(ids).size).toBe(count);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  it('treats an answer out of order as a protocol violation and closes the connection', async () => {
    server = await FakeServer.start((request) => respond({}, { correlationId: request.correlationId + 1 }));
    const conn = await open();
    const a = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    const b = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    await expect(a).rejects.toThrow(/answered correlation id 1 but Metadata \(0\) is next/);
    await expect(b).rejects.toBeInstanceOf(NetworkError);
    expect(conn.isOpen).toBe(false);
    expect(await conn.closed).toBeInstanceOf(NetworkError);
  });

  it('resolves acks=0 Produce without a response and keeps matching later requests', async () => {
    server = await FakeServer.start((request) => (request.apiKey === 0 ? { kind: 'none' } : respond({ clusterId: 'c' })));
    const conn = await open();
    const produced = await conn.send(ProduceRequest, ProduceRequest.create({ acks: 0, timeoutMs: 1000, topicData: [] }), 9, ProduceResponse);
    expect(produced).toBeUndefined();
    const metadata = await conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    expect(metadata.clusterId).toBe('c');
    expect(server.received.map((r) => r.apiKey)).toEqual([0, 3]);
  });

  it('writes record batches to the socket by reference, and they arrive intact', async () => {
    server = await FakeServer.start((request) => (request.apiKey === 0 ? { kind: 'none' } : respond({})));
    const conn = await open();
    const batch = encodeRecordBatch({
      baseTimestamp: 1_700_000_000_000n,
      records: [{ key: null, value: new Uint8Array(4096).fill(7), timestamp: 1_700_000_000_000n }],
    });
    // A spy that calls the real write: which objects reach the socket.
    const write = vi.spyOn(net.Socket.prototype, 'write');
    let written: unknown[];
    try {
      await conn.send(
        ProduceRequest,
        ProduceRequest.create({
          acks: 0,
          timeoutMs: 1000,
          topicData: [createTopicProduceData({ name: 'orders', partitionData: [createPartitionProduceData({ index: 0, records: batch })] })],
        }),
        9,
      );
      written = write.mock.calls.map((call) => call[0]);
    } finally {
      write.mockRestore();
    }
    expect(written).toContain(batch);
    await conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    const received = server.received[0]!.body.topicData[0].partitionData[0].records as Uint8Array;
    expect(Buffer.from(received).equals(Buffer.from(batch))).toBe(true);
  });

  it('times out a stalled request, rejects the others and closes the connection', async () => {
    server = await FakeServer.start(() => ({ kind: 'stall' }));
    const conn = await open({ requestTimeoutMs: 5_000 });
    const closeEvents: Array<Error | undefined> = [];
    conn.on('close', (cause) => closeEvents.push(cause));
    const started = Date.now();
    const fast = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, undefined, { timeoutMs: 100 });
    const slow = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    const error = await fast.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(100);
    expect((error as Error).message).toMatch(/Metadata v12 .* got no response within 100 ms; the connection was closed/);
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(slow).rejects.toThrow(/closed because Metadata \(correlation id 0\) timed out/);
    await conn.closed;
    expect(closeEvents).toHaveLength(1);
    await expect(conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse)).rejects.toThrow(/is closed/);
  });

  it('rejects in-flight requests when the peer disconnects mid-response', async () => {
    server = await FakeServer.start(() => ({
      kind: 'raw',
      bytes: Uint8Array.from([0, 0, 0, 50, 0, 0, 0, 0, 1, 2, 3]),
      thenDrop: true,
    }));
    const conn = await open();
    const error = await conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toMatch(/closed by the peer with 1 request\(s\) in flight \(7 bytes of an unfinished response/);
  });

  it('refuses an oversize frame before buffering it', async () => {
    server = await FakeServer.start(() => ({ kind: 'raw', bytes: Uint8Array.from([0, 0x10, 0, 0, 0, 0, 0, 0]) }));
    const conn = await open({ maxFrameBytes: 1024 });
    const error = await conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/frame of 1048576 bytes exceeds the maximum of 1024/);
    expect(conn.isOpen).toBe(false);
  });

  it('close() rejects in-flight requests with a clear error and resolves closed with no cause', async () => {
    server = await FakeServer.start(() => ({ kind: 'stall' }));
    const conn = await open();
    const pending = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    const outcome = expect(pending).rejects.toThrow(/closed by close\(\) with 1 request\(s\) in flight/);
    await new Promise((r) => setTimeout(r, 20));
    await conn.close();
    await outcome;
    await expect(pending).rejects.toThrow(/closed by close\(\) with 1 request\(s\) in flight/);
    expect(await conn.closed).toBeUndefined();
  });

  it('fails to connect with NetworkError when nothing listens', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    await expect(KafkaConnection.connect({ host: '127.0.0.1', port })).rejects.toThrow(/could not connect to 127.0.0.1:\d+/);
  });

  it('a decode failure rejects only that request', async () => {
    let n = 0;
    server = await FakeServer.start((request) =>
      n++ === 0 ? { kind: 'raw', bytes: Uint8Array.from([0, 0, 0, 6, 0, 0, 0, request.correlationId, 0, 9]) } : respond({ clusterId: 'ok' }),
    );
    const conn = await open();
    const bad = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    const good = conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse);
    await expect(bad).rejects.toThrow(/MetadataResponse/);
    expect((await good).clusterId).toBe('ok');
  });
});
