/**
 * The TCP front end and the stateless APIs: ApiVersions negotiation, frame
 * rejection, pipelining, Metadata, FindCoordinator, Produce/Fetch/ListOffsets
 * errors, idempotent sequences, metrics.
 */
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { partitionForKey } from '../../coordinator/cluster.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import { ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader } from '../../generated/index.js';
import { createListOffsetsPartition, createListOffsetsTopic } from '../../generated/ListOffsetsRequest.js';
import { Reader, encodeFrame } from '../../runtime/index.js';
import { TestClient, batch, fetchAll, produce, startTestBroker, tempDir } from './support/broker-harness.js';

let broker: Broker;
let c: TestClient;
const lines: string[] = [];

beforeAll(async () => {
  broker = await startTestBroker({ dataDir: tempDir(), topics: [{ name: 'events', partitions: 2 }], maxFrameBytes: 64 * 1024 }, lines);
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

/** Opens a raw socket, writes bytes, and collects what comes back until the peer closes or `ms` pass. */
function raw(bytes: Uint8Array, ms = 1000): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(broker.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closed: false });
    }, ms);
    socket.on('data', (d) => chunks.push(d));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(chunks), closed: true });
    });
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

describe('ApiVersions', () => {
  it('advertises exactly the APIs served, in the codecs’ version ranges', async () => {
    const r = await c.call(18, { clientSoftwareName: 'kipgen-test', clientSoftwareVersion: '1.0' }, 4);
    expect(r.errorCode).toBe(0);
    const byKey = new Map(r.apiKeys.map((k: any) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(byKey.get(0)).toEqual([3, 13]);
    expect(byKey.get(1)).toEqual([4, 18]);
    expect(byKey.get(22)).toEqual([0, 6]); // v6: two-phase commit (KIP-939)
    expect(byKey.get(95)).toEqual([0, 0]);
    // No share coordinator registered: 76-79 and 96 are left out.
    for (const key of [76, 77, 78, 79, 96]) expect(byKey.has(key)).toBe(false);
  });

  it('answers an unsupported ApiVersions version with a v0 body carrying UNSUPPORTED_VERSION and header v0', async () => {
    const frame = encodeFrame(
      RequestHeader,
      RequestHeader.create({ requestApiKey: 18, requestApiVersion: 99, correlationId: 7, clientId: 'x' }),
      1,
      ApiVersionsRequest,
      ApiVersionsRequest.create(),
      0,
    );
    const { data } = await raw(frame, 500);
    const body = data.subarray(4);
    const reader = new Reader(body);
    expect(ResponseHeader.read(reader, 0).correlationId).toBe(7);
    const response = ApiVersionsResponse.decode(body.subarray(reader.pos), 0);
    expect(response.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    // Only ApiVersions' own range, as Kafka's ApiVersionsRequest.getErrorResponse (what a client retries with).
    expect(response.apiKeys.map((k: any) => k.apiKey)).toEqual([18]);
  });

  it('leaves out 95 and 96 with kip1289 off', async () => {
    const off = await startTestBroker({ dataDir: tempDir(), kip1289: false });
    const client = await TestClient.connect(off.port);
    const r = await client.call(18, {}, 3);
    expect(r.apiKeys.map((k: any) => k.apiKey)).not.toContain(95);
    await client.close();
    await off.close();
  });
});

describe('frames', () => {
  it('refuses an oversize frame before buffering it, logs one line, closes only that connection', async () => {
    const header = Buffer.alloc(4);
    header.writeInt32BE(10 * 1024 * 1024);
    const { closed } = await raw(header);
    expect(closed).toBe(true);
    expect(lines.some((l) => /rejected frame .*exceeds the maximum of 65536/.test(l))).toBe(true);
    // Other connections keep being served.
    expect((await c.call(3, { topics: [] }, 9)).brokers).toHaveLength(1);
  });

  it('closes the connection on a malformed body and on an unsupported API version', async () => {
    const bad = encodeFrame(
      RequestHeader,
      RequestHeader.create({ requestApiKey: 3, requestApiVersion: 9, correlationId: 1, clientId: 'x' }),
      2,
      MetadataRequest,
      MetadataRequest.create({ topics: [] }),
      9,
    );
    const truncated = Buffer.from(bad.subarray(0, bad.length - 1));
    truncated.writeInt32BE(truncated.length - 4);
    expect((await raw(truncated)).closed).toBe(true);
    expect(lines.some((l) => /malformed Metadata v9 request/.test(l))).toBe(true);
    const unsupported = encodeFrame(
      RequestHeader,
      RequestHeader.create({ requestApiKey: 3, requestApiVersion: 99, correlationId: 2, clientId: 'x' }),
      1,
      MetadataRequest,
      MetadataRequest.create({ topics: [] }),
      1,
    );
    expect((await raw(unsupported)).closed).toBe(true);
    const unknownApi = Buffer.from(unsupported);
    unknownApi.writeInt16BE(999, 4);
    expect((await raw(unknownApi)).closed).toBe(true);
    expect(broker.metrics().rejectedFrames).toBeGreaterThanOrEqual(4);
  });

  it('ignores bytes after a request body, as Kafka does, and logs that once per connection', async () => {
    // librdkafka 2.15's all-topics Metadata v13 request, made by hand: header v2, then
    // Topics = null (compact: 0), AllowAutoTopicCreation, IncludeTopicAuthorizedOperations,
    // no tagged fields, and then the 3 bytes that Kafka never reads.
    const clientId = Buffer.from('rdkafka');
    const header = Buffer.concat([Buffer.from([0, 3, 0, 13, 0, 0, 0, 41, 0, clientId.length]), clientId, Buffer.from([0])]);
    const body = Buffer.from([0, 1, 0, 0]);
    const trailing = Buffer.from([0xde, 0xad, 0x01]);
    const request = Buffer.concat([header, body, trailing]);
    const frame = Buffer.alloc(4 + request.length);
    frame.writeInt32BE(request.length);
    request.copy(frame, 4);
    const before = lines.length;
    // Twice on one connection: both answered, one log line.
    const { data, closed } = await raw(Buffer.concat([frame, frame]), 500);
    expect(closed).toBe(false);
    const responses: any[] = [];
    for (let at = 0; at < data.length;) {
      const size = data.readInt32BE(at);
      const reader = new Reader(data.subarray(at + 4, at + 4 + size));
      expect(ResponseHeader.read(reader, 1).correlationId).toBe(41);
      responses.push(MetadataResponse.decode(data.subarray(at + 4 + reader.pos, at + 4 + size), 13));
      at += 4 + size;
    }
    expect(responses).toHaveLength(2);
    expect(responses[0].topics.map((t: any) => t.name)).toContain('events');
    const logged = lines.slice(before).filter((l) => /Metadata v13 request has 3 byte\(s\) after its body; ignored/.test(l));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('"rdkafka"');
    // The codec itself stays strict unless asked.
    expect(() => MetadataRequest.decode(Buffer.concat([body, trailing]), 13)).toThrow(/3 unread bytes after the message/);
    let reported = -1;
    const lenient = MetadataRequest.decode(Buffer.concat([body, trailing]), 13, { onTrailingBytes: (n) => (reported = n) });
    expect(reported).toBe(3);
    expect(lenient.topics).toBeNull();
  });

  it('answers pipelined requests in order', async () => {
    const calls = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? c.call(3, { topics: null }, 12) : c.call(18, {}, 3)));
    const results = await Promise.all(calls);
    results.forEach((r, i) => expect('brokers' in r).toBe(i % 2 === 0));
  });
});

describe('Metadata and FindCoordinator', () => {
  it('lists topics with stable ids and static leaders; unknown names and ids get errors', async () => {
    const all = await c.call(3, { topics: null }, 12);
    const events = all.topics.find((t: any) => t.name === 'events');
    expect(events.partitions.map((p: any) => p.leaderId)).toEqual([0, 0]);
    expect(events.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(all.topics.find((t: any) => t.name === '__share_group_state').isInternal).toBe(true);
    const byId = await c.call(
      3,
      {
        topics: [
          { topicId: events.topicId, name: null },
          { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', name: null },
        ],
      },
      12,
    );
    expect(byId.topics[0].name).toBe('events');
    expect(byId.topics[1].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
    // v0-3 cannot refuse auto-creation, so an unknown name is asked for by the v12 request that can.
    const missing = await c.call(3, { topics: [{ name: 'missing', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false }, 12);
    expect(missing.topics[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('finds group, transaction and share coordinators (v0-3 single, v4+ batched)', async () => {
    const v3 = await c.call(10, { key: 'g', keyType: 0 }, 3);
    expect(v3).toMatchObject({ errorCode: 0, nodeId: 0, port: broker.port });
    const v4 = await c.call(10, { keyType: 1, coordinatorKeys: ['t1', 't2'] }, 4);
    expect(v4.coordinators.map((x: any) => [x.key, x.nodeId, x.errorCode])).toEqual([
      ['t1', 0, 0],
      ['t2', 0, 0],
    ]);
    const topicId = (await c.call(3, { topics: [{ name: 'events', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }, 12)).topics[0].topicId;
    const share = await c.call(10, { keyType: 2, coordinatorKeys: [`grp:${topicId}:1`, 'garbage'] }, 6);
    // No share coordinator in this broker: COORDINATOR_NOT_AVAILABLE for every share key.
    expect(share.coordinators.map((x: any) => x.errorCode)).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
    expect((await c.call(10, { keyType: 9, coordinatorKeys: ['x'] }, 4)).coordinators[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('hashes keys to partitions like Kafka (abs(String.hashCode) % n)', () => {
    expect(partitionForKey('a', 50)).toBe(47); // 'a'.hashCode() == 97
    expect(partitionForKey('hello', 50)).toBe(99162322 % 50);
    // "polygenelubricants".hashCode() == Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0.
    expect(partitionForKey('polygenelubricants', 7)).toBe(0);
  });
});

describe('Produce, Fetch, ListOffsets', () => {
  it('assigns offsets, answers retries of the last batches with their offsets, refuses sequence gaps and old epochs', async () => {
    const pid = (await c.call(22, { transactionalId: null, transactionTimeoutMs: 0 }, 4)).producerId as bigint;
    const first = await produce(c, 'events', 1, batch({ values: ['a', 'b'], producerId: pid, producerEpoch: 0, baseSequence: 0 }));
    expect(first).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const retry = await produce(c, 'events', 1, batch({ values: ['a', 'b'], producerId: pid, producerEpoch: 0, baseSequence: 0 }));
    expect(retry).toMatchObject({ errorCode: 0, baseOffset: 0n });
    const gap = await produce(c, 'events', 1, batch({ values: ['c'], producerId: pid, producerEpoch: 0, baseSequence: 5 }));
    expect(gap.errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    for (let seq = 2; seq < 14; seq++) {
      expect((await produce(c, 'events', 1, batch({ values: [`v${seq}`], producerId: pid, producerEpoch: 0, baseSequence: seq }))).errorCode).toBe(0);
    }
    // Sequences 0-1 are older than the 5 batches kept for retries: certainly written already.
    const old = await produce(c, 'events', 1, batch({ values: ['a', 'b'], producerId: pid, producerEpoch: 0, baseSequence: 0 }));
    expect(old.errorCode).toBe(ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
    expect((await produce(c, 'events', 1, batch({ values: ['e1'], producerId: pid, producerEpoch: 1, baseSequence: 0 }))).errorCode).toBe(0);
    const stale = await produce(c, 'events', 1, batch({ values: ['e0'], producerId: pid, producerEpoch: 0, baseSequence: 14 }));
    expect(stale.errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    const fetched = await fetchAll(c, 'events', 1, 'read_uncommitted');
    expect(fetched.records.map((r) => r.value).slice(0, 3)).toEqual(['a', 'b', 'v2']);
    expect(fetched.records).toHaveLength(15);
  });

  it('rejects bad produce input per partition', async () => {
    expect((await produce(c, 'nope', 0, batch({ values: ['x'] }))).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await produce(c, 'events', 7, batch({ values: ['x'] }))).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await produce(c, '__transaction_state', 0, batch({ values: ['x'] }))).errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    const corrupt = Buffer.from(batch({ values: ['x'] }));
    corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0xff;
    expect((await produce(c, 'events', 0, corrupt)).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    const two = Buffer.concat([batch({ values: ['x'] }), batch({ values: ['y'] })]);
    expect((await produce(c, 'events', 0, two)).errorCode).toBe(ErrorCode.INVALID_RECORD);
    expect((await produce(c, 'events', 0, batch({ values: ['x'] }), null, 2)).errorCode).toBe(ErrorCode.INVALID_REQUIRED_ACKS);
    // Produce v13 addresses topics by id.
    const unknownId = await c.call(
      0,
      {
        acks: -1,
        timeoutMs: 1000,
        topicData: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', name: '', partitionData: [{ index: 0, records: batch({ values: ['x'] }) }] }],
      },
      13,
    );
    expect(unknownId.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
  });

  it('acks=0 gets no response; the next request on the connection is answered', async () => {
    await c.call(
      0,
      { acks: 0, timeoutMs: 1000, topicData: [{ name: 'events', partitionData: [{ index: 0, records: batch({ values: ['fire-and-forget'] }) }] }] },
      9,
    );
    const fetched = await fetchAll(c, 'events', 0, 'read_uncommitted');
    expect(fetched.records.map((r) => r.value)).toContain('fire-and-forget');
  });

  it('Fetch: sessions are refused politely, offsets out of range and unknown topic ids are per-partition errors, MaxWaitMs long-polls', async () => {
    const session = await c.call(1, { maxWaitMs: 0, minBytes: 0, sessionId: 42, sessionEpoch: 1, topics: [] }, 12);
    expect(session.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    const out = await c.call(
      1,
      {
        maxWaitMs: 0,
        minBytes: 0,
        topics: [createFetchTopic({ topic: 'events', partitions: [createFetchPartition({ partition: 0, fetchOffset: 999n, partitionMaxBytes: 1000 })] })],
      },
      12,
    );
    expect(out.sessionId).toBe(0);
    expect(out.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    const byId = await c.call(
      1,
      { maxWaitMs: 0, minBytes: 0, topics: [createFetchTopic({ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [createFetchPartition({ partition: 0 })] })] },
      13,
    );
    expect(byId.responses[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
    const end = (await fetchAll(c, 'events', 0, 'read_uncommitted')).highWatermark;
    const other = await TestClient.connect(broker.port);
    const started = Date.now();
    const waiting = c.call(
      1,
      {
        maxWaitMs: 3000,
        minBytes: 1,
        topics: [createFetchTopic({ topic: 'events', partitions: [createFetchPartition({ partition: 0, fetchOffset: end, partitionMaxBytes: 10000 })] })],
      },
      12,
    );
    const producing = new Promise((r) => setTimeout(r, 200)).then(() => produce(other, 'events', 0, batch({ values: ['wake'] })));
    const woke = await waiting;
    await producing;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(woke.responses[0].partitions[0].records.length).toBeGreaterThan(0);
    await other.close();
  });

  it('ListOffsets: earliest, latest and by timestamp', async () => {
    const list = (timestamp: bigint) =>
      c.call(
        2,
        {
          replicaId: -1,
          isolationLevel: 0,
          topics: [createListOffsetsTopic({ name: 'events', partitions: [createListOffsetsPartition({ partitionIndex: 1, timestamp })] })],
        },
        7,
      );
    expect((await list(-2n)).topics[0].partitions[0]).toMatchObject({ errorCode: 0, offset: 0n });
    const latest = (await list(-1n)).topics[0].partitions[0].offset;
    expect(latest).toBe((await fetchAll(c, 'events', 1, 'read_uncommitted')).highWatermark);
    expect((await list(0n)).topics[0].partitions[0].offset).toBe(0n);
    expect((await list(BigInt(Date.now() + 60_000))).topics[0].partitions[0].offset).toBe(-1n);
  });

  it('counts requests per API and errors per code', () => {
    const m = broker.metrics();
    expect(m.requests.Produce).toBeGreaterThan(10);
    expect(m.requests.ApiVersions).toBeGreaterThan(0);
    expect(m.errors['OUT_OF_ORDER_SEQUENCE_NUMBER (45)']).toBe(1);
    expect(m.errors['UNKNOWN_TOPIC_ID (100)']).toBeGreaterThanOrEqual(1);
  });
});
