/**
 * ShareGroupDescribe (key 77, KIP-932): share groups' state, epochs, assignor and
 * members with their assignments.
 *
 * Kafka: KafkaApis.handleShareGroupDescribe, GroupCoordinator.shareGroupDescribe.
 * Served while the registered share coordinator offers its group operations
 * (coordinator/broker-context.ts).
 * - authorizedOperations, when asked for, is every group operation: this answer
 *   does not compute them per caller (deviation: Kafka asks its authorizer).
 * - An assigned topic deleted since is named ''.
 * Rule: DESCRIBE on each group (a denied one GROUP_AUTHORIZATION_FAILED); a group
 * whose members are assigned a topic the caller may not DESCRIBE is answered
 * TOPIC_AUTHORIZATION_FAILED without members (KAFKA-18817, auth/rule-kit.ts).
 */
import { ShareGroupDescribeRequest } from '../../generated/ShareGroupDescribeRequest.js';
import { ShareGroupDescribeResponse, createDescribedGroup } from '../../generated/ShareGroupDescribeResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { hideGroupsWithUndescribableTopics, splitEntries } from '../auth/rule-kit.js';
import { defineApi } from './define.js';
import { ErrorCode } from '../errors.js';

/** Kafka's authorized-operations bits for a group: READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11). */
const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);
/** authorizedOperations when the request did not ask for them. */
const OPERATIONS_NOT_REQUESTED = -2147483648;

export default defineApi({
  request: ShareGroupDescribeRequest,
  response: ShareGroupDescribeResponse,
  needsShare: 'groups',
  authorize: async (request, check, _ctx, next) => {
    const response = await splitEntries(request, next, {
      entries: request.groupIds,
      allowed: (groupId) => check.allow(Res.GROUP, groupId, Op.DESCRIBE),
      keep: (groupIds) => ({ ...request, groupIds }),
      empty: () => ShareGroupDescribeResponse.create(),
      answerDenied: (res, denied) =>
        void res.groups.push(
          ...denied.map((groupId) => createDescribedGroup({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: 'not authorized' })),
        ),
    });
    response.groups = hideGroupsWithUndescribableTopics(check, response.groups, (m) => [m.assignment], createDescribedGroup);
    return response;
  },
  handler:
    ({ share, cluster }) =>
    async (request) => {
      const groups = share()?.groups;
      if (groups === undefined) throw new Error('ShareGroupDescribe is served only with a share coordinator');
      const authorizedOperations = request.includeAuthorizedOperations ? GROUP_OPERATIONS : OPERATIONS_NOT_REQUESTED;
      const described = groups.describeGroups(request.groupIds).map((g) =>
        createDescribedGroup({
          groupId: g.groupId,
          authorizedOperations,
          errorCode: g.errorCode,
          errorMessage: g.errorMessage,
          groupState: g.groupState,
          ...(g.detail === undefined
            ? {}
            : {
                groupEpoch: g.detail.groupEpoch,
                assignmentEpoch: g.detail.assignmentEpoch,
                assignorName: g.detail.assignorName,
                members: g.detail.members.map((m) => ({
                  memberId: m.memberId,
                  rackId: m.rackId,
                  memberEpoch: m.memberEpoch,
                  clientId: m.clientId,
                  clientHost: m.clientHost,
                  subscribedTopicNames: [...m.subscribedTopicNames],
                  assignment: {
                    topicPartitions: m.assignment.map((t) => ({
                      topicId: t.topicId,
                      topicName: cluster.topicById(t.topicId)?.name ?? '',
                      partitions: [...t.partitions],
                    })),
                  },
                })),
              }),
        }),
      );
      return ShareGroupDescribeResponse.create({ groups: described });
    },
});
