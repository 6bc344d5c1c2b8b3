/**
 * One classic consumer group with a confluent-kafka-python (librdkafka)
 * consumer and one of our KafkaConsumers, against `kipgen broker`: every
 * partition of a 4-partition topic is owned by exactly one of them, every
 * record is read once across both, and when one leaves the other takes all
 * the partitions and reads on from the committed offsets. For the range
 * assignor (eager) and for cooperative-sticky (KIP-429, incremental), each
 * with librdkafka and with ours as the group leader, so that each side
 * computes the assignment once and decodes the other's once; and a third
 * member joining a cooperative-sticky group of the two, which moves only one
 * partition when each leader reads the other side's owned partitions.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConsumer, KafkaProducer, type TopicPartition } from '../../client/index.js';
import { ROOT, removeTempDirs, startKipgenBroker, type KipgenBroker } from './support/broker-process.js';
import { requireInteropTool, DEBIAN_PYTHON as PYTHON } from './support/tools.js';

const TOPICS = ['range-rd-leads', 'range-ours-leads', 'coop-rd-leads', 'coop-ours-leads', '3-rd-leads', '3-ours-leads'];
let broker: KipgenBroker;
let librdkafka = '';
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  requireInteropTool('confluent-kafka-python');
  broker = await startKipgenBroker({ topics: TOPICS.map((t) => `${t}:4`), config: { groupInitialRebalanceDelayMs: 300 } });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
  if (librdkafka !== '') process.stdout.write(`librdkafka mixed group: ${librdkafka}\n`);
});

/** librdkafka's member, ours, and a second of ours for the three-member case. */
type Who = 'rd' | 'ours' | 'ours2';

/** What both members did, as the test saw it. */
class Group {
  readonly owned: Record<Who, Set<number>> = { rd: new Set(), ours: new Set(), ours2: new Set() };
  readonly reads: Record<Who, string[]> = { rd: [], ours: [], ours2: [] };
  /** Records a member got from a partition it did not own at the time. */
  readonly strays: string[] = [];
  readonly errors: string[] = [];
  /** Each revocation's partitions, per member. */
  readonly revocations: Record<Who, number[][]> = { rd: [], ours: [], ours2: [] };

  revoke(who: Who, partitions: number[]): void {
    this.revocations[who].push(partitions.slice().sort());
    for (const p of partitions) this.owned[who].delete(p);
  }

  read(who: Who, partition: number, offset: number | bigint): void {
    this.reads[who].push(`${partition}@${offset}`);
    if (!this.owned[who].has(partition)) this.strays.push(`${who} read ${partition}@${offset} owning [${[...this.owned[who]].join(',')}]`);
  }

  ownedList(who: Who): number[] {
    return [...this.owned[who]].sort();
  }

  state(): string {
    const owns = (['rd', 'ours', 'ours2'] as const).map((w) => `${w} owns [${this.ownedList(w).join(',')}] read ${this.reads[w].length}`);
    return `${owns.join('; ')}; errors ${JSON.stringify(this.errors)}`;
  }

  readCount(): number {
    return this.reads.rd.length + this.reads.ours.length + this.reads.ours2.length;
  }
}

/** The Python member (test/interop/support/confluent_member.py), its events applied to the group as they arrive. */
function startLibrdkafka(group: Group, topic: string, groupId: string, strategy: string): { close(): Promise<void> } {
  const child: ChildProcessWithoutNullStreams = spawn(
    PYTHON,
    [path.join(ROOT, 'test/interop/support/confluent_member.py'), `127.0.0.1:${broker.port}`, topic, groupId, strategy],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as {
      started?: true;
      librdkafka?: string;
      assigned?: number[];
      revoked?: number[];
      lost?: number[];
      record?: [number, number];
      error?: string;
    };
    if (event.librdkafka !== undefined) librdkafka = event.librdkafka;
    // Eager: revoke all, then the whole new assignment; cooperative: only what moves. Adding and removing serves both.
    for (const p of event.assigned ?? []) group.owned.rd.add(p);
    if (event.revoked !== undefined) group.revoke('rd', event.revoked);
    for (const p of event.lost ?? []) group.owned.rd.delete(p);
    if (event.record !== undefined) group.read('rd', event.record[0], event.record[1]);
    if (event.error !== undefined) group.errors.push(event.error);
  });
  return {
    async close() {
      child.stdin.end('close\n');
      await exited;
      if (child.exitCode !== 0) throw new Error(`confluent_member.py exited ${child.exitCode}:\n${stderr}`);
    },
  };
}

function startOurs(group: Group, topic: string, groupId: string, strategy: string, who: 'ours' | 'ours2' = 'ours'): { close(): Promise<void> } {
  const consumer = new KafkaConsumer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    logger: null,
    groupId,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 100,
    heartbeatIntervalMs: 300,
    sessionTimeoutMs: 6_000,
    maxPollIntervalMs: 10_000,
    partitionAssignmentStrategy: [strategy],
  });
  consumer.subscribe([topic], {
    onPartitionsAssigned: (tps: TopicPartition[]) => tps.forEach((tp) => group.owned[who].add(tp.partition)),
    onPartitionsRevoked: (tps: TopicPartition[]) =>
      group.revoke(
        who,
        tps.map((tp) => tp.partition),
      ),
    onPartitionsLost: (tps: TopicPartition[]) => tps.forEach((tp) => group.owned[who].delete(tp.partition)),
  });
  let running = true;
  const loop = (async () => {
    while (running) for (const r of await consumer.poll(100)) group.read(who, r.partition, r.offset);
  })();
  const close = async () => {
    running = false;
    await loop;
    await consumer.close(5_000);
  };
  cleanups.push(close);
  return { close };
}

async function until(check: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what()}\nbroker:\n${broker
          .stderr()
          .split('\n')
          .filter((l) => /group /.test(l))
          .slice(-15)
          .join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function mixedGroup(strategy: 'range' | 'cooperative-sticky', leader: 'rd' | 'ours', topic: string): Promise<void> {
  const groupId = `${topic}-g`;
  const producer = new KafkaProducer({ bootstrapServers: `127.0.0.1:${broker.port}`, lingerMs: 5, logger: null, metricsRegistry: null });
  cleanups.push(() => producer.close(1_000));
  const send = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) await producer.send({ topic, partition: i % 4, value: `m-${i}` });
  };
  const group = new Group();
  const start = (who: Who) => (who === 'rd' ? startLibrdkafka(group, topic, groupId, strategy) : startOurs(group, topic, groupId, strategy));
  const second = leader === 'rd' ? 'ours' : 'rd';

  // The first to join leads the group; the second joins its next generation.
  const first = start(leader);
  await until(
    () => group.owned[leader].size === 4,
    30_000,
    () => `the first member to own all 4 partitions: ${group.state()}`,
  );
  await send(0, 8);
  await until(
    () => group.reads[leader].length === 8,
    15_000,
    () => `the first member to read 8: ${group.state()}`,
  );

  start(second);
  await until(
    () => group.owned.rd.size === 2 && group.owned.ours.size === 2,
    30_000,
    () => `the rebalance to split 2 and 2: ${group.state()}`,
  );
  // Every partition is owned by exactly one member.
  expect([...group.ownedList('rd'), ...group.ownedList('ours')].sort()).toEqual([0, 1, 2, 3]);
  // The first to join kept the lead, so its assignor computed the split (librdkafka's member ids start with its client.id).
  const twoMembers = new RegExp(`group ${groupId}: generation \\d+ with 2 member\\(s\\), protocol ${strategy}, leader (\\S+)`).exec(broker.stderr());
  expect(twoMembers?.[1]?.startsWith('confluent-python-member-')).toBe(leader === 'rd');
  // Eager (range) revokes all 4 before the rejoin; cooperative (KIP-429) only the 2 that move, keeping the others throughout.
  expect(group.revocations[leader]).toEqual([strategy === 'range' ? [0, 1, 2, 3] : group.ownedList(second)]);

  await send(8, 8);
  await until(
    () => group.readCount() >= 16,
    15_000,
    () => `both to read the next 8: ${group.state()}`,
  );
  // The second member read only records written after it joined, two partitions' worth: nothing the first had read.
  expect(group.reads[second]).toHaveLength(4);

  // The leader leaves (LeaveGroup); the other takes every partition and reads on from the committed offsets.
  await first.close();
  group.owned[leader].clear();
  await until(
    () => group.owned[second].size === 4,
    30_000,
    () => `the remaining member to own all 4 partitions: ${group.state()}`,
  );
  await send(16, 8);
  await until(
    () => group.readCount() >= 24,
    15_000,
    () => `the last 8 to be read: ${group.state()}`,
  );
  await new Promise((r) => setTimeout(r, 500)); // room for a duplicate to show up
  const all = [...group.reads.rd, ...group.reads.ours];
  expect(new Set(all).size).toBe(24);
  expect(all).toHaveLength(24);
  expect(group.strays).toEqual([]);
  expect(group.errors).toEqual([]);
}

describe('confluent-kafka-python (librdkafka) and KafkaConsumer in one classic group', () => {
  it('range, librdkafka leads: the partitions split, every record is read once, ours takes all when librdkafka leaves', async () => {
    await mixedGroup('range', 'rd', 'range-rd-leads');
  });

  it('range, ours leads: the partitions split, every record is read once, librdkafka takes all when ours leaves', async () => {
    await mixedGroup('range', 'ours', 'range-ours-leads');
  });

  it('cooperative-sticky, librdkafka leads: the partitions split incrementally, every record is read once, ours takes all when librdkafka leaves', async () => {
    await mixedGroup('cooperative-sticky', 'rd', 'coop-rd-leads');
  });

  it('cooperative-sticky, ours leads: the partitions split incrementally, every record is read once, librdkafka takes all when ours leaves', async () => {
    await mixedGroup('cooperative-sticky', 'ours', 'coop-ours-leads');
  });

  it('cooperative-sticky, three members: a third (ours) joining takes one partition; librdkafka and ours each keep what they owned but one (sticky, decoded from each other)', async () => {
    await threeMembers('3-rd-leads', 'rd');
    await threeMembers('3-ours-leads', 'ours');
  });
});

/**
 * librdkafka and ours split 4 partitions 2 and 2, then a second of ours joins.
 * The sticky assignor (run by `leader`) reads every member's owned partitions
 * from its subscription (consumer protocol v1+), so each of the two keeps one
 * of its two and revokes only the other: a leader that misread the other
 * side's owned partitions would move more (Kafka's AbstractStickyAssignor).
 */
async function threeMembers(topic: string, leader: 'rd' | 'ours'): Promise<void> {
  const groupId = `${topic}-g`;
  const group = new Group();
  const producer = new KafkaProducer({ bootstrapServers: `127.0.0.1:${broker.port}`, lingerMs: 5, logger: null, metricsRegistry: null });
  cleanups.push(() => producer.close(1_000));
  const start = (who: 'rd' | 'ours') =>
    who === 'rd' ? startLibrdkafka(group, topic, groupId, 'cooperative-sticky') : startOurs(group, topic, groupId, 'cooperative-sticky');
  start(leader);
  await until(
    () => group.owned[leader].size === 4,
    30_000,
    () => `the first member to own all 4 partitions: ${group.state()}`,
  );
  start(leader === 'rd' ? 'ours' : 'rd');
  await until(
    () => group.owned.rd.size === 2 && group.owned.ours.size === 2,
    30_000,
    () => `the split 2 and 2: ${group.state()}`,
  );
  const before = { rd: group.ownedList('rd'), ours: group.ownedList('ours') };
  const revokedBefore = { rd: group.revocations.rd.length, ours: group.revocations.ours.length };
  startOurs(group, topic, groupId, 'cooperative-sticky', 'ours2');
  await until(
    () => group.owned.ours2.size === 1 && group.owned.rd.size + group.owned.ours.size === 3,
    30_000,
    () => `the third member to get one partition: ${group.state()}`,
  );
  expect([...group.ownedList('rd'), ...group.ownedList('ours'), ...group.ownedList('ours2')].sort()).toEqual([0, 1, 2, 3]);
  // Nobody lost a partition it kept: what each owns now is a subset of what it owned before.
  for (const who of ['rd', 'ours'] as const) expect(before[who]).toEqual(expect.arrayContaining(group.ownedList(who)));
  // Only the one partition that moved was revoked, from one of the two.
  const revoked = [...group.revocations.rd.slice(revokedBefore.rd), ...group.revocations.ours.slice(revokedBefore.ours)].flat();
  expect(revoked).toEqual(group.ownedList('ours2'));
  for (let i = 0; i < 12; i++) await producer.send({ topic, partition: i % 4, value: `m-${i}` });
  await until(
    () => group.readCount() >= 12,
    15_000,
    () => `the 12 records to be read: ${group.state()}`,
  );
  expect(new Set([...group.reads.rd, ...group.reads.ours, ...group.reads.ours2]).size).toBe(12);
  expect(group.strays).toEqual([]);
  expect(group.errors).toEqual([]);
}
