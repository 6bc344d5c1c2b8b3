/**
 * Classic consumer groups over the wire against an in-process broker:
 * MEMBER_ID_REQUIRED, a two-member rebalance with the leader's assignment
 * relayed, rebalances on join, leave, session timeout and a member that does
 * not rejoin, fencing of stale generations and unknown members with Kafka's
 * errors, OffsetCommit/OffsetFetch, ListGroups/DescribeGroups/DeleteGroups;
 * and (in a child process) committed offsets and group metadata surviving kill -9.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { dumpLog } from '../../coordinator/tools/dump-log.js';
import { TestClient, spawnBroker, startTestBroker, tempDir } from './support/broker-harness.js';

const TIMINGS = { groupInitialRebalanceDelayMs: 100, groupMinSessionTimeoutMs: 100 };
let dataDir: string;
let broker: Broker;
let c: TestClient;
const lines: string[] = [];

beforeAll(async () => {
  dataDir = tempDir('kipgen-groups-');
  broker = await startTestBroker({ dataDir, topics: [{ name: 'orders', partitions: 4 }], ...TIMINGS }, lines);
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const META = (name: string) => new TextEncoder().encode(`subscription of ${name}`);
const ASSIGN = (name: string) => new TextEncoder().encode(`assignment for ${name}`);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

interface Joined {
  errorCode: number;
  generationId: number;
  leader: string;
  memberId: string;
  protocolName: string;
  members: { memberId: string; metadata: Uint8Array }[];
}

function join(client: TestClient, groupId: string, memberId: string, name: string, opts: { session?: number; rebalance?: number } = {}): Promise<Joined> {
  return client.call(
    11,
    {
      groupId,
      sessionTimeoutMs: opts.session ?? 10_000,
      rebalanceTimeoutMs: opts.rebalance ?? 5_000,
      memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: META(name) }],
      reason: null,
    },
    9,
  );
}

/** The two-step join of v4+: MEMBER_ID_REQUIRED, then the real join with the id given. */
async function firstJoin(
  client: TestClient,
  groupId: string,
  name: string,
  opts: { session?: number; rebalance?: number } = {},
): Promise<{ memberId: string; joined: Promise<Joined> }> {
  const first = await join(client, groupId, '', name, opts);
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  expect(first.memberId).toMatch(/^kipgen-test-.+/);
  return { memberId: first.memberId, joined: join(client, groupId, first.memberId, name, opts) };
}

const sync = (client: TestClient, groupId: string, memberId: string, generationId: number, assignments: { memberId: string; assignment: Uint8Array }[] = []) =>
  client.call(14, { groupId, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments }, 5);
const heartbeat = (client: TestClient, groupId: string, memberId: string, generationId: number): Promise<number> =>
  client.call(12, { groupId, generationId, memberId, groupInstanceId: null }, 4).then((r: any) => r.errorCode);
const commit = (client: TestClient, groupId: string, memberId: string, generation: number, offset: bigint) =>
  client
    .call(
      8,
      {
        groupId,
        generationIdOrMemberEpoch: generation,
        memberId,
        groupInstanceId: null,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
      },
      9,
    )
    .then((r: any) => r.topics[0].partitions[0].errorCode);
const fetchOffset = (client: TestClient, groupId: string) =>
  client
    .call(9, { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: [{ name: 'orders', partitionIndexes: [1] }] }], requireStable: true }, 9)
    .then((r: any) => r.groups[0].topics[0].partitions[0].committedOffset);

/** Joins two members (a, b) and completes the sync; returns their ids and the generation. */
async function stableGroup(groupId: string, a: TestClient, b: TestClient, session = 10_000) {
  const ja = await firstJoin(a, groupId, 'a', { session });
  const jb = await firstJoin(b, groupId, 'b', { session });
  const [ra, rb] = await Promise.all([ja.joined, jb.joined]);
  expect([ra.errorCode, rb.errorCode]).toEqual([0, 0]);
  expect(ra.generationId).toBe(rb.generationId);
  const leader = ra.leader === ra.memberId ? { c: a, r: ra } : { c: b, r: rb };
  const follower = leader.c === a ? { c: b, r: rb } : { c: a, r: ra };
  const followerSync = sync(follower.c, groupId, follower.r.memberId, follower.r.generationId);
  const leaderSync = sync(leader.c, groupId, leader.r.memberId, leader.r.generationId, [
    { memberId: leader.r.memberId, assignment: ASSIGN('leader') },
    { memberId: follower.r.memberId, assignment: ASSIGN('follower') },
  ]);
  const [fs_, ls] = await Promise.all([followerSync, leaderSync]);
  return { leader, follower, generation: ra.generationId, followerAssignment: text(fs_.assignment), leaderAssignment: text(ls.assignment) };
}

describe('classic consumer groups', () => {
  it('two members: MEMBER_ID_REQUIRED, one generation, the leader sees both subscriptions, assignments are relayed; Stable', async () => {
    const b = await TestClient.connect(broker.port);
    try {
      const g = await stableGroup('g-two', c, b);
      expect(g.generation).toBe(1);
      expect(g.leader.r.members.map((m) => text(m.metadata)).sort()).toEqual(['subscription of a', 'subscription of b']);
      expect(g.follower.r.members).toEqual([]);
      expect([g.leaderAssignment, g.followerAssignment]).toEqual(['assignment for leader', 'assignment for follower']);
      expect(await heartbeat(c, 'g-two', g.leader.r.memberId, 1)).toBe(0);
      const d = await c.call(15, { groups: ['g-two'], includeAuthorizedOperations: false }, 5);
      expect(d.groups[0]).toMatchObject({ errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
      expect(d.groups[0].members.map((m: any) => text(m.memberAssignment)).sort()).toEqual(['assignment for follower', 'assignment for leader']);
      expect(d.groups[0].members[0].clientHost).toBe('/127.0.0.1');
    } finally {
      await b.close();
    }
  });

  it('a new member makes the others rejoin (REBALANCE_IN_PROGRESS); stale generations and unknown members are fenced', async () => {
    const b = await TestClient.connect(broker.port);
    const n = await TestClient.connect(broker.port);
    try {
      const g = await stableGroup('g-grow', c, b);
      const newcomer = await firstJoin(n, 'g-grow', 'n');
      expect(await heartbeat(c, 'g-grow', g.leader.r.memberId, g.generation)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      expect(await commit(c, 'g-grow', g.leader.r.memberId, g.generation, 5n)).toBe(0); // allowed while preparing, as in Kafka
      const [rl, rf, rn] = await Promise.all([
        join(g.leader.c, 'g-grow', g.leader.r.memberId, 'a'),
        join(g.follower.c, 'g-grow', g.follower.r.memberId, 'b'),
        newcomer.joined,
      ]);
      expect([rl.generationId, rf.generationId, rn.generationId]).toEqual([2, 2, 2]);
      expect(rl.leader).toBe(g.leader.r.memberId);
      expect(rl.members).toHaveLength(3);
      // The old generation is fenced.
      expect(await heartbeat(c, 'g-grow', g.leader.r.memberId, 1)).toBe(ErrorCode.ILLEGAL_GENERATION);
      expect((await sync(c, 'g-grow', g.leader.r.memberId, 1)).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
      expect(await commit(c, 'g-grow', g.leader.r.memberId, 1, 7n)).toBe(ErrorCode.ILLEGAL_GENERATION);
      // Between join and sync: commits wait for the assignment.
      expect(await commit(c, 'g-grow', g.leader.r.memberId, 2, 7n)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      expect(await heartbeat(c, 'g-grow', 'nobody', 2)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      expect(await commit(c, 'g-grow', 'nobody', 2, 7n)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      expect((await join(c, 'g-grow', 'nobody', 'x')).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      const followers = [sync(g.follower.c, 'g-grow', rf.memberId, 2), sync(n, 'g-grow', rn.memberId, 2)];
      await sync(c, 'g-grow', rl.memberId, 2, [{ memberId: rn.memberId, assignment: ASSIGN('newcomer') }]);
      expect((await Promise.all(followers)).map((s: any) => text(s.assignment))).toEqual(['', 'assignment for newcomer']);
      expect(await commit(c, 'g-grow', rl.memberId, 2, 9n)).toBe(0);
      expect(await fetchOffset(c, 'g-grow')).toBe(9n);
    } finally {
      await b.close();
      await n.close();
    }
  });

  it('rebalances when a member leaves, when one stops heartbeating, and drops one that does not rejoin in time', async () => {
    const b = await TestClient.connect(broker.port);
    try {
      const g = await stableGroup('g-leave', c, b, 400);
      // Leave (v5): the remaining member rejoins alone.
      const left = await c.call(13, { groupId: 'g-leave', members: [{ memberId: g.follower.r.memberId, groupInstanceId: null, reason: 'closing' }] }, 5);
      expect(left.members[0].errorCode).toBe(0);
      expect(await heartbeat(c, 'g-leave', g.leader.r.memberId, g.generation)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      const alone = await join(g.leader.c, 'g-leave', g.leader.r.memberId, 'a', { session: 400 });
      expect(alone).toMatchObject({ errorCode: 0, generationId: g.generation + 1 });
      expect(alone.members).toHaveLength(1);
      await sync(g.leader.c, 'g-leave', alone.memberId, alone.generationId, [{ memberId: alone.memberId, assignment: ASSIGN('all') }]);

      // Session timeout: a second member joins, then goes silent.
      const silent = await firstJoin(b, 'g-leave', 'silent', { session: 400 });
      const [again, silentJoined] = await Promise.all([join(g.leader.c, 'g-leave', alone.memberId, 'a', { session: 400 }), silent.joined]);
      await Promise.all([
        sync(b, 'g-leave', silentJoined.memberId, silentJoined.generationId),
        sync(g.leader.c, 'g-leave', again.memberId, again.generationId, []),
      ]);
      const deadline = Date.now() + 5_000;
      let hb = 0;
      while (hb === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        hb = await heartbeat(c, 'g-leave', again.memberId, again.generationId);
      }
      expect(hb).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      expect(lines.some((l) => l.includes(`member ${silentJoined.memberId} expired (no heartbeat for 400 ms)`))).toBe(true);
      const solo = await join(c, 'g-leave', again.memberId, 'a', { session: 400 });
      expect(solo.members.map((m) => m.memberId)).toEqual([again.memberId]);
    } finally {
      await b.close();
    }
  });

  it('a member that does not rejoin within the rebalance timeout is removed; the others go on', async () => {
    const b = await TestClient.connect(broker.port);
    const n = await TestClient.connect(broker.port);
    try {
      const g = await stableGroup('g-slow', c, b);
      const newcomer = await firstJoin(n, 'g-slow', 'n', { rebalance: 300 });
      // Only the leader rejoins; the follower keeps heartbeating but never rejoins.
      const rl = await join(c, 'g-slow', g.leader.r.memberId, 'a', { rebalance: 300 });
      const rn = await newcomer.joined;
      expect(rl.generationId).toBe(g.generation + 1);
      expect(rl.members.map((m) => m.memberId).sort()).toEqual([g.leader.r.memberId, rn.memberId].sort());
      expect(await heartbeat(b, 'g-slow', g.follower.r.memberId, g.generation)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    } finally {
      await b.close();
      await n.close();
    }
  });

  it('ListGroups, DescribeGroups, DeleteGroups; commits from outside an Empty group', async () => {
    expect(await commit(c, 'g-standalone', '', -1, 42n)).toBe(0);
    expect(await fetchOffset(c, 'g-standalone')).toBe(42n);
    // A member id or generation an Empty group does not know is refused.
    expect(await commit(c, 'g-standalone', 'ghost', 3, 43n)).toBe(ErrorCode.ILLEGAL_GENERATION);
    const listed = await c.call(16, { statesFilter: [], typesFilter: [] }, 5);
    const byId = Object.fromEntries(listed.groups.map((g: any) => [g.groupId, g]));
    expect(byId['g-standalone']).toMatchObject({ groupState: 'Empty', groupType: 'classic' });
    expect(byId['g-two']).toMatchObject({ groupState: 'Stable', protocolType: 'consumer', groupType: 'classic' });
    const stable = await c.call(16, { statesFilter: ['stable'], typesFilter: [] }, 5);
    expect(stable.groups.every((g: any) => g.groupState === 'Stable')).toBe(true);
    const v6 = await c.call(15, { groups: ['g-nope', 'g-standalone'] }, 6);
    expect(v6.groups.map((g: any) => [g.errorCode, g.groupState])).toEqual([
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Dead'],
      [0, 'Empty'],
    ]);
    const del = await c.call(42, { groupsNames: ['g-standalone', 'g-two', 'g-nope'] }, 2);
    expect(del.results.map((r: any) => r.errorCode)).toEqual([0, ErrorCode.NON_EMPTY_GROUP, ErrorCode.GROUP_ID_NOT_FOUND]);
    expect(await fetchOffset(c, 'g-standalone')).toBe(-1n);
  });
});

describe('durability', () => {
  it('committed offsets and the group generation survive kill -9; members rejoin', async () => {
    const dir = tempDir('kipgen-groups-kill-');
    try {
      const config = { dataDir: dir, port: 0, topics: [{ name: 'orders', partitions: 4 }], ...TIMINGS };
      let node = await spawnBroker(config);
      let client = await TestClient.connect(node.port);
      const j = await firstJoin(client, 'g-durable', 'a');
      const joined = await j.joined;
      await sync(client, 'g-durable', joined.memberId, joined.generationId, [{ memberId: joined.memberId, assignment: ASSIGN('a') }]);
      expect(await commit(client, 'g-durable', joined.memberId, joined.generationId, 1234n)).toBe(0);
      await client.close();
      await node.kill9();
      node = await spawnBroker(config);
      client = await TestClient.connect(node.port);
      try {
        expect(await fetchOffset(client, 'g-durable')).toBe(1234n);
        // Members are not restored: the old one is unknown and rejoins into the next generation.
        expect(await heartbeat(client, 'g-durable', joined.memberId, joined.generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
        const again = await (await firstJoin(client, 'g-durable', 'a')).joined;
        expect(again.generationId).toBe(joined.generationId + 1);
        // On disk as Kafka's records: the GroupMetadata of generation 1 and the OffsetCommit.
        const dump = dumpLog(dir);
        expect(dump).toMatch(
          new RegExp(
            `groupMetadata: g-durable protocolType "consumer" generation 1 protocol "range" leader "${joined.memberId}" members \\[${joined.memberId} \\(kipgen-test, 16-byte assignment\\)\\]`,
          ),
        );
        expect(dump).toMatch(/offsetCommit: group g-durable orders-1 offset 1234 leaderEpoch -1 metadata "m"/);
      } finally {
        await client.close();
        await node.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
