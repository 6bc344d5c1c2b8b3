/**
 * DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (APIs 90-92) against a real
 * broker over TCP, through kipgen's Admin and KafkaShareConsumer: the start offset and lag after consuming,
 * alter and delete on an empty group (and what the next consumer gets, also after a restart), the refusals
 * of Kafka's GroupMetadataManager (a group with members, an unknown group, a consumer group).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin, KafkaProducer, KafkaShareConsumer, ShareAcknowledgements, type ShareConsumerRecord } from '../../client/index.js';
import type { KafkaError } from '../../client/errors.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { FAST, eventually, tempDir } from './support/broker-harness.js';

const TOPICS = ['acked', 'busy', 'altered', 'deleted', 'errors', 'pending'];
let dataDir: string;
let broker: Broker;
let admin: Admin;

const bootstrap = (): string => `127.0.0.1:${broker.port}`;
const codeOf = (error: KafkaError | undefined): number | undefined => error?.code;

async function start(): Promise<void> {
  broker = await startBroker(
    {
      ...FAST,
      host: '127.0.0.1',
      port: 0,
      dataDir,
      topics: TOPICS.map((name) => ({ name, partitions: 1 })),
      shareGroup: { ...FAST.shareGroup, heartbeatIntervalMs: 100 },
    },
    { log: () => {} },
  );
  admin = new Admin({ bootstrapServers: bootstrap(), logger: null, defaultApiTimeoutMs: 10_000 });
}

async function stop(): Promise<void> {
  await admin?.close();
  await broker?.close();
}

async function produce(topic: string, count: number): Promise<void> {
  const producer = new KafkaProducer({ bootstrapServers: bootstrap(), lingerMs: 1, logger: null });
  for (let i = 0; i < count; i++) await producer.send({ topic, partition: 0, value: `v${i}` });
  await producer.close();
}

function consumer(groupId: string, topic: string): KafkaShareConsumer {
  const s = new KafkaShareConsumer({ bootstrapServers: bootstrap(), groupId, acknowledgementMode: 'explicit', fetchMaxWaitMs: 50, logger: null });
  s.subscribe([topic]);
  return s;
}

async function pollUntil(s: KafkaShareConsumer, count: number, timeoutMs = 8_000): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  const records: ShareConsumerRecord[] = [];
  while (records.length < count && Date.now() < deadline) records.push(...(await s.poll(Math.min(300, deadline - Date.now()))));
  return records;
}

/** Consumes `count` records with a fresh member, accepts them, and leaves: the offsets it got. */
async function consumeAndAccept(groupId: string, topic: string, count: number): Promise<bigint[]> {
  const s = consumer(groupId, topic);
  try {
    const records = await pollUntil(s, count);
    for (const r of records) s.acknowledge(r, 'accept');
    await s.commitSync();
    return records.map((r) => r.offset).sort((a, b) => (a < b ? -1 : 1));
  } finally {
    await s.close();
  }
}

async function startOffsetOf(groupId: string, topic: string): Promise<{ startOffset: bigint; lag: bigint | undefined } | null> {
  const listed = await admin.listShareGroupOffsets({ [groupId]: { topicPartitions: [{ topic, partition: 0 }] } });
  const info = listed.get(groupId).get(`${topic}-0`);
  if (info === undefined) throw new Error(`no answer for ${topic}-0`);
  return info === null ? null : { startOffset: info.startOffset, lag: info.lag };
}

beforeAll(async () => {
  dataDir = tempDir('kipgen-share-offsets-');
  await start();
});

afterAll(stop);

describe('DescribeShareGroupOffsets', () => {
  it('shows the start offset after the records were accepted, and the lag of what was produced since', async () => {
    await produce('acked', 4);
    expect(await consumeAndAccept('g-acked', 'acked', 4)).toEqual([0n, 1n, 2n, 3n]);
    expect(await startOffsetOf('g-acked', 'acked')).toEqual({ startOffset: 4n, lag: 0n });
    await produce('acked', 3);
    expect(await startOffsetOf('g-acked', 'acked')).toEqual({ startOffset: 4n, lag: 3n });
    // All partitions with state (topics null); a partition never consumed, an unknown topic: no offset.
    const all = await admin.listShareGroupOffsets(['g-acked']);
    expect([...all.get('g-acked').keys()]).toEqual(['acked-0']);
    const listed = await admin.listShareGroupOffsets({
      'g-acked': {
        topicPartitions: [
          { topic: 'busy', partition: 0 },
          { topic: 'missing', partition: 0 },
        ],
      },
    });
    expect(listed.get('g-acked')).toEqual(
      new Map([
        ['busy-0', null],
        ['missing-0', null],
      ]),
    );
    expect((await admin.listShareGroupOffsets(['g-nobody'])).get('g-nobody')).toEqual(new Map());
  });
});

describe('AlterShareGroupOffsets and DeleteShareGroupOffsets', () => {
  it('are refused with NON_EMPTY_GROUP while the group has a member', async () => {
    await produce('busy', 2);
    const member = consumer('g-busy', 'busy');
    try {
      expect(await pollUntil(member, 2)).toHaveLength(2);
      const altered = await admin.alterShareGroupOffsets('g-busy', [{ topic: 'busy', partition: 0, offset: 0n }]);
      expect(codeOf(altered.errors().get('busy-0'))).toBe(ErrorCode.NON_EMPTY_GROUP);
      const deleted = await admin.deleteShareGroupOffsets('g-busy', ['busy']);
      expect(codeOf(deleted.errors().get('busy'))).toBe(ErrorCode.NON_EMPTY_GROUP);
    } finally {
      await member.close();
    }
  });

  it('alter on an empty group moves the start offset back; the next consumer starts there, also after a broker restart', async () => {
    await produce('altered', 6);
    expect(await consumeAndAccept('g-altered', 'altered', 6)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    const altered = await admin.alterShareGroupOffsets('g-altered', [{ topic: 'altered', partition: 0, offset: 2n }]);
    expect(altered.errors()).toEqual(new Map());
    expect(await startOffsetOf('g-altered', 'altered')).toEqual({ startOffset: 2n, lag: 4n });
    await stop();
    await start();
    expect(await startOffsetOf('g-altered', 'altered')).toEqual({ startOffset: 2n, lag: 4n });
    expect(await consumeAndAccept('g-altered', 'altered', 4)).toEqual([2n, 3n, 4n, 5n]);
    expect(await startOffsetOf('g-altered', 'altered')).toEqual({ startOffset: 6n, lag: 0n });
  });

  it('alter on a group never seen sets where its first consumer starts', async () => {
    const altered = await admin.alterShareGroupOffsets('g-new', [{ topic: 'altered', partition: 0, offset: 5n }]);
    expect(altered.errors()).toEqual(new Map());
    expect(await consumeAndAccept('g-new', 'altered', 1)).toEqual([5n]);
  });

  it('delete on an empty group removes its state: describe shows none, the next consumer starts per share.auto.offset.reset (earliest)', async () => {
    await produce('deleted', 3);
    expect(await consumeAndAccept('g-deleted', 'deleted', 3)).toEqual([0n, 1n, 2n]);
    const deleted = await admin.deleteShareGroupOffsets('g-deleted', ['deleted']);
    expect(deleted.errors()).toEqual(new Map());
    expect(await startOffsetOf('g-deleted', 'deleted')).toBeNull();
    await stop();
    await start();
    expect(await startOffsetOf('g-deleted', 'deleted')).toBeNull();
    expect(await consumeAndAccept('g-deleted', 'deleted', 3)).toEqual([0n, 1n, 2n]);
  });

  it('answers Kafka’s codes: an unknown group, a consumer group, an unknown topic or partition, a topic without state', async () => {
    const unknownGroup = await admin.deleteShareGroupOffsets('g-unknown', ['errors']);
    expect(codeOf(unknownGroup.errors().get('errors'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const committed = await admin.alterConsumerGroupOffsets('g-consumer', [{ topic: 'errors', partition: 0, offset: 0n }]);
    expect(committed.errors()).toEqual(new Map());
    const notShare = await admin.alterShareGroupOffsets('g-consumer', [{ topic: 'errors', partition: 0, offset: 0n }]);
    expect(codeOf(notShare.errors().get('errors-0'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect(codeOf((await admin.deleteShareGroupOffsets('g-consumer', ['errors'])).errors().get('errors'))).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const altered = await admin.alterShareGroupOffsets('g-errors', [
      { topic: 'errors', partition: 0, offset: 0n },
      { topic: 'errors', partition: 3, offset: 0n },
      { topic: 'missing', partition: 0, offset: 0n },
    ]);
    expect(altered.errors().get('errors-0')).toBeUndefined();
    expect(codeOf(altered.errors().get('errors-3'))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(codeOf(altered.errors().get('missing-0'))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const deleted = await admin.deleteShareGroupOffsets('g-errors', ['errors', 'acked', 'missing']);
    expect(deleted.errors().get('errors')).toBeUndefined();
    expect(codeOf(deleted.errors().get('acked'))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(codeOf(deleted.errors().get('missing'))).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
  it('KIP-1289: a share partition with acknowledgements pending in an open transaction is neither altered nor deleted (CONCURRENT_TRANSACTIONS) until the transaction ends', async () => {
    await produce('pending', 2);
    const s = new KafkaShareConsumer({
      bootstrapServers: bootstrap(),
      groupId: 'g-pending',
      acknowledgementMode: 'transactional',
      fetchMaxWaitMs: 50,
      logger: null,
    });
    s.subscribe(['pending']);
    const producer = new KafkaProducer({ bootstrapServers: bootstrap(), transactionalId: 'g-pending-job', lingerMs: 1, logger: null });
    try {
      await producer.initTransactions();
      const records = await pollUntil(s, 2);
      expect(records).toHaveLength(2);
      producer.beginTransaction();
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
      await s.close();
      const altered = await admin.alterShareGroupOffsets('g-pending', [{ topic: 'pending', partition: 0, offset: 0n }]);
      expect(codeOf(altered.errors().get('pending-0'))).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      expect(codeOf((await admin.deleteShareGroupOffsets('g-pending', ['pending'])).errors().get('pending'))).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      await producer.commitTransaction();
      // The marker reaches the share coordinator after EndTxn answers: wait for the commit to show.
      await eventually(async () => (await startOffsetOf('g-pending', 'pending'))?.startOffset === 2n, 8_000, 'the commit');
      expect((await admin.alterShareGroupOffsets('g-pending', [{ topic: 'pending', partition: 0, offset: 1n }])).errors()).toEqual(new Map());
      expect(await startOffsetOf('g-pending', 'pending')).toEqual({ startOffset: 1n, lag: 1n });
    } finally {
      await s.close();
      await producer.close();
    }
  });
});
