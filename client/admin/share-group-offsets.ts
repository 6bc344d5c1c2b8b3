/**
 * Admin's share-group offset calls (KIP-932): listShareGroupOffsets
 * (DescribeShareGroupOffsets, 90; also as describeShareGroupOffsets),
 * alterShareGroupOffsets (AlterShareGroupOffsets, 91) and
 * deleteShareGroupOffsets (DeleteShareGroupOffsets, 92), to the group's
 * coordinator.
 *
 * Kafka: ListShareGroupOffsetsHandler, AlterShareGroupOffsetsHandler,
 * DeleteShareGroupOffsetsHandler.
 * - A partition without a start offset (-1) is null; one answered with an error
 *   is left out, as Kafka's handler skips it; Lag from v1 (KIP-1226).
 * - alter and delete: the group's error (NON_EMPTY_GROUP — the group must be
 *   empty —, GROUP_ID_NOT_FOUND, GROUP_AUTHORIZATION_FAILED, ...) is every entry's;
 *   REBALANCE_IN_PROGRESS is retried; a partition's or topic's error is its own.
 * kipgen's broker does not serve these APIs yet: against it each entry is an
 * UnsupportedVersionError naming the API (coordinator/README.md, not served).
 */
import {
  AlterShareGroupOffsetsRequest,
  AlterShareGroupOffsetsResponse,
  DeleteShareGroupOffsetsRequest,
  DeleteShareGroupOffsetsResponse,
  DescribeShareGroupOffsetsRequest,
  DescribeShareGroupOffsetsResponse,
} from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import { topicPartitionKey, type TopicPartition } from '../consumer/topic-partition.js';
import { Errors, errorFromCode, KafkaError } from '../errors.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { perEntry, settle, toCoordinator } from './per-entry.js';
import { AdminResult, type EntryOutcome } from './result.js';

/** Kafka's SharePartitionOffsetInfo, with its partition. */
export interface SharePartitionOffsetInfo {
  topicPartition: TopicPartition;
  startOffset: bigint;
  leaderEpoch: number | undefined;
  /** Undefined when the broker does not say (v0, or -1). */
  lag: bigint | undefined;
}

/** Kafka's ListShareGroupOffsetsSpec: the partitions to list, or (absent) all the group has state for. */
export interface ListShareGroupOffsetsSpec {
  topicPartitions?: readonly TopicPartition[];
}

function topicsOf(partitions: readonly TopicPartition[]): Map<string, number[]> {
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitions) (topics.get(topic) ?? topics.set(topic, []).get(topic)!).push(partition);
  return topics;
}

/** Retries a rebalancing group, as Kafka's handlers do for REBALANCE_IN_PROGRESS. */
function groupCode(what: string, code: number, message: string | null): { code: number; message: string | null } {
  if (code === Errors.REBALANCE_IN_PROGRESS) throw new KafkaError(`${what}: the group is rebalancing`, { code, retriable: true });
  return { code, message };
}

export async function listShareGroupOffsets(
  admin: Admin,
  groups: string | readonly string[] | Readonly<Record<string, ListShareGroupOffsetsSpec>>,
  options: AdminCallOptions = {},
): Promise<AdminResult<string, Map<string, SharePartitionOffsetInfo | null>>> {
  const deadline = deadlineOf(admin, options);
  const specs: Record<string, ListShareGroupOffsetsSpec> =
    typeof groups === 'string' ? { [groups]: {} } : Array.isArray(groups) ? Object.fromEntries((groups as string[]).map((g) => [g, {}])) : { ...groups };
  return new AdminResult(
    await perEntry(Object.keys(specs), async (groupId) => {
      const wanted = specs[groupId]!.topicPartitions;
      const topics = wanted === undefined ? null : [...topicsOf(wanted)].map(([topicName, partitions]) => ({ topicName, partitions }));
      const what = `DescribeShareGroupOffsets (group ${groupId})`;
      const groupOf = (r: DescribeShareGroupOffsetsResponse) => r.groups.find((g) => g.groupId === groupId);
      const { response } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: DescribeShareGroupOffsetsRequest, response: DescribeShareGroupOffsetsResponse },
        () => DescribeShareGroupOffsetsRequest.create({ groups: [{ groupId, topics }] }),
        (r) => {
          const g = groupOf(r);
          return g === undefined ? { code: Errors.UNKNOWN_SERVER_ERROR, message: 'no group in the answer' } : { code: g.errorCode, message: g.errorMessage };
        },
        { deadline },
      );
      const out = new Map<string, SharePartitionOffsetInfo | null>();
      for (const topic of groupOf(response)!.topics) {
        for (const p of topic.partitions) {
          if (p.errorCode !== Errors.NONE) continue;
          const topicPartition = { topic: topic.topicName, partition: p.partitionIndex };
          out.set(
            topicPartitionKey(topicPartition),
            p.startOffset < 0n
              ? null
              : { topicPartition, startOffset: p.startOffset, leaderEpoch: p.leaderEpoch < 0 ? undefined : p.leaderEpoch, lag: p.lag < 0n ? undefined : p.lag },
          );
        }
      }
      return out;
    }),
  );
}

/** The outcome of each key: the group's error for all, or each key's own code. */
async function perKey(
  keys: readonly string[],
  call: () => Promise<Map<string, { code: number; message: string | null }>>,
  what: string,
): Promise<AdminResult<string, void>> {
  const outcome = await settle(call());
  const entries = new Map<string, EntryOutcome<void>>();
  for (const key of new Set(keys)) {
    if (!outcome.ok) {
      entries.set(key, outcome);
      continue;
    }
    const answer = outcome.value.get(key);
    if (answer === undefined) entries.set(key, { ok: false, error: new KafkaError(`${what}: the broker did not answer ${key}`) });
    else if (answer.code !== Errors.NONE) entries.set(key, { ok: false, error: errorFromCode(answer.code, `${what}, ${key}`, answer.message) });
    else entries.set(key, { ok: true, value: undefined });
  }
  return new AdminResult(entries);
}

/** Sets the start offsets of an empty share group's partitions; results keyed by `topic-partition`. */
export async function alterShareGroupOffsets(
  admin: Admin,
  groupId: string,
  offsets: ReadonlyArray<TopicPartition & { offset: bigint }>,
  options: AdminCallOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const what = `AlterShareGroupOffsets (group ${groupId})`;
  const topics = new Map<string, { partitionIndex: number; startOffset: bigint }[]>();
  for (const o of offsets) (topics.get(o.topic) ?? topics.set(o.topic, []).get(o.topic)!).push({ partitionIndex: o.partition, startOffset: o.offset });
  return perKey(
    offsets.map(topicPartitionKey),
    async () => {
      const { response } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: AlterShareGroupOffsetsRequest, response: AlterShareGroupOffsetsResponse },
        () => AlterShareGroupOffsetsRequest.create({ groupId, topics: [...topics].map(([topicName, partitions]) => ({ topicName, partitions })) }),
        (r) => groupCode(what, r.errorCode, r.errorMessage),
        { deadline },
      );
      return new Map(
        response.responses.flatMap((t) =>
          t.partitions.map((p) => [topicPartitionKey({ topic: t.topicName, partition: p.partitionIndex }), { code: p.errorCode, message: p.errorMessage }]),
        ),
      );
    },
    what,
  );
}

/** Removes an empty share group's state for whole topics; results keyed by topic name. */
export async function deleteShareGroupOffsets(
  admin: Admin,
  groupId: string,
  topics: readonly string[],
  options: AdminCallOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const what = `DeleteShareGroupOffsets (group ${groupId})`;
  return perKey(
    topics,
    async () => {
      const { response } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: DeleteShareGroupOffsetsRequest, response: DeleteShareGroupOffsetsResponse },
        () => DeleteShareGroupOffsetsRequest.create({ groupId, topics: [...new Set(topics)].map((topicName) => ({ topicName })) }),
        (r) => groupCode(what, r.errorCode, r.errorMessage),
        { deadline },
      );
      return new Map(response.responses.map((t) => [t.topicName, { code: t.errorCode, message: t.errorMessage }]));
    },
    what,
  );
}
