/**
 * OffsetCommit (key 8): a consumer stores its committed offsets for a group, in
 * `__consumer_offsets` (fsynced before the answer). Served by the node leading the
 * group's offsets partition (NOT_COORDINATOR elsewhere).
 *
 * Kafka: KafkaApis.handleOffsetCommitRequest, GroupCoordinator.commitOffsets
 * (OffsetMetadataManager.commitOffset).
 * - A classic member's generation, or a KIP-848 member's epoch, is checked
 *   (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, STALE_MEMBER_EPOCH);
 *   generation −1 is a commit from outside an Empty group.
 * - A commit makes an Empty classic group of a group id no group has yet, as Kafka's
 *   getOrMaybeCreateGroup does for simple commits; a KIP-848 group stays one.
 * - v10+ names topics by id (UNKNOWN_TOPIC_ID), before by name.
 * Rule: READ on the group (else every partition GROUP_AUTHORIZATION_FAILED), READ on
 * each topic (a denied topic's partitions TOPIC_AUTHORIZATION_FAILED).
 */
import { OffsetCommitRequest, type OffsetCommitRequestPartition, type OffsetCommitRequestTopic } from '../../generated/OffsetCommitRequest.js';
import { OffsetCommitResponse, type OffsetCommitResponseTopic } from '../../generated/OffsetCommitResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode, errorCodeOf } from '../errors.js';
import type { OffsetToCommit } from '../group/offset-store.js';
import { defineApi } from './define.js';

/** offset.metadata.max.bytes (Kafka: 4096). */
const OFFSET_METADATA_MAX_BYTES = 4096;
/** The first version that names topics by id. */
const FIRST_TOPIC_ID_VERSION = 10;

/** Every partition of `topics` answered with `code(topicIndex, partition)`. */
function answer(
  topics: readonly OffsetCommitRequestTopic[],
  code: (topicIndex: number, partition: OffsetCommitRequestPartition) => number,
): OffsetCommitResponse {
  return OffsetCommitResponse.create({
    topics: topics.map((t, i) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(i, p) })),
    })),
  });
}

/** A topic of the request answered as a whole with `code`. */
const deniedTopic =
  (code: number) =>
  (t: OffsetCommitRequestTopic): OffsetCommitResponseTopic => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })),
  });

export default defineApi({
  request: OffsetCommitRequest,
  response: OffsetCommitResponse,
  authorize: async (request, check, _ctx, next) => {
    if (!check.allow(Res.GROUP, request.groupId, Op.READ)) return answer(request.topics, () => ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => OffsetCommitResponse.create(),
      answerDenied: (response, denied) => void response.topics.push(...denied.map(deniedTopic(ErrorCode.TOPIC_AUTHORIZATION_FAILED))),
    });
  },
  handler:
    ({ cluster, offsets: store, classicGroups: groups, consumerGroups, log }) =>
    async (request, ctx) => {
      const byId = ctx.apiVersion >= FIRST_TOPIC_ID_VERSION;
      let error = store.coordinatorError(request.groupId);
      if (error === ErrorCode.NONE) {
        error =
          consumerGroups.validateCommit(request.groupId, request.memberId, request.generationIdOrMemberEpoch) ??
          groups.validateCommit(request.groupId, request.memberId, request.generationIdOrMemberEpoch);
      }
      if (error !== ErrorCode.NONE) return answer(request.topics, () => error);
      const names = request.topics.map((t) => (byId ? cluster.topicById(t.topicId)?.name : cluster.topicByName(t.name)?.name));
      const partitionError = (i: number, p: OffsetCommitRequestPartition): number => {
        const name = names[i];
        const topic = name === undefined ? undefined : cluster.topicByName(name);
        if (topic === undefined) return byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        if (p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata) > OFFSET_METADATA_MAX_BYTES) return ErrorCode.OFFSET_METADATA_TOO_LARGE;
        return ErrorCode.NONE;
      };
      const offsets: OffsetToCommit[] = [];
      request.topics.forEach((t, i) => {
        for (const p of t.partitions) {
          if (partitionError(i, p) !== ErrorCode.NONE) continue;
          offsets.push({
            topic: names[i]!,
            partition: p.partitionIndex,
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata: p.committedMetadata,
          });
        }
      });
      let writeError: number = ErrorCode.NONE;
      if (offsets.length > 0) {
        try {
          await store.commit(request.groupId, offsets);
          if (consumerGroups.get(request.groupId) === undefined) groups.ensure(request.groupId);
        } catch (caught) {
          if (!(caught instanceof BrokerError)) log(`OffsetCommit for group ${request.groupId} failed: ${(caught as Error).stack}`);
          writeError = errorCodeOf(caught);
        }
      }
      return answer(request.topics, (i, p) => partitionError(i, p) || writeError);
    },
});
