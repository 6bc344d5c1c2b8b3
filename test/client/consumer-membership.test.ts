/**
 * ConsumerMembershipManager (`group.protocol=consumer`, KIP-848) against our
 * broker: members get disjoint assignments that cover the topic, a joining
 * member gets its partitions only after their owners revoked them, a member
 * that leaves hands its partitions over, and a member removed from the group
 * loses its partitions (onPartitionsLost) and joins again; and (here only)
 * a member that stops polling for max.poll.interval.ms leaves, then loses its
 * partitions and rejoins at its next poll(); a changed subscription; an
 * error no retry fixes reaching poll(). The broker's
 * group.consumer.heartbeat.interval.ms is 200 ms (Kafka's default, and
 * minimum, is 5 s), so the few heartbeats each step takes are quick.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';
import { membershipScenarios, TestGroup } from './support/consumer-members.js';

const TOPIC = 'cm-topic';
const PARTITIONS = 6;
const OTHER = 'cm-other';

let broker: Broker;
let group: TestGroup | undefined;

beforeAll(async () => {
  broker = await startTestBroker({
    dataDir: tempDir('kipgen-cm-'),
    groupConsumerHeartbeatIntervalMs: 200,
    groupConsumerMinHeartbeatIntervalMs: 100,
    topics: [
      { name: TOPIC, partitions: PARTITIONS },
      { name: OTHER, partitions: 2 },
    ],
  });
  return () => broker.close();
});

afterEach(async () => {
  await group?.close();
  group = undefined;
});

let groups = 0;
const newGroup = (): TestGroup => (group = new TestGroup(`127.0.0.1:${broker.port}`, `cm-group-${++groups}`, TOPIC));

describe('ConsumerMembershipManager against our broker', () => {
  membershipScenarios({ partitions: PARTITIONS, newGroup });

  it('leaves the group when poll() is not called within max.poll.interval.ms, and rejoins at the next poll() after losing its partitions', async () => {
    const g = newGroup();
    const a = g.join('a', { rebalanceTimeoutMs: 1_500 });
    g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(PARTITIONS, [3, 3]));
    const owned = a.keys();
    g.paused.add('a');
    // a leaves on its own (its heartbeat loop sees the expired poll timer), so b gets everything.
    await g.until('b owns all 6', () => g.members.get('b')!.keys().length === PARTITIONS);
    expect(a.membership.state).toBe('STALE');
    // Nothing was given up yet: the application has not polled.
    expect(g.events.filter((e) => e.member === 'a' && e.hook === 'lost')).toEqual([]);
    g.paused.delete('a');
    await g.until('a rejoined with its share', () => g.covers(PARTITIONS, [3, 3]));
    const lost = g.events.filter((e) => e.member === 'a' && e.hook === 'lost');
    expect(lost.map((e) => e.partitions)).toEqual([owned]);
    expect(g.errors).toEqual([]);
  }, 90_000);

  it('a new subscription revokes the old topic’s partitions and assigns the new one’s', async () => {
    const g = newGroup();
    const a = g.join('a');
    await g.until('all 6 partitions', () => g.covers(PARTITIONS, [PARTITIONS]));
    const mark = g.events.length;
    a.membership.subscribe([OTHER]);
    await g.until('the other topic', () => a.keys().join() === `${OTHER}-0,${OTHER}-1`);
    const events = g.events.slice(mark);
    // The coordinator first keeps only what stays (nothing), then, once that is acknowledged, gives the new topic:
    // two reconciliations, each ending with onPartitionsAssigned, as Kafka calls the listener after every one.
    expect(events.map((e) => [e.hook, e.partitions.length])).toEqual([
      ['revoked', PARTITIONS],
      ['assigned', 0],
      ['assigned', 2],
    ]);
    expect(g.errors).toEqual([]);
  }, 60_000);

  it('an error no retry fixes (UNSUPPORTED_ASSIGNOR) reaches poll() and stops the heartbeats', async () => {
    const g = newGroup();
    const a = g.join('a', { serverAssignor: 'no-such-assignor' });
    await g.until('the error', () => g.errors.length > 0);
    expect(g.errors[0]).toMatch(/^a: .*UNSUPPORTED_ASSIGNOR.*no-such-assignor/);
    expect(a.membership.state).toBe('FATAL');
    expect(a.keys()).toEqual([]);
  }, 60_000);
});
