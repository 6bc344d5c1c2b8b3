/**
 * JoinGroup (key 11): a member of a classic group joins (or rejoins) and waits for
 * the rebalance; the leader gets every member's protocol metadata. Served by the
 * node leading the group's offsets partition (NOT_COORDINATOR elsewhere).
 *
 * Kafka: KafkaApis.handleJoinGroupRequest, GroupCoordinator.joinGroup
 * (GroupMetadataManager.classicGroupJoin).
 * - v4+: a member without an id first gets MEMBER_ID_REQUIRED with its new id.
 * - v5+ carries a group instance id; static membership is not implemented
 *   (coordinator/README.md).
 * - v0 has no rebalance timeout: the session timeout stands for it, as in Kafka.
 * - ProtocolName is not nullable before v7 (an empty string instead).
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED).
 */
import { JoinGroupRequest } from '../../generated/JoinGroupRequest.js';
import { JoinGroupResponse } from '../../generated/JoinGroupResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import type { JoinResult } from '../group/classic-groups.js';
import { defineApi } from './define.js';

const FIRST_REBALANCE_TIMEOUT_VERSION = 1;
const FIRST_KNOWN_MEMBER_ID_VERSION = 4;
const FIRST_INSTANCE_ID_VERSION = 5;
const FIRST_NULLABLE_PROTOCOL_NAME_VERSION = 7;

export default defineApi({
  request: JoinGroupRequest,
  response: JoinGroupResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ offsets, classicGroups: groups }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const respond = (r: JoinResult): JoinGroupResponse =>
        JoinGroupResponse.create({
          errorCode: r.errorCode,
          generationId: r.generationId,
          protocolType: r.protocolType,
          protocolName: v >= FIRST_NULLABLE_PROTOCOL_NAME_VERSION ? r.protocolName : (r.protocolName ?? ''),
          leader: r.leader,
          skipAssignment: false,
          memberId: r.memberId,
          members: r.members,
        });
      const error = offsets.coordinatorError(request.groupId);
      if (error !== ErrorCode.NONE) {
        return respond({ errorCode: error, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: request.memberId, members: [] });
      }
      const result = await groups.join({
        groupId: request.groupId,
        memberId: request.memberId,
        groupInstanceId: v >= FIRST_INSTANCE_ID_VERSION ? request.groupInstanceId : null,
        clientId: ctx.header.clientId ?? '',
        clientHost: `/${ctx.clientHost ?? ''}`, // Kafka's form: a slash, then the address
        sessionTimeoutMs: request.sessionTimeoutMs,
        rebalanceTimeoutMs: v >= FIRST_REBALANCE_TIMEOUT_VERSION ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
        protocolType: request.protocolType,
        protocols: request.protocols,
        requireKnownMemberId: v >= FIRST_KNOWN_MEMBER_ID_VERSION,
      });
      return respond(result);
    },
});
