/**
 * group.consumer.heartbeat.interval.ms and group.consumer.min.heartbeat.interval.ms
 * (Kafka's GroupCoordinatorConfig): the broker's interval is what a KIP-848
 * member is told to heartbeat at; a group's consumer.heartbeat.interval.ms
 * overrides it within [min, 15000] (Kafka's GroupConfig.validateValues), and
 * the broker refuses settings out of order at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { resolveConfig } from '../../coordinator/config.js';
import { startTestBroker, tempDir, TestClient } from './support/broker-harness.js';

let broker: Broker;
let client: TestClient;

beforeAll(async () => {
  broker = await startTestBroker({
    dataDir: tempDir('kipgen-hbi-'),
    topics: [{ name: 't', partitions: 1 }],
    groupConsumerHeartbeatIntervalMs: 300,
    groupConsumerMinHeartbeatIntervalMs: 100,
  });
  client = await TestClient.connect(broker.port);
});
afterAll(async () => {
  await client?.close();
  await broker?.close();
});

const join = (groupId: string) =>
  client.call(
    68,
    {
      groupId,
      memberId: `m-${groupId}`,
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['t'],
      serverAssignor: null,
      topicPartitions: [],
    },
    0,
  );

const alterGroup = async (groupId: string, value: string) => {
  const r = await client.call(
    44,
    {
      resources: [{ resourceType: 32, resourceName: groupId, configs: [{ name: 'consumer.heartbeat.interval.ms', configOperation: 0, value }] }],
      validateOnly: false,
    },
    1,
  );
  return r.responses[0] as { errorCode: number; errorMessage: string | null };
};

describe('the broker’s KIP-848 heartbeat interval settings', () => {
  it('a member of a group without its own config heartbeats at group.consumer.heartbeat.interval.ms', async () => {
    expect(await join('plain')).toMatchObject({ errorCode: 0, heartbeatIntervalMs: 300 });
  });

  it('a group’s consumer.heartbeat.interval.ms between the broker’s minimum and 15000 is taken; below or above is INVALID_CONFIG', async () => {
    expect((await alterGroup('own', '150')).errorCode).toBe(0);
    expect(await join('own')).toMatchObject({ errorCode: 0, heartbeatIntervalMs: 150 });
    const low = await alterGroup('low', '50');
    expect(low.errorCode).toBe(40);
    expect(low.errorMessage).toMatch(
      /consumer\.heartbeat\.interval\.ms must be greater than or equal to group\.consumer\.min\.heartbeat\.interval\.ms \(100\)/,
    );
    const high = await alterGroup('high', '15001');
    expect(high.errorCode).toBe(40);
    expect(high.errorMessage).toMatch(/group\.consumer\.max\.heartbeat\.interval\.ms \(15000\)/);
  });

  it('Kafka’s defaults are 5000 and 5000; an interval below the minimum is refused at start, naming the setting', () => {
    const defaults = resolveConfig({});
    expect([defaults.groupConsumerHeartbeatIntervalMs, defaults.groupConsumerMinHeartbeatIntervalMs]).toEqual([5_000, 5_000]);
    expect(() => resolveConfig({ groupConsumerHeartbeatIntervalMs: 1_000 })).toThrow(/groupConsumerHeartbeatIntervalMs must be an integer in \[5000, 15000\]/);
    expect(() => resolveConfig({ groupConsumerMinHeartbeatIntervalMs: 0 })).toThrow(/groupConsumerMinHeartbeatIntervalMs/);
  });
});
