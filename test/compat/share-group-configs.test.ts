/**
 * kipgen's own KafkaShareConsumer against `kipgen broker` (child process,
 * Kafka's defaults for the share group configs), each group configured with
 * IncrementalAlterConfigs on its GROUP resource and read back with
 * DescribeConfigs: share.auto.offset.reset (latest by default, earliest),
 * share.isolation.level (read_uncommitted by default, read_committed),
 * share.delivery.count.limit and share.record.lock.duration.ms, each
 * observed through what the consumer is given. Prints the API versions used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, type ShareConsumerRecord } from '../../client/index.js';
import { DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { apisUsed, removeTempDirs, startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';

const CLIENT_ID = 'kipgen-share-configs';
let broker: KipgenBroker;
let bootstrap: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await startKipgenBroker({ topics: ['sg-iso:1', 'sg-limit:1', 'sg-lock:1'], config: { shareGroup: { heartbeatIntervalMs: 200 } } });
  bootstrap = `127.0.0.1:${broker.port}`;
});

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await broker?.stop();
  removeTempDirs();
  if (broker)
    process.stdout.write(
      `kipgen share consumer with group configs: APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`,
    );
});

async function alterGroup(groupId: string, configs: Record<string, string>): Promise<void> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: CLIENT_ID });
  try {
    const r = await c.send(
      IncrementalAlterConfigsRequest,
      IncrementalAlterConfigsRequest.create({
        resources: [
          { resourceType: 32, resourceName: groupId, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) },
        ],
      }),
      1,
      IncrementalAlterConfigsResponse,
    );
    expect(r.responses[0]!.errorCode).toBe(0);
    const d = await c.send(
      DescribeConfigsRequest,
      DescribeConfigsRequest.create({ resources: [{ resourceType: 32, resourceName: groupId, configurationKeys: Object.keys(configs) }] }),
      4,
      DescribeConfigsResponse,
    );
    expect(Object.fromEntries(d.results[0]!.configs.map((e) => [e.name, e.value]))).toEqual(configs);
  } finally {
    await c.close();
  }
}

function consumer(groupId: string): KafkaShareConsumer {
  const s = new KafkaShareConsumer({
    bootstrapServers: bootstrap,
    clientId: CLIENT_ID,
    groupId,
    acknowledgementMode: 'explicit',
    fetchMaxWaitMs: 100,
    logger: null,
  });
  closers.push(() => s.close(1_000));
  return s;
}

async function produce(topic: string, values: string[], aborted = false): Promise<void> {
  const p = new KafkaProducer({
    bootstrapServers: bootstrap,
    clientId: CLIENT_ID,
    lingerMs: 1,
    logger: null,
    metricsRegistry: null,
    ...(aborted ? { transactionalId: `sg-${topic}-aborter` } : {}),
  });
  try {
    if (aborted) {
      await p.initTransactions();
      p.beginTransaction();
      await Promise.all(values.map((value) => p.send({ topic, value })));
      await p.abortTransaction();
    } else {
      await Promise.all(values.map((value) => p.send({ topic, value })));
    }
  } finally {
    await p.close(1_000);
  }
}

async function pollFor(s: KafkaShareConsumer, count: number, ms = 8_000): Promise<ShareConsumerRecord[]> {
  const out: ShareConsumerRecord[] = [];
  const deadline = Date.now() + ms;
  while (out.length < count && Date.now() < deadline) out.push(...(await s.poll(200)));
  return out;
}
const values = (rs: ShareConsumerRecord[]) => rs.map((r) => Buffer.from(r.value!).toString());

describe('share-group configs honoured for kipgen’s share consumer', () => {
  it('share.auto.offset.reset and share.isolation.level: Kafka’s defaults (latest, read_uncommitted) and their overrides', async () => {
    await produce('sg-iso', ['before']);
    await alterGroup('sg-committed-earliest', { 'share.auto.offset.reset': 'earliest', 'share.isolation.level': 'read_committed' });
    const dflt = consumer('sg-default');
    dflt.subscribe(['sg-iso']);
    // The first fetches create the share partition at the end of the log (latest).
    expect(values(await pollFor(dflt, 1, 1_500))).toEqual([]);
    await produce('sg-iso', ['aborted'], true);
    await produce('sg-iso', ['after']);
    const seenByDefault = await pollFor(dflt, 2);
    expect(values(seenByDefault)).toEqual(['aborted', 'after']);
    for (const r of seenByDefault) dflt.acknowledge(r);
    await dflt.commitSync();

    const configured = consumer('sg-committed-earliest');
    configured.subscribe(['sg-iso']);
    const seen = await pollFor(configured, 2);
    expect(values(seen)).toEqual(['before', 'after']);
    for (const r of seen) configured.acknowledge(r);
    await configured.commitSync();
    expect(values(await configured.poll(500))).toEqual([]);
  });

  it('share.delivery.count.limit: a record released twice is archived at the group’s limit of 2', async () => {
    await alterGroup('sg-limit-2', { 'share.delivery.count.limit': '2', 'share.auto.offset.reset': 'earliest' });
    await produce('sg-limit', ['poison']);
    const s = consumer('sg-limit-2');
    s.subscribe(['sg-limit']);
    for (const delivery of [1, 2]) {
      const [r] = await pollFor(s, 1);
      expect([values([r!]), r!.deliveryCount]).toEqual([['poison'], delivery]);
      s.acknowledge(r!, 'release');
      await s.commitSync();
    }
    expect(await pollFor(s, 1, 1_500)).toEqual([]);
  });

  it('share.record.lock.duration.ms: an unacknowledged record comes back after the group’s 15 s lock', async () => {
    await alterGroup('sg-lock-15s', { 'share.record.lock.duration.ms': '15000', 'share.auto.offset.reset': 'earliest' });
    await produce('sg-lock', ['held']);
    const holder = consumer('sg-lock-15s');
    holder.subscribe(['sg-lock']);
    const [first] = await pollFor(holder, 1);
    expect(first!.deliveryCount).toBe(1);
    const acquiredAt = Date.now();
    const other = consumer('sg-lock-15s');
    other.subscribe(['sg-lock']);
    const [again] = await pollFor(other, 1, 25_000);
    const waited = Date.now() - acquiredAt;
    expect(values([again!])).toEqual(['held']);
    expect(again!.deliveryCount).toBe(2);
    // The group's lock, not the broker default's 30 s: it came back between 15 s and well before 30 s.
    expect(waited).toBeGreaterThanOrEqual(14_000);
    expect(waited).toBeLessThan(29_000);
  }, 40_000);
});
