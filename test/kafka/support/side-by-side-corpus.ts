/**
 * The side-by-side corpus: named request sequences, each written once and
 * run at two levels — every API at the lowest version both brokers serve,
 * then every API at the highest — against Kafka 4.4 and against kipgen's
 * broker, on names unique to the sequence (the same names on both brokers,
 * so names need no normalising).
 *
 * Success paths first in each sequence, then its error paths: unknown topics
 * and partitions, offsets out of range, out-of-order sequences, fenced
 * epochs, invalid transaction transitions, corrupt batches, and (in
 * `denied`) every API a non-super user without ACLs may call.
 */
import { randomBytes } from 'node:crypto';
import { encodeRecordBatch } from '../../../runtime/record-batch.js';
import { ApiKey, apiByKey } from '../../../generated/index.js';
import type { KafkaConnection } from '../../../connection/connection.js';
import { rawRequest, type Session } from './side-by-side.js';

export type Level = 'lowest' | 'highest';

export interface SequenceContext {
  s: Session;
  /** The version of `apiKey` this level sends. */
  v: (apiKey: number) => number;
  level: Level;
  /** `<sequence's unique base>-<suffix>`: the same on both brokers. */
  name: (suffix: string) => string;
  /** A uuid fixed for the sequence (client-generated member ids). */
  uuid: (suffix: string) => string;
}

export interface Sequence {
  name: string;
  run(ctx: SequenceContext): Promise<void>;
}

const TS = 1_700_000_000_000n;
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

export function batch(values: string[], o: { pid?: bigint; epoch?: number; seq?: number; txn?: boolean } = {}): Uint8Array {
  return encodeRecordBatch({
    baseTimestamp: TS,
    producerId: o.pid ?? -1n,
    producerEpoch: o.epoch ?? -1,
    baseSequence: o.seq ?? -1,
    isTransactional: o.txn ?? false,
    records: values.map((v, i) => ({ key: enc(`k${i}`), value: enc(v), timestamp: TS + BigInt(i) })),
  });
}

/** A batch whose CRC no longer matches: one byte of the last record's value flipped. */
function corrupt(values: string[]): Uint8Array {
  const b = Uint8Array.from(batch(values));
  b[b.length - 1] = b[b.length - 1]! ^ 0xff;
  return b;
}

async function createTopic(ctx: SequenceContext, name: string, partitions = 1): Promise<string> {
  const r = await ctx.s.call(
    'create topic',
    ApiKey.CreateTopics,
    7,
    { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 30_000 },
    { record: false },
  );
  if (r.topics[0].errorCode !== 0) throw new Error(`${ctx.s.target.name}: CreateTopics ${name}: error ${r.topics[0].errorCode}`);
  return r.topics[0].topicId as string;
}

/** A topic's id, waiting until the broker's metadata has its leader. */
async function topicId(ctx: SequenceContext, name: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const r = await ctx.s.call('metadata', ApiKey.Metadata, 12, { topics: [{ name }], allowAutoTopicCreation: false }, { record: false });
    const t = r.topics[0];
    if (t.errorCode === 0 && t.partitions.length > 0 && t.partitions.every((p: any) => p.leaderId >= 0)) return t.topicId;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${ctx.s.target.name}: topic ${name} has no leader after 10 s`);
}

async function topicWithData(ctx: SequenceContext, suffix: string, values: string[], partitions = 1): Promise<{ name: string; id: string }> {
  const name = ctx.name(suffix);
  await createTopic(ctx, name, partitions);
  const id = await topicId(ctx, name);
  if (values.length > 0) await produce(ctx, 'seed', name, id, batch(values), { record: false });
  return { name, id };
}

function produce(
  ctx: SequenceContext,
  label: string,
  topic: string,
  id: string,
  records: Uint8Array,
  o: { txnId?: string | null; partition?: number; record?: boolean; on?: KafkaConnection; acks?: number; retry?: boolean } = {},
): Promise<any> {
  return ctx.s.call(
    label,
    ApiKey.Produce,
    o.record === false ? 9 : ctx.v(ApiKey.Produce),
    {
      transactionalId: o.txnId ?? null,
      acks: o.acks ?? -1,
      timeoutMs: 10_000,
      topicData: [{ name: topic, topicId: id, partitionData: [{ index: o.partition ?? 0, records }] }],
    },
    // A transactional produce to a partition new to the transaction may meet NOT_LEADER_OR_FOLLOWER (6) on Kafka
    // while its verification settles; a client retries it.
    { record: o.record, on: o.on, retryOn: o.retry ? [6] : undefined },
  );
}

function fetch(
  ctx: SequenceContext,
  label: string,
  topic: string,
  id: string,
  o: { offset?: bigint; partition?: number; isolation?: number; on?: KafkaConnection } = {},
): Promise<any> {
  return ctx.s.call(
    label,
    ApiKey.Fetch,
    ctx.v(ApiKey.Fetch),
    {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: o.isolation ?? 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          topicId: id,
          partitions: [
            {
              partition: o.partition ?? 0,
              fetchOffset: o.offset ?? 0n,
              partitionMaxBytes: 1 << 20,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
            },
          ],
        },
      ],
      rackId: '',
    },
    { on: o.on },
  );
}

function listOffsets(
  ctx: SequenceContext,
  label: string,
  topic: string,
  timestamps: bigint[],
  o: { partition?: number; isolation?: number; on?: KafkaConnection; record?: boolean } = {},
): Promise<any> {
  return ctx.s.call(
    label,
    ApiKey.ListOffsets,
    ctx.v(ApiKey.ListOffsets),
    {
      replicaId: -1,
      isolationLevel: o.isolation ?? 0,
      timeoutMs: 10_000,
      topics: [{ name: topic, partitions: timestamps.map((timestamp) => ({ partitionIndex: o.partition ?? 0, currentLeaderEpoch: -1, timestamp })) }],
    },
    { on: o.on, record: o.record },
  );
}

function metadata(ctx: SequenceContext, label: string, topics: string[], o: { on?: KafkaConnection } = {}): Promise<any> {
  const v = ctx.v(ApiKey.Metadata);
  return ctx.s.call(
    label,
    ApiKey.Metadata,
    v,
    { topics: topics.map((name) => ({ name })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false },
    { on: o.on },
  );
}

/** ConsumerProtocolSubscription v0: the topics, no user data (what a classic consumer puts in JoinGroup). */
function subscription(topics: string[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]!.writeInt32BE(topics.length);
  for (const t of topics) {
    const len = Buffer.alloc(2);
    len.writeInt16BE(Buffer.byteLength(t));
    parts.push(len, Buffer.from(t));
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  return new Uint8Array(Buffer.concat(parts));
}

function initProducerId(
  ctx: SequenceContext,
  label: string,
  txnId: string | null,
  o: { timeoutMs?: number; on?: KafkaConnection; pid?: bigint; epoch?: number } = {},
): Promise<any> {
  return ctx.s.call(
    label,
    ApiKey.InitProducerId,
    ctx.v(ApiKey.InitProducerId),
    {
      transactionalId: txnId,
      transactionTimeoutMs: o.timeoutMs ?? 60_000,
      producerId: o.pid ?? -1n,
      producerEpoch: o.epoch ?? -1,
      enable2Pc: false,
      keepPreparedTxn: false,
    },
    { on: o.on },
  );
}

function endTxn(ctx: SequenceContext, label: string, txnId: string, pid: bigint, epoch: number, committed: boolean): Promise<any> {
  return ctx.s.call(label, ApiKey.EndTxn, ctx.v(ApiKey.EndTxn), { transactionalId: txnId, producerId: pid, producerEpoch: epoch, committed });
}

/** TV1 clients (AddPartitionsToTxn ≤ v3) add partitions themselves; at v4+ only brokers do, so the highest level relies on Produce v12+ adding them (TV2). */
async function addPartitionsIfClassic(
  ctx: SequenceContext,
  label: string,
  txnId: string,
  pid: bigint,
  epoch: number,
  topic: string,
  partitions: number[],
): Promise<void> {
  const v = ctx.v(ApiKey.AddPartitionsToTxn);
  if (v > 3) return;
  await ctx.s.call(label, ApiKey.AddPartitionsToTxn, v, {
    v3AndBelowTransactionalId: txnId,
    v3AndBelowProducerId: pid,
    v3AndBelowProducerEpoch: epoch,
    v3AndBelowTopics: [{ name: topic, partitions }],
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A group's first heartbeat answer without its assignment: Kafka 4.4 computes assignments apart from the heartbeat,
 * so whether the first answer already carries one is timing; the 'heartbeat until assigned' step compares it.
 */
const withoutAssignment = (j: any): any => ({ ...j, assignment: '(not compared in the first answer)' });

/**
 * Waits (nothing recorded, at most 10 s) until the partition's high watermark
 * reaches `offset`: Kafka moves it past a transaction marker some time after
 * the marker is written, so a fetch right after a commit may not show it yet.
 */
async function highWatermarkAtLeast(ctx: SequenceContext, topic: string, offset: bigint, partition = 0): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const r = await listOffsets(ctx, 'high watermark', topic, [-1n], { partition, record: false });
    if (r.topics[0].partitions[0].offset >= offset) return;
    await sleep(250);
  }
}

/** Until `done(response)` (at most `tries` times, `ms` apart): only the last response is compared. */
async function until(ctx: SequenceContext, send: (record: boolean) => Promise<any>, done: (r: any) => boolean, tries = 40, ms = 250): Promise<any> {
  for (let i = 0; i < tries - 1; i++) {
    const r = await send(false);
    if (done(r)) break;
    await sleep(ms);
  }
  return send(true);
}

export const corpus: Sequence[] = [
  {
    name: 'produce, fetch, list offsets, metadata',
    async run(ctx) {
      const t = await topicWithData(ctx, 'data', []);
      await metadata(ctx, 'metadata of the topic', [t.name]);
      await produce(ctx, 'produce 3 records', t.name, t.id, batch(['a', 'b', 'c']));
      await produce(ctx, 'produce 1 record', t.name, t.id, batch(['d']));
      await fetch(ctx, 'fetch from 0', t.name, t.id);
      await fetch(ctx, 'fetch from 3', t.name, t.id, { offset: 3n });
      await listOffsets(ctx, 'list offsets earliest', t.name, [-2n]);
      await listOffsets(ctx, 'list offsets latest', t.name, [-1n]);
      await listOffsets(ctx, 'list offsets naming the partition twice', t.name, [-2n, -1n]);
      if (ctx.v(ApiKey.ListOffsets) >= 7) await listOffsets(ctx, 'list offsets max timestamp', t.name, [-3n]);
      await listOffsets(ctx, 'list offsets by timestamp', t.name, [TS + 1n]);
      // Error paths.
      await metadata(ctx, 'metadata of an unknown topic', [ctx.name('missing')]);
      await produce(ctx, 'produce to an unknown topic', ctx.name('missing'), 'AAAAAAAAAAAAAAAAAAAAAQ', batch(['x']));
      await produce(ctx, 'produce to an unknown partition', t.name, t.id, batch(['x']), { partition: 7 });
      await produce(ctx, 'produce a corrupt batch', t.name, t.id, corrupt(['x', 'y']));
      await fetch(ctx, 'fetch an unknown partition', t.name, t.id, { partition: 7 });
      await fetch(ctx, 'fetch past the end', t.name, t.id, { offset: 100n });
      await listOffsets(ctx, 'list offsets of an unknown partition', t.name, [-1n], { partition: 7 });
      await fetch(ctx, 'fetch after the errors', t.name, t.id);
    },
  },
  {
    name: 'idempotent producer',
    async run(ctx) {
      const t = await topicWithData(ctx, 'idem', []);
      const init = await initProducerId(ctx, 'init producer id (idempotent)', null);
      const pid = init.producerId as bigint;
      const epoch = init.producerEpoch as number;
      await produce(ctx, 'sequence 0', t.name, t.id, batch(['a', 'b'], { pid, epoch, seq: 0 }));
      await produce(ctx, 'sequence 0 again (duplicate)', t.name, t.id, batch(['a', 'b'], { pid, epoch, seq: 0 }));
      await produce(ctx, 'sequence 2', t.name, t.id, batch(['c'], { pid, epoch, seq: 2 }));
      await produce(ctx, 'sequence 7 (gap): out of order', t.name, t.id, batch(['x'], { pid, epoch, seq: 7 }));
      await produce(ctx, 'next epoch at sequence 5: out of order', t.name, t.id, batch(['x'], { pid, epoch: epoch + 1, seq: 5 }));
      await produce(ctx, 'next epoch at sequence 0', t.name, t.id, batch(['e'], { pid, epoch: epoch + 1, seq: 0 }));
      await produce(ctx, 'the old epoch after the new one', t.name, t.id, batch(['x'], { pid, epoch, seq: 3 }));
      await fetch(ctx, 'fetch all', t.name, t.id);
    },
  },
  {
    name: 'transaction commit',
    async run(ctx) {
      const t = await topicWithData(ctx, 'txn', [], 2);
      const txnId = ctx.name('tid');
      const group = ctx.name('group');
      await ctx.s.call('find the transaction coordinator', ApiKey.FindCoordinator, ctx.v(ApiKey.FindCoordinator), {
        key: txnId,
        keyType: 1,
        coordinatorKeys: [txnId],
      });
      const init = await initProducerId(ctx, 'init producer id', txnId);
      const pid = init.producerId as bigint;
      const epoch = init.producerEpoch as number;
      await addPartitionsIfClassic(ctx, 'add partitions', txnId, pid, epoch, t.name, [0, 1]);
      await produce(ctx, 'transactional produce p0', t.name, t.id, batch(['t0', 't1'], { pid, epoch, seq: 0, txn: true }), { txnId, retry: true });
      await produce(ctx, 'transactional produce p1', t.name, t.id, batch(['t2'], { pid, epoch, seq: 0, txn: true }), { txnId, partition: 1, retry: true });
      await fetch(ctx, 'read_committed before the commit', t.name, t.id, { isolation: 1 });
      await listOffsets(ctx, 'last stable offset before the commit', t.name, [-1n], { isolation: 1 });
      await ctx.s.call('add offsets', ApiKey.AddOffsetsToTxn, ctx.v(ApiKey.AddOffsetsToTxn), {
        transactionalId: txnId,
        producerId: pid,
        producerEpoch: epoch,
        groupId: group,
      });
      await ctx.s.call('txn offset commit', ApiKey.TxnOffsetCommit, ctx.v(ApiKey.TxnOffsetCommit), {
        transactionalId: txnId,
        groupId: group,
        producerId: pid,
        producerEpoch: epoch,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: t.name, topicId: t.id, partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
      });
      const ended = await endTxn(ctx, 'commit', txnId, pid, epoch, true);
      // The markers are written after the answer (both brokers): wait for the partition to be stable.
      await until(
        ctx,
        (record) => listOffsets(ctx, 'last stable offset after the commit', t.name, [-1n], { isolation: 1, record }),
        (r) => r.topics[0].partitions[0].offset >= 3n,
      );
      await highWatermarkAtLeast(ctx, t.name, 3n);
      await fetch(ctx, 'read_committed after the commit', t.name, t.id, { isolation: 1 });
      // The group's offsets become stable when the marker reaches __consumer_offsets, after EndTxn answered: until then
      // RequireStable (v7+) answers UNSTABLE_OFFSET_COMMIT, and older versions no offset. Wait (up to 10 s) for it on both.
      await until(
        ctx,
        (record) =>
          ctx.s.call(
            'offset fetch',
            ApiKey.OffsetFetch,
            ctx.v(ApiKey.OffsetFetch),
            {
              groupId: group,
              topics: [{ name: t.name, partitionIndexes: [0] }],
              groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: t.name, topicId: t.id, partitionIndexes: [0] }] }],
              requireStable: true,
            },
            { record },
          ),
        (r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)).includes('"committedOffset":5'),
      );
      void ended;
    },
  },
  {
    name: 'transaction errors',
    async run(ctx) {
      const t = await topicWithData(ctx, 'txnerr', []);
      const txnId = ctx.name('tid');
      await initProducerId(ctx, 'init with a timeout above the maximum', txnId, { timeoutMs: 3_600_000 });
      const init = await initProducerId(ctx, 'init producer id', txnId);
      const pid = init.producerId as bigint;
      const epoch = init.producerEpoch as number;
      await endTxn(ctx, 'commit with no transaction open', txnId, pid, epoch, true);
      await ctx.s.call('add offsets under another producer id', ApiKey.AddOffsetsToTxn, ctx.v(ApiKey.AddOffsetsToTxn), {
        transactionalId: txnId,
        producerId: pid + 1000n,
        producerEpoch: epoch,
        groupId: ctx.name('g'),
      });
      await addPartitionsIfClassic(ctx, 'add partitions', txnId, pid, epoch, t.name, [0]);
      await produce(ctx, 'transactional produce', t.name, t.id, batch(['a'], { pid, epoch, seq: 0, txn: true }), { txnId, retry: true });
      await ctx.s.call('add offsets with an unknown transactional id', ApiKey.AddOffsetsToTxn, ctx.v(ApiKey.AddOffsetsToTxn), {
        transactionalId: ctx.name('nobody'),
        producerId: pid,
        producerEpoch: epoch,
        groupId: ctx.name('g'),
      });
      // A second InitProducerId fences the first producer (and aborts its transaction).
      const second = await initProducerId(ctx, 'init again: fences the first', txnId);
      // The abort markers are written after InitProducerId answers: wait for them (the partition stable again), so what follows does not race them.
      await until(
        ctx,
        (record) => listOffsets(ctx, 'last stable offset after the fencing', t.name, [-1n], { isolation: 1, record }),
        (r) => r.topics[0].partitions[0].offset >= 2n,
      );
      await produce(ctx, 'produce under the fenced epoch', t.name, t.id, batch(['x'], { pid, epoch, seq: 1, txn: true }), { txnId });
      await endTxn(ctx, 'commit under the fenced epoch', txnId, pid, epoch, true);
      await until(
        ctx,
        (record) =>
          ctx.s.call(
            'abort with no transaction open',
            ApiKey.EndTxn,
            ctx.v(ApiKey.EndTxn),
            { transactionalId: txnId, producerId: second.producerId, producerEpoch: second.producerEpoch, committed: false },
            { record },
          ),
        (r) => r.errorCode !== 51,
      );
      await highWatermarkAtLeast(ctx, t.name, 2n);
      await fetch(ctx, 'read_uncommitted: the aborted record and its marker', t.name, t.id);
    },
  },
  {
    name: 'classic group',
    async run(ctx) {
      const t = await topicWithData(ctx, 'cg', ['a']);
      const group = ctx.name('group');
      const join = (memberId: string, label: string): Promise<any> =>
        ctx.s.call(label, ApiKey.JoinGroup, ctx.v(ApiKey.JoinGroup), {
          groupId: group,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: subscription([t.name]) }],
          reason: null,
        });
      await ctx.s.call('find the group coordinator', ApiKey.FindCoordinator, ctx.v(ApiKey.FindCoordinator), {
        key: group,
        keyType: 0,
        coordinatorKeys: [group],
      });
      let joined = await join('', 'join');
      if (joined.errorCode === 79) joined = await join(joined.memberId, 'join with the member id');
      const memberId = joined.memberId as string;
      const gen = joined.generationId as number;
      await ctx.s.call('sync', ApiKey.SyncGroup, ctx.v(ApiKey.SyncGroup), {
        groupId: group,
        generationId: gen,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment: new Uint8Array([0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]) }],
      });
      const hb = (label: string, generationId: number, member: string): Promise<any> =>
        ctx.s.call(label, ApiKey.Heartbeat, ctx.v(ApiKey.Heartbeat), { groupId: group, generationId, memberId: member, groupInstanceId: null });
      await hb('heartbeat', gen, memberId);
      await hb('heartbeat with an old generation', gen + 5, memberId);
      await hb('heartbeat of an unknown member', gen, 'nobody');
      const commit = (label: string, generation: number, member: string, partition = 0): Promise<any> =>
        ctx.s.call(label, ApiKey.OffsetCommit, ctx.v(ApiKey.OffsetCommit), {
          groupId: group,
          generationIdOrMemberEpoch: generation,
          memberId: member,
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [
            {
              name: t.name,
              topicId: t.id,
              partitions: [{ partitionIndex: partition, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: 'meta' }],
            },
          ],
        });
      await commit('commit', gen, memberId);
      await commit('commit with an old generation', gen + 5, memberId);
      await commit('commit to an unknown partition', gen, memberId, 9);
      await ctx.s.call('offset fetch', ApiKey.OffsetFetch, ctx.v(ApiKey.OffsetFetch), {
        groupId: group,
        topics: [{ name: t.name, partitionIndexes: [0, 9] }],
        groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: t.name, topicId: t.id, partitionIndexes: [0, 9] }] }],
        requireStable: false,
      });
      await ctx.s.call('describe the group and an unknown one', ApiKey.DescribeGroups, ctx.v(ApiKey.DescribeGroups), {
        groups: [group, ctx.name('nogroup')],
        includeAuthorizedOperations: false,
      });
      await ctx.s.call(
        'list groups (this one)',
        ApiKey.ListGroups,
        ctx.v(ApiKey.ListGroups),
        { statesFilter: [], typesFilter: [] },
        {
          pick: (j) => ({ ...j, groups: j.groups.filter((g: any) => g.groupId === group) }),
        },
      );
      await ctx.s.call('delete a non-empty group', ApiKey.DeleteGroups, ctx.v(ApiKey.DeleteGroups), { groupsNames: [group] });
      await ctx.s.call('leave', ApiKey.LeaveGroup, ctx.v(ApiKey.LeaveGroup), {
        groupId: group,
        memberId,
        members: [{ memberId, groupInstanceId: null, reason: null }],
      });
      await ctx.s.call('describe after leaving', ApiKey.DescribeGroups, ctx.v(ApiKey.DescribeGroups), { groups: [group], includeAuthorizedOperations: false });
      await ctx.s.call('delete the empty group and an unknown one', ApiKey.DeleteGroups, ctx.v(ApiKey.DeleteGroups), {
        groupsNames: [group, ctx.name('nogroup')],
      });
    },
  },
  {
    name: 'consumer group (KIP-848)',
    async run(ctx) {
      const t = await topicWithData(ctx, 'kip848', ['a'], 2);
      const group = ctx.name('group');
      const memberId = ctx.uuid('member');
      const heartbeat = (label: string, epoch: number, fields: Record<string, unknown>, record = true): Promise<any> =>
        ctx.s.call(
          label,
          ApiKey.ConsumerGroupHeartbeat,
          ctx.v(ApiKey.ConsumerGroupHeartbeat),
          { groupId: group, memberId, memberEpoch: epoch, rebalanceTimeoutMs: -1, ...fields },
          { record, pick: label === 'join' ? withoutAssignment : undefined },
        );
      const joined = await heartbeat('join', 0, { rebalanceTimeoutMs: 30_000, subscribedTopicNames: [t.name], topicPartitions: [], serverAssignor: 'uniform' });
      let epoch = joined.memberEpoch as number;
      const assigned = await until(
        ctx,
        (record) => heartbeat('heartbeat until assigned', epoch, {}, record).then((r) => ((epoch = r.memberEpoch), r)),
        (r) => (r.assignment?.topicPartitions ?? []).length > 0,
      );
      await heartbeat('heartbeat with a wrong epoch', (assigned.memberEpoch as number) + 7, {});
      await ctx.s.call('describe', ApiKey.ConsumerGroupDescribe, ctx.v(ApiKey.ConsumerGroupDescribe), {
        groupIds: [group, ctx.name('nogroup')],
        includeAuthorizedOperations: false,
      });
      await heartbeat('leave', -1, {});
    },
  },
  {
    name: 'share group',
    async run(ctx) {
      const t = await topicWithData(ctx, 'share', ['s0', 's1', 's2']);
      const group = ctx.name('group');
      const memberId = ctx.uuid('member');
      await ctx.s.call('share group configs', ApiKey.IncrementalAlterConfigs, ctx.v(ApiKey.IncrementalAlterConfigs), {
        resources: [{ resourceType: 32, resourceName: group, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
        validateOnly: false,
      });
      const heartbeat = (label: string, epoch: number, fields: Record<string, unknown>, record = true): Promise<any> =>
        ctx.s.call(
          label,
          ApiKey.ShareGroupHeartbeat,
          ctx.v(ApiKey.ShareGroupHeartbeat),
          { groupId: group, memberId, memberEpoch: epoch, rackId: null, subscribedTopicNames: null, ...fields },
          { record, pick: label === 'join' ? withoutAssignment : undefined },
        );
      const joined = await heartbeat('join', 0, { subscribedTopicNames: [t.name] });
      let epoch = joined.memberEpoch as number;
      const assigned = await until(
        ctx,
        (record) => heartbeat('heartbeat until assigned', epoch, {}, record).then((r) => ((epoch = r.memberEpoch), r)),
        (r) => (r.assignment?.topicPartitions ?? []).length > 0,
        40,
        500,
      );
      epoch = assigned.memberEpoch;
      const shareFetch = (label: string, sessionEpoch: number, member = memberId, record = true, acks: unknown[] = []): Promise<any> =>
        ctx.s.call(
          label,
          ApiKey.ShareFetch,
          ctx.v(ApiKey.ShareFetch),
          {
            groupId: group,
            memberId: member,
            shareSessionEpoch: sessionEpoch,
            maxWaitMs: 500,
            minBytes: 1,
            maxBytes: 1 << 20,
            maxRecords: 10,
            batchSize: 10,
            topics: [{ topicId: t.id, partitions: [{ partitionIndex: 0, partitionMaxBytes: 1 << 20, acknowledgementBatches: acks }] }],
            forgottenTopicsData: [],
          },
          { record },
        );
      await until(
        ctx,
        (record) => shareFetch('share fetch until records', 0, memberId, record),
        () => true,
        1,
      );
      let fetched = ctx.s.steps.at(-1)!;
      // Kafka may answer the session's first fetch before the share partition is initialised: fetch on (epoch 1, 2, …) until records come.
      let sessionEpoch = 1;
      while (JSON.stringify(fetched.response).indexOf('"s0"') < 0 && sessionEpoch < 20) {
        ctx.s.steps.pop();
        await shareFetch('share fetch until records', sessionEpoch++);
        fetched = ctx.s.steps.at(-1)!;
      }
      await ctx.s.call('share acknowledge', ApiKey.ShareAcknowledge, ctx.v(ApiKey.ShareAcknowledge), {
        groupId: group,
        memberId,
        shareSessionEpoch: sessionEpoch++,
        topics: [{ topicId: t.id, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [1] }] }] }],
      });
      await ctx.s.call('describe', ApiKey.ShareGroupDescribe, ctx.v(ApiKey.ShareGroupDescribe), {
        groupIds: [group, ctx.name('nogroup')],
        includeAuthorizedOperations: false,
      });
      // KIP-932's share-group offsets (APIs 90-92): refused while the group has a member, then on the empty group.
      const offsets = (label: string): Promise<any> =>
        ctx.s.call(label, ApiKey.DescribeShareGroupOffsets, ctx.v(ApiKey.DescribeShareGroupOffsets), {
          groups: [
            {
              groupId: group,
              topics: [
                { topicName: t.name, partitions: [0] },
                { topicName: ctx.name('missing'), partitions: [0] },
              ],
            },
            { groupId: group, topics: null },
            { groupId: ctx.name('nogroup'), topics: null },
          ],
        });
      const alter = (label: string, topics: unknown[]): Promise<any> =>
        ctx.s.call(label, ApiKey.AlterShareGroupOffsets, ctx.v(ApiKey.AlterShareGroupOffsets), { groupId: group, topics });
      const remove = (label: string, groupId: string, topicNames: string[]): Promise<any> =>
        ctx.s.call(label, ApiKey.DeleteShareGroupOffsets, ctx.v(ApiKey.DeleteShareGroupOffsets), {
          groupId,
          topics: topicNames.map((topicName) => ({ topicName })),
        });
      await offsets('describe offsets');
      await alter('alter offsets of a group with a member', [{ topicName: t.name, partitions: [{ partitionIndex: 0, startOffset: 1n }] }]);
      await remove('delete offsets of a group with a member', group, [t.name]);
      await shareFetch('share fetch by an unknown member', 0, ctx.uuid('stranger'));
      await shareFetch('share fetch at a wrong session epoch', sessionEpoch + 5);
      await heartbeat('heartbeat with a wrong epoch', epoch + 9, {});
      await heartbeat('leave', -1, {});
      await alter('alter offsets', [
        {
          topicName: t.name,
          partitions: [
            { partitionIndex: 0, startOffset: 1n },
            { partitionIndex: 5, startOffset: 0n },
          ],
        },
        { topicName: ctx.name('missing'), partitions: [{ partitionIndex: 0, startOffset: 0n }] },
      ]);
      await offsets('describe offsets after alter');
      await remove('delete offsets', group, [t.name, ctx.name('missing')]);
      await offsets('describe offsets after delete');
      await remove('delete offsets of an unknown group', ctx.name('nogroup'), [t.name]);
    },
  },
  {
    name: 'topic admin',
    async run(ctx) {
      const existing = await topicWithData(ctx, 'exists', []);
      const fresh = ctx.name('fresh');
      const create = (label: string, topics: unknown[], validateOnly = false): Promise<any> =>
        ctx.s.call(
          label,
          ApiKey.CreateTopics,
          ctx.v(ApiKey.CreateTopics),
          { topics, timeoutMs: 30_000, validateOnly },
          {
            // The full list of a new topic's configs (v5+) is compared for the ones the request set; the rest are broker defaults (see the differences file).
            pick: (j) => ({
              ...j,
              topics: j.topics.map((x: any) =>
                x.configs ? { ...x, configs: x.configs.filter((c: any) => c.name === 'retention.ms' || c.name === 'cleanup.policy') } : x,
              ),
            }),
          },
        );
      await create(
        'create (validate only)',
        [{ name: fresh, numPartitions: 2, replicationFactor: 1, configs: [{ name: 'retention.ms', value: '600000' }] }],
        true,
      );
      await create('create', [{ name: fresh, numPartitions: 2, replicationFactor: 1, configs: [{ name: 'retention.ms', value: '600000' }] }]);
      await create('create: errors', [
        { name: existing.name, numPartitions: 1, replicationFactor: 1 },
        { name: ctx.name('zero'), numPartitions: 0, replicationFactor: 1 },
        { name: ctx.name('rf'), numPartitions: 1, replicationFactor: 3 },
        { name: `${ctx.name('bad')}/name`, numPartitions: 1, replicationFactor: 1 },
        { name: ctx.name('badconfig'), numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: 'soon' }] },
      ]);
      await topicId(ctx, fresh);
      await ctx.s.call('create partitions', ApiKey.CreatePartitions, ctx.v(ApiKey.CreatePartitions), {
        topics: [
          { name: fresh, count: 3, assignments: null },
          { name: existing.name, count: 1, assignments: null },
          { name: ctx.name('missing'), count: 2, assignments: null },
        ],
        timeoutMs: 30_000,
        validateOnly: false,
      });
      const describe = (label: string, record = true): Promise<any> =>
        ctx.s.call(
          label,
          ApiKey.DescribeConfigs,
          ctx.v(ApiKey.DescribeConfigs),
          {
            resources: [
              { resourceType: 2, resourceName: fresh, configurationKeys: ['retention.ms', 'cleanup.policy', 'max.message.bytes'] },
              { resourceType: 2, resourceName: ctx.name('missing'), configurationKeys: ['retention.ms'] },
            ],
            includeSynonyms: false,
            includeDocumentation: false,
          },
          { record },
        );
      await describe('describe configs');
      await ctx.s.call('incremental alter configs', ApiKey.IncrementalAlterConfigs, ctx.v(ApiKey.IncrementalAlterConfigs), {
        resources: [
          {
            resourceType: 2,
            resourceName: fresh,
            configs: [
              { name: 'retention.ms', configOperation: 0, value: '700000' },
              { name: 'cleanup.policy', configOperation: 0, value: 'compact' },
            ],
          },
          { resourceType: 2, resourceName: existing.name, configs: [{ name: 'no.such.config', configOperation: 0, value: '1' }] },
          { resourceType: 2, resourceName: ctx.name('missing'), configs: [{ name: 'retention.ms', configOperation: 0, value: '1' }] },
        ],
        validateOnly: false,
      });
      // Kafka applies the change through its controller's metadata, a moment after answering: wait for it (up to 10 s).
      await until(
        ctx,
        (record) => describe('describe configs after altering', record),
        (r) => r.results[0].configs.some((c: any) => c.name === 'retention.ms' && c.value === '700000'),
      );
      await ctx.s.call('delete topics', ApiKey.DeleteTopics, ctx.v(ApiKey.DeleteTopics), {
        topicNames: [fresh, ctx.name('missing')],
        topics: [
          { name: fresh, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' },
          { name: ctx.name('missing'), topicId: 'AAAAAAAAAAAAAAAAAAAAAA' },
        ],
        timeoutMs: 30_000,
      });
    },
  },
  {
    name: 'acls',
    async run(ctx) {
      const resource = ctx.name('acl-topic');
      const filter = {
        resourceTypeFilter: 2,
        resourceNameFilter: resource,
        patternTypeFilter: 3,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      };
      await ctx.s.call('create acls', ApiKey.CreateAcls, ctx.v(ApiKey.CreateAcls), {
        creations: [
          { resourceType: 2, resourceName: resource, resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 },
          { resourceType: 2, resourceName: resource, resourcePatternType: 3, principal: 'User:bob', host: '*', operation: 4, permissionType: 2 },
        ],
      });
      // Each invalid binding alone: Kafka fails every binding of a request with one it cannot build.
      await ctx.s.call('create an acl on resource type ANY', ApiKey.CreateAcls, ctx.v(ApiKey.CreateAcls), {
        creations: [{ resourceType: 1, resourceName: resource, resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }],
      });
      await ctx.s.call('create an acl for a principal without a type', ApiKey.CreateAcls, ctx.v(ApiKey.CreateAcls), {
        creations: [{ resourceType: 2, resourceName: resource, resourcePatternType: 3, principal: 'alice', host: '*', operation: 3, permissionType: 3 }],
      });
      await until(
        ctx,
        (record) => ctx.s.call('describe acls', ApiKey.DescribeAcls, ctx.v(ApiKey.DescribeAcls), filter, { record }),
        (r) => r.resources.length > 0 && r.resources[0].acls.length === 2,
      );
      await ctx.s.call('delete acls', ApiKey.DeleteAcls, ctx.v(ApiKey.DeleteAcls), { filters: [filter] });
      // Kafka applies the deletion through its controller's metadata, a moment after answering: wait (up to 10 s).
      await until(
        ctx,
        (record) => ctx.s.call('describe acls after deleting', ApiKey.DescribeAcls, ctx.v(ApiKey.DescribeAcls), filter, { record }),
        (r) => r.resources.length === 0,
      );
    },
  },
  {
    name: 'cluster and versions',
    async run(ctx) {
      // APIs our codecs do not have (Kafka's admin, controller and streams APIs) are left to the coverage check, which lists them.
      await ctx.s.call(
        'api versions',
        ApiKey.ApiVersions,
        ctx.v(ApiKey.ApiVersions),
        { clientSoftwareName: 'kipgen-side-by-side', clientSoftwareVersion: '1.0' },
        {
          pick: (j) => ({ ...j, apiKeys: j.apiKeys.filter((k: any) => apiByKey(k.apiKey) !== undefined) }),
        },
      );
      await ctx.s.call('describe cluster', ApiKey.DescribeCluster, ctx.v(ApiKey.DescribeCluster), {
        includeClusterAuthorizedOperations: false,
        endpointType: 1,
        includeFencedBrokers: false,
      });
      await ctx.s.call('sasl handshake on PLAINTEXT', ApiKey.SaslHandshake, ctx.v(ApiKey.SaslHandshake), { mechanism: 'PLAIN' });
      if (ctx.level === 'highest') {
        ctx.s.note('api versions v127 (unsupported)', ApiKey.ApiVersions, 127, await rawRequest(ctx.s.target.plaintext, ApiKey.ApiVersions, 127));
        ctx.s.note('metadata v99 (unsupported)', ApiKey.Metadata, 99, await rawRequest(ctx.s.target.plaintext, ApiKey.Metadata, 99));
        ctx.s.note('api key 9999 (unknown)', 9999, 0, await rawRequest(ctx.s.target.plaintext, 9999, 0));
      }
      // KIP-1289's APIs, each on its own connection: Kafka 4.4 does not know them and closes the connection; kipgen
      // answers (an unknown transactional id). The listed kip-1289 difference.
      const kip1289: Array<[number, Record<string, unknown>]> = [
        [ApiKey.AddShareAcksToTxn, { transactionalId: ctx.name('tid'), producerId: 1n, producerEpoch: 0, groupId: ctx.name('group'), topics: [] }],
        [ApiKey.TxnShareAcknowledge, { groupId: ctx.name('group'), transactionalId: ctx.name('tid'), producerId: 1n, producerEpoch: 0, topics: [] }],
      ];
      for (const [key, fields] of kip1289) {
        const v = ctx.v(key);
        try {
          await ctx.s.call(`${apiByKey(key)!.name} (KIP-1289)`, key, v, fields, { on: await ctx.s.open(ctx.s.target.plaintext), timeoutMs: 10_000 });
        } catch (error) {
          ctx.s.note(`${apiByKey(key)!.name} (KIP-1289)`, key, v, { outcome: 'no answer', error: (error as Error).name });
        }
      }
    },
  },
  {
    name: 'transaction tools (KIP-664) and offset delete',
    async run(ctx) {
      const t = await topicWithData(ctx, 'kip664', [], 2);
      const txnId = ctx.name('hanging');
      const init = await initProducerId(ctx, 'init producer id', txnId);
      const pid = init.producerId as bigint;
      const epoch = init.producerEpoch as number;
      await addPartitionsIfClassic(ctx, 'add partitions', txnId, pid, epoch, t.name, [0]);
      await produce(ctx, 'transactional produce, left open', t.name, t.id, batch(['h0', 'h1'], { pid, epoch, seq: 0, txn: true }), { txnId, retry: true });
      await ctx.s.call('describe producers', ApiKey.DescribeProducers, ctx.v(ApiKey.DescribeProducers), {
        topics: [
          { name: t.name, partitionIndexes: [0, 1, 7] },
          { name: ctx.name('missing'), partitionIndexes: [0] },
        ],
      });
      await ctx.s.call('describe transactions', ApiKey.DescribeTransactions, ctx.v(ApiKey.DescribeTransactions), {
        transactionalIds: [txnId, ctx.name('unknown-txn')],
      });
      await ctx.s.call('list transactions by state and producer id', ApiKey.ListTransactions, ctx.v(ApiKey.ListTransactions), {
        stateFilters: ['Ongoing', 'Sleeping'],
        producerIdFilters: [pid],
        durationFilter: -1n,
        transactionalIdPattern: txnId,
      });
      await endTxn(ctx, 'abort', txnId, pid, epoch, false);
      const group = ctx.name('offsets');
      await ctx.s.call('commit two offsets', ApiKey.OffsetCommit, ctx.v(ApiKey.OffsetCommit), {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          {
            name: t.name,
            topicId: t.id,
            partitions: [0, 1].map((partitionIndex) => ({ partitionIndex, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' })),
          },
        ],
      });
      const offsetDelete = (label: string, groupId: string, topics: { name: string; partitions: { partitionIndex: number }[] }[]) =>
        ctx.s.call(label, ApiKey.OffsetDelete, ctx.v(ApiKey.OffsetDelete), { groupId, topics });
      await offsetDelete('offset delete: one partition, an unknown partition and topic', group, [
        { name: t.name, partitions: [{ partitionIndex: 0 }, { partitionIndex: 9 }] },
        { name: ctx.name('missing'), partitions: [{ partitionIndex: 0 }] },
      ]);
      await offsetDelete('offset delete: unknown group', ctx.name('no-group'), [{ name: t.name, partitions: [{ partitionIndex: 0 }] }]);
      await ctx.s.call('offset fetch after the delete', ApiKey.OffsetFetch, ctx.v(ApiKey.OffsetFetch), {
        groupId: group,
        topics: [{ name: t.name, partitionIndexes: [0, 1] }],
        groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: t.name, topicId: t.id, partitionIndexes: [0, 1] }] }],
        requireStable: false,
      });
    },
  },
  {
    name: 'write txn markers (broker-internal)',
    async run(ctx) {
      const t = await topicWithData(ctx, 'markers', ['a']);
      const marker = (topic: string, partitions: number[]) => ({
        producerId: 424242n,
        producerEpoch: 0,
        transactionResult: false,
        topics: [{ name: topic, partitionIndexes: partitions }],
        coordinatorEpoch: 0,
        transactionVersion: 2,
      });
      // One marker per request: Kafka 4.4 never answers a request whose first marker is appended and whose last has
      // no known partition (KafkaApis.handleWriteTxnMarkersRequest counts the skipped marker down without responding).
      await ctx.s.call('abort marker for a producer the partition never saw, and an unknown partition', ApiKey.WriteTxnMarkers, ctx.v(ApiKey.WriteTxnMarkers), {
        markers: [marker(t.name, [0, 5])],
      });
      await ctx.s.call('marker for an unknown topic', ApiKey.WriteTxnMarkers, ctx.v(ApiKey.WriteTxnMarkers), { markers: [marker(ctx.name('missing'), [0])] });
      await highWatermarkAtLeast(ctx, t.name, 2n);
      await fetch(ctx, 'fetch: the marker', t.name, t.id);
    },
  },
  {
    name: 'sasl and denied principals',
    async run(ctx) {
      const t = await topicWithData(ctx, 'secret', ['a']);
      const group = ctx.name('group');
      const txnId = ctx.name('tid');
      const plainToken = (password: string): Uint8Array => enc(`\0${ctx.s.target.user.username}\0${password}`);
      const wrong = await ctx.s.open(ctx.s.target.sasl);
      await ctx.s.call('handshake', ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }, { on: wrong });
      await ctx.s.call(
        'authenticate with a wrong password',
        ApiKey.SaslAuthenticate,
        ctx.v(ApiKey.SaslAuthenticate),
        { authBytes: plainToken('wrong') },
        { on: wrong },
      );
      const on = await ctx.s.open(ctx.s.target.sasl);
      await ctx.s.call('handshake an unknown mechanism', ApiKey.SaslHandshake, 1, { mechanism: 'GSSAPI' }, { on: await ctx.s.open(ctx.s.target.sasl) });
      await ctx.s.call('handshake', ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }, { on });
      await ctx.s.call('authenticate', ApiKey.SaslAuthenticate, ctx.v(ApiKey.SaslAuthenticate), { authBytes: plainToken(ctx.s.target.user.password) }, { on });
      const v = ctx.v;
      await metadata(ctx, 'metadata', [t.name], { on });
      await produce(ctx, 'produce', t.name, t.id, batch(['x']), { on });
      await fetch(ctx, 'fetch', t.name, t.id, { on });
      await listOffsets(ctx, 'list offsets', t.name, [-1n], { on });
      await initProducerId(ctx, 'init producer id (idempotent)', null, { on });
      await initProducerId(ctx, 'init producer id (transactional)', txnId, { on });
      await ctx.s.call(
        'find coordinator (group)',
        ApiKey.FindCoordinator,
        v(ApiKey.FindCoordinator),
        { key: group, keyType: 0, coordinatorKeys: [group] },
        { on },
      );
      await ctx.s.call(
        'find coordinator (transaction)',
        ApiKey.FindCoordinator,
        v(ApiKey.FindCoordinator),
        { key: txnId, keyType: 1, coordinatorKeys: [txnId] },
        { on },
      );
      await ctx.s.call(
        'join group',
        ApiKey.JoinGroup,
        v(ApiKey.JoinGroup),
        {
          groupId: group,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: '',
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: subscription([t.name]) }],
          reason: null,
        },
        { on },
      );
      await ctx.s.call(
        'offset commit',
        ApiKey.OffsetCommit,
        v(ApiKey.OffsetCommit),
        {
          groupId: group,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [{ name: t.name, topicId: t.id, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
        },
        { on },
      );
      await ctx.s.call(
        'offset fetch',
        ApiKey.OffsetFetch,
        v(ApiKey.OffsetFetch),
        {
          groupId: group,
          topics: [{ name: t.name, partitionIndexes: [0] }],
          groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: t.name, topicId: t.id, partitionIndexes: [0] }] }],
          requireStable: false,
        },
        { on },
      );
      await ctx.s.call('describe groups', ApiKey.DescribeGroups, v(ApiKey.DescribeGroups), { groups: [group], includeAuthorizedOperations: false }, { on });
      await ctx.s.call('list groups', ApiKey.ListGroups, v(ApiKey.ListGroups), { statesFilter: [], typesFilter: [] }, { on });
      await ctx.s.call('delete groups', ApiKey.DeleteGroups, v(ApiKey.DeleteGroups), { groupsNames: [group] }, { on });
      await ctx.s.call(
        'create topics',
        ApiKey.CreateTopics,
        v(ApiKey.CreateTopics),
        { topics: [{ name: ctx.name('new'), numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000, validateOnly: false },
        { on },
      );
      await ctx.s.call(
        'create partitions',
        ApiKey.CreatePartitions,
        v(ApiKey.CreatePartitions),
        { topics: [{ name: t.name, count: 2, assignments: null }], timeoutMs: 30_000, validateOnly: false },
        { on },
      );
      await ctx.s.call(
        'describe configs',
        ApiKey.DescribeConfigs,
        v(ApiKey.DescribeConfigs),
        { resources: [{ resourceType: 2, resourceName: t.name, configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false },
        { on },
      );
      await ctx.s.call(
        'incremental alter configs',
        ApiKey.IncrementalAlterConfigs,
        v(ApiKey.IncrementalAlterConfigs),
        { resources: [{ resourceType: 2, resourceName: t.name, configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: false },
        { on },
      );
      await ctx.s.call(
        'delete topics',
        ApiKey.DeleteTopics,
        v(ApiKey.DeleteTopics),
        { topicNames: [t.name], topics: [{ name: t.name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 30_000 },
        { on },
      );
      await ctx.s.call(
        'create acls',
        ApiKey.CreateAcls,
        v(ApiKey.CreateAcls),
        { creations: [{ resourceType: 2, resourceName: t.name, resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 2, permissionType: 3 }] },
        { on },
      );
      await ctx.s.call(
        'describe acls',
        ApiKey.DescribeAcls,
        v(ApiKey.DescribeAcls),
        { resourceTypeFilter: 2, resourceNameFilter: t.name, patternTypeFilter: 3, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 },
        { on },
      );
      await ctx.s.call(
        'delete acls',
        ApiKey.DeleteAcls,
        v(ApiKey.DeleteAcls),
        {
          filters: [
            {
              resourceTypeFilter: 2,
              resourceNameFilter: t.name,
              patternTypeFilter: 3,
              principalFilter: null,
              hostFilter: null,
              operation: 1,
              permissionType: 1,
            },
          ],
        },
        { on },
      );
      await ctx.s.call(
        'describe cluster',
        ApiKey.DescribeCluster,
        v(ApiKey.DescribeCluster),
        { includeClusterAuthorizedOperations: true, endpointType: 1, includeFencedBrokers: false },
        { on },
      );
      await ctx.s.call(
        'write txn markers',
        ApiKey.WriteTxnMarkers,
        v(ApiKey.WriteTxnMarkers),
        {
          markers: [
            {
              producerId: 1n,
              producerEpoch: 0,
              transactionResult: false,
              topics: [{ name: t.name, partitionIndexes: [0] }],
              coordinatorEpoch: 0,
              transactionVersion: 2,
            },
          ],
        },
        { on },
      );
      await ctx.s.call(
        'consumer group heartbeat',
        ApiKey.ConsumerGroupHeartbeat,
        v(ApiKey.ConsumerGroupHeartbeat),
        { groupId: group, memberId: ctx.uuid('m'), memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: [t.name], topicPartitions: [] },
        { on },
      );
      await ctx.s.call(
        'consumer group describe',
        ApiKey.ConsumerGroupDescribe,
        v(ApiKey.ConsumerGroupDescribe),
        { groupIds: [group], includeAuthorizedOperations: false },
        { on },
      );
      await ctx.s.call(
        'share group heartbeat',
        ApiKey.ShareGroupHeartbeat,
        v(ApiKey.ShareGroupHeartbeat),
        { groupId: group, memberId: ctx.uuid('s'), memberEpoch: 0, rackId: null, subscribedTopicNames: [t.name] },
        { on },
      );
      await ctx.s.call(
        'share group describe',
        ApiKey.ShareGroupDescribe,
        v(ApiKey.ShareGroupDescribe),
        { groupIds: [group], includeAuthorizedOperations: false },
        { on },
      );
      await ctx.s.call(
        'add offsets to txn',
        ApiKey.AddOffsetsToTxn,
        v(ApiKey.AddOffsetsToTxn),
        { transactionalId: txnId, producerId: 1n, producerEpoch: 0, groupId: group },
        { on },
      );
      await ctx.s.call('end txn', ApiKey.EndTxn, v(ApiKey.EndTxn), { transactionalId: txnId, producerId: 1n, producerEpoch: 0, committed: true }, { on });
      await ctx.s.call(
        'txn offset commit',
        ApiKey.TxnOffsetCommit,
        v(ApiKey.TxnOffsetCommit),
        {
          transactionalId: txnId,
          groupId: group,
          producerId: 1n,
          producerEpoch: 0,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: t.name, topicId: t.id, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
        },
        { on },
      );
      const apv = v(ApiKey.AddPartitionsToTxn);
      await ctx.s.call(
        'add partitions to txn',
        ApiKey.AddPartitionsToTxn,
        apv,
        apv <= 3
          ? { v3AndBelowTransactionalId: txnId, v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: t.name, partitions: [0] }] }
          : { transactions: [{ transactionalId: txnId, producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: t.name, partitions: [0] }] }] },
        { on },
      );
    },
  },
];

export function randomUuidString(): string {
  return Buffer.from(randomBytes(16)).toString('base64url');
}
