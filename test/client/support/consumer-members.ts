/**
 * Members of a `group.protocol=consumer` group for the membership tests, run
 * against our broker (test/client/consumer-membership.test.ts) and Kafka 4.4
 * (test/kafka/consumer-membership.test.ts): each a ConsumerMembershipManager
 * polled in a loop as a KafkaConsumer's poll() would, recording every hook
 * call in one sequence shared by the group, and checking at each
 * onPartitionsAssigned that no other member still owns what was added.
 */
import { expect, it } from 'vitest';
import { ClusterClient, CoordinatorType } from '../../../client/cluster.js';
import { ConsumerMembershipManager, type ConsumerMembershipConfig } from '../../../client/consumer/consumer-membership.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from '../../../client/consumer/topic-partition.js';
import { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../../generated/index.js';

export interface HookEvent {
  seq: number;
  member: string;
  hook: 'revoked' | 'assigned' | 'lost';
  partitions: string[];
}

export interface Member {
  name: string;
  membership: ConsumerMembershipManager;
  keys(): string[];
}

export class TestGroup {
  readonly events: HookEvent[] = [];
  /** Partitions given to a member while another still owned them: must stay empty unless the owner was removed behind its back. */
  readonly doubleOwned: { partition: string; to: string; owner: string; seq: number }[] = [];
  readonly members = new Map<string, Member>();
  /** What poll() threw while the member was polling: must stay empty. */
  readonly errors: string[] = [];
  private readonly loops: Promise<void>[] = [];
  private readonly clients: ClusterClient[] = [];
  private readonly stopped = new Set<string>();
  /** Members whose poll loop waits without calling poll() (an application stuck in its processing). */
  readonly paused = new Set<string>();

  constructor(
    private readonly bootstrap: string,
    readonly groupId: string,
    readonly topic: string,
  ) {}

  /** A member subscribed to the group's topic, polling every 100 ms from now on. */
  join(name: string, config: Partial<ConsumerMembershipConfig> = {}, pattern?: string): Member {
    const cluster = new ClusterClient({ bootstrapServers: this.bootstrap, clientId: name, logger: null });
    this.clients.push(cluster);
    const record = (hook: HookEvent['hook']) => async (partitions: readonly TopicPartition[]) => {
      const keys = [...partitions].sort(compareTopicPartitions).map(topicPartitionKey);
      this.events.push({ seq: this.events.length, member: name, hook, partitions: keys });
      if (hook !== 'assigned') return;
      for (const [other, m] of this.members) {
        if (other === name || this.stopped.has(other)) continue;
        for (const key of m.keys()) if (keys.includes(key)) this.doubleOwned.push({ partition: key, to: name, owner: other, seq: this.events.length - 1 });
      }
    };
    const membership = new ConsumerMembershipManager(
      cluster,
      { groupId: this.groupId, rebalanceTimeoutMs: 60_000, ...config },
      { onPartitionsRevoked: record('revoked'), onPartitionsAssigned: record('assigned'), onPartitionsLost: record('lost') },
    );
    const member: Member = { name, membership, keys: () => [...membership.assignment()].sort(compareTopicPartitions).map(topicPartitionKey) };
    this.members.set(name, member);
    if (pattern === undefined) membership.subscribe([this.topic]);
    else membership.subscribePattern(pattern);
    this.loops.push(
      (async () => {
        while (!this.stopped.has(name)) {
          if (this.paused.has(name)) {
            await new Promise((r) => setTimeout(r, 20));
            continue;
          }
          try {
            await membership.poll(Date.now() + 100);
            // The consumer's fetch would wait here; without it a member with partitions would poll in a microtask loop.
            await new Promise((r) => setTimeout(r, 20));
          } catch (error) {
            if (!this.stopped.has(name)) this.errors.push(`${name}: ${(error as Error).message}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      })(),
    );
    return member;
  }

  /** Stops polling `name` and closes its membership (it leaves the group). */
  async leave(name: string): Promise<void> {
    this.stopped.add(name);
    await this.members.get(name)!.membership.close(Date.now() + 10_000);
  }

  /** Waits until `check` holds, polling every 50 ms; fails with `what` and the members' assignments after `timeoutMs`. */
  async until(what: string, check: () => boolean, timeoutMs = 45_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; assignments: ${JSON.stringify(this.assignments())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Each polling member's partitions. */
  assignments(): Record<string, string[]> {
    return Object.fromEntries([...this.members].filter(([name]) => !this.stopped.has(name)).map(([name, m]) => [name, m.keys()]));
  }

  /** True when the polling members own every one of `partitions` partitions exactly once, `perMember` (sorted counts) each. */
  covers(partitions: number, perMember: number[]): boolean {
    const owned = Object.values(this.assignments());
    const all = owned.flat();
    const counts = owned.map((ks) => ks.length).sort((a, b) => a - b);
    const expected = [...perMember].sort((a, b) => a - b);
    return all.length === partitions && new Set(all).size === partitions && counts.length === expected.length && counts.every((c, i) => c === expected[i]);
  }

  /**
   * Removes `name` from the group behind its back: a leave heartbeat (epoch −1) with its member id, as an
   * administrator's removeMembersFromConsumerGroup would. Its next heartbeat is answered UNKNOWN_MEMBER_ID.
   */
  async removeBehindItsBack(name: string): Promise<void> {
    const cluster = this.clients[0]!;
    const { response } = await cluster.coordinatorRequest(
      'ConsumerGroupHeartbeat',
      CoordinatorType.GROUP,
      this.groupId,
      ConsumerGroupHeartbeatRequest,
      ConsumerGroupHeartbeatResponse,
      () => ConsumerGroupHeartbeatRequest.create({ groupId: this.groupId, memberId: this.members.get(name)!.membership.memberId, memberEpoch: -1 }),
      (r) => r.errorCode,
      { deadline: Date.now() + 10_000, min: 1 },
    );
    if (response.errorCode !== 0) throw new Error(`removing ${name} failed with error ${response.errorCode}: ${response.errorMessage}`);
  }

  async close(): Promise<void> {
    for (const name of this.members.keys()) this.stopped.add(name);
    await Promise.all([...this.members.values()].map((m) => m.membership.close(Date.now() + 5_000).catch(() => undefined)));
    await Promise.all(this.loops.map((l) => l.catch(() => undefined)));
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

export interface ScenarioContext {
  /** The topic's partition count (6 or more, divisible by 2 and 3). */
  partitions: number;
  /** A group on a fresh group id over the test topic, closed by the caller's afterEach. */
  newGroup(): TestGroup;
}

/** The membership scenarios both brokers must pass: the same steps against ours and against Kafka 4.4. */
export function membershipScenarios(ctx: ScenarioContext): void {
  it('gives two members disjoint assignments covering every partition, with the member epoch as the generation', async () => {
    const g = ctx.newGroup();
    const a = g.join('a');
    const b = g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(ctx.partitions, [3, 3]));
    for (const m of [a, b]) {
      const meta = m.membership.groupMetadata();
      expect(meta).toEqual({ groupId: g.groupId, generationId: m.membership.epoch, memberId: m.membership.memberId, groupInstanceId: null });
      expect(meta.generationId).toBeGreaterThan(0);
    }
    expect(g.doubleOwned).toEqual([]);
    expect(g.errors).toEqual([]);
  }, 60_000);

  it('moves partitions to a third member through revoke, then assign', async () => {
    const g = ctx.newGroup();
    g.join('a');
    g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(ctx.partitions, [3, 3]));
    const before = g.assignments();
    const mark = g.events.length;
    g.join('c');
    await g.until('2 + 2 + 2 partitions', () => g.covers(ctx.partitions, [2, 2, 2]));
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
    const g = ctx.newGroup();
    g.join('a');
    g.join('b');
    g.join('c');
    await g.until('2 + 2 + 2 partitions', () => g.covers(ctx.partitions, [2, 2, 2]));
    const leaving = g.assignments().c!;
    const mark = g.events.length;
    await g.leave('c');
    const events = (): typeof g.events => g.events.slice(mark);
    const revokedOnLeave = events().find((e) => e.member === 'c' && e.hook === 'revoked');
    expect(revokedOnLeave?.partitions).toEqual(leaving);
    expect(g.members.get('c')!.membership.state).toBe('UNSUBSCRIBED');
    expect(g.members.get('c')!.membership.groupMetadata().generationId).toBe(-1);
    await g.until('3 + 3 partitions', () => g.covers(ctx.partitions, [3, 3]));
    for (const key of leaving) {
      const assigned = events().find((e) => e.member !== 'c' && e.hook === 'assigned' && e.partitions.includes(key));
      expect(assigned, `${key} assigned to a or b`).toBeDefined();
      expect(assigned!.seq).toBeGreaterThan(revokedOnLeave!.seq);
    }
    expect(g.doubleOwned).toEqual([]);
    expect(g.errors).toEqual([]);
  }, 90_000);

  it('a member removed from the group loses its partitions through onPartitionsLost and joins again', async () => {
    const g = ctx.newGroup();
    const a = g.join('a');
    g.join('b');
    await g.until('3 + 3 partitions', () => g.covers(ctx.partitions, [3, 3]));
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
    await g.until('a rejoined with its share', () => g.covers(ctx.partitions, [3, 3]) && a.keys().length === 3);
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

  it('subscribes with a regular expression the broker resolves', async () => {
    const g = ctx.newGroup();
    // The topic's name with its last two characters as wildcards: a pattern that only this topic matches.
    const m = g.join('a', {}, `${g.topic.slice(0, -2)}..`);
    await g.until('every partition through the pattern', () => g.covers(ctx.partitions, [ctx.partitions]));
    expect(m.membership.groupMetadata().generationId).toBeGreaterThan(0);
    expect(g.errors).toEqual([]);
  }, 60_000);
}
