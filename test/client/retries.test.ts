import { afterEach, describe, expect, it } from 'vitest';
import * as net from 'node:net';
import { ClusterClient, CoordinatorType } from '../../client/cluster.js';
import { ApiError, KafkaProducer, KafkaTimeoutError, UnsupportedVersionError } from '../../client/index.js';
import { MetadataRequest } from '../../generated/index.js';
import { RequestTimeoutError } from '../../connection/connection.js';
import { respond } from './support/fake-server.js';
import { FakeKafka, TOPIC_ID } from './support/fake-kafka.js';

let fake: FakeKafka;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  await fake?.close();
});

function client(extra: Partial<ConstructorParameters<typeof ClusterClient>[0]> = {}): ClusterClient {
  const c = new ClusterClient({
    bootstrapServers: fake.bootstrap,
    retryBackoffMs: 5,
    retryBackoffMaxMs: 20,
    reconnectBackoffMs: 5,
    logger: null,
    ...extra,
  });
  closers.push(() => c.close());
  return c;
}

async function deadPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('connection layer: retries, timeouts, versions', () => {
  it('bootstraps past a dead server and negotiates each API at the highest common version', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 3 } }, maxVersions: { 3: 12 } });
    const c = client({ bootstrapServers: [`127.0.0.1:${await deadPort()}`, fake.bootstrap] });
    const topic = await c.topic('t', Date.now() + 3000);
    expect(topic).toMatchObject({ name: 't', topicId: TOPIC_ID });
    expect(topic.partitions.map((p) => p.leader)).toEqual([1, 1, 1]);
    expect(fake.requests(3).every((r) => r.apiVersion === 12)).toBe(true);
    expect(fake.requests(18)[0]!.apiVersion).toBe(5);
    expect(c.versionFor(1, MetadataRequest)).toBe(12);
  });

  it('reconnects with backoff when the server drops the connection', async () => {
    let drops = 2;
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 1 } } });
    fake.on(3, () => (drops-- > 0 ? { kind: 'drop' } : undefined));
    const c = client();
    await c.refreshMetadata(['t'], Date.now() + 3000);
    expect(fake.requests(3)).toHaveLength(3);
    expect(fake.requests(18).length).toBeGreaterThanOrEqual(3);
  });

  it('retries FindCoordinator on COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE', async () => {
    let n = 0;
    fake = await FakeKafka.start();
    fake.on(10, (r) =>
      n++ < 2
        ? respond({
            coordinators: [
              {
                key: r.body.coordinatorKeys[0],
                nodeId: -1,
                host: '',
                port: -1,
                errorCode: n === 1 ? 14 : 15,
                errorMessage: 'loading',
              },
            ],
          })
        : undefined,
    );
    const c = client();
    expect(await c.findCoordinator(CoordinatorType.SHARE, `g:${TOPIC_ID}:0`, Date.now() + 3000)).toBe(1);
    expect(fake.requests(10).map((r) => [r.apiVersion, r.body.keyType])).toEqual([
      [6, 2],
      [6, 2],
      [6, 2],
    ]);
  });

  it('surfaces a non-retriable error at once', async () => {
    fake = await FakeKafka.start();
    fake.on(10, (r) =>
      respond({
        coordinators: [{ key: r.body.coordinatorKeys[0], nodeId: -1, host: '', port: -1, errorCode: 30, errorMessage: 'denied' }],
      }),
    );
    const c = client();
    const error = await c.findCoordinator(CoordinatorType.GROUP, 'g', Date.now() + 3000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message).toMatch(/GROUP_AUTHORIZATION_FAILED \(30\): denied/);
    expect(fake.requests(10)).toHaveLength(1);
  });

  it('gives up with KafkaTimeoutError when the server stalls past the deadline', async () => {
    fake = await FakeKafka.start();
    fake.on(3, () => ({ kind: 'stall' }));
    const c = client({ requestTimeoutMs: 100 });
    const started = Date.now();
    const error = await c.refreshMetadata(null, Date.now() + 400).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaTimeoutError);
    expect((error as KafkaTimeoutError).cause).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toMatch(
      /Metadata did not complete within its deadline after \d+ attempt\(s\); last error: Metadata v13 .* got no response within 100 ms/,
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('raises UnsupportedVersionError for an API the broker lacks', async () => {
    fake = await FakeKafka.start({ without: [96] });
    const c = client();
    await c.connection(c.anyNode());
    const error = await c.supports(-1, 96);
    expect(error).toBe(false);
    const { TxnShareAcknowledgeRequest } = await import('../../generated/index.js');
    expect(() => c.versionFor(-1, TxnShareAcknowledgeRequest)).toThrow(UnsupportedVersionError);
    expect(() => c.versionFor(-1, TxnShareAcknowledgeRequest)).toThrow(/does not support TxnShareAcknowledge \(API key 96\); upgrade the broker/);
  });
});

describe('producer: batching, sequences, delivery timeout', () => {
  function producer(extra: Partial<ConstructorParameters<typeof KafkaProducer>[0]> = {}): KafkaProducer {
    const p = new KafkaProducer({
      bootstrapServers: fake.bootstrap,
      metricsRegistry: null,
      logger: null,
      retryBackoffMs: 5,
      ...extra,
    });
    closers.push(() => p.close(200));
    return p;
  }

  it('batches records sent within lingerMs into one batch, and splits at batchSize', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 2 } } });
    const p = producer({ lingerMs: 30, batchSize: 400 });
    const sends = Array.from({ length: 10 }, (_, i) => p.send({ topic: 't', partition: 0, value: `v${i}`.padEnd(50, '.') }));
    const results = await Promise.all(sends);
    expect(results.map((r) => r.offset)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
    // 10 records of ~70 bytes with a 400-byte batch size: batches of 4, 4, 2 with sequences 0, 4, 8.
    expect(fake.produced.map((b) => [b.count, b.baseSequence])).toEqual([
      [4, 0],
      [4, 4],
      [2, 8],
    ]);
    expect(fake.produced[0]!.producerId).toBe(1000n);
    expect(fake.produced.flatMap((b) => b.values).map((v) => v.slice(0, 2))).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`));
  });

  it('keyed records go to their murmur2 partition', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 7 } } });
    const p = producer({ lingerMs: 0 });
    const meta = await p.send({ topic: 't', key: 'foobar', value: 'x' });
    expect(meta.partition).toBe(1357151166 % 7);
  });

  it('retries a batch after a dropped connection with the same sequence number', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 1 } } });
    let drops = 1;
    fake.on(0, () => (drops-- > 0 ? { kind: 'drop' } : undefined));
    const p = producer({ lingerMs: 0 });
    expect((await p.send({ topic: 't', partition: 0, value: 'a' })).offset).toBe(0n);
    expect((await p.send({ topic: 't', partition: 0, value: 'b' })).offset).toBe(1n);
    const sequences = fake
      .requests(0)
      .map((r) => r.body.topicData[0].partitionData[0].records as Uint8Array)
      .map((b) => new DataView(b.buffer, b.byteOffset).getInt32(53));
    expect(sequences).toEqual([0, 0, 1]);
  });

  it('fails records with KafkaTimeoutError after delivery.timeout.ms when the broker stalls', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 1 } } });
    fake.on(0, () => ({ kind: 'stall' }));
    const p = producer({ lingerMs: 0, requestTimeoutMs: 100, deliveryTimeoutMs: 350 });
    const started = Date.now();
    const error = await p.send({ topic: 't', partition: 0, value: 'a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(fake.requests(0).length).toBeGreaterThanOrEqual(2);
  });

  it('acks=0 resolves with offset -1 without a response', async () => {
    fake = await FakeKafka.start({ topics: { t: { topicId: TOPIC_ID, partitions: 1 } } });
    const p = producer({ lingerMs: 0, acks: 0, enableIdempotence: false });
    expect((await p.send({ topic: 't', partition: 0, value: 'a' })).offset).toBe(-1n);
    expect(fake.requests(22)).toHaveLength(0);
  });
});
