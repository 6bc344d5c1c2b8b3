/**
 * ConsumerMembershipManager (`group.protocol=consumer`, KIP-848) against
 * Kafka 4.4's group coordinator, which serves the consumer protocol by
 * default: the scenarios test/client/consumer-membership.test.ts runs against
 * our broker (disjoint covering assignments, revoke before assign when a
 * member joins, a member leaving, a member removed behind its back losing its
 * partitions and rejoining, a regular-expression subscription), here with Kafka's uniform assignor and
 * reconciliation. The harness sets Kafka's group.consumer.heartbeat.interval.ms
 * to 200 ms (its default, and minimum, is 5 s), so the few heartbeats each
 * step takes are quick.
 */
import { afterEach, beforeAll, describe } from 'vitest';
import { membershipScenarios, TestGroup } from '../client/support/consumer-members.js';
import { createTopic, kafka, unique } from './support/cluster.js';

const PARTITIONS = 6;
let topic: string;
let group: TestGroup | undefined;

beforeAll(async () => {
  topic = unique('cm-topic');
  await createTopic(kafka(), topic, PARTITIONS);
});

afterEach(async () => {
  await group?.close();
  group = undefined;
});

const newGroup = (): TestGroup => (group = new TestGroup(kafka().bootstrap, unique('cm-group'), topic));

describe('ConsumerMembershipManager against Kafka 4.4', () => membershipScenarios({ partitions: PARTITIONS, newGroup }));
