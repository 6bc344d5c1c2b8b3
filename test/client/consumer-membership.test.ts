/**
 * ConsumerMembershipManager (`group.protocol=consumer`, KIP-848) against our
 * broker: members get disjoint assignments that cover the topic, a joining
 * member gets its partitions only after their owners revoked them, a member
 * that leaves hands its partitions over, and a member removed from the group
 * loses its partitions (onPartitionsLost) and joins again. The broker's
 * consumer.heartbeat.interval.ms is 5 s (its minimum), so each step takes a
 * few heartbeats.
 */
import { afterEach, beforeAll, describe } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';
import { membershipScenarios, TestGroup } from './support/consumer-members.js';

const TOPIC = 'cm-topic';
const PARTITIONS = 6;

let broker: Broker;
let group: TestGroup | undefined;

beforeAll(async () => {
  broker = await startTestBroker({ dataDir: tempDir('kipgen-cm-'), topics: [{ name: TOPIC, partitions: PARTITIONS }] });
  return () => broker.close();
});

afterEach(async () => {
  await group?.close();
  group = undefined;
});

let groups = 0;
const newGroup = (): TestGroup => (group = new TestGroup(`127.0.0.1:${broker.port}`, `cm-group-${++groups}`, TOPIC));

describe('ConsumerMembershipManager against our broker', () => membershipScenarios({ partitions: PARTITIONS, newGroup }));
