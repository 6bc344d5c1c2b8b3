/**
 * KafkaConsumer in a classic group against a real kipgen broker: two members
 * split the partitions (range), the survivor takes everything when one
 * leaves, the listener hears revocations and assignments, commits carry the
 * generation, the classic EOS loop (sendOffsetsToTransaction with
 * groupMetadata()) commits offsets atomically with the output and a zombie
 * of an older generation is fenced; the consumer protocol's bytes round-trip.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CommitFailedError, KafkaConsumer, KafkaProducer, type ConsumerConfig, type ConsumerRecord, type TopicPartition } from '../../client/index.js';
import { RangeAssignor } from '../../client/consumer/assignors/range.js';
import type { MemberAssignment, MemberSubscription, PartitionAssignor } from '../../client/consumer/assignors/assignor.js';
import { deserializeAssignment, deserializeSubscription, serializeAssignment, serializeSubscription } from '../../client/consumer/consumer-protocol.js';
import type { TopicConfig } from '../../coordinator/config.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';
import { keys, pollAll, text } from './support/group-consumers.js';

const quiet = { logger: null, metricsRegistry: null } as const;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function cluster(topics: TopicConfig[]): Promise<TestCluster> {
  const c = await startCluster({ config: { topics, groupInitialRebalanceDelayMs: 0, groupMinSessionTimeoutMs: 100 } });
  cleanups.push(() => c.close());
  return c;
}

function producer(c: TestCluster, extra: Record<string, unknown> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: c.bootstrap, lingerMs: 5, maxBlockMs: 5_000, ...quiet, ...extra });
  cleanups.push(() => p.close(1_000));
  return p;
}

function member(c: TestCluster, extra: Partial<ConsumerConfig> = {}): KafkaConsumer {
  const k = new KafkaConsumer({
    bootstrapServers: c.bootstrap,
    logger: null,
    groupId: 'g',
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 50,
    heartbeatIntervalMs: 100,
    sessionTimeoutMs: 3_000,
    maxPollIntervalMs: 10_000,
    ...extra,
  });
  cleanups.push(() => k.close(1_000));
  return k;
}

describe('KafkaConsumer in a classic group', () => {
  it('two members split the partitions (range) and the survivor takes them all when the other leaves', async () => {
    const c = await cluster([{ name: 'in', partitions: 4 }]);
    const p = producer(c);
    for (let i = 0; i < 40; i++) await p.send({ topic: 'in', partition: i % 4, value: `v${i}` });
    const events: string[] = [];
    const a = member(c);
    const b = member(c);
    a.subscribe(['in'], {
      onPartitionsAssigned: (tps) => void events.push(`a+${keys(tps).join(',')}`),
      onPartitionsRevoked: (tps) => void events.push(`a-${keys(tps).join(',')}`),
    });
    b.subscribe(['in']);
    const seen = await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2);
    expect([...keys(a.assignment()), ...keys(b.assignment())].sort()).toEqual(['in-0', 'in-1', 'in-2', 'in-3']);
    expect(a.groupMetadata().generationId).toBe(b.groupMetadata().generationId);
    expect(a.groupMetadata().memberId).not.toBe(b.groupMetadata().memberId);
    await pollAll([a, b], () => seen.length >= 40, seen);
    await b.commitSync();
    await b.close();
    await pollAll([a], () => a.assignment().length === 4);
    expect(keys(a.assignment())).toEqual(['in-0', 'in-1', 'in-2', 'in-3']);
    // Eager protocol: everything is revoked before the rejoin, then all four assigned.
    expect(events.at(-1)).toBe('a+in-0,in-1,in-2,in-3');
    expect(events.some((e) => e.startsWith('a-'))).toBe(true);
    // The survivor resumes b's partitions where b committed: nothing read twice from them.
    for (let i = 0; i < 4; i++) await p.send({ topic: 'in', partition: i, value: `late${i}` });
    const after: ConsumerRecord[] = [];
    await pollAll([a], () => after.length >= 4, after);
    expect(
      after
        .map(text)
        .filter((v) => v.startsWith('late'))
        .sort(),
    ).toEqual(['late0', 'late1', 'late2', 'late3']);
    expect(new Set(seen.map((r) => `${r.partition}@${r.offset}`)).size).toBe(40);
  });

  it('a commit from a member of an older generation fails with CommitFailedError', async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const a = member(c, { enableAutoCommit: false });
    a.subscribe(['in']);
    await pollAll([a], () => a.assignment().length === 2);
    const old = a.groupMetadata();
    const b = member(c, { enableAutoCommit: false });
    b.subscribe(['in']);
    await pollAll([a, b], () => b.assignment().length === 1 && a.assignment().length === 1);
    expect(a.groupMetadata().generationId).toBeGreaterThan(old.generationId);
    // The commit path of the member with the stale generation, as a zombie sends it.
    const { commitOffsets } = await import('../../client/consumer/offset-commits.js');
    const { ClusterClient } = await import('../../client/cluster.js');
    const raw = new ClusterClient({ bootstrapServers: c.bootstrap, logger: null });
    cleanups.push(() => raw.close());
    await expect(commitOffsets(raw, old, [{ topic: 'in', partition: 0, offset: 1n }], Date.now() + 5_000)).rejects.toBeInstanceOf(CommitFailedError);
  });

  it('the classic EOS loop: offsets commit with the output in one transaction; a zombie with an old generation is fenced', async () => {
    const c = await cluster([
      { name: 'in', partitions: 2 },
      { name: 'out', partitions: 1 },
    ]);
    const p = producer(c);
    for (let i = 0; i < 10; i++) await p.send({ topic: 'in', partition: i % 2, value: `v${i}` });
    const a = member(c, { groupId: 'eos', enableAutoCommit: false, isolationLevel: 'read_committed' });
    a.subscribe(['in']);
    const seen = await pollAll([a], () => a.assignment().length === 2);
    await pollAll([a], () => seen.length >= 10, seen);
    const zombieMetadata = a.groupMetadata();
    const t = producer(c, { transactionalId: 'eos-1' });
    await t.initTransactions();
    t.beginTransaction();
    for (const r of seen) await t.send({ topic: 'out', value: `out-${text(r)}` });
    const offsets = a.assignment().map((tp) => ({ ...tp, offset: 5n }));
    await t.sendOffsetsToTransaction(offsets, a.groupMetadata());
    await t.commitTransaction();
    expect((await readCommitted(c.bootstrap, 'out')).sort()).toEqual(seen.map((r) => `out-${text(r)}`).sort());
    expect([...(await a.committed(a.assignment())).values()].map((o) => o.offset)).toEqual([5n, 5n]);
    // A second member makes a new generation; the first one's old metadata is a zombie's.
    const b = member(c, { groupId: 'eos', enableAutoCommit: false });
    b.subscribe(['in']);
    await pollAll([a, b], () => a.assignment().length === 1 && b.assignment().length === 1);
    const zombie = producer(c, { transactionalId: 'eos-zombie' });
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: 'out', value: 'zombie' });
    await expect(zombie.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: 9n }], zombieMetadata)).rejects.toThrow(
      /ILLEGAL_GENERATION|generation/i,
    );
    await zombie.abortTransaction().catch(() => {});
    expect(await readCommitted(c.bootstrap, 'out')).not.toContain('zombie');
  });

  it('a member that stops polling for maxPollIntervalMs leaves; its next poll() rejoins and the listener hears the partitions lost', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const lost: string[] = [];
    const a = member(c, { maxPollIntervalMs: 500, heartbeatIntervalMs: 100 });
    a.subscribe(['in'], { onPartitionsLost: (tps) => void lost.push(...keys(tps)) });
    await pollAll([a], () => a.assignment().length === 1);
    const first = a.groupMetadata();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // The heartbeat left the group for it: the generation is over, so a commit of it is refused.
    expect(a.groupMetadata().generationId).toBe(-1);
    await pollAll([a], () => a.assignment().length === 1 && a.groupMetadata().generationId > first.generationId);
    expect(lost).toEqual(['in-0']);
    expect(a.groupMetadata().memberId).not.toBe(first.memberId);
  });
});

/**
 * A cooperative assignor for the test (the real one is cooperative-sticky):
 * the range split, minus every partition another member still owns, which
 * KIP-429 hands over in the next rebalance once its owner revoked it.
 */
class CooperativeRange implements PartitionAssignor {
  readonly name = 'test-cooperative-range';
  readonly supportedProtocols = ['COOPERATIVE', 'EAGER'] as const;
  subscriptionUserData(): null {
    return null;
  }
  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    const target = new RangeAssignor().assign(partitionsPerTopic, subscriptions);
    const owner = new Map<string, string>();
    for (const [memberId, sub] of subscriptions) for (const tp of sub.ownedPartitions) owner.set(`${tp.topic}-${tp.partition}`, memberId);
    for (const [memberId, assignment] of target) {
      assignment.partitions = assignment.partitions.filter((tp) => [undefined, memberId].includes(owner.get(`${tp.topic}-${tp.partition}`)));
    }
    return target;
  }
}

describe('the COOPERATIVE rebalance protocol (KIP-429)', () => {
  it('a joining member makes the owner revoke only the partitions that move; they reach the new member in a second rebalance', async () => {
    const c = await cluster([{ name: 'in', partitions: 4 }]);
    const events: string[] = [];
    const listener = (who: string) => ({
      onPartitionsAssigned: (tps: TopicPartition[]) => void events.push(`${who}+${keys(tps).join(',')}`),
      onPartitionsRevoked: (tps: TopicPartition[]) => void events.push(`${who}-${keys(tps).join(',')}`),
    });
    const a = member(c, { partitionAssignmentStrategy: [new CooperativeRange()], groupId: 'coop' });
    a.subscribe(['in'], listener('a'));
    await pollAll([a], () => a.assignment().length === 4);
    const b = member(c, { partitionAssignmentStrategy: [new CooperativeRange()], groupId: 'coop' });
    b.subscribe(['in'], listener('b'));
    // Up to three rebalances when b's member id sorts after a's: a generous wait on a loaded machine.
    await pollAll([a, b], () => a.assignment().length === 2 && b.assignment().length === 2, [], 30_000);
    const moved = keys(b.assignment());
    // Never everything at once (that is EAGER): a gives up part of its partitions at a time.
    expect(events).not.toContain('a-in-0,in-1,in-2,in-3');
    // Each partition reached b only after a had revoked it (no two owners at once).
    const at = (prefix: string, partition: string) => events.findIndex((e) => e.startsWith(prefix) && e.slice(2).split(',').includes(partition));
    for (const partition of moved) {
      expect(at('a-', partition)).toBeGreaterThanOrEqual(0);
      expect(at('a-', partition)).toBeLessThan(at('b+', partition));
    }
    expect([...keys(a.assignment()), ...moved].sort()).toEqual(['in-0', 'in-1', 'in-2', 'in-3']);
  });
});

describe('a join that fails', () => {
  it('fails that poll() with the coordinator’s error, and the next poll() joins again', async () => {
    const c = await cluster([{ name: 'in', partitions: 1 }]);
    const a = member(c, { groupId: 'mixed' });
    a.subscribe(['in']);
    await pollAll([a], () => a.assignment().length === 1);
    const other: PartitionAssignor = {
      ...new RangeAssignor(),
      name: 'other',
      supportedProtocols: ['EAGER'],
      subscriptionUserData: () => null,
      assign: (p, s) => new RangeAssignor().assign(p, s),
    };
    const b = member(c, { groupId: 'mixed', partitionAssignmentStrategy: [other] });
    b.subscribe(['in']);
    // No assignor in common with the group's member: Kafka's INCONSISTENT_GROUP_PROTOCOL, not retriable.
    await expect(b.poll(5_000)).rejects.toThrow(/INCONSISTENT_GROUP_PROTOCOL/);
    await a.close();
    await pollAll([b], () => b.assignment().length === 1);
    expect(keys(b.assignment())).toEqual(['in-0']);
  });
});

describe('KafkaConsumer.unsubscribe', () => {
  it('revokes through the listener (committing first under auto-commit) and leaves the group, so the other member takes over at once', async () => {
    const c = await cluster([{ name: 'in', partitions: 2 }]);
    const p = producer(c);
    for (let i = 0; i < 4; i++) await p.send({ topic: 'in', partition: i % 2, value: `v${i}` });
    const revoked: string[] = [];
    const a = member(c, { autoCommitIntervalMs: 60_000 });
    const b = member(c);
    a.subscribe(['in'], { onPartitionsRevoked: (tps) => void revoked.push(...keys(tps)) });
    b.subscribe(['in']);
    const seen = await pollAll([a, b], () => a.assignment().length === 1 && b.assignment().length === 1);
    await pollAll([a, b], () => seen.length >= 4, seen);
    const mine = a.assignment();
    await a.unsubscribe();
    expect(revoked).toEqual(keys(mine));
    expect(a.assignment()).toEqual([]);
    expect((await b.committed(mine)).get(keys(mine)[0]!)?.offset).toBe(2n);
    await pollAll([b], () => b.assignment().length === 2);
    expect(keys(b.assignment())).toEqual(['in-0', 'in-1']);
  });
});

describe('the consumer protocol bytes and the range assignor', () => {
  it('a subscription and an assignment round-trip at version 3', () => {
    const sub = deserializeSubscription(
      serializeSubscription({ topics: ['a', 'b'], userData: null, ownedPartitions: [{ topic: 'a', partition: 1 }], generationId: 7, rackId: 'r1' }),
      'static-1',
    );
    expect(sub).toEqual({
      topics: ['a', 'b'],
      userData: null,
      ownedPartitions: [{ topic: 'a', partition: 1 }],
      groupInstanceId: 'static-1',
      generationId: 7,
      rackId: 'r1',
    });
    const asg = deserializeAssignment(serializeAssignment({ partitions: [{ topic: 'a', partition: 0 }], userData: new Uint8Array([1]) }));
    expect(asg).toEqual({ partitions: [{ topic: 'a', partition: 0 }], userData: new Uint8Array([1]) });
    expect(deserializeAssignment(new Uint8Array(0))).toEqual({ partitions: [], userData: null });
  });

  it('range: consecutive ranges per topic, the first members one more; static members first', () => {
    const sub = (topics: string[], groupInstanceId: string | null = null) => ({
      topics,
      userData: null,
      ownedPartitions: [],
      groupInstanceId,
      generationId: -1,
      rackId: null,
    });
    const result = new RangeAssignor().assign(
      new Map([
        ['t', 5],
        ['u', 2],
      ]),
      new Map([
        ['m-b', sub(['t', 'u'])],
        ['m-a', sub(['t'])],
        ['m-z', sub(['t', 'u'], 'static')],
      ]),
    );
    const of = (id: string) => keys(result.get(id)!.partitions);
    expect(of('m-z')).toEqual(['t-0', 't-1', 'u-0']);
    expect(of('m-a')).toEqual(['t-2', 't-3']);
    expect(of('m-b')).toEqual(['t-4', 'u-1']);
  });
});
