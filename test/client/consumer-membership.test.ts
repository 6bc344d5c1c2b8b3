/**
 * ConsumerMembershipManager (`group.protocol=consumer`, KIP-848) against our
 * broker: members get disjoint assignments that cover the topic, a joining
 * member gets its partitions only after their owners revoked them, a member
 * that leaves hands its partitions over, and a member removed from the group
 * loses its partitions (onPartitionsLost) and joins again. The broker's
 * consumer.heartbeat.interval.ms is 5 s (its minimum), so each step takes a
 * few heartbeats.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';
import { TestGroup } from './support/consumer-members.js';

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

describe('ConsumerMembershipManager against our broker', () => {
  it('gives two members disjoint assignments covering every partition, with the member epoch as the generation', async () => {
    const g = newGroup();
    const a = g.join('a');
    const b = g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(PARTITIONS, [3, 3]));
    for (const m of [a, b]) {
      const meta = m.membership.groupMetadata();
      expect(meta).toEqual({ groupId: g.groupId, generationId: m.membership.epoch, memberId: m.membership.memberId, groupInstanceId: null });
      expect(meta.generationId).toBeGreaterThan(0);
    }
    expect(g.doubleOwned).toEqual([]);
    expect(g.errors).toEqual([]);
  }, 60_000);

  it('moves partitions to a third member through revoke, then assign', async () => {
    const g = newGroup();
    g.join('a');
    g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(PARTITIONS, [3, 3]));
    const before = g.assignments();
    const mark = g.events.length;
    g.join('c');
    await g.until('2 + 2 + 2 partitions', () => g.covers(PARTITIONS, [2, 2, 2]));
    const gained = g.assignments().c!;
    expect(gained).toHaveLength(2);
    const events = g.events.slice(mark);
    for (const key of gained) {
      const previousOwner = before.a!.includes(key) ? 'a' : 'b';
      const revoked = events.find((e) => e.member === previousOwner && e.hook === 'revoked' && e.partitions.includes(key));
      const assigned = events.find((e) => e.member === 'c' && e.hook === 'assigned' && e.partitions.includes(key));
      expect(revoked, `${key} revoked by ${previousOwner}`).toBeDefined();
      expect(assigned, `${key} assigned to c`).toBeDefined();
      expect(revoked!.seq).toBeLessThan(assigned!.seq);
    }
    // a and b kept the rest: nothing else was revoked, and nothing was lost.
    const revokedKeys = events.filter((e) => e.hook === 'revoked').flatMap((e) => e.partitions);
    expect(revokedKeys.sort()).toEqual([...gained].sort());
    expect(events.filter((e) => e.hook === 'lost')).toEqual([]);
    expect(g.doubleOwned).toEqual([]);
    expect(g.errors).toEqual([]);
  }, 90_000);

  it('hands a leaving member’s partitions to the others after it revoked them', async () => {
    const g = newGroup();
    g.join('a');
    g.join('b');
    g.join('c');
    await g.until('2 + 2 + 2 partitions', () => g.covers(PARTITIONS, [2, 2, 2]));
    const leaving = g.assignments().c!;
    const mark = g.events.length;
    await g.leave('c');
    const events = (): typeof g.events => g.events.slice(mark);
    const revokedOnLeave = events().find((e) => e.member === 'c' && e.hook === 'revoked');
    expect(revokedOnLeave?.partitions).toEqual(leaving);
    expect(g.members.get('c')!.membership.state).toBe('UNSUBSCRIBED');
    expect(g.members.get('c')!.membership.groupMetadata().generationId).toBe(-1);
    await g.until('3 + 3 partitions', () => g.covers(PARTITIONS, [3, 3]));
    for (const key of leaving) {
      const assigned = events().find((e) => e.member !== 'c' && e.hook === 'assigned' && e.partitions.includes(key));
      expect(assigned, `${key} assigned to a or b`).toBeDefined();
      expect(assigned!.seq).toBeGreaterThan(revokedOnLeave!.seq);
    }
    expect(g.doubleOwned).toEqual([]);
    expect(g.errors).toEqual([]);
  }, 90_000);

  it('a member removed from the group loses its partitions through onPartitionsLost and joins again', async () => {
    const g = newGroup();
    const a = g.join('a');
    g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(PARTITIONS, [3, 3]));
    const owned = a.keys();
    const epochBefore = a.membership.epoch;
    const mark = g.events.length;
    await g.removeBehindItsBack('a');
    await g.until('a lost its partitions', () => g.events.some((e) => e.member === 'a' && e.hook === 'lost'));
    const lost = g.events.find((e) => e.member === 'a' && e.hook === 'lost')!;
    expect(lost.seq).toBeGreaterThanOrEqual(mark);
    expect(lost.partitions).toEqual(owned);
    // Lost, not revoked: no commit may follow for partitions another member may already own.
    expect(g.events.slice(mark).filter((e) => e.member === 'a' && e.hook === 'revoked')).toEqual([]);
    await g.until('a rejoined with its share', () => g.covers(PARTITIONS, [3, 3]) && a.keys().length === 3);
    expect(a.membership.epoch).toBeGreaterThan(epochBefore);
    expect(a.membership.groupMetadata().memberId).toBe(a.membership.memberId);
    // The coordinator gave a's partitions to b as soon as a was removed; until a's next heartbeat told it, a still
    // believed it owned them. That window is what onPartitionsLost (no commit) is for, and it closes there.
    for (const d of g.doubleOwned) {
      expect(d.owner).toBe('a');
      expect(owned).toContain(d.partition);
      expect(d.seq).toBeLessThan(lost.seq);
    }
    expect(g.errors).toEqual([]);
  }, 90_000);
});
