import {
  ShareGroupDescribeRequest,
  ShareGroupDescribeResponse,
  ShareGroupHeartbeatRequest,
  ShareGroupHeartbeatResponse,
} from '../../../generated/index.js';
import { createDescribedGroup } from '../../../generated/ShareGroupDescribeResponse.js';
import type { Handler, RequestContext } from '../../broker-context.js';
import { ErrorCode, ShareError } from '../error-codes.js';
import { dropMember, type ShareRuntime } from '../share-runtime.js';

/** Kafka's authorized-operations bits for a group: READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11). There are no ACLs: everything is allowed. */
const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);
const OPERATIONS_NOT_REQUESTED = -2147483648;
const ASSIGNOR_NAME = 'simple';

/** ShareGroupHeartbeat (API 76, v1): join, stay, leave; the answer carries the member epoch and, when it changed, the assignment. */
export function shareGroupHeartbeatHandler(rt: ShareRuntime): Handler {
  return async (request: ShareGroupHeartbeatRequest, ctx: RequestContext): Promise<ShareGroupHeartbeatResponse> => {
    if (!rt.isGroupCoordinator(request.groupId)) {
      return ShareGroupHeartbeatResponse.create({
        errorCode: ErrorCode.NOT_COORDINATOR,
        errorMessage: `node ${rt.nodeId} does not coordinate ${request.groupId}`,
      });
    }
    try {
      const result = rt.groups.heartbeat({
        groupId: request.groupId,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch,
        rackId: request.rackId,
        subscribedTopicNames: request.subscribedTopicNames,
        clientId: ctx.header.clientId ?? '',
        // Kafka's form (ShareGroupHeartbeat's clientAddress.toString()): a slash, then the address, no port.
        clientHost: `/${ctx.clientHost ?? ''}`,
      });
      if (result.left) await dropMember(rt, request.groupId, request.memberId);
      return ShareGroupHeartbeatResponse.create({
        memberId: request.memberId,
        memberEpoch: result.memberEpoch,
        heartbeatIntervalMs: rt.heartbeatIntervalOf(request.groupId),
        assignment:
          result.assignment === null
            ? null
            : { topicPartitions: result.assignment.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })) },
      });
    } catch (caught) {
      if (!(caught instanceof ShareError)) throw caught;
      return ShareGroupHeartbeatResponse.create({ errorCode: caught.code, errorMessage: caught.message, memberId: request.memberId });
    }
  };
}

/** ShareGroupDescribe (API 77, v1). */
export function shareGroupDescribeHandler(rt: ShareRuntime): Handler {
  return async (request: ShareGroupDescribeRequest): Promise<ShareGroupDescribeResponse> => {
    const groups = request.groupIds.map((groupId) => {
      const base = {
        groupId,
        authorizedOperations: request.includeAuthorizedOperations ? GROUP_OPERATIONS : OPERATIONS_NOT_REQUESTED,
      };
      if (!rt.isGroupCoordinator(groupId)) {
        return {
          ...base,
          errorCode: ErrorCode.NOT_COORDINATOR,
          errorMessage: `node ${rt.nodeId} does not coordinate ${groupId}`,
          groupState: '',
        };
      }
      const group = rt.groups.group(groupId);
      if (group === undefined) {
        return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `share group ${groupId} not found`, groupState: 'Dead' };
      }
      return {
        ...base,
        groupState: group.members.size === 0 ? 'Empty' : 'Stable',
        groupEpoch: group.groupEpoch,
        assignmentEpoch: group.assignmentEpoch,
        assignorName: ASSIGNOR_NAME,
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          assignment: {
            topicPartitions: m.assignment.map((t) => ({
              topicId: t.topicId,
              topicName: rt.cluster.topicById(t.topicId)?.name ?? '',
              partitions: [...t.partitions],
            })),
          },
        })),
      };
    });
    return ShareGroupDescribeResponse.create({ groups: groups.map((g) => createDescribedGroup(g)) });
  };
}
