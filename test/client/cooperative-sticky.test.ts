/**
 * CooperativeStickyAssignor (Kafka's CooperativeStickyAssignor over
 * AbstractStickyAssignor), with rebalances played out as a classic group
 * plays them: each member subscribes with what it owns and the generation,
 * the leader assigns, members that revoked something rejoin at once and the
 * group rebalances again, until nothing changes.
 *
 * Properties (fast-check): every partition assigned exactly once, to a
 * member subscribed to its topic; counts within 1 of each other when all
 * subscriptions are equal; sticky (a member keeps what it owned up to its
 * share, and an unchanged group moves nothing); the cooperative rule (a
 * partition another member owned is never given to a new owner in the same
 * rebalance).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemberSubscription } from '../../client/consumer/assignors/assignor.js';
import { CooperativeStickyAssignor, decodeGenerationUserData, encodeGenerationUserData } from '../../client/consumer/assignors/cooperative-sticky.js';
import { topicPartitionKey, type TopicPartition } from '../../client/consumer/topic-partition.js';

type Owned = Map<string, TopicPartition[]>;

interface Round {
  assignment: Owned;
  /** Partitions given to a member that another member owned when the round began: must be empty. */
  directTransfers: string[];
}

interface Group {
  partitionsPerTopic: Map<string, number>;
  /** Member id → its topics. */
  subscriptions: Map<string, string[]>;
  /** Generation carried in the subscription field (v2+) or only in the user data (v0/v1). */
  generationInField: boolean;
}

/** One rebalance: every member sends its subscription (owned partitions, generation), the leader assigns. */
function rebalance(group: Group, owned: Owned, generation: number): Round {
  const subscriptions = new Map<string, MemberSubscription>();
  for (const [id, topics] of group.subscriptions) {
    const memberAssignor = new CooperativeStickyAssignor();
    memberAssignor.onAssignment({ partitions: owned.get(id) ?? [], userData: null }, generation);
    subscriptions.set(id, {
      topics,
      userData: memberAssignor.subscriptionUserData(),
      ownedPartitions: owned.get(id) ?? [],
      groupInstanceId: null,
      generationId: group.generationInField ? generation : -1,
      rackId: null,
    });
  }
  const result = new CooperativeStickyAssignor().assign(group.partitionsPerTopic, subscriptions);
  const assignment: Owned = new Map([...result].map(([id, a]) => [id, a.partitions]));
  const ownerBefore = new Map<string, string>();
  for (const [id, tps] of owned) if (group.subscriptions.has(id)) for (const tp of tps) ownerBefore.set(topicPartitionKey(tp), id);
  const directTransfers: string[] = [];
  for (const [id, tps] of assignment) {
    for (const tp of tps) {
      const before = ownerBefore.get(topicPartitionKey(tp));
      if (before !== undefined && before !== id) directTransfers.push(`${topicPartitionKey(tp)}: ${before} → ${id}`);
    }
  }
  return { assignment, directTransfers };
}

/** Rebalances until the assignment stops changing (members that revoked rejoin at once); every round checked. */
function settle(group: Group, owned: Owned, generation: number): { assignment: Owned; rounds: Round[]; generation: number } {
  const rounds: Round[] = [];
  let current = owned;
  for (let i = 0; i < 5; i++) {
    const round = rebalance(group, current, ++generation);
    rounds.push(round);
    if (same(round.assignment, current, group)) return { assignment: round.assignment, rounds, generation };
    current = round.assignment;
  }
  throw new Error(`no stable assignment after 5 rebalances: ${JSON.stringify([...current])}`);
}

function same(a: Owned, b: Owned, group: Group): boolean {
  return [...group.subscriptions.keys()].every((id) => keys(a.get(id)).join() === keys(b.get(id)).join());
}

const keys = (tps: readonly TopicPartition[] | undefined): string[] => (tps ?? []).map(topicPartitionKey).sort();

/** Every partition of a topic someone subscribes to exactly once, each to a subscriber of its topic. */
function checkValid(group: Group, assignment: Owned, complete: boolean): void {
  const seen = new Map<string, string>();
  for (const [id, tps] of assignment) {
    for (const tp of tps) {
      const key = topicPartitionKey(tp);
      expect(seen.get(key), `${key} assigned twice`).toBeUndefined();
      seen.set(key, id);
      expect(group.subscriptions.get(id), `${key} to ${id}, not subscribed`).toContain(tp.topic);
    }
  }
  if (!complete) return;
  const subscribed = new Set([...group.subscriptions.values()].flat());
  const expected = [...group.partitionsPerTopic].filter(([t]) => subscribed.has(t)).reduce((n, [, count]) => n + count, 0);
  expect(seen.size).toBe(expected);
}

const topicsArb = fc
  .uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e-1'), { minLength: 1, maxLength: 4 })
  .chain((names) => fc.tuple(...names.map((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: 8 })))))
  .map((entries) => new Map(entries));

const memberIdsArb = fc.uniqueArray(fc.constantFrom('m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'), { minLength: 1, maxLength: 7 });

/** A group whose members all subscribe to every topic. */
const equalGroupArb = fc
  .record({ partitionsPerTopic: topicsArb, ids: memberIdsArb, generationInField: fc.boolean() })
  .map(({ partitionsPerTopic, ids, generationInField }): Group => ({
    partitionsPerTopic,
    subscriptions: new Map(ids.map((id) => [id, [...partitionsPerTopic.keys()]])),
    generationInField,
  }));

/** A group whose members subscribe to different topics (a non-empty subset each). */
const mixedGroupArb = fc
  .record({ partitionsPerTopic: topicsArb, ids: memberIdsArb, generationInField: fc.boolean() })
  .chain(({ partitionsPerTopic, ids, generationInField }) =>
    fc
      .tuple(...ids.map(() => fc.subarray([...partitionsPerTopic.keys()], { minLength: 1 })))
      .map((subs): Group => ({ partitionsPerTopic, subscriptions: new Map(ids.map((id, i) => [id, subs[i]!])), generationInField })),
  );

function counts(group: Group, assignment: Owned): number[] {
  return [...group.subscriptions.keys()].map((id) => assignment.get(id)?.length ?? 0);
}

describe('CooperativeStickyAssignor', () => {
  it('names itself, supports COOPERATIVE first, and writes the generation it was told as its user data (an INT32, as Kafka)', () => {
    const assignor = new CooperativeStickyAssignor();
    expect(assignor.name).toBe('cooperative-sticky');
    expect(assignor.supportedProtocols).toEqual(['COOPERATIVE', 'EAGER']);
    expect([...assignor.subscriptionUserData()]).toEqual([0xff, 0xff, 0xff, 0xff]);
    assignor.onAssignment({ partitions: [], userData: null }, 258);
    expect([...assignor.subscriptionUserData()]).toEqual([0, 0, 1, 2]);
    expect(decodeGenerationUserData(encodeGenerationUserData(7))).toBe(7);
    expect(decodeGenerationUserData(null)).toBeNull();
    expect(decodeGenerationUserData(new Uint8Array([1]))).toBe(-1);
  });

  it('every partition exactly once, to a subscriber, and the cooperative rule in every round (any subscriptions)', () => {
    fc.assert(
      fc.property(mixedGroupArb, mixedGroupArb, (first, second) => {
        // The same topics for the second group, so its members inherit partitions from the first.
        const next: Group = { ...second, partitionsPerTopic: first.partitionsPerTopic, subscriptions: resubscribe(second, first) };
        const start = settle(first, new Map(), 0);
        for (const round of start.rounds) {
          checkValid(first, round.assignment, false);
          expect(round.directTransfers).toEqual([]);
        }
        checkValid(first, start.assignment, true);
        const after = settle(next, start.assignment, start.generation);
        for (const round of after.rounds) {
          checkValid(next, round.assignment, false);
          expect(round.directTransfers).toEqual([]);
        }
        checkValid(next, after.assignment, true);
      }),
      { numRuns: 300 },
    );
  });

  it('balanced within 1 when subscriptions are equal, sticky up to the share, and moves nothing in an unchanged group', () => {
    fc.assert(
      fc.property(equalGroupArb, memberIdsArb, (group, laterIds) => {
        const start = settle(group, new Map(), 0);
        const c = counts(group, start.assignment);
        expect(Math.max(...c) - Math.min(...c)).toBeLessThanOrEqual(1);
        // Unchanged group: nothing moves.
        expect(keys([...rebalance(group, start.assignment, start.generation + 1).assignment.values()].flat())).toEqual(
          keys([...start.assignment.values()].flat()),
        );
        for (const [id, tps] of rebalance(group, start.assignment, start.generation + 1).assignment) expect(keys(tps)).toEqual(keys(start.assignment.get(id)));
        // Members come and go: each one that stays keeps what it owned, up to the new minimum share.
        const later: Group = { ...group, subscriptions: new Map(laterIds.map((id) => [id, [...group.partitionsPerTopic.keys()]])) };
        const after = settle(later, start.assignment, start.generation);
        const total = [...group.partitionsPerTopic.values()].reduce((a, b) => a + b, 0);
        const minQuota = Math.floor(total / laterIds.length);
        for (const id of laterIds) {
          const before = new Set(keys(start.assignment.get(id)));
          const kept = keys(after.assignment.get(id)).filter((k) => before.has(k)).length;
          expect(kept, `${id} kept ${kept} of ${before.size}`).toBeGreaterThanOrEqual(Math.min(before.size, minQuota));
        }
        const c2 = counts(later, after.assignment);
        expect(Math.max(...c2) - Math.min(...c2)).toBeLessThanOrEqual(1);
        for (const round of after.rounds) expect(round.directTransfers).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('a partition that changes owner is first revoked, then given in the next rebalance', () => {
    const group: Group = { partitionsPerTopic: new Map([['t', 4]]), subscriptions: new Map([['m0', ['t']]]), generationInField: true };
    const start = settle(group, new Map(), 0);
    expect(keys(start.assignment.get('m0'))).toEqual(['t-0', 't-1', 't-2', 't-3']);
    const two: Group = {
      ...group,
      subscriptions: new Map([
        ['m0', ['t']],
        ['m1', ['t']],
      ]),
    };
    const first = rebalance(two, start.assignment, start.generation + 1);
    // m0 keeps two; the two it gives up go to nobody yet.
    expect(first.assignment.get('m0')).toHaveLength(2);
    expect(first.assignment.get('m1')).toEqual([]);
    const second = rebalance(two, first.assignment, start.generation + 2);
    expect(keys(second.assignment.get('m0'))).toEqual(keys(first.assignment.get('m0')));
    expect(second.assignment.get('m1')).toHaveLength(2);
  });

  it('a partition claimed by two members: the higher generation keeps it; the same generation, neither directly', () => {
    const partitionsPerTopic = new Map([['t', 2]]);
    const sub = (owned: TopicPartition[], generationId: number): MemberSubscription => ({
      topics: ['t'],
      userData: null,
      ownedPartitions: owned,
      groupInstanceId: null,
      generationId,
      rackId: null,
    });
    const t0 = { topic: 't', partition: 0 };
    const t1 = { topic: 't', partition: 1 };
    const newer = new CooperativeStickyAssignor().assign(
      partitionsPerTopic,
      new Map([
        ['a', sub([t0], 3)],
        ['b', sub([t0, t1], 5)],
      ]),
    );
    // b (generation 5) owns both; the balance takes one from it for a, which a gets only after b revoked it.
    expect(newer.get('b')!.partitions).toHaveLength(1);
    expect(newer.get('a')!.partitions).toEqual([]);
    const clash = new CooperativeStickyAssignor().assign(
      partitionsPerTopic,
      new Map([
        ['a', sub([t0], 5)],
        ['b', sub([t0, t1], 5)],
      ]),
    );
    // t-0 was claimed twice in one generation: it goes to neither in this rebalance.
    expect([...clash.values()].flatMap((a) => a.partitions.map(topicPartitionKey))).not.toContain('t-0');
  });
});

/** `second`'s member ids with topics drawn from `first`'s topics (falling back to all of them). */
function resubscribe(second: Group, first: Group): Map<string, string[]> {
  const topics = [...first.partitionsPerTopic.keys()];
  return new Map(
    [...second.subscriptions].map(([id, subs]) => {
      const mine = subs.filter((t) => first.partitionsPerTopic.has(t));
      return [id, mine.length > 0 ? mine : topics];
    }),
  );
}
