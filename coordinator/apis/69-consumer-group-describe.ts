/**
 * ConsumerGroupDescribe (key 69): KIP-848 consumer groups' epochs, assignor and
 * members with their current and target assignments.
 *
 * Kafka: KafkaApis.handleConsumerGroupDescribe, GroupCoordinator.consumerGroupDescribe.
 * - An unknown group is GROUP_ID_NOT_FOUND with epochs 0, the defaults Kafka leaves
 *   in its DescribedGroup error entry.
 * - A member without a regex is described with "", as Kafka's ConsumerGroupMember
 *   stores it.
 * - authorizedOperations is never computed (Kafka's "not requested" value).
 * Rule: DESCRIBE on each group (a denied one GROUP_AUTHORIZATION_FAILED); then a group
 * with an undescribable topic in a member's assignment or target assignment is hidden
 * (KAFKA-18817, auth/rule-kit.ts).
 */
import { ConsumerGroupDescribeRequest } from '../../generated/ConsumerGroupDescribeRequest.js';
import {
  ConsumerGroupDescribeResponse,
  createDescribedGroup,
  type DescribedGroup,
  type Assignment as WireAssignment,
} from '../../generated/ConsumerGroupDescribeResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { hideGroupsWithUndescribableTopics, splitEntries } from '../auth/rule-kit.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { fromAssignment, type Assignment } from '../group/consumer-groups.js';
import { defineApi } from './define.js';

/** authorizedOperations when the request did not ask for them. */
const NO_OPERATIONS = -2147483648;
/** Kafka's MemberType of a member that speaks the consumer protocol. */
const CONSUMER_MEMBER_TYPE = 1;

const bare = (groupId: string, errorCode: number, errorMessage: string | null, epoch: number): DescribedGroup => ({
  groupId,
  errorCode,
  errorMessage,
  groupState: '',
  groupEpoch: epoch,
  assignmentEpoch: epoch,
  assignorName: '',
  members: [],
  authorizedOperations: NO_OPERATIONS,
});

/** An assignment with each topic's name beside its id ('' for a topic deleted since). */
const named = (cluster: Cluster, a: Assignment): WireAssignment => ({
  topicPartitions: fromAssignment(a).map((tp) => ({ topicId: tp.topicId, topicName: cluster.topicById(tp.topicId)?.name ?? '', partitions: tp.partitions })),
});

export default defineApi({
  request: ConsumerGroupDescribeRequest,
  response: ConsumerGroupDescribeResponse,
  authorize: async (request, check, _ctx, next) => {
    const response = await splitEntries(request, next, {
      entries: request.groupIds,
      allowed: (groupId) => check.allow(Res.GROUP, groupId, Op.DESCRIBE),
      keep: (groupIds) => ({ ...request, groupIds }),
      empty: () => ConsumerGroupDescribeResponse.create(),
      answerDenied: (res, denied) => void res.groups.push(...denied.map((groupId) => bare(groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED, null, -1))),
    });
    response.groups = hideGroupsWithUndescribableTopics(check, response.groups, (m) => [m.assignment, m.targetAssignment], createDescribedGroup);
    return response;
  },
  handler:
    ({ cluster, offsets: store, consumerGroups }) =>
    async (request) => {
      const described = request.groupIds.map((groupId): DescribedGroup => {
        const error = store.coordinatorError(groupId);
        if (error !== ErrorCode.NONE) return bare(groupId, error, null, 0);
        const g = consumerGroups.get(groupId);
        if (g === undefined) return bare(groupId, ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`, 0);
        return {
          ...bare(groupId, ErrorCode.NONE, null, 0),
          groupState: g.state,
          groupEpoch: g.groupEpoch,
          assignmentEpoch: g.assignmentEpoch,
          assignorName: g.assignor,
          members: [...g.members.values()].map((m) => ({
            memberId: m.memberId,
            instanceId: m.instanceId,
            rackId: m.rackId,
            memberEpoch: m.memberEpoch,
            clientId: m.clientId,
            clientHost: m.clientHost,
            subscribedTopicNames: m.names,
            subscribedTopicRegex: m.regex ?? '',
            assignment: named(cluster, m.sent),
            targetAssignment: named(cluster, g.target.get(m.memberId) ?? new Map()),
            memberType: CONSUMER_MEMBER_TYPE,
          })),
        };
      });
      return ConsumerGroupDescribeResponse.create({ groups: described });
    },
});
