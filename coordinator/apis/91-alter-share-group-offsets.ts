/**
 * AlterShareGroupOffsets (key 91, v0, KIP-932): sets the start offset of a share group's share partitions
 * (Admin's alterShareGroupOffsets); each starts over there with nothing in flight, durably.
 *
 * Kafka: KafkaApis.handleAlterShareGroupOffsetsRequest, GroupMetadataManager.alterShareGroupOffsets, then the
 * share coordinator's InitializeShareGroupState. Served while the registered share coordinator offers its
 * offset operations; the behaviour is coordinator/share/share-group-offsets.ts.
 * - A group with members is NON_EMPTY_GROUP; a classic or consumer group GROUP_ID_NOT_FOUND; an unknown
 *   group is altered (Kafka creates it).
 * - A topic that does not exist, or a partition it lacks, is UNKNOWN_TOPIC_OR_PARTITION.
 * - A group-level error answers the request with that error alone, as Kafka's getErrorResponse does.
 * Rule: READ on the group (else GROUP_AUTHORIZATION_FAILED for the request), READ on each topic (a denied
 * one is TOPIC_AUTHORIZATION_FAILED on each of its partitions, answered before the others).
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { AlterShareGroupOffsetsRequest, type AlterShareGroupOffsetsRequestTopic } from '../../generated/AlterShareGroupOffsetsRequest.js';
import { AlterShareGroupOffsetsResponse, type AlterShareGroupOffsetsResponseTopic } from '../../generated/AlterShareGroupOffsetsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { isNonShareGroup } from '../group/other-group.js';
import { defineApi } from './define.js';

const answer = (
  topic: AlterShareGroupOffsetsRequestTopic,
  topicId: string,
  errorCode: number,
  errorMessage: string | null,
): AlterShareGroupOffsetsResponseTopic => ({
  topicName: topic.topicName,
  topicId,
  partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage })),
});

export default defineApi({
  request: AlterShareGroupOffsetsRequest,
  response: AlterShareGroupOffsetsResponse,
  needsShare: 'offsets',
  authorize: async (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const denied = request.topics.filter((t) => !check.allow(Res.TOPIC, t.topicName, Op.READ));
    if (denied.length === 0) return next(request);
    const response = await next({ ...request, topics: request.topics.filter((t) => !denied.includes(t)) });
    if (response.errorCode !== ErrorCode.NONE) return response;
    response.responses.unshift(...denied.map((t) => answer(t, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'not authorized')));
    return response;
  },
  handler:
    ({ share, cluster, classicGroups, consumerGroups, offsets: store }) =>
    async (request) => {
      const offsets = share()?.offsets;
      if (offsets === undefined) throw new Error('AlterShareGroupOffsets is served only with a share coordinator');
      const { groupId } = request;
      if (groupId === '') return AlterShareGroupOffsetsResponse.create({ errorCode: ErrorCode.INVALID_GROUP_ID, errorMessage: 'the group id is empty' });
      if (isNonShareGroup(groupId, classicGroups, consumerGroups, store)) {
        return AlterShareGroupOffsetsResponse.create({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} is not a share group.` });
      }
      const unknown: AlterShareGroupOffsetsResponseTopic[] = [];
      const known: { topic: AlterShareGroupOffsetsRequestTopic; topicId: string }[] = [];
      for (const topic of request.topics) {
        const info = cluster.topicByName(topic.topicName);
        if (info === undefined || info.internal)
          unknown.push(answer(topic, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${topic.topicName}`));
        else known.push({ topic, topicId: info.topicId });
      }
      const result = await offsets.alterOffsets(
        groupId,
        known.flatMap(({ topic, topicId }) => topic.partitions.map((p) => ({ topicId, partition: p.partitionIndex, startOffset: p.startOffset }))),
      );
      if (result.errorCode !== ErrorCode.NONE) return AlterShareGroupOffsetsResponse.create({ errorCode: result.errorCode, errorMessage: result.errorMessage });
      const responses = known.map(({ topic, topicId }) => ({
        topicName: topic.topicName,
        topicId,
        partitions: result.partitions
          .filter((p) => p.topicId === topicId)
          .map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode, errorMessage: p.errorMessage })),
      }));
      return AlterShareGroupOffsetsResponse.create({ responses: [...unknown, ...responses] });
    },
});
