/**
 * Hostile clients against `kipgen broker` (a child process) over TCP:
 * malformed frames (too short, negative, unknown API, unsupported version,
 * garbage bodies for every served API version, lying lengths in the header),
 * oversize frames, a request dribbled one byte at a time, clients leaving
 * mid-frame, garbage after a valid frame, tens of thousands of pipelined
 * requests, responses never read, acks=0 pipelines closed at once, and
 * random well-formed requests of every served API version.
 *
 * Throughout, a healthy client keeps producing and reading metadata and must
 * never fail or stall; each bad connection is answered or closed, with a log
 * line; the broker's memory stays bounded. Records are produced before and
 * during the abuse; then the broker is killed (-9), restarted on the same
 * data directory, and every record is verified with a Fetch and with
 * `kipgen dump-log`: none lost, none corrupted, none from a torn frame.
 */
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpecs } from '../../generator/load.js';
import {
  ApiVersionsRequest,
  ApiVersionsResponse,
  FetchRequest,
  MetadataRequest,
  MetadataResponse,
  ProduceRequest,
  ProduceResponse,
  RequestHeader,
  apiByKey,
} from '../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import { createPartitionProduceData, createTopicProduceData } from '../../generated/ProduceRequest.js';
import { KafkaConnection, NetworkError } from '../../connection/connection.js';
import { encodeFrame, encodeRecordBatch, type ApiMessageCodec } from '../../runtime/index.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { ROOT, run, startKipgenBroker, tempDir, type KipgenBroker, removeTempDirs } from '../interop/support/broker-process.js';
import { readPartition } from '../interop/support/fetch.js';

const TOPIC = 'abuse';
/** The random requests aim at this topic (and its groups, transactions, producers), away from TOPIC's data. */
const TARGET = 'fuzz-target';
const MAX_FRAME = 1024 * 1024;
const dataDir = tempDir('kipgen-abuse-');
let broker: KipgenBroker;
/** Values acknowledged by the broker, per partition, in the order they were acknowledged. */
const acknowledged: Record<number, string[]> = { 0: [], 1: [] };
/** Values that must never be in the log. */
const forbidden: string[] = [];
const enc = new TextEncoder();

function batchOf(values: string[]): Uint8Array {
  const now = BigInt(Date.now());
  return encodeRecordBatch({ baseTimestamp: now, records: values.map((v) => ({ value: enc.encode(v), timestamp: now })) });
}

function produceRequest(partition: number, values: string[], acks = -1) {
  return ProduceRequest.create({
    acks,
    timeoutMs: 5000,
    topicData: [createTopicProduceData({ name: TOPIC, partitionData: [createPartitionProduceData({ index: partition, records: batchOf(values) })] })],
  });
}

function frameOf<T>(codec: ApiMessageCodec<T>, message: T, version: number, correlationId: number): Buffer {
  const header = RequestHeader.create({ requestApiKey: codec.apiKey, requestApiVersion: version, correlationId, clientId: 'abuser' });
  return Buffer.from(encodeFrame(RequestHeader, header, codec.headerVersion(version), codec, message, version));
}

async function connect(clientId = 'kipgen-fuzz'): Promise<KafkaConnection> {
  return KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId, requestTimeoutMs: 15_000 });
}

async function produce(c: KafkaConnection, partition: number, values: string[]): Promise<void> {
  const r = await c.send(ProduceRequest, produceRequest(partition, values), 9, ProduceResponse);
  const code = r.responses[0]!.partitionResponses[0]!.errorCode;
  if (code !== 0) throw new Error(`produce ${values[0]}… to ${TOPIC}-${partition}: error ${code}`);
  acknowledged[partition]!.push(...values);
}

/** A raw socket: what it received, and whether/when the broker closed it. */
interface Raw {
  socket: net.Socket;
  received(): Buffer;
  closed: Promise<void>;
  isClosed(): boolean;
}

function raw(): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(broker.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const closedPromise = new Promise<void>((r) => socket.once('close', () => ((closed = true), r())));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => Buffer.concat(chunks), closed: closedPromise, isClosed: () => closed }));
    socket.once('error', reject);
  });
}

/** Correlation ids of the complete response frames in `bytes`. */
function correlationIds(bytes: Buffer): number[] {
  const ids: number[] = [];
  let at = 0;
  while (at + 8 <= bytes.length) {
    const size = bytes.readInt32BE(at);
    if (at + 4 + size > bytes.length) break;
    ids.push(bytes.readInt32BE(at + 4));
    at += 4 + size;
  }
  return ids;
}

async function closedWithin(r: Raw, ms: number): Promise<boolean> {
  await Promise.race([r.closed, new Promise((resolve) => setTimeout(resolve, ms))]);
  return r.isClosed();
}

const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client that keeps producing and reading metadata while the abuse goes on. */
class HealthyClient {
  private running = true;
  private done: Promise<void> = Promise.resolve();
  rounds = 0;
  slowest = 0;
  failures: string[] = [];

  start(c: KafkaConnection): void {
    this.done = (async () => {
      while (this.running) {
        const started = Date.now();
        try {
          await produce(c, 1, [`during-${this.rounds}`]);
          const meta = await c.send(
            MetadataRequest,
            MetadataRequest.create({ topics: [{ name: TOPIC, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }),
            9,
            MetadataResponse,
          );
          if (meta.topics[0]!.partitions.length !== 2) throw new Error('metadata lost the topic');
        } catch (error) {
          this.failures.push((error as Error).message);
          return;
        }
        this.slowest = Math.max(this.slowest, Date.now() - started);
        this.rounds++;
        await until(20);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/**
 * Points a random request (JSON form) at real things often enough to reach
 * the handlers' deeper paths: TARGET's name and id, its partitions (and one
 * past them), a few group, transaction and producer ids, and valid record
 * batches (plain or transactional) instead of random bytes.
 */
function aim(value: unknown, random: () => number, targetId: string, key = ''): unknown {
  const sometimes = (p: number) => random() < p;
  if (Array.isArray(value)) return value.map((v) => aim(v, random, targetId, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, aim(v, random, targetId, k)]));
  }
  switch (key) {
    case 'name':
    case 'topic':
    case 'topicName':
      return typeof value === 'string' && sometimes(0.8) ? TARGET : value;
    case 'topicId':
      return sometimes(0.8) ? targetId : value;
    case 'partition':
    case 'partitionIndex':
    case 'partitionIndexes':
    case 'index':
      return typeof value === 'number' && sometimes(0.8) ? Math.floor(random() * 4) : value;
    case 'groupId':
    case 'key':
      return typeof value === 'string' && sometimes(0.6) ? ['fuzz-group', `fuzz-group:${targetId}:1`][Math.floor(random() * 2)] : value;
    case 'transactionalId':
    case 'memberId':
      return typeof value === 'string' && sometimes(0.6) ? 'fuzz-tx' : value;
    case 'producerId':
      return sometimes(0.6) ? String(Math.floor(random() * 4)) : value;
    case 'producerEpoch':
      return sometimes(0.6) ? Math.floor(random() * 3) : value;
    case 'acks':
      return sometimes(0.9) ? [-1, 1, 0][Math.floor(random() * 3)] : value;
    case 'sessionId':
      return sometimes(0.8) ? 0 : value;
    case 'sessionEpoch':
      return sometimes(0.8) ? -1 : value;
    case 'keyType':
      return sometimes(0.8) ? Math.floor(random() * 3) : value;
    case 'transactionTimeoutMs':
      return sometimes(0.8) ? 1000 + Math.floor(random() * 60_000) : value;
    case 'fetchOffset':
    case 'committedOffset':
    case 'timestamp':
      return sometimes(0.5) ? String(Math.floor(random() * 8) - 4) : value;
    case 'records':
      if (value !== null && sometimes(0.6)) {
        const transactional = sometimes(0.5);
        const now = BigInt(Date.now());
        const batch = encodeRecordBatch({
          baseTimestamp: now,
          producerId: transactional ? BigInt(Math.floor(random() * 4)) : -1n,
          producerEpoch: transactional ? 0 : -1,
          baseSequence: transactional ? Math.floor(random() * 3) : -1,
          isTransactional: transactional,
          records: [{ value: enc.encode(`fuzz-${random()}`), timestamp: now }],
        });
        return Buffer.from(batch).toString('base64');
      }
      return value;
    default:
      return value;
  }
}

function collectErrorCodes(value: unknown, into: Set<number>): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'number' && /errorCode$|ErrorCode$/.test(k)) into.add(v);
    else if (typeof v === 'object') collectErrorCodes(v, into);
  }
}

let healthy: HealthyClient;
let healthyConnection: KafkaConnection;
let rssAtStart = 0;
let peakRss = 0;
const sampleRss = (): void => {
  if (broker?.alive()) peakRss = Math.max(peakRss, broker.rss());
};

beforeAll(async () => {
  broker = await startKipgenBroker({ topics: [`${TOPIC}:2`, `${TARGET}:3`], dataDir, entry: 'cli', logRequests: false, config: { maxFrameBytes: MAX_FRAME } });
  const c = await connect();
  for (let i = 0; i < 20; i++) await produce(c, i % 2, [`before-${i}-a`, `before-${i}-b`]);
  // Large records, so that Fetch responses are large (for the unread-responses case).
  for (let i = 0; i < 3; i++) await produce(c, 0, [`big-${i}:` + 'x'.repeat(300_000)]);
  await c.close();
  rssAtStart = broker.rss();
  peakRss = rssAtStart;
  healthyConnection = await connect('kipgen-healthy');
  healthy = new HealthyClient();
  healthy.start(healthyConnection);
});

afterAll(async () => {
  await healthy?.stop();
  await healthyConnection?.close();
  await broker?.kill9();
  removeTempDirs();
});

describe('kipgen broker under hostile TCP clients', () => {
  it('closes connections that send malformed frames, logging each, and answers nothing for them', async () => {
    const cases: { name: string; bytes: Buffer; log: RegExp }[] = [];
    const short = Buffer.alloc(4 + 3);
    short.writeInt32BE(3);
    cases.push({ name: 'frame shorter than a header', bytes: short, log: /too short for a request header/ });
    const negative = Buffer.alloc(4);
    negative.writeInt32BE(-5);
    cases.push({ name: 'negative size', bytes: negative, log: /negative size -5/ });
    const unknownApi = frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, 1);
    unknownApi.writeInt16BE(999, 4);
    cases.push({ name: 'unknown API key', bytes: unknownApi, log: /API key 999 is not served/ });
    const badVersion = frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, 2);
    badVersion.writeInt16BE(77, 6);
    cases.push({ name: 'unsupported version', bytes: badVersion, log: /Metadata v77 is not supported/ });
    // A client id claiming 32767 bytes in a 30-byte frame.
    const lyingClientId = frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, 3);
    lyingClientId.writeInt16BE(0x7fff, 12);
    cases.push({ name: 'client id longer than the frame', bytes: lyingClientId, log: /malformed Metadata v1 request \(correlation id 3\)/ });
    // An array length of 2^31 - 1 in the body.
    const hugeArray = frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, 4);
    hugeArray.writeInt32BE(0x7fffffff, hugeArray.length - 4);
    cases.push({
      name: 'array of 2^31 - 1 topics',
      bytes: hugeArray,
      log: /malformed Metadata v1 request \(correlation id 4\).*array claims 2147483647 elements/,
    });
    for (const c of cases) {
      const r = await raw();
      r.socket.write(c.bytes);
      expect(await closedWithin(r, 5000), c.name).toBe(true);
      expect(r.received().length, c.name).toBe(0);
      expect(broker.stderr(), c.name).toMatch(c.log);
    }
    sampleRss();
  });

  it('closes the connection on garbage bodies for every served API version', async () => {
    const c = await connect();
    const advertised = (await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3, ApiVersionsResponse)).apiKeys;
    await c.close();
    let cases = 0;
    const rng = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 40 }), { numRuns: 400, seed: 5 });
    for (const { apiKey, minVersion, maxVersion } of advertised) {
      const codec = apiByKey(apiKey)!.request as ApiMessageCodec<any>;
      for (let version = minVersion; version <= maxVersion; version++) {
        // A valid header, then bytes that are not that API's body (0xff… cannot end well).
        const header = RequestHeader.encode(
          RequestHeader.create({ requestApiKey: apiKey, requestApiVersion: version, correlationId: 100 + cases, clientId: 'garbage' }),
          codec.headerVersion(version),
        );
        const body = Buffer.concat([Buffer.alloc(8, 0xff), rng[cases % rng.length]!]);
        const bytes = Buffer.alloc(4 + header.length + body.length);
        bytes.writeInt32BE(header.length + body.length);
        bytes.set(header, 4);
        bytes.set(body, 4 + header.length);
        const r = await raw();
        r.socket.write(bytes);
        // Either refused (closed, logged) or — if the bytes happen to decode — answered.
        const deadline = Date.now() + 5000;
        while (!r.isClosed() && !correlationIds(r.received()).includes(100 + cases) && Date.now() < deadline) await until(2);
        const closed = r.isClosed();
        const answered = correlationIds(r.received()).includes(100 + cases);
        expect(closed || answered, `${apiByKey(apiKey)!.name} v${version}`).toBe(true);
        if (closed && !answered) expect(broker.stderr()).toMatch(new RegExp(`correlation id ${100 + cases}\\b`));
        r.socket.destroy();
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(100);
    sampleRss();
  });

  it('refuses oversize frames from the size prefix alone', async () => {
    for (const size of [MAX_FRAME + 1, 0x7fffffff]) {
      const r = await raw();
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(size);
      r.socket.write(prefix);
      expect(await closedWithin(r, 5000)).toBe(true);
      expect(broker.stderr()).toContain(`frame of ${size} bytes exceeds the maximum of ${MAX_FRAME}`);
    }
  });

  it('serves a request dribbled one byte at a time', async () => {
    const r = await raw();
    const bytes = frameOf(ProduceRequest, produceRequest(0, ['slow-record']), 9, 4242);
    for (const byte of bytes) {
      r.socket.write(Buffer.from([byte]));
      await until(1);
    }
    const deadline = Date.now() + 5000;
    while (correlationIds(r.received()).length === 0 && Date.now() < deadline) await until(10);
    expect(correlationIds(r.received())).toEqual([4242]);
    const response = ProduceResponse.decode(r.received().subarray(8 + 1), 9); // size, correlation id, empty tag section
    expect(response.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    acknowledged[0]!.push('slow-record');
    r.socket.destroy();
  });

  it('drops a request whose client leaves mid-frame, and logs it', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await raw();
      const bytes = frameOf(ProduceRequest, produceRequest(0, [`torn-${i}`]), 9, 1);
      forbidden.push(`torn-${i}`);
      r.socket.write(bytes.subarray(0, 4 + Math.floor(((bytes.length - 4) * (i + 1)) / 21)));
      await until(5);
      r.socket.destroy();
      await r.closed;
    }
    await until(100);
    expect(broker.stderr().match(/closed by the peer in the middle of a frame/g)?.length ?? 0).toBeGreaterThanOrEqual(20);
  });

  it('answers a valid frame, then closes on the garbage after it', async () => {
    const r = await raw();
    const valid = frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, 31337);
    r.socket.write(Buffer.concat([valid, Buffer.from('GET / HTTP/1.1\r\nHost: kipgen\r\n\r\n')]));
    expect(await closedWithin(r, 5000)).toBe(true);
    expect(correlationIds(r.received())).toEqual([31337]);
    // "GET " read as a size prefix: 1195725856 bytes.
    expect(broker.stderr()).toContain('frame of 1195725856 bytes exceeds the maximum');
  });

  it('answers 20,000 pipelined requests in order, reading them only as fast as they are served', async () => {
    const r = await raw();
    const count = 20_000;
    const frames: Buffer[] = [];
    for (let i = 0; i < count; i++) frames.push(frameOf(MetadataRequest, MetadataRequest.create({ topics: [] }), 1, i));
    // Do not read for a while: the broker must hold back rather than buffer without bound.
    r.socket.pause();
    r.socket.write(Buffer.concat(frames));
    await until(500);
    sampleRss();
    r.socket.resume();
    const deadline = Date.now() + 30_000;
    while (correlationIds(r.received()).length < count && Date.now() < deadline && !r.isClosed()) await until(20);
    const ids = correlationIds(r.received());
    expect(ids.length).toBe(count);
    expect(ids.every((id, i) => id === i)).toBe(true);
    r.socket.destroy();
    sampleRss();
  });

  it('stops handling requests whose responses the client never reads (no unbounded buffering)', async () => {
    const r = await raw();
    r.socket.pause();
    // Each Fetch answers ~900 KB (three 300 KB records); 150 of them would be ~135 MB if buffered.
    const fetch = FetchRequest.create({
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: MAX_FRAME,
      topics: [createFetchTopic({ topic: TOPIC, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: MAX_FRAME })] })],
    });
    const frames: Buffer[] = [];
    for (let i = 0; i < 150; i++) frames.push(frameOf(FetchRequest, fetch, 11, i));
    r.socket.write(Buffer.concat(frames));
    for (let i = 0; i < 15; i++) {
      await until(100);
      sampleRss();
    }
    expect(peakRss - rssAtStart).toBeLessThan(96 * 1024 * 1024);
    r.socket.destroy();
    // What it had read and not yet handled is dropped once the client is gone, with a log line.
    const deadline = Date.now() + 5000;
    while (!/closed with \d+ request\(s\) read but not handled/.test(broker.stderr()) && Date.now() < deadline) await until(20);
    expect(broker.stderr()).toMatch(/closed with \d+ request\(s\) read but not handled; dropped/);
  });

  it('appends every record of an acks=0 pipeline even when the client closes right after sending', async () => {
    const r = await raw();
    const frames: Buffer[] = [];
    for (let i = 0; i < 3000; i++) {
      frames.push(frameOf(ProduceRequest, produceRequest(0, [`acks0-${i}`], 0), 9, i));
      acknowledged[0]!.push(`acks0-${i}`);
    }
    r.socket.end(Buffer.concat(frames));
    await r.closed;
    // The broker handles what it read; the next acknowledged produce on another connection comes after.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const read = await readPartition(broker.port, TOPIC, 0, 'read_uncommitted');
      const values = read.records.map((x) => x.value!.toString());
      if (values.includes('acks0-2999') || Date.now() > deadline) break;
      await until(100);
    }
    sampleRss();
  });

  it('keeps many idle and half-sent connections without harm', async () => {
    const sockets = await Promise.all(Array.from({ length: 200 }, () => raw()));
    sockets.forEach((r, i) => r.socket.write(Buffer.from([0, 0, 0, 50, i & 0xff])));
    await until(200);
    for (const r of sockets) r.socket.destroy();
    await Promise.all(sockets.map((r) => r.closed));
  });

  it('random well-formed requests of every served API version are all answered — never an internal error', async () => {
    const { specs } = loadSpecs([fileURLToPath(new URL('../../message-schemas/', import.meta.url))]);
    const specByName = new Map(specs.map((s) => [s.name, s]));
    const c0 = await connect();
    const advertised = (await c0.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3, ApiVersionsResponse)).apiKeys;
    const meta = await c0.send(
      MetadataRequest,
      MetadataRequest.create({ topics: [{ name: TARGET, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }),
      12,
      MetadataResponse,
    );
    const targetId = meta.topics[0]!.topicId;
    await c0.close();
    let sent = 0;
    let answered = 0;
    const outcomes = new Map<string, number>();
    for (const { apiKey, minVersion, maxVersion } of advertised) {
      if (apiKey === 18) continue; // ApiVersions is exercised everywhere; random software names only get INVALID_REQUEST.
      const api = apiByKey(apiKey)!;
      const codec = api.request as ApiMessageCodec<any>;
      for (let version = minVersion; version <= maxVersion; version++) {
        const jsons = fc.sample(messageArbitrary(specByName.get(codec.name)!, version), { numRuns: 16, seed: apiKey * 100 + version });
        let c = await connect('kipgen-random');
        let seed = apiKey * 1000 + version;
        const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
        for (const json of jsons) {
          const message = codec.fromJson(aim(json, random, targetId), version);
          // Long polls would only make this slow: cap waits at 50 ms.
          if ('maxWaitMs' in message) message.maxWaitMs = Math.min(Math.max(message.maxWaitMs, 0), 50);
          if (!c.isOpen) c = await connect('kipgen-random');
          sent++;
          try {
            const response = await c.send(codec, message, version, api.response as ApiMessageCodec<unknown>, { timeoutMs: 10_000 });
            answered++;
            const codes = new Set<number>();
            collectErrorCodes(response, codes);
            for (const code of codes) outcomes.set(`${api.name} ${code}`, (outcomes.get(`${api.name} ${code}`) ?? 0) + 1);
          } catch (error) {
            if (!(error instanceof NetworkError)) throw error;
          }
        }
        await c.close();
      }
    }
    expect(sent).toBeGreaterThan(1000);
    const internal = broker
      .stderr()
      .split('\n')
      .filter((l) => /request failed|internal error/.test(l));
    expect(internal.slice(0, 5)).toEqual([]);
    // Well-formed requests are all answered: errors go in the response, not in a closed connection.
    expect(answered).toBe(sent);
    const succeeded = [...outcomes].filter(([k]) => k.endsWith(' 0')).map(([k, n]) => `${k.slice(0, -2)}×${n}`);
    process.stdout.write(`random requests: ${sent} sent, ${answered} answered; with a NONE error code somewhere: ${succeeded.join(', ')}\n`);
    sampleRss();
  });

  it('kept serving the healthy client throughout, and stayed within its memory bound', async () => {
    await healthy.stop();
    expect(healthy.failures).toEqual([]);
    expect(healthy.rounds).toBeGreaterThan(20);
    expect(healthy.slowest).toBeLessThan(5000);
    expect(broker.alive()).toBe(true);
    expect(peakRss - rssAtStart).toBeLessThan(128 * 1024 * 1024);
    process.stdout.write(
      `broker abuse: healthy client ${healthy.rounds} rounds, slowest ${healthy.slowest} ms; broker RSS ${(rssAtStart / 1048576).toFixed(0)} MiB → peak ${(peakRss / 1048576).toFixed(0)} MiB; ` +
        `${
          broker
            .stderr()
            .split('\n')
            .filter((l) => /rejected frame|middle of a frame/.test(l)).length
        } refused/torn connections logged\n`,
    );
  });

  it('after kill -9 and a restart on the same data directory, every acknowledged record is there, intact and in order, and no torn one (Fetch and kipgen dump-log)', async () => {
    await healthyConnection.close();
    await broker.kill9();
    broker = await startKipgenBroker({
      topics: [`${TOPIC}:2`, `${TARGET}:3`],
      dataDir,
      entry: 'cli',
      logRequests: false,
      config: { maxFrameBytes: MAX_FRAME },
    });
    expect(broker.stderr()).not.toMatch(/recovery truncated/);
    for (const partition of [0, 1]) {
      const read = await readPartition(broker.port, TOPIC, partition, 'read_uncommitted');
      const values = read.records.map((r) => r.value!.toString());
      expect(values.length, `partition ${partition}`).toBe(acknowledged[partition]!.length);
      expect(values.filter((v) => !v.startsWith('big-'))).toEqual(acknowledged[partition]!.filter((v) => !v.startsWith('big-')));
      expect(values.filter((v) => v.startsWith('big-')).map((v) => v.length)).toEqual(
        acknowledged[partition]!.filter((v) => v.startsWith('big-')).map((v) => v.length),
      );
      expect(read.records.map((r) => r.offset)).toEqual(values.map((_, i) => BigInt(i)));
      for (const bad of forbidden) expect(values).not.toContain(bad);
    }
    // The same through kipgen dump-log (CRC of every batch checked, records printed).
    await broker.stop();
    for (const partition of [0, 1]) {
      const dump = await run(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts'), 'dump-log', path.join(dataDir, `${TOPIC}-${partition}`)],
        { timeoutMs: 60_000 },
      );
      expect(dump.code, dump.stderr).toBe(0);
      const text = dump.stdout.toString('utf8');
      expect(text).not.toMatch(/isValid: false|torn batch|unreadable|records not shown/);
      const payloads = [...text.matchAll(/^\| offset: (\d+) timestamp: -?\d+ key: null payload: (".*")$/gm)].map(
        (m) => [BigInt(m[1]!), JSON.parse(m[2]!) as string] as const,
      );
      expect(payloads.map(([, v]) => v.slice(0, 40))).toEqual(acknowledged[partition]!.map((v) => v.slice(0, 40)));
      expect(payloads.map(([o]) => o)).toEqual(payloads.map((_, i) => BigInt(i)));
    }
  });
});
