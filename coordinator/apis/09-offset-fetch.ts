/**
 * OffsetFetch (key 9): a group's committed offsets, for the partitions asked for
 * or all of them. Served by the node leading the group's offsets partition
 * (NOT_COORDINATOR elsewhere).
 *
 * Kafka: KafkaApis.handleOffsetFetchRequest (fetchAllOffsetsForGroup /
 * fetchOffsetsForGroup), GroupCoordinator.fetchOffsets / fetchAllOffsets.
 * - v7+ RequireStable: a partition with a transactional commit pending is answered
 *   UNSTABLE_OFFSET_COMMIT with no offset.
 * - v8+ asks for several groups; v10+ names topics by id (an unknown id is
 *   UNKNOWN_TOPIC_ID). Before v8 the one group's answer is the top level; v1 has no
 *   top-level error, so a group error is put on every requested partition.
 * Rule: DESCRIBE on the group (per group from v8), DESCRIBE on each topic: asked for
 * all topics, the undescribable ones are left out; asked for by name or id, they are
 * answered TOPIC_AUTHORIZATION_FAILED with no offset and never reach the handler.
 */
import { OffsetFetchRequest, type OffsetFetchRequestGroup, type OffsetFetchRequestTopics } from '../../generated/OffsetFetchRequest.js';
import {
  OffsetFetchResponse,
  createOffsetFetchResponseGroup,
  type OffsetFetchResponseGroup,
  type OffsetFetchResponsePartition,
  type OffsetFetchResponseTopic,
  type OffsetFetchResponseTopics,
} from '../../generated/OffsetFetchResponse.js';
import { ZERO_UUID } from '../../runtime/index.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission, topicAllowed, type Check } from '../auth/rule-kit.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import type { OffsetStore } from '../group/offset-store.js';
import { defineApi } from './define.js';

const FIRST_MULTI_GROUP_VERSION = 8;
const FIRST_TOPIC_ID_VERSION = 10;
const FIRST_REQUIRE_STABLE_VERSION = 7;
/** The first version with a top-level error code. */
const FIRST_TOP_LEVEL_ERROR_VERSION = 2;

/** A topic asked for, in the v8+ shape (before v8 the name only). */
type WantedTopic = Pick<OffsetFetchRequestTopics, 'name' | 'partitionIndexes'> & { topicId?: string };

/**
 * One group's topics in an OffsetFetch: the ones the handler may see (null: all), and how
 * to complete its answer: without undescribable topics when all were asked for, with the
 * denied named topics as `deniedEntry` (TOPIC_AUTHORIZATION_FAILED, no offset) otherwise.
 */
function splitTopics<T extends WantedTopic, R extends { name: string }>(
  check: Check,
  topics: T[] | null,
  deniedEntry: (topic: T) => R,
): { kept: T[] | null; answer: (found: R[]) => R[] } {
  if (topics === null) return { kept: null, answer: (found) => found.filter((t) => t.name === '' || check.allow(Res.TOPIC, t.name, Op.DESCRIBE)) };
  const denied = topics.filter((t) => !topicAllowed(check, t, Op.DESCRIBE));
  return { kept: topics.filter((t) => !denied.includes(t)), answer: (found) => [...found, ...denied.map(deniedEntry)] };
}

/** A denied topic's partitions: no offset, TOPIC_AUTHORIZATION_FAILED. */
const deniedPartitions = (t: WantedTopic): OffsetFetchResponsePartition[] =>
  t.partitionIndexes.map((partitionIndex) => ({
    partitionIndex,
    committedOffset: -1n,
    committedLeaderEpoch: -1,
    metadata: '',
    errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  }));

/** One group's answer in the v8+ shape (converted for older versions by the handler). */
function fetchGroup(
  cluster: Cluster,
  store: OffsetStore,
  groupId: string,
  topics: readonly WantedTopic[] | null,
  requireStable: boolean,
  byId: boolean,
): OffsetFetchResponseGroup {
  if (!store.isCoordinatorFor(groupId)) return { groupId, topics: [], errorCode: ErrorCode.NOT_COORDINATOR };
  // An unknown topic id is kept apart by a NUL prefix (no topic name has one), to be answered UNKNOWN_TOPIC_ID.
  const wanted =
    topics === null
      ? null
      : topics.map((t) => ({
          topic: byId ? (cluster.topicById(t.topicId ?? ZERO_UUID)?.name ?? `\u0000${t.topicId}`) : t.name,
          partitions: t.partitionIndexes,
        }));
  const found = store.fetch(groupId, wanted);
  const out: OffsetFetchResponseTopics[] = [];
  for (const [topic, partitions] of found) {
    const unknownId = topic.startsWith('\u0000');
    out.push({
      name: unknownId ? '' : topic,
      topicId: unknownId ? topic.slice(1) : (cluster.topicByName(topic)?.topicId ?? ZERO_UUID),
      partitions: [...partitions].map(([partitionIndex, value]) => ({
        partitionIndex,
        committedOffset: value === null || (value.unstable && requireStable) ? -1n : value.offset,
        committedLeaderEpoch: value?.leaderEpoch ?? -1,
        metadata: value?.metadata ?? '',
        errorCode: unknownId ? ErrorCode.UNKNOWN_TOPIC_ID : value?.unstable && requireStable ? ErrorCode.UNSTABLE_OFFSET_COMMIT : ErrorCode.NONE,
      })),
    });
  }
  return { groupId, topics: out, errorCode: ErrorCode.NONE };
}

export default defineApi({
  request: OffsetFetchRequest,
  response: OffsetFetchResponse,
  authorize: async (request, check, ctx, next) => {
    if (ctx.apiVersion < FIRST_MULTI_GROUP_VERSION) {
      requirePermission(check, Res.GROUP, request.groupId, Op.DESCRIBE, ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const split = splitTopics(check, request.topics, (t): OffsetFetchResponseTopic => ({ name: t.name, partitions: deniedPartitions(t) }));
      const response = await next({ ...request, topics: split.kept });
      // A group error (v2+) answers the group as a whole, as in the v8+ shape below.
      if (!response.errorCode) response.topics = split.answer(response.topics);
      return response;
    }
    const denied = request.groups.filter((g) => !check.allow(Res.GROUP, g.groupId, Op.DESCRIBE));
    const kept = request.groups.filter((g) => !denied.includes(g));
    const splits = new Map(
      kept.map((g) => [
        g.groupId,
        splitTopics(check, g.topics, (t): OffsetFetchResponseTopics => ({ name: t.name, topicId: t.topicId, partitions: deniedPartitions(t) })),
      ]),
    );
    const keptGroups = kept.map((g): OffsetFetchRequestGroup => ({ ...g, topics: splits.get(g.groupId)!.kept }));
    const response = kept.length > 0 ? await next({ ...request, groups: keptGroups }) : OffsetFetchResponse.create();
    for (const group of response.groups) {
      const split = splits.get(group.groupId);
      if (split !== undefined && group.errorCode === ErrorCode.NONE) group.topics = split.answer(group.topics);
    }
    response.groups.push(...denied.map((g) => createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })));
    return response;
  },
  handler:
    ({ cluster, offsets: store }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const requireStable = v >= FIRST_REQUIRE_STABLE_VERSION && request.requireStable;
      if (v >= FIRST_MULTI_GROUP_VERSION) {
        return OffsetFetchResponse.create({
          groups: request.groups.map((g) => fetchGroup(cluster, store, g.groupId, g.topics, requireStable, v >= FIRST_TOPIC_ID_VERSION)),
        });
      }
      const group = fetchGroup(cluster, store, request.groupId, request.topics, requireStable, false);
      const topics =
        v < FIRST_TOP_LEVEL_ERROR_VERSION && group.errorCode !== ErrorCode.NONE
          ? (request.topics ?? []).map((t) => ({
              name: t.name,
              partitions: t.partitionIndexes.map((partitionIndex) => ({
                partitionIndex,
                committedOffset: -1n,
                committedLeaderEpoch: -1,
                metadata: '',
                errorCode: group.errorCode,
              })),
            }))
          : group.topics.map((t) => ({ name: t.name, partitions: t.partitions }));
      return OffsetFetchResponse.create({ topics, errorCode: v >= FIRST_TOP_LEVEL_ERROR_VERSION ? group.errorCode : ErrorCode.NONE });
    },
});
