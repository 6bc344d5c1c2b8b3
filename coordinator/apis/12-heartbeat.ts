/**
 * Heartbeat (key 12): a classic group's member says it is alive; the answer tells
 * it to rejoin when a rebalance is being prepared (REBALANCE_IN_PROGRESS).
 *
 * Kafka: KafkaApis.handleHeartbeatRequest, GroupCoordinator.heartbeat
 * (GroupMetadataManager.classicGroupHeartbeat).
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED).
 */
import { HeartbeatRequest } from '../../generated/HeartbeatRequest.js';
import { HeartbeatResponse } from '../../generated/HeartbeatResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: HeartbeatRequest,
  response: HeartbeatResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ offsets, classicGroups: groups }) =>
    async (request) => {
      const error = offsets.coordinatorError(request.groupId);
      return HeartbeatResponse.create({
        errorCode: error !== ErrorCode.NONE ? error : groups.heartbeat(request.groupId, request.memberId, request.generationId),
      });
    },
});
