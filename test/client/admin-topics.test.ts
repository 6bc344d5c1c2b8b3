/**
 * Admin's topic calls, describeCluster and listOffsets against a real
 * two-node kipgen cluster: createTopics (with configs, validateOnly, an
 * existing topic, a bad one), deleteTopics by name and by id, createPartitions,
 * listTopics, describeTopics by name and id, describeCluster, and listOffsets
 * by each spec, read_committed, routed to each partition's leader.
 */
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin } from '../../client/admin.js';
import {
  InvalidPartitionsError,
  InvalidTopicError,
  KafkaProducer,
  KafkaTimeoutError,
  OffsetSpec,
  TopicExistsError,
  UnknownTopicIdError,
  UnknownTopicOrPartitionError,
} from '../../client/index.js';
import { startCluster, type TestCluster } from './support/brokers.js';

let cluster: TestCluster;
let admin: Admin;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 2 });
  admin = new Admin({ bootstrapServers: cluster.bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
});

afterAll(async () => {
  await admin?.close();
  await cluster?.close();
});

describe('createTopics / deleteTopics / createPartitions', () => {
  it('creates topics with their ids, partitions and configs; an existing topic and an empty name are their own entries', async () => {
    const result = await admin.createTopics([{ name: 'orders', numPartitions: 3, configs: { 'retention.ms': '60000' } }, { name: 'defaults' }, { name: '' }]);
    const orders = result.get('orders');
    expect(orders.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(orders.numPartitions).toBe(3);
    expect(orders.metadataError).toBeNull();
    expect(orders.config.get('retention.ms')).toMatchObject({ value: '60000', source: 'DYNAMIC_TOPIC_CONFIG' });
    expect(orders.config.get('cleanup.policy')).toMatchObject({ value: 'delete', source: 'DEFAULT_CONFIG' });
    expect(result.get('defaults').numPartitions).toBeGreaterThan(0);
    expect(() => result.get('')).toThrow(InvalidTopicError);
    expect([...result.entries.keys()]).toEqual(['orders', 'defaults', '']);

    const again = await admin.createTopics([
      { name: 'orders', numPartitions: 1 },
      { name: 'fresh', numPartitions: 1 },
    ]);
    expect(() => again.get('orders')).toThrow(TopicExistsError);
    expect(again.errors().get('orders')).toMatchObject({ errorName: 'TOPIC_ALREADY_EXISTS' });
    expect(again.get('fresh').numPartitions).toBe(1);
    expect(() => again.all()).toThrow(TopicExistsError);
  });

  it('validateOnly creates nothing', async () => {
    const result = await admin.createTopics([{ name: 'dry-run', numPartitions: 2 }], { validateOnly: true });
    expect(result.get('dry-run').numPartitions).toBe(2);
    expect((await admin.listTopics()).has('dry-run')).toBe(false);
  });

  it('refuses replicasAssignments together with numPartitions, naming the topic', async () => {
    await expect(admin.createTopics([{ name: 'both', numPartitions: 1, replicasAssignments: { 0: [0] } }])).rejects.toThrow(
      /topic both has replicasAssignments and numPartitions/,
    );
  });

  it('deletes by name and by id; an unknown topic fails its own entry', async () => {
    await admin.createTopics([
      { name: 'gone-by-name', numPartitions: 1 },
      { name: 'gone-by-id', numPartitions: 1 },
    ]);
    const byName = await admin.deleteTopics(['gone-by-name', 'never-was']);
    expect(byName.entries.get('gone-by-name')).toEqual({ ok: true, value: undefined });
    expect(() => byName.get('never-was')).toThrow(UnknownTopicOrPartitionError);

    const id = (await admin.describeTopics(['gone-by-id'])).get('gone-by-id').topicId;
    const byId = await admin.deleteTopics({ topicIds: [id, 'AAAAAAAAAAAAAAAAAAAAAQ'] });
    expect(byId.entries.get(id)).toEqual({ ok: true, value: undefined });
    expect(() => byId.get('AAAAAAAAAAAAAAAAAAAAAQ')).toThrow(UnknownTopicIdError);
    const topics = await admin.listTopics();
    expect(topics.has('gone-by-name')).toBe(false);
    expect(topics.has('gone-by-id')).toBe(false);
  });

  it('createPartitions raises the count; lowering it fails that topic only', async () => {
    await admin.createTopics([
      { name: 'grow', numPartitions: 1 },
      { name: 'shrink', numPartitions: 3 },
    ]);
    const result = await admin.createPartitions({ grow: { totalCount: 4 }, shrink: { totalCount: 2 } });
    expect(result.entries.get('grow')).toEqual({ ok: true, value: undefined });
    expect(() => result.get('shrink')).toThrow(InvalidPartitionsError);
    expect((await admin.describeTopics(['grow'])).get('grow').partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
  });
});

describe('a call that fails as a whole', () => {
  it('rejects with KafkaTimeoutError naming the last error when no broker answers within timeoutMs', async () => {
    // A port nothing listens on: bound, then released.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closed = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const lonely = new Admin({ bootstrapServers: `127.0.0.1:${closed}`, logger: null, connectTimeoutMs: 200 });
    try {
      const failed = lonely.createTopics([{ name: 'never', numPartitions: 1 }], { timeoutMs: 800 });
      await expect(failed).rejects.toThrow(KafkaTimeoutError);
      // The last error says which broker did not answer.
      await expect(failed).rejects.toThrow(new RegExp(`createTopics did not complete within its deadline .*127\\.0\\.0\\.1:${closed}`));
      await expect(lonely.describeCluster({ timeoutMs: 300 })).rejects.toThrow(/describeCluster did not complete within its deadline/);
    } finally {
      await lonely.close();
    }
  });

  it('refuses a negative timeoutMs', async () => {
    await expect(admin.listTopics({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be a non-negative number of milliseconds, not -1/);
  });
});

describe('listTopics / describeTopics / describeCluster', () => {
  it('lists topics with their ids, internal ones only when asked', async () => {
    await admin.createTopics([{ name: 'listed', numPartitions: 1 }]);
    const topics = await admin.listTopics();
    expect(topics.get('listed')).toMatchObject({ name: 'listed', isInternal: false });
    expect([...topics.values()].some((t) => t.isInternal)).toBe(false);
  });

  it('describes topics by name and by id: partitions with leader, replicas and isr on the two nodes', async () => {
    await admin.createTopics([{ name: 'described', numPartitions: 4 }]);
    const byName = await admin.describeTopics(['described', 'absent']);
    const d = byName.get('described');
    expect(d.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    const nodes = new Set(d.partitions.map((p) => p.leader!.id));
    expect(nodes).toEqual(new Set([0, 1]));
    for (const p of d.partitions) {
      expect(p.leader).toMatchObject({ host: '127.0.0.1' });
      expect(p.replicas.map((n) => n.id)).toEqual([p.leader!.id]);
      expect(p.isr.map((n) => n.id)).toEqual([p.leader!.id]);
      expect(p.offlineReplicas).toEqual([]);
    }
    expect(d.authorizedOperations).toBeNull();
    expect(() => byName.get('absent')).toThrow(UnknownTopicOrPartitionError);
    // Without an authorizer every topic operation is allowed (Kafka's AuthHelper.authorizedOperations).
    const withOperations = (await admin.describeTopics(['described'], { includeAuthorizedOperations: true })).get('described');
    expect(withOperations.authorizedOperations?.sort()).toEqual([
      'ALTER',
      'ALTER_CONFIGS',
      'CREATE',
      'DELETE',
      'DESCRIBE',
      'DESCRIBE_CONFIGS',
      'READ',
      'WRITE',
    ]);

    const byId = await admin.describeTopics({ topicIds: [d.topicId, 'AAAAAAAAAAAAAAAAAAAAAQ'] });
    expect(byId.get(d.topicId)).toMatchObject({ name: 'described', topicId: d.topicId });
    expect(() => byId.get('AAAAAAAAAAAAAAAAAAAAAQ')).toThrow(UnknownTopicIdError);
  });

  it('describeCluster names the cluster id, both nodes and the controller', async () => {
    const description = await admin.describeCluster();
    expect(description.clusterId).toEqual(expect.any(String));
    expect(description.nodes.map((n) => n.id).sort()).toEqual([0, 1]);
    expect(description.nodes.map((n) => n.port).sort()).toEqual(cluster.brokers.map((b) => b.port).sort());
    expect(description.controller?.id).toBe(0);
    expect(description.authorizedOperations).toBeNull();
    const withOperations = await admin.describeCluster({ includeAuthorizedOperations: true });
    expect(withOperations.authorizedOperations?.sort()).toEqual([
      'ALTER',
      'ALTER_CONFIGS',
      'CLUSTER_ACTION',
      'CREATE',
      'DESCRIBE',
      'DESCRIBE_CONFIGS',
      'IDEMPOTENT_WRITE',
    ]);
  });
});

describe('listOffsets', () => {
  it('answers each spec from the partition leader, on both nodes', async () => {
    await admin.createTopics([{ name: 'offsets', numPartitions: 2 }]);
    const producer = new KafkaProducer({ bootstrapServers: cluster.bootstrap, lingerMs: 1, logger: null, metricsRegistry: null });
    try {
      for (let i = 0; i < 3; i++) await producer.send({ topic: 'offsets', partition: 0, value: `a${i}`, timestamp: 1_000 + i * 100 });
      await producer.send({ topic: 'offsets', partition: 1, value: 'b0', timestamp: 5_000 });
    } finally {
      await producer.close();
    }
    const p0 = { topic: 'offsets', partition: 0 };
    const p1 = { topic: 'offsets', partition: 1 };
    const latest = await admin.listOffsets([
      [p0, OffsetSpec.latest()],
      [p1, OffsetSpec.latest()],
    ]);
    expect(latest.get(p0).offset).toBe(3n);
    expect(latest.get(p1).offset).toBe(1n);
    expect(latest.get(p0).leaderEpoch).toBe(0);

    const specs = await admin.listOffsets(
      new Map([
        [p0, OffsetSpec.earliest()],
        [p1, OffsetSpec.maxTimestamp()],
      ]),
    );
    expect(specs.get(p0).offset).toBe(0n);
    expect(specs.get(p1)).toMatchObject({ offset: 0n, timestamp: 5_000n });

    const at = await admin.listOffsets([[p0, OffsetSpec.forTimestamp(1_150)]]);
    expect(at.get(p0)).toMatchObject({ offset: 2n, timestamp: 1_200n });
    const after = await admin.listOffsets([[p0, OffsetSpec.forTimestamp(9_999)]]);
    expect(after.get(p0).offset).toBe(-1n);
  });

  it('read_committed answers the last stable offset while a transaction is open', async () => {
    await admin.createTopics([{ name: 'txn-offsets', numPartitions: 1 }]);
    const tp = { topic: 'txn-offsets', partition: 0 };
    const producer = new KafkaProducer({
      bootstrapServers: cluster.bootstrap,
      transactionalId: 'admin-offsets',
      lingerMs: 1,
      logger: null,
      metricsRegistry: null,
    });
    try {
      await producer.initTransactions();
      producer.beginTransaction();
      await producer.send({ topic: 'txn-offsets', value: 'committed' });
      await producer.commitTransaction();
      producer.beginTransaction();
      await producer.send({ topic: 'txn-offsets', value: 'open' });
      await producer.flush();
      const uncommitted = await admin.listOffsets([[tp, OffsetSpec.latest()]]);
      const committed = await admin.listOffsets([[tp, OffsetSpec.latest()]], { isolationLevel: 'READ_COMMITTED' });
      // committed record, its marker, the open one: the high watermark is 3, the last stable offset 2.
      expect(uncommitted.get(tp).offset).toBe(3n);
      expect(committed.get(tp).offset).toBe(2n);
      await producer.abortTransaction();
    } finally {
      await producer.close();
    }
  });

  it('an unknown topic fails its partitions at once; a partition the topic lacks times out alone', async () => {
    await admin.createTopics([{ name: 'one-partition', numPartitions: 1 }]);
    const known = { topic: 'one-partition', partition: 0 };
    const missing = { topic: 'one-partition', partition: 7 };
    const unknown = { topic: 'no-such-topic', partition: 0 };
    const result = await admin.listOffsets(
      [
        [known, OffsetSpec.latest()],
        [missing, OffsetSpec.latest()],
        [unknown, OffsetSpec.latest()],
      ],
      { timeoutMs: 1_500 },
    );
    expect(result.get(known).offset).toBe(0n);
    expect(() => result.get(missing)).toThrow(KafkaTimeoutError);
    expect(() => result.get(unknown)).toThrow(UnknownTopicOrPartitionError);
  });
});
