/**
 * SyncGroup (key 14): after a classic group's join phase the leader sends the
 * assignments and every member receives its own (relayed as they are).
 *
 * Kafka: KafkaApis.handleSyncGroupRequest, GroupCoordinator.syncGroup
 * (GroupMetadataManager.classicGroupSync).
 * - v5+ carries the protocol type and name, checked against the group's.
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED).
 */
import { SyncGroupRequest } from '../../generated/SyncGroupRequest.js';
import { SyncGroupResponse } from '../../generated/SyncGroupResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const FIRST_PROTOCOL_VERSION = 5;

export default defineApi({
  request: SyncGroupRequest,
  response: SyncGroupResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ offsets, classicGroups: groups }) =>
    async (request, ctx) => {
      const withProtocol = ctx.apiVersion >= FIRST_PROTOCOL_VERSION;
      const error = offsets.coordinatorError(request.groupId);
      const result =
        error !== ErrorCode.NONE
          ? { errorCode: error, protocolType: null, protocolName: null, assignment: new Uint8Array(0) }
          : await groups.sync(
              request.groupId,
              request.memberId,
              request.generationId,
              withProtocol ? request.protocolType : null,
              withProtocol ? request.protocolName : null,
              request.assignments,
            );
      return SyncGroupResponse.create(result);
    },
});
