/**
 * Admin.describeConfigs and incrementalAlterConfigs against a real two-node
 * kipgen cluster: TOPIC configs with synonyms and documentation, a named
 * BROKER resource answered by that broker (each kipgen node describes only
 * itself, so a wrong route would be refused), share group configs set by name
 * on a GROUP resource, SET / DELETE / APPEND / SUBTRACT, validateOnly, and
 * per-resource errors (an unknown topic, an invalid value, BROKER_LOGGER).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin } from '../../client/admin.js';
import { InvalidConfigurationError, InvalidRequestError, KafkaTimeoutError, UnknownTopicOrPartitionError, type ConfigResource } from '../../client/index.js';
import { startCluster, type TestCluster } from './support/brokers.js';

let cluster: TestCluster;
let admin: Admin;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 2 });
  admin = new Admin({ bootstrapServers: cluster.bootstrap, logger: null, defaultApiTimeoutMs: 10_000 });
  (await admin.createTopics([{ name: 'configured', numPartitions: 1, configs: { 'retention.ms': '120000' } }])).get('configured');
});

afterAll(async () => {
  await admin?.close();
  await cluster?.close();
});

describe('describeConfigs', () => {
  it('describes a topic with sources, types, synonyms and documentation; an unknown topic is its own entry', async () => {
    const topic: ConfigResource = { type: 'TOPIC', name: 'configured' };
    const absent: ConfigResource = { type: 'TOPIC', name: 'absent' };
    const result = await admin.describeConfigs([topic, absent], { includeSynonyms: true, includeDocumentation: true });
    const retention = result.get(topic).get('retention.ms')!;
    expect(retention).toMatchObject({ value: '120000', source: 'DYNAMIC_TOPIC_CONFIG', type: 'LONG', isSensitive: false, isReadOnly: false });
    expect(retention.synonyms[0]).toEqual({ name: 'retention.ms', value: '120000', source: 'DYNAMIC_TOPIC_CONFIG' });
    expect(retention.documentation).toEqual(expect.any(String));
    expect(result.get(topic).get('cleanup.policy')).toMatchObject({ source: 'DEFAULT_CONFIG', type: 'LIST' });
    expect(() => result.get(absent)).toThrow(UnknownTopicOrPartitionError);
  });

  it('sends a named BROKER resource to that broker, and the cluster defaults ("") to any', async () => {
    const node1: ConfigResource = { type: 'BROKER', name: '1' };
    const node0: ConfigResource = { type: 'BROKER', name: '0' };
    const defaults: ConfigResource = { type: 'BROKER', name: '' };
    const result = await admin.describeConfigs([node1, node0, defaults]);
    expect(result.errors()).toEqual(new Map());
    expect(result.get(node1).entries.length).toBeGreaterThan(0);
    expect(result.get(node1).entries.every((e) => e.source === 'STATIC_BROKER_CONFIG' && e.isReadOnly)).toBe(true);
    expect(result.get(defaults).entries.every((e) => e.source === 'DEFAULT_CONFIG')).toBe(true);
  });

  it('a broker the cluster does not have times out alone (Kafka waits for it in the metadata); the others are answered', async () => {
    const topic: ConfigResource = { type: 'TOPIC', name: 'configured' };
    const ghost: ConfigResource = { type: 'BROKER', name: '7' };
    const result = await admin.describeConfigs([topic, ghost], { timeoutMs: 1_000 });
    expect(result.get(topic).get('retention.ms')?.value).toBe('120000');
    expect(() => result.get(ghost)).toThrow(KafkaTimeoutError);
    expect(() => result.get(ghost)).toThrow(/broker 7 is not in the cluster's metadata/);
  });

  it('BROKER_LOGGER, which kipgen does not serve, fails its entry; a broker name that is no id is a bad argument', async () => {
    const logger: ConfigResource = { type: 'BROKER_LOGGER', name: '0' };
    const result = await admin.describeConfigs([logger]);
    expect(() => result.get(logger)).toThrow(InvalidRequestError);
    await expect(admin.describeConfigs([{ type: 'BROKER', name: 'node-1' }])).rejects.toThrow(/BROKER node-1: a BROKER resource is named by a broker id/);
  });
});

describe('incrementalAlterConfigs', () => {
  it("sets a share group's configs by name, then deletes one back to the broker's default", async () => {
    const group: ConfigResource = { type: 'GROUP', name: 'kip1289-job' };
    const set = await admin.incrementalAlterConfigs([
      [
        group,
        [
          { name: 'share.auto.offset.reset', value: 'earliest', opType: 'SET' },
          { name: 'share.isolation.level', value: 'read_committed', opType: 'SET' },
          { name: 'share.record.lock.duration.ms', value: '20000', opType: 'SET' },
        ],
      ],
    ]);
    expect(set.entries.get(group)).toEqual({ ok: true, value: undefined });
    let config = (await admin.describeConfigs([group])).get(group);
    expect(config.get('share.auto.offset.reset')).toMatchObject({ value: 'earliest', source: 'DYNAMIC_GROUP_CONFIG' });
    expect(config.get('share.isolation.level')).toMatchObject({ value: 'read_committed', source: 'DYNAMIC_GROUP_CONFIG' });
    expect(config.get('share.record.lock.duration.ms')?.value).toBe('20000');

    (await admin.incrementalAlterConfigs(new Map([[group, [{ name: 'share.record.lock.duration.ms', opType: 'DELETE' }]]]))).get(group);
    config = (await admin.describeConfigs([group])).get(group);
    expect(config.get('share.record.lock.duration.ms')).toMatchObject({ value: '30000', source: 'DEFAULT_CONFIG' });
    expect(config.get('share.isolation.level')?.value).toBe('read_committed');
  });

  it('APPENDs to and SUBTRACTs from a list config; validateOnly changes nothing', async () => {
    const topic: ConfigResource = { type: 'TOPIC', name: 'configured' };
    const policy = async (): Promise<string | null | undefined> => (await admin.describeConfigs([topic])).get(topic).get('cleanup.policy')?.value;
    (await admin.incrementalAlterConfigs([[topic, [{ name: 'cleanup.policy', value: 'compact', opType: 'APPEND' }]]])).get(topic);
    expect(await policy()).toBe('delete,compact');
    (await admin.incrementalAlterConfigs([[topic, [{ name: 'cleanup.policy', value: 'delete', opType: 'SUBTRACT' }]]], { validateOnly: true })).get(topic);
    expect(await policy()).toBe('delete,compact');
    (await admin.incrementalAlterConfigs([[topic, [{ name: 'cleanup.policy', value: 'delete', opType: 'SUBTRACT' }]]])).get(topic);
    expect(await policy()).toBe('compact');
  });

  it('one resource failing does not fail the others; a named broker is altered at that broker', async () => {
    const good: ConfigResource = { type: 'GROUP', name: 'other-job' };
    const bad: ConfigResource = { type: 'GROUP', name: 'bad-job' };
    const broker1: ConfigResource = { type: 'BROKER', name: '1' };
    const result = await admin.incrementalAlterConfigs([
      [good, [{ name: 'share.isolation.level', value: 'read_committed', opType: 'SET' }]],
      [bad, [{ name: 'share.isolation.level', value: 'sometimes', opType: 'SET' }]],
      [broker1, [{ name: 'log.retention.ms', value: '1000', opType: 'SET' }]],
    ]);
    expect(result.entries.get(good)).toEqual({ ok: true, value: undefined });
    expect(() => result.get(bad)).toThrow(InvalidConfigurationError);
    // Node 1 itself answers that its settings are static; node 0 would have refused the id.
    expect(() => result.get(broker1)).toThrow(/Cannot update these configs dynamically/);
    expect([...result.entries.keys()]).toEqual([good, bad, broker1]);
  });

  it('refuses an opType Kafka does not have, naming the resource and config', async () => {
    const topic: ConfigResource = { type: 'TOPIC', name: 'configured' };
    await expect(admin.incrementalAlterConfigs([[topic, [{ name: 'retention.ms', value: '1', opType: 'REPLACE' as 'SET' }]]])).rejects.toThrow(
      /incrementalAlterConfigs of TOPIC configured: config retention.ms: opType must be one of SET, DELETE, APPEND, SUBTRACT/,
    );
  });
});
