/**
 * Admin's consumer-group offset calls: listConsumerGroupOffsets (OffsetFetch),
 * alterConsumerGroupOffsets (OffsetCommit from outside the group),
 * deleteConsumerGroupOffsets (OffsetDelete).
 *
 * Kafka: ListConsumerGroupOffsetsHandler, AlterConsumerGroupOffsetsHandler,
 * DeleteConsumerGroupOffsetsHandler.
 * - Topics by name: OffsetFetch and OffsetCommit up to v9 (v10 names topics by id),
 *   as Kafka's Builder.forTopicNames.
 * - listConsumerGroupOffsets: a partition without an offset (-1) is null; a
 *   partition the broker answers with an error (UNSTABLE_OFFSET_COMMIT under
 *   requireStable, ...) is left out, as Kafka's handler skips it.
 * - alterConsumerGroupOffsets commits with generation -1 and member '' (a commit
 *   from outside the group: the broker refuses it while the group has members,
 *   UNKNOWN_MEMBER_ID); REBALANCE_IN_PROGRESS is retried; a group-level error
 *   (GROUP_AUTHORIZATION_FAILED, ...) is every partition's error, a partition's own
 *   (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, ...) its own.
 * - deleteConsumerGroupOffsets: the group's error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP,
 *   GROUP_AUTHORIZATION_FAILED) is every partition's; GROUP_SUBSCRIBED_TO_TOPIC and
 *   the topic errors are per partition.
 * Results are keyed by `topicPartitionKey` (`topic-3`).
 */
import {
  OffsetCommitRequest,
  OffsetCommitResponse,
  OffsetDeleteRequest,
  OffsetDeleteResponse,
  OffsetFetchRequest,
  OffsetFetchResponse,
} from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import { topicPartitionKey, type TopicPartition } from '../consumer/topic-partition.js';
import { Errors, errorFromCode, KafkaError } from '../errors.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { perEntry, settle, toCoordinator } from './per-entry.js';
import { AdminResult, type EntryOutcome } from './result.js';
import type { OffsetAndMetadata } from '../consumer/offset-commits.js';

/** Kafka's OffsetAndMetadata, as the consumer commits it. */
export type { OffsetAndMetadata } from '../consumer/offset-commits.js';

/** One partition's committed offset, or null when the group has none for it. */
export interface CommittedOffset {
  topicPartition: TopicPartition;
  offset: OffsetAndMetadata | null;
}

/** Kafka's ListConsumerGroupOffsetsSpec: the partitions to list, or (absent) all the group has offsets for. */
export interface ListConsumerGroupOffsetsSpec {
  topicPartitions?: readonly TopicPartition[];
}

export interface ListConsumerGroupOffsetsOptions extends AdminCallOptions {
  /** OffsetFetch's RequireStable (v7+): partitions with a transactional commit pending are answered with an error, so left out. */
  requireStable?: boolean;
}

/** OffsetFetch and OffsetCommit name topics by id from v10; kipgen's Admin names them, as Kafka's forTopicNames. */
const LAST_BY_NAME_VERSION = 9;
const FIRST_MULTI_GROUP_VERSION = 8;
const FIRST_REQUIRE_STABLE_VERSION = 7;

function byTopic(partitions: readonly TopicPartition[]): { name: string; partitionIndexes: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitions) (topics.get(topic) ?? topics.set(topic, []).get(topic)!).push(partition);
  return [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
}

async function fetchOffsets(
  admin: Admin,
  groupId: string,
  spec: ListConsumerGroupOffsetsSpec,
  requireStable: boolean,
  deadline: number,
): Promise<Map<string, CommittedOffset>> {
  const topics = spec.topicPartitions === undefined ? null : byTopic(spec.topicPartitions);
  const groupOf = (r: OffsetFetchResponse, version: number) =>
    version >= FIRST_MULTI_GROUP_VERSION ? (r.groups.find((g) => g.groupId === groupId) ?? { errorCode: Errors.UNKNOWN_SERVER_ERROR, topics: [] }) : r;
  const { response, version } = await toCoordinator(
    admin,
    `OffsetFetch (group ${groupId})`,
    CoordinatorType.GROUP,
    groupId,
    { request: OffsetFetchRequest, response: OffsetFetchResponse },
    (v) =>
      v >= FIRST_MULTI_GROUP_VERSION
        ? OffsetFetchRequest.create({
            groups: [{ groupId, memberId: null, memberEpoch: -1, topics }],
            requireStable,
          })
        : OffsetFetchRequest.create({ groupId, topics, requireStable }),
    (r, v) => ({ code: groupOf(r, v).errorCode }),
    { deadline, max: LAST_BY_NAME_VERSION, min: requireStable ? FIRST_REQUIRE_STABLE_VERSION : undefined },
  );
  const out = new Map<string, CommittedOffset>();
  for (const topic of groupOf(response, version).topics) {
    for (const p of topic.partitions) {
      if (p.errorCode !== Errors.NONE) continue;
      const topicPartition = { topic: topic.name, partition: p.partitionIndex };
      out.set(topicPartitionKey(topicPartition), {
        topicPartition,
        offset:
          p.committedOffset < 0n
            ? null
            : { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch < 0 ? undefined : p.committedLeaderEpoch, metadata: p.metadata ?? '' },
      });
    }
  }
  return out;
}

export async function listConsumerGroupOffsets(
  admin: Admin,
  groups: string | readonly string[] | Readonly<Record<string, ListConsumerGroupOffsetsSpec>>,
  options: ListConsumerGroupOffsetsOptions = {},
): Promise<AdminResult<string, Map<string, CommittedOffset>>> {
  const deadline = deadlineOf(admin, options);
  const specs: Record<string, ListConsumerGroupOffsetsSpec> =
    typeof groups === 'string' ? { [groups]: {} } : Array.isArray(groups) ? Object.fromEntries((groups as string[]).map((g) => [g, {}])) : { ...groups };
  return new AdminResult(
    await perEntry(Object.keys(specs), (groupId) => fetchOffsets(admin, groupId, specs[groupId]!, options.requireStable ?? false, deadline)),
  );
}

/** The outcome of each partition of a per-partition group call: the group's error for all, or each partition's own. */
async function perPartition(partitions: readonly TopicPartition[], call: () => Promise<Map<string, number>>, what: string): Promise<AdminResult<string, void>> {
  const keys = [...new Set(partitions.map(topicPartitionKey))];
  const outcome = await settle(call());
  const entries = new Map<string, EntryOutcome<void>>();
  for (const key of keys) {
    if (!outcome.ok) entries.set(key, outcome);
    else {
      const code = outcome.value.get(key);
      if (code === undefined) entries.set(key, { ok: false, error: new KafkaError(`${what}: the broker did not answer partition ${key}`) });
      else if (code !== Errors.NONE) entries.set(key, { ok: false, error: errorFromCode(code, `${what}, partition ${key}`) });
      else entries.set(key, { ok: true, value: undefined });
    }
  }
  return new AdminResult(entries);
}

/** Codes that are the group's, not the partition's (AlterConsumerGroupOffsetsHandler's group-level cases). */
const GROUP_LEVEL_CODES: ReadonlySet<number> = new Set([
  Errors.COORDINATOR_LOAD_IN_PROGRESS,
  Errors.COORDINATOR_NOT_AVAILABLE,
  Errors.NOT_COORDINATOR,
  Errors.REBALANCE_IN_PROGRESS,
  Errors.INVALID_GROUP_ID,
  Errors.INVALID_COMMIT_OFFSET_SIZE,
  Errors.GROUP_AUTHORIZATION_FAILED,
  Errors.GROUP_ID_NOT_FOUND,
  Errors.UNKNOWN_MEMBER_ID,
  Errors.STALE_MEMBER_EPOCH,
  Errors.ILLEGAL_GENERATION,
]);

export async function alterConsumerGroupOffsets(
  admin: Admin,
  groupId: string,
  offsets: ReadonlyArray<TopicPartition & OffsetAndMetadata>,
  options: AdminCallOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const what = `OffsetCommit (group ${groupId})`;
  const topics = new Map<string, { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string }[]>();
  for (const o of offsets) {
    if (o.offset < 0n) throw new RangeError(`alterConsumerGroupOffsets: the offset of ${topicPartitionKey(o)} is ${o.offset}; an offset is 0 or more`);
    (topics.get(o.topic) ?? topics.set(o.topic, []).get(o.topic)!).push({
      partitionIndex: o.partition,
      committedOffset: o.offset,
      committedLeaderEpoch: o.leaderEpoch ?? -1,
      committedMetadata: o.metadata ?? '',
    });
  }
  return perPartition(
    offsets,
    async () => {
      const { response } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: OffsetCommitRequest, response: OffsetCommitResponse },
        () =>
          OffsetCommitRequest.create({
            groupId,
            generationIdOrMemberEpoch: -1,
            memberId: '',
            groupInstanceId: null,
            topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
          }),
        (r) => {
          const groupCode = r.topics.flatMap((t) => t.partitions).find((p) => GROUP_LEVEL_CODES.has(p.errorCode))?.errorCode ?? Errors.NONE;
          if (groupCode === Errors.REBALANCE_IN_PROGRESS) throw new KafkaError(`${what}: the group is rebalancing`, { code: groupCode, retriable: true });
          return { code: groupCode };
        },
        { deadline, max: LAST_BY_NAME_VERSION },
      );
      return new Map(response.topics.flatMap((t) => t.partitions.map((p) => [topicPartitionKey({ topic: t.name, partition: p.partitionIndex }), p.errorCode])));
    },
    what,
  );
}

export async function deleteConsumerGroupOffsets(
  admin: Admin,
  groupId: string,
  partitions: readonly TopicPartition[],
  options: AdminCallOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const what = `OffsetDelete (group ${groupId})`;
  return perPartition(
    partitions,
    async () => {
      const { response } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: OffsetDeleteRequest, response: OffsetDeleteResponse },
        () =>
          OffsetDeleteRequest.create({
            groupId,
            topics: byTopic(partitions).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex })) })),
          }),
        (r) => ({ code: r.errorCode }),
        { deadline },
      );
      return new Map(response.topics.flatMap((t) => t.partitions.map((p) => [topicPartitionKey({ topic: t.name, partition: p.partitionIndex }), p.errorCode])));
    },
    what,
  );
}
