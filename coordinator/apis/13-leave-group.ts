/**
 * LeaveGroup (key 13): members leave a classic group, which rebalances.
 *
 * Kafka: KafkaApis.handleLeaveGroupRequest, GroupCoordinator.leaveGroup
 * (GroupMetadataManager.classicGroupLeave).
 * - Before v3 one member leaves by its id, answered at the top level; v3+ a batch
 *   of members (by member id or group instance id), each answered on its own.
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED).
 */
import { LeaveGroupRequest } from '../../generated/LeaveGroupRequest.js';
import { LeaveGroupResponse } from '../../generated/LeaveGroupResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const FIRST_BATCH_VERSION = 3;

export default defineApi({
  request: LeaveGroupRequest,
  response: LeaveGroupResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ offsets, classicGroups: groups }) =>
    async (request, ctx) => {
      const error = offsets.coordinatorError(request.groupId);
      if (ctx.apiVersion < FIRST_BATCH_VERSION) {
        return LeaveGroupResponse.create({ errorCode: error !== ErrorCode.NONE ? error : groups.leave(request.groupId, request.memberId, null, null) });
      }
      if (error !== ErrorCode.NONE) return LeaveGroupResponse.create({ errorCode: error, members: [] });
      const members = request.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        errorCode: groups.leave(request.groupId, m.memberId, m.groupInstanceId, m.reason ?? null),
      }));
      return LeaveGroupResponse.create({ errorCode: ErrorCode.NONE, members });
    },
});
