/**
 * DeleteShareGroupOffsets (key 92, v0, KIP-932): removes a share group's state for whole topics, so that its
 * next consumer starts per share.auto.offset.reset (Admin's deleteShareGroupOffsets).
 *
 * Kafka: KafkaApis.handleDeleteShareGroupOffsetsRequest, GroupCoordinatorShard.initiateDeleteShareGroupOffsets,
 * GroupMetadataManager.sharePartitionsEligibleForOffsetDeletion, then the share coordinator's
 * DeleteShareGroupState. Served while the registered share coordinator offers its offset operations; the
 * behaviour is coordinator/share/share-group-offsets.ts.
 * - An unknown group, or a classic or consumer group, is GROUP_ID_NOT_FOUND; one with members NON_EMPTY_GROUP;
 *   a group-level error answers the request with that error alone.
 * - A topic that does not exist, or that the group has no state for, is UNKNOWN_TOPIC_OR_PARTITION.
 * Rule: DELETE on the group (else GROUP_AUTHORIZATION_FAILED for the request), READ on each topic (a denied
 * one is TOPIC_AUTHORIZATION_FAILED, answered before the others).
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { DeleteShareGroupOffsetsRequest } from '../../generated/DeleteShareGroupOffsetsRequest.js';
import { DeleteShareGroupOffsetsResponse, type DeleteShareGroupOffsetsResponseTopic } from '../../generated/DeleteShareGroupOffsetsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { isNonShareGroup } from '../group/other-group.js';
import { defineApi } from './define.js';

export default defineApi({
  request: DeleteShareGroupOffsetsRequest,
  response: DeleteShareGroupOffsetsResponse,
  needsShare: 'offsets',
  authorize: async (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.DELETE, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const denied = request.topics.filter((t) => !check.allow(Res.TOPIC, t.topicName, Op.READ));
    if (denied.length === 0) return next(request);
    const response = await next({ ...request, topics: request.topics.filter((t) => !denied.includes(t)) });
    if (response.errorCode !== ErrorCode.NONE) return response;
    response.responses.unshift(
      ...denied.map((t) => ({ topicName: t.topicName, topicId: ZERO_UUID, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'not authorized' })),
    );
    return response;
  },
  handler:
    ({ share, cluster, classicGroups, consumerGroups, offsets: store }) =>
    async (request) => {
      const offsets = share()?.offsets;
      if (offsets === undefined) throw new Error('DeleteShareGroupOffsets is served only with a share coordinator');
      const { groupId } = request;
      if (groupId === '') return DeleteShareGroupOffsetsResponse.create({ errorCode: ErrorCode.INVALID_GROUP_ID, errorMessage: 'the group id is empty' });
      if (isNonShareGroup(groupId, classicGroups, consumerGroups, store)) {
        return DeleteShareGroupOffsetsResponse.create({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} is not a share group.` });
      }
      const unknown: DeleteShareGroupOffsetsResponseTopic[] = [];
      const known: { topicName: string; topicId: string }[] = [];
      for (const { topicName } of request.topics) {
        const info = cluster.topicByName(topicName);
        if (info === undefined || info.internal) {
          unknown.push({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `unknown topic ${topicName}` });
        } else known.push({ topicName, topicId: info.topicId });
      }
      const result = await offsets.deleteOffsets(
        groupId,
        known.map((t) => t.topicId),
      );
      if (result.errorCode !== ErrorCode.NONE)
        return DeleteShareGroupOffsetsResponse.create({ errorCode: result.errorCode, errorMessage: result.errorMessage });
      const responses = known.map(({ topicName, topicId }): DeleteShareGroupOffsetsResponseTopic => {
        const failed = result.partitions.find((p) => p.topicId === topicId && p.errorCode !== ErrorCode.NONE);
        return { topicName, topicId, errorCode: failed?.errorCode ?? ErrorCode.NONE, errorMessage: failed?.errorMessage ?? null };
      });
      return DeleteShareGroupOffsetsResponse.create({ responses: [...unknown, ...responses] });
    },
});
