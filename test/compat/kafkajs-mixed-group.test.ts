/**
 * One classic consumer group with a kafkajs 2.2.4 consumer and one of our
 * KafkaConsumers, against `kipgen broker` (child process): every partition of
 * a 4-partition topic is owned by exactly one of them, every record is read
 * once across both, and when one leaves the other takes all the partitions
 * and reads on from the committed offsets. Run once with kafkajs as the group
 * leader (ours decodes kafkajs' assignment bytes) and once with ours as the
 * leader (kafkajs decodes ours).
 *
 * kafkajs ships only 'RoundRobinAssigner' and no range assignor, so the two
 * share no assignor name out of the box. Our consumer carries a
 * PartitionAssignor under kafkajs' name with our range semantics: the group
 * picks that name, and the leader's assignor decides (round-robin when kafkajs
 * leads, range when ours does). The assertions hold for either split.
 */
import kafkajs from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConsumer, type ConsumerRecord, type TopicPartition } from '../../client/index.js';
import { RangeAssignor } from '../../client/consumer/assignors/range.js';
import type { MemberAssignment, MemberSubscription, PartitionAssignor } from '../../client/consumer/assignors/assignor.js';
import { removeTempDirs, startKipgenBroker, type KipgenBroker } from '../interop/support/broker-process.js';

const { Kafka, logLevel } = kafkajs;
let broker: KipgenBroker;
let kafka: InstanceType<typeof Kafka>;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  broker = await startKipgenBroker({ topics: [], config: { groupInitialRebalanceDelayMs: 300 } });
  kafka = new Kafka({
    clientId: 'kafkajs-mixed',
    brokers: [`127.0.0.1:${broker.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 8, initialRetryTime: 100 },
  });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
});

/** Range semantics under the name kafkajs' consumers offer, so the group finds a protocol both members support. */
class RangeUnderKafkajsName implements PartitionAssignor {
  readonly name = 'RoundRobinAssigner';
  readonly supportedProtocols = ['EAGER'] as const;
  subscriptionUserData(): null {
    return null;
  }
  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    return new RangeAssignor().assign(partitionsPerTopic, subscriptions);
  }
}

async function until(check: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Where each record was read: `partition@offset` by reader, and the partition of every record each one read. */
interface Reads {
  byReader: Record<'kj' | 'ours', string[]>;
  /** Records a reader got from a partition it did not own at the time. */
  strays: string[];
}

/** Our consumer polled in the background until stopped, as an application's loop would. */
function pollInBackground(consumer: KafkaConsumer, onRecords: (records: Iterable<ConsumerRecord>) => void): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) onRecords(await consumer.poll(100));
  })();
  return async () => {
    running = false;
    await loop;
  };
}

async function mixedGroup(leader: 'kj' | 'ours', topic: string, groupId: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const send = (from: number, count: number) =>
    producer.send({ topic, messages: Array.from({ length: count }, (_, i) => ({ partition: (from + i) % 4, value: `m-${from + i}` })) });

  const owned: Record<'kj' | 'ours', number[]> = { kj: [], ours: [] };
  const reads: Reads = { byReader: { kj: [], ours: [] }, strays: [] };
  const read = (who: 'kj' | 'ours', partition: number, offset: string) => {
    reads.byReader[who].push(`${partition}@${offset}`);
    if (!owned[who].includes(partition)) reads.strays.push(`${who} read ${partition}@${offset} owning ${JSON.stringify(owned[who])}`);
  };
  const state = () => `${JSON.stringify(owned)}; read kafkajs ${reads.byReader.kj.length}, ours ${reads.byReader.ours.length}`;

  // kafkajs heartbeats between fetches: a short fetch wait keeps it within the session.
  const kj = kafka.consumer({ groupId, sessionTimeout: 6_000, rebalanceTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
  let kjLeads = false;
  kj.on(kj.events.GROUP_JOIN, (e) => {
    owned.kj = (e.payload.memberAssignment[topic] ?? []).slice().sort();
    kjLeads = e.payload.isLeader;
  });
  cleanups.push(() => kj.disconnect());
  const startKafkajs = async () => {
    await kj.connect();
    await kj.subscribe({ topic, fromBeginning: true });
    await kj.run({ eachMessage: async ({ partition, message }) => read('kj', partition, message.offset) });
  };

  const ours = new KafkaConsumer({
    bootstrapServers: `127.0.0.1:${broker.port}`,
    logger: null,
    groupId,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 100,
    heartbeatIntervalMs: 300,
    sessionTimeoutMs: 6_000,
    maxPollIntervalMs: 10_000,
    partitionAssignmentStrategy: [new RangeUnderKafkajsName()],
  });
  cleanups.push(() => ours.close(2_000));
  let stopPolling: (() => Promise<void>) | undefined;
  const startOurs = () => {
    ours.subscribe([topic], {
      onPartitionsAssigned: (tps: TopicPartition[]) => void (owned.ours = tps.map((tp) => tp.partition).sort()),
      onPartitionsRevoked: () => void (owned.ours = []),
      onPartitionsLost: () => void (owned.ours = []),
    });
    stopPolling = pollInBackground(ours, (records) => {
      for (const r of records) read('ours', r.partition, String(r.offset));
    });
    cleanups.push(() => stopPolling!());
  };

  // The first to join leads the group; the second joins its next generation.
  if (leader === 'kj') await startKafkajs();
  else startOurs();
  const first = leader === 'kj' ? 'kj' : 'ours';
  const second = leader === 'kj' ? 'ours' : 'kj';
  await until(
    () => owned[first].length === 4,
    20_000,
    () => `the first member to own all 4 partitions: ${state()}`,
  );
  await send(0, 8);
  await until(
    () => reads.byReader[first].length === 8,
    15_000,
    () => `the first member to read 8: ${state()}`,
  );

  if (leader === 'kj') startOurs();
  else await startKafkajs();
  await until(
    () => owned.kj.length === 2 && owned.ours.length === 2,
    20_000,
    () => `the rebalance to split 2 and 2: ${state()}`,
  );
  // The first to join kept the lead, so its assignor computed the split.
  expect(kjLeads).toBe(leader === 'kj');
  // Every partition is owned by exactly one member.
  expect([...owned.kj, ...owned.ours].sort()).toEqual([0, 1, 2, 3]);
  const groups = await admin.describeGroups([groupId]);
  expect(groups.groups[0]).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'RoundRobinAssigner' });
  expect(groups.groups[0]!.members).toHaveLength(2);

  await send(8, 8);
  await until(
    () => reads.byReader.kj.length + reads.byReader.ours.length >= 16,
    15_000,
    () => `both to read the next 8: ${state()}`,
  );
  // The second member read only the records written after it joined, two partitions' worth.
  expect(reads.byReader[second]).toHaveLength(4);

  // The leader leaves (LeaveGroup); the other takes every partition and reads on from the committed offsets.
  if (leader === 'kj') await kj.disconnect();
  else {
    await stopPolling!();
    await ours.close(5_000);
  }
  owned[first] = [];
  await until(
    () => owned[second].length === 4,
    20_000,
    () => `the remaining member to own all 4 partitions: ${state()}`,
  );
  await send(16, 8);
  await until(
    () => reads.byReader.kj.length + reads.byReader.ours.length >= 24,
    15_000,
    () => `the last 8 to be read: ${state()}`,
  );
  await new Promise((r) => setTimeout(r, 500)); // room for a duplicate to show up
  const all = [...reads.byReader.kj, ...reads.byReader.ours];
  expect(new Set(all).size).toBe(24);
  expect(all).toHaveLength(24);
  expect(reads.strays).toEqual([]);
}

describe('kafkajs 2.2.4 and KafkaConsumer in one classic group', () => {
  it('kafkajs leads: ours reads kafkajs assignment; the partitions split, every record is read once, ours takes all when kafkajs leaves', async () => {
    await mixedGroup('kj', 'mixed-kj-leads', 'mixed-kj-leads-g');
  });

  it('ours leads: kafkajs reads our assignment; the partitions split, every record is read once, kafkajs takes all when ours leaves', async () => {
    await mixedGroup('ours', 'mixed-ours-leads', 'mixed-ours-leads-g');
  });
});
