/**
 * Admin APIs against an in-process broker: CreateTopics, DeleteTopics,
 * CreatePartitions, DescribeConfigs / IncrementalAlterConfigs on TOPIC,
 * BROKER and GROUP resources, DescribeCluster, Metadata auto-creation, and
 * that all of it survives a restart of the broker on the same data directory.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { TestClient, batch, fetchAll, produce, startTestBroker, tempDir } from './support/broker-harness.js';

const TOPIC = 2;
const BROKER = 4;
const GROUP = 32;
const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA';

let dataDir: string;
let broker: Broker;
let c: TestClient;
const lines: string[] = [];

beforeAll(async () => {
  dataDir = tempDir('kipgen-admin-');
  broker = await startTestBroker(BROKER_CONFIG(), lines);
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// Kafka's defaults for the share group configs (the harness sets the KIP suites' own).
const BROKER_CONFIG = () => ({
  dataDir,
  topics: [{ name: 'static', partitions: 1 }],
  defaultPartitions: 2,
  producerIdExpirationMs: 3_600_000,
  shareGroup: { isolationLevel: 'read_uncommitted' as const, autoOffsetReset: 'latest' as const },
});

const creatable = (name: string, numPartitions: number, extra: Record<string, unknown> = {}) => ({
  name,
  numPartitions,
  replicationFactor: -1,
  assignments: [],
  configs: [],
  ...extra,
});

async function metadata(client: TestClient, names: string[] | null, allowAutoTopicCreation = false): Promise<any[]> {
  const r = await client.call(3, { topics: names?.map((name) => ({ name, topicId: ZERO })) ?? null, allowAutoTopicCreation }, 12);
  return r.topics;
}

describe('CreateTopics', () => {
  it('creates topics that can be produced to and fetched, with configs; validateOnly creates nothing', async () => {
    const r = await c.call(
      19,
      {
        topics: [creatable('orders', 3, { configs: [{ name: 'retention.ms', value: '1000' }] }), creatable('dflt', -1), creatable('dry', 4)],
        timeoutMs: 5000,
        validateOnly: false,
      },
      7,
    );
    expect(r.topics.map((t: any) => [t.name, t.errorCode, t.numPartitions])).toEqual([
      ['orders', 0, 3],
      ['dflt', 0, 2],
      ['dry', 0, 4],
    ]);
    expect(r.topics[0].topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(r.topics[0].configs.find((e: any) => e.name === 'retention.ms')).toMatchObject({ value: '1000', configSource: 1 });
    expect(r.topics[0].configs.find((e: any) => e.name === 'cleanup.policy')).toMatchObject({ value: 'delete', configSource: 5 });
    const only = await c.call(19, { topics: [creatable('dry-only', 2)], timeoutMs: 5000, validateOnly: true }, 7);
    expect(only.topics[0]).toMatchObject({ errorCode: 0, numPartitions: 2 });
    // An id nobody will use, as Kafka's ReplicationControlManager draws one before not committing the topic.
    expect(only.topics[0].topicId).not.toBe(ZERO);
    const [orders, dryOnly] = await metadata(c, ['orders', 'dry-only']);
    expect(orders.partitions).toHaveLength(3);
    expect(dryOnly.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await produce(c, 'orders', 2, batch({ values: ['a', 'b'] }))).errorCode).toBe(0);
    expect((await fetchAll(c, 'orders', 2, 'read_uncommitted')).records.map((x) => x.value)).toEqual(['a', 'b']);
  });

  it('answers Kafka’s errors: existing topic, bad partition count or replication factor, bad name or config, duplicates', async () => {
    const r = await c.call(
      19,
      {
        topics: [
          creatable('orders', 1),
          creatable('zero', 0),
          creatable('neg', -2),
          { ...creatable('rf', 1), replicationFactor: 3 },
          creatable('bad name!', 1),
          creatable('cfg', 1, { configs: [{ name: 'retention.ms', value: 'soon' }] }),
          creatable('cfg2', 1, { configs: [{ name: 'no.such.config', value: '1' }] }),
          creatable('twice', 1),
          creatable('twice', 1),
          creatable('orders_x', 1),
          creatable('placed', -1, { assignments: [{ partitionIndex: 0, brokerIds: [0] }] }),
        ],
        timeoutMs: 5000,
        validateOnly: false,
      },
      7,
    );
    const codes = Object.fromEntries(r.topics.map((t: any, i: number) => [`${t.name}#${i}`, t.errorCode]));
    expect(codes).toEqual({
      'orders#0': ErrorCode.TOPIC_ALREADY_EXISTS,
      'zero#1': ErrorCode.INVALID_PARTITIONS,
      'neg#2': ErrorCode.INVALID_PARTITIONS,
      'rf#3': ErrorCode.INVALID_REPLICATION_FACTOR,
      'bad name!#4': ErrorCode.INVALID_TOPIC_EXCEPTION,
      'cfg#5': ErrorCode.INVALID_CONFIG,
      'cfg2#6': ErrorCode.INVALID_CONFIG,
      'twice#7': ErrorCode.INVALID_REQUEST,
      'twice#8': ErrorCode.INVALID_REQUEST,
      'orders_x#9': 0,
      'placed#10': ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    });
    expect(r.topics[0].errorMessage).toBe("Topic 'orders' already exists.");
    expect(r.topics[5].errorMessage).toMatch(/retention.ms must be an integer/);
    // '.' and '_' collide, as in Kafka.
    const collide = await c.call(19, { topics: [creatable('orders.x', 1)], timeoutMs: 5000, validateOnly: false }, 7);
    expect(collide.topics[0]).toMatchObject({
      errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
      errorMessage: "Topic 'orders.x' collides with existing topic: orders_x",
    });
    // v2 (before the flexible versions) works too.
    const v2 = await c.call(19, { topics: [creatable('old-client', 1)], timeoutMs: 5000, validateOnly: false }, 2);
    expect(v2.topics[0].errorCode).toBe(0);
  });
});

describe('CreatePartitions and DeleteTopics', () => {
  it('grows a topic; refuses shrinking, the same count, unknown and internal topics', async () => {
    const r = await c.call(
      37,
      {
        topics: [
          { name: 'orders', count: 5, assignments: null },
          { name: 'dflt', count: 1, assignments: null },
          { name: 'dry', count: 4, assignments: null },
          { name: 'nope', count: 2, assignments: null },
          { name: '__consumer_offsets', count: 20, assignments: null },
        ],
        timeoutMs: 5000,
        validateOnly: false,
      },
      3,
    );
    expect(r.results.map((x: any) => x.errorCode)).toEqual([
      0,
      ErrorCode.INVALID_PARTITIONS,
      ErrorCode.INVALID_PARTITIONS,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.INVALID_REQUEST,
    ]);
    expect(r.results[1].errorMessage).toBe('Topic currently has 2 partitions, which is higher than the requested 1.');
    const dry = await c.call(37, { topics: [{ name: 'dflt', count: 7, assignments: null }], timeoutMs: 5000, validateOnly: true }, 3);
    expect(dry.results[0].errorCode).toBe(0);
    const [orders, dflt] = await metadata(c, ['orders', 'dflt']);
    expect(orders.partitions).toHaveLength(5);
    expect(dflt.partitions).toHaveLength(2);
    expect((await produce(c, 'orders', 4, batch({ values: ['new partition'] }))).errorCode).toBe(0);
  });

  it('deletes by name (v5) and by id (v6); the data is gone and a re-created topic gets a new id', async () => {
    const [dry] = await metadata(c, ['dry']);
    await produce(c, 'dry', 0, batch({ values: ['old'] }));
    const byName = await c.call(20, { topicNames: ['dry', 'nope', '__transaction_state'], timeoutMs: 5000 }, 5);
    expect(byName.responses.map((x: any) => [x.name, x.errorCode])).toEqual([
      ['dry', 0],
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['__transaction_state', ErrorCode.INVALID_REQUEST],
    ]);
    expect(fs.existsSync(`${dataDir}/dry-0`)).toBe(false);
    const [dflt] = await metadata(c, ['dflt']);
    const byId = await c.call(
      20,
      {
        topics: [
          { name: null, topicId: dflt.topicId },
          { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
        ],
        timeoutMs: 5000,
      },
      6,
    );
    expect(byId.responses.map((x: any) => [x.name, x.errorCode])).toEqual([
      ['dflt', 0],
      [null, ErrorCode.UNKNOWN_TOPIC_ID],
    ]);
    expect((await metadata(c, ['dflt']))[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const again = await c.call(19, { topics: [creatable('dry', 4)], timeoutMs: 5000, validateOnly: false }, 7);
    expect(again.topics[0].errorCode).toBe(0);
    expect(again.topics[0].topicId).not.toBe(dry.topicId);
    expect((await fetchAll(c, 'dry', 0, 'read_uncommitted')).records).toEqual([]);
  });
});

describe('DescribeConfigs and IncrementalAlterConfigs', () => {
  it('TOPIC: set, append, delete, validateOnly; sources and synonyms as Kafka reports them', async () => {
    const alter = await c.call(
      44,
      {
        resources: [
          {
            resourceType: TOPIC,
            resourceName: 'orders',
            configs: [
              { name: 'compression.type', configOperation: 0, value: 'zstd' },
              { name: 'cleanup.policy', configOperation: 2, value: 'compact' },
              { name: 'retention.ms', configOperation: 1, value: null },
            ],
          },
          { resourceType: TOPIC, resourceName: 'nope', configs: [] },
          { resourceType: TOPIC, resourceName: 'static', configs: [{ name: 'segment.ms', configOperation: 2, value: '5' }] },
        ],
        validateOnly: false,
      },
      1,
    );
    expect(alter.responses.map((x: any) => x.errorCode)).toEqual([0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_CONFIG]);
    const dry = await c.call(
      44,
      {
        resources: [{ resourceType: TOPIC, resourceName: 'orders', configs: [{ name: 'compression.type', configOperation: 0, value: 'gzip' }] }],
        validateOnly: true,
      },
      1,
    );
    expect(dry.responses[0].errorCode).toBe(0);
    const d = await c.call(
      32,
      {
        resources: [{ resourceType: TOPIC, resourceName: 'orders', configurationKeys: ['compression.type', 'cleanup.policy', 'retention.ms'] }],
        includeSynonyms: true,
        includeDocumentation: true,
      },
      4,
    );
    const byName = Object.fromEntries(d.results[0].configs.map((e: any) => [e.name, e]));
    expect(byName['compression.type']).toMatchObject({ value: 'zstd', configSource: 1, readOnly: false, configType: 2 });
    expect(byName['compression.type'].synonyms).toEqual([{ name: 'compression.type', value: 'zstd', source: 1 }]);
    expect(byName['cleanup.policy']).toMatchObject({ value: 'delete,compact', configSource: 1, configType: 7 });
    expect(byName['retention.ms']).toMatchObject({ value: '604800000', configSource: 5, configType: 5 });
    expect(byName['retention.ms'].documentation).toMatch(/records are kept/);
    const unknown = await c.call(32, { resources: [{ resourceType: TOPIC, resourceName: 'nope', configurationKeys: null }] }, 1);
    expect(unknown.results[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('BROKER: the static settings, read-only; altering them is refused as Kafka refuses non-dynamic configs', async () => {
    const d = await c.call(
      32,
      {
        resources: [
          { resourceType: BROKER, resourceName: '0', configurationKeys: null },
          { resourceType: BROKER, resourceName: '7', configurationKeys: null },
        ],
      },
      4,
    );
    const byName = Object.fromEntries(d.results[0].configs.map((e: any) => [e.name, e]));
    expect(byName['auto.create.topics.enable']).toMatchObject({ value: 'true', readOnly: true, configSource: 4 });
    expect(byName['num.partitions'].value).toBe('2');
    expect(byName['log.dirs'].value).toBe(dataDir);
    // Kafka's names for the producer-id expiration settings: the configured value, and the default.
    expect(byName['producer.id.expiration.ms']).toMatchObject({ value: '3600000', readOnly: true });
    expect(byName['producer.id.expiration.check.interval.ms'].value).toBe('600000');
    // And the transactional-id expiration settings (Kafka's defaults: seven days, one hour).
    expect(byName['transactional.id.expiration.ms']).toMatchObject({ value: '604800000', readOnly: true });
    expect(byName['transaction.remove.expired.transaction.cleanup.interval.ms'].value).toBe('3600000');
    expect(d.results[1].errorCode).toBe(ErrorCode.INVALID_REQUEST);
    const alter = await c.call(
      44,
      { resources: [{ resourceType: BROKER, resourceName: '0', configs: [{ name: 'num.partitions', configOperation: 0, value: '3' }] }], validateOnly: false },
      1,
    );
    expect(alter.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(alter.responses[0].errorMessage).toMatch(/Cannot update these configs dynamically: num.partitions/);
  });

  it('GROUP: KIP-932 share configs with Kafka’s defaults, overrides, validation', async () => {
    const before = await c.call(32, { resources: [{ resourceType: GROUP, resourceName: 'g1', configurationKeys: null }] }, 4);
    const defaults = Object.fromEntries(before.results[0].configs.map((e: any) => [e.name, e.value]));
    expect(defaults).toMatchObject({
      'share.isolation.level': 'read_uncommitted',
      'share.auto.offset.reset': 'latest',
      'share.record.lock.duration.ms': '30000',
      'share.delivery.count.limit': '5',
      'consumer.session.timeout.ms': '45000',
    });
    const alter = await c.call(
      44,
      {
        resources: [
          {
            resourceType: GROUP,
            resourceName: 'g1',
            configs: [
              { name: 'share.isolation.level', configOperation: 0, value: 'read_committed' },
              { name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' },
              { name: 'share.record.lock.duration.ms', configOperation: 0, value: '15000' },
            ],
          },
          { resourceType: GROUP, resourceName: 'g2', configs: [{ name: 'share.isolation.level', configOperation: 0, value: 'dirty' }] },
          { resourceType: GROUP, resourceName: 'g3', configs: [{ name: 'share.delivery.count.limit', configOperation: 0, value: '1' }] },
          { resourceType: GROUP, resourceName: 'g4', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'by_duration:PT1H' }] },
          { resourceType: GROUP, resourceName: 'g5', configs: [{ name: 'share.isolation.level', configOperation: 2, value: 'read_committed' }] },
        ],
        validateOnly: false,
      },
      1,
    );
    expect(alter.responses.map((x: any) => x.errorCode)).toEqual([
      0,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
      ErrorCode.INVALID_CONFIG,
    ]);
    expect(alter.responses[3].errorMessage).toMatch(/by_duration:PT1H is not supported by kipgen/);
    const after = await c.call(
      32,
      {
        resources: [
          { resourceType: GROUP, resourceName: 'g1', configurationKeys: ['share.isolation.level', 'share.auto.offset.reset', 'share.delivery.count.limit'] },
        ],
      },
      4,
    );
    expect(after.results[0].configs.map((e: any) => [e.name, e.value, e.configSource])).toEqual([
      ['share.delivery.count.limit', '5', 5],
      ['share.auto.offset.reset', 'earliest', 8],
      ['share.isolation.level', 'read_committed', 8],
    ]);
    // DELETE returns a key to the default.
    await c.call(
      44,
      {
        resources: [{ resourceType: GROUP, resourceName: 'g1', configs: [{ name: 'share.record.lock.duration.ms', configOperation: 1, value: null }] }],
        validateOnly: false,
      },
      0,
    );
    const reset = await c.call(32, { resources: [{ resourceType: GROUP, resourceName: 'g1', configurationKeys: ['share.record.lock.duration.ms'] }] }, 4);
    expect(reset.results[0].configs[0]).toMatchObject({ value: '30000', configSource: 5 });
  });
});

describe('DescribeCluster and Metadata auto-creation', () => {
  it('DescribeCluster lists the nodes and the cluster id; controller endpoints are refused', async () => {
    const r = await c.call(60, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false }, 2);
    expect(r).toMatchObject({ errorCode: 0, clusterId: 'kipgen-cluster', controllerId: 0, endpointType: 1 });
    expect(r.brokers).toEqual([{ brokerId: 0, host: '127.0.0.1', port: broker.port, rack: null, isFenced: false }]);
    expect((await c.call(60, { endpointType: 2 }, 1)).errorCode).toBe(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE);
  });

  it('Metadata by topic id: a non-zero id decides, whatever the name ("" is what Kafka\'s Java client sends with it); an unknown id is UNKNOWN_TOPIC_ID and creates nothing', async () => {
    // Kafka's KafkaApis.handleTopicMetadataRequest looks topics up by id when the request has non-zero ids;
    // MetadataRequest.Builder.forTopicIds leaves each name at its default, "" (found by the Kafka judge,
    // test/kafka: a KafkaConsumer subscribed with a SubscriptionPattern got "" as its topics' name).
    const [known] = await metadata(c, ['by-id-known'], true);
    expect(known.errorCode).toBe(0);
    const byId = await c.call(
      3,
      {
        topics: [
          { name: '', topicId: known.topicId },
          { name: null, topicId: known.topicId },
        ],
        allowAutoTopicCreation: true,
      },
      12,
    );
    expect(byId.topics.map((t: any) => [t.errorCode, t.name, t.topicId, t.partitions.length])).toEqual([
      [0, 'by-id-known', known.topicId, known.partitions.length],
      [0, 'by-id-known', known.topicId, known.partitions.length],
    ]);
    const unknownId = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const unknown = await c.call(3, { topics: [{ name: '', topicId: unknownId }], allowAutoTopicCreation: true }, 12);
    expect(unknown.topics[0]).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_ID, topicId: unknownId });
    expect((await metadata(c, null, true)).map((t) => t.name)).not.toContain('');
  });

  it('creates a topic Metadata names when the request and the broker allow it, with num.partitions', async () => {
    expect((await metadata(c, ['auto-no'], false))[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const [created] = await metadata(c, ['auto-yes'], true);
    expect(created.errorCode).toBe(0);
    expect(created.partitions).toHaveLength(2);
    // Before v4 the request cannot say no: Kafka creates.
    const v1 = await c.call(3, { topics: [{ name: 'auto-v1' }] }, 1);
    expect(v1.topics[0].errorCode).toBe(0);
    // An illegal name is not created.
    expect((await metadata(c, ['bad/name'], true))[0].errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    // The whole list (null) never creates anything.
    expect((await metadata(c, null, true)).map((t) => t.name)).toContain('auto-yes');
    const off = await startTestBroker({ dataDir: tempDir('kipgen-admin-off-'), autoCreateTopics: false });
    const client = await TestClient.connect(off.port);
    try {
      expect((await metadata(client, ['auto-off'], true))[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    } finally {
      await client.close();
      await off.close();
      fs.rmSync(off.config.dataDir, { recursive: true, force: true });
    }
  });
});

describe('durability', () => {
  it('topics created, grown, reconfigured and deleted at run time, and group configs, survive a restart', async () => {
    const before = await metadata(c, ['orders', 'dry', 'auto-yes', 'dflt']);
    await c.close();
    await broker.close();
    broker = await startTestBroker(BROKER_CONFIG(), lines);
    c = await TestClient.connect(broker.port);
    const after = await metadata(c, ['orders', 'dry', 'auto-yes', 'dflt']);
    expect(after.map((t) => [t.name, t.errorCode, t.topicId, t.partitions.length])).toEqual(
      before.map((t) => [t.name, t.errorCode, t.topicId, t.partitions.length]),
    );
    expect(after[3].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await fetchAll(c, 'orders', 4, 'read_uncommitted')).records.map((x) => x.value)).toEqual(['new partition']);
    const topicCfg = await c.call(32, { resources: [{ resourceType: TOPIC, resourceName: 'orders', configurationKeys: ['compression.type'] }] }, 4);
    expect(topicCfg.results[0].configs[0].value).toBe('zstd');
    const groupCfg = await c.call(32, { resources: [{ resourceType: GROUP, resourceName: 'g1', configurationKeys: ['share.isolation.level'] }] }, 4);
    expect(groupCfg.results[0].configs[0].value).toBe('read_committed');
  });
});
