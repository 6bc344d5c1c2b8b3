/**
 * kipgen's Admin against Apache Kafka 4.4: topics (create with configs,
 * validateOnly, an existing one; describe by name and id with authorized
 * operations; list; partitions; delete by name and id), configs (TOPIC with
 * synonyms and documentation, the broker and its loggers routed to it, a
 * share group's configs by name, APPEND / SUBTRACT), ACLs (create, describe,
 * delete, and the per-entry errors they cause for another principal),
 * describeCluster and listOffsets by each spec.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Admin } from '../../client/admin.js';
import {
  InvalidPartitionsError,
  KafkaProducer,
  OffsetSpec,
  TopicAuthorizationError,
  TopicExistsError,
  UnknownTopicIdError,
  UnknownTopicOrPartitionError,
  type AclBinding,
  type AclBindingFilter,
  type ConfigResource,
} from '../../client/index.js';
import { Cleanups, kafka, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

function admin(user?: { username: string; password: string }): Admin {
  const k = kafka();
  const config = user
    ? { bootstrapServers: k.saslSsl.bootstrap, ssl: { ca: k.saslSsl.caPem }, sasl: { mechanism: 'SCRAM-SHA-512' as const, ...user } }
    : { bootstrapServers: k.bootstrap };
  return cleanups.track(new Admin({ ...config, logger: null, defaultApiTimeoutMs: 30_000 }), (a) => a.close());
}

/** Kafka's brokers learn a new topic from the metadata log after CreateTopics answers: wait until describeTopics sees it. */
async function visible(a: Admin, topic: string): Promise<void> {
  for (let i = 0; ; i++) {
    const outcome = (await a.describeTopics([topic])).entries.get(topic);
    if (outcome?.ok) return;
    if (i === 100) throw new Error(`topic ${topic} did not become visible: ${outcome?.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Admin topics against Kafka 4.4', () => {
  it('creates, describes, lists, grows and deletes topics with Kafka’s per-topic answers', async () => {
    const a = admin();
    const [orders, dry] = [unique('admin-orders'), unique('admin-dry')];
    const created = await a.createTopics([{ name: orders, numPartitions: 2, replicationFactor: 1, configs: { 'retention.ms': '60000' } }]);
    const info = created.get(orders);
    expect(info).toMatchObject({ numPartitions: 2, replicationFactor: 1, metadataError: null });
    expect(info.config.get('retention.ms')).toMatchObject({ value: '60000', source: 'DYNAMIC_TOPIC_CONFIG' });
    const again = await a.createTopics([{ name: orders, numPartitions: 1 }]);
    expect(() => again.get(orders)).toThrow(TopicExistsError);
    expect((await a.createTopics([{ name: dry, numPartitions: 1 }], { validateOnly: true })).get(dry).numPartitions).toBe(1);

    await visible(a, orders);
    const described = await a.describeTopics([orders, dry], { includeAuthorizedOperations: true });
    const d = described.get(orders);
    expect(d.topicId).toBe(info.topicId);
    expect(d.partitions.map((p) => [p.partition, p.replicas.length, p.isr.length])).toEqual([
      [0, 1, 1],
      [1, 1, 1],
    ]);
    expect(d.partitions[0]!.leader).toMatchObject({ host: '127.0.0.1' });
    expect(d.authorizedOperations).toEqual(expect.arrayContaining(['READ', 'WRITE', 'DESCRIBE', 'DELETE', 'ALTER_CONFIGS']));
    expect(() => described.get(dry)).toThrow(UnknownTopicOrPartitionError);
    const byId = await a.describeTopics({ topicIds: [info.topicId, 'AAAAAAAAAAAAAAAAAAAAAQ'] });
    expect(byId.get(info.topicId).name).toBe(orders);
    expect(() => byId.get('AAAAAAAAAAAAAAAAAAAAAQ')).toThrow(UnknownTopicIdError);

    const listed = await a.listTopics();
    expect(listed.get(orders)).toEqual({ name: orders, topicId: info.topicId, isInternal: false });
    expect([...listed.values()].every((t) => !t.isInternal)).toBe(true);
    const withInternal = await a.listTopics({ listInternal: true });
    expect([...listed.keys()].every((name) => withInternal.has(name))).toBe(true);

    const grown = await a.createPartitions({ [orders]: { totalCount: 3 } });
    expect(grown.entries.get(orders)).toEqual({ ok: true, value: undefined });
    const shrunk = await a.createPartitions({ [orders]: { totalCount: 1 } });
    expect(() => shrunk.get(orders)).toThrow(InvalidPartitionsError);

    const deleted = await a.deleteTopics({ topicIds: [info.topicId] });
    expect(deleted.entries.get(info.topicId)).toEqual({ ok: true, value: undefined });
    const unknown = await a.deleteTopics([unique('never')]);
    expect([...unknown.errors().values()][0]).toBeInstanceOf(UnknownTopicOrPartitionError);
  });
});

describe('Admin describeTopics with DescribeTopicPartitions against Kafka 4.4', () => {
  it('pages through partitions with the cursor: every partition of every topic, in order', async () => {
    const a = admin();
    const [wide, narrow] = [unique('admin-wide'), unique('admin-narrow')];
    for (const [name, count] of [
      [wide, 5],
      [narrow, 2],
    ] as const) {
      (await a.createTopics([{ name, numPartitions: count }])).get(name);
      await visible(a, name);
    }
    const described = await a.describeTopics([wide, narrow, unique('absent')], { partitionSizeLimitPerResponse: 2 });
    expect(described.get(wide).partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3, 4]);
    expect(described.get(narrow).partitions.map((p) => p.partition)).toEqual([0, 1]);
    expect(described.get(wide).partitions[4]).toMatchObject({ elr: [], lastKnownElr: [], offlineReplicas: [] });
    expect(described.get(wide).partitions[4]!.leader?.port).toBeGreaterThan(0);
    expect([...described.errors().values()].map((e) => e.constructor.name)).toEqual(['UnknownTopicOrPartitionError']);
  });
});

describe('Admin configs against Kafka 4.4', () => {
  it('describes a topic, the broker and its loggers, and sets a share group’s configs by name', async () => {
    const a = admin();
    const topic = unique('admin-configs');
    (await a.createTopics([{ name: topic, numPartitions: 1, configs: { 'cleanup.policy': 'delete' } }])).get(topic);
    await visible(a, topic);
    const cluster = await a.describeCluster({ includeAuthorizedOperations: true });
    expect(cluster.nodes).toHaveLength(1);
    expect(cluster.clusterId).toEqual(expect.any(String));
    expect(cluster.authorizedOperations).toEqual(expect.arrayContaining(['DESCRIBE', 'ALTER', 'CREATE']));
    const nodeId = String(cluster.nodes[0]!.id);

    const t: ConfigResource = { type: 'TOPIC', name: topic };
    const broker: ConfigResource = { type: 'BROKER', name: nodeId };
    const loggers: ConfigResource = { type: 'BROKER_LOGGER', name: nodeId };
    const described = await a.describeConfigs([t, broker, loggers], { includeSynonyms: true, includeDocumentation: true });
    expect(described.errors()).toEqual(new Map());
    const policy = described.get(t).get('cleanup.policy')!;
    expect(policy).toMatchObject({ value: 'delete', source: 'DYNAMIC_TOPIC_CONFIG', type: 'LIST' });
    expect(policy.synonyms.map((s) => s.source)).toContain('DEFAULT_CONFIG');
    expect(policy.documentation).toEqual(expect.any(String));
    expect(described.get(broker).get('process.roles')).toMatchObject({ isReadOnly: true });
    expect(described.get(loggers).entries.length).toBeGreaterThan(0);

    (await a.incrementalAlterConfigs([[t, [{ name: 'cleanup.policy', value: 'compact', opType: 'APPEND' }]]])).get(t);
    expect((await a.describeConfigs([t])).get(t).get('cleanup.policy')?.value).toBe('delete,compact');
    (await a.incrementalAlterConfigs([[t, [{ name: 'cleanup.policy', value: 'delete', opType: 'SUBTRACT' }]]])).get(t);
    expect((await a.describeConfigs([t])).get(t).get('cleanup.policy')?.value).toBe('compact');

    const group: ConfigResource = { type: 'GROUP', name: unique('admin-share') };
    const set = await a.incrementalAlterConfigs([
      [
        group,
        [
          { name: 'share.auto.offset.reset', value: 'earliest', opType: 'SET' },
          { name: 'share.isolation.level', value: 'read_committed', opType: 'SET' },
        ],
      ],
    ]);
    expect(set.entries.get(group)).toEqual({ ok: true, value: undefined });
    const config = (await a.describeConfigs([group])).get(group);
    expect(config.get('share.auto.offset.reset')).toMatchObject({ value: 'earliest', source: 'DYNAMIC_GROUP_CONFIG' });
    expect(config.get('share.isolation.level')).toMatchObject({ value: 'read_committed', source: 'DYNAMIC_GROUP_CONFIG' });
  });
});

describe('Admin ACLs against Kafka 4.4', () => {
  it('grants alice a topic prefix, which her Admin then sees entry by entry; describes and deletes the bindings', async () => {
    const root = admin();
    const k = kafka();
    const alice = k.saslSsl.users.find((u) => u.username === 'alice')!;
    const prefix = unique('alice-admin');
    const mine = `${prefix}-mine`;
    const theirs = unique('not-alice');
    const grant: AclBinding = {
      pattern: { resourceType: 'TOPIC', name: prefix, patternType: 'PREFIXED' },
      entry: { principal: 'User:alice', host: '*', operation: 'ALL', permissionType: 'ALLOW' },
    };
    (await root.createAcls([grant])).all();
    const filter: AclBindingFilter = {
      patternFilter: { resourceType: 'TOPIC', name: prefix, patternType: 'ANY' },
      entryFilter: { principal: null, host: null, operation: 'ANY', permissionType: 'ANY' },
    };
    // The StandardAuthorizer applies new ACLs from the metadata log: wait until alice may create.
    const aliceAdmin = admin(alice);
    let created = await aliceAdmin.createTopics([
      { name: mine, numPartitions: 1 },
      { name: theirs, numPartitions: 1 },
    ]);
    expect(() => created.get(theirs)).toThrow(TopicAuthorizationError);
    for (let i = 0; i < 50 && created.errors().has(mine); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      created = await aliceAdmin.createTopics([{ name: mine, numPartitions: 1 }]);
    }
    expect(created.get(mine).numPartitions).toBe(1);
    (await root.createTopics([{ name: theirs, numPartitions: 1 }])).get(theirs);
    await visible(root, theirs);
    await visible(root, mine);
    const described = await aliceAdmin.describeTopics([mine, theirs]);
    expect(described.get(mine).name).toBe(mine);
    expect(() => described.get(theirs)).toThrow(TopicAuthorizationError);

    expect(await root.describeAcls(filter)).toEqual([grant]);
    const deleted = await root.deleteAcls([filter]);
    expect(deleted.get(filter)).toEqual([{ binding: grant, error: null }]);
    expect(await root.describeAcls(filter)).toEqual([]);
  });
});

describe('Admin listOffsets against Kafka 4.4', () => {
  it('answers earliest, latest, max timestamp, a timestamp and read_committed from the leader', async () => {
    const a = admin();
    const topic = unique('admin-offsets');
    (await a.createTopics([{ name: topic, numPartitions: 1 }])).get(topic);
    await visible(a, topic);
    const p = cleanups.track(new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, logger: null, metricsRegistry: null }), (x) =>
      x.close(2_000),
    );
    for (let i = 0; i < 3; i++) await p.send({ topic, partition: 0, value: `v${i}`, timestamp: 10_000 + i * 1_000 });
    const tp = { topic, partition: 0 };
    const at = async (spec: OffsetSpec, isolationLevel?: 'READ_COMMITTED'): Promise<unknown> =>
      (await a.listOffsets([[tp, spec]], isolationLevel ? { isolationLevel } : {})).get(tp);
    expect(await at(OffsetSpec.earliest())).toMatchObject({ offset: 0n });
    expect(await at(OffsetSpec.latest())).toMatchObject({ offset: 3n, leaderEpoch: 0 });
    expect(await at(OffsetSpec.latest(), 'READ_COMMITTED')).toMatchObject({ offset: 3n });
    expect(await at(OffsetSpec.maxTimestamp())).toMatchObject({ offset: 2n, timestamp: 12_000n });
    expect(await at(OffsetSpec.forTimestamp(10_500))).toMatchObject({ offset: 1n, timestamp: 11_000n });
    expect(await at(OffsetSpec.earliestLocal())).toMatchObject({ offset: 0n });
    const missing = { topic: unique('absent'), partition: 0 };
    const result = await a.listOffsets([[missing, OffsetSpec.latest()]]);
    expect(() => result.get(missing)).toThrow(UnknownTopicOrPartitionError);
  });
});
