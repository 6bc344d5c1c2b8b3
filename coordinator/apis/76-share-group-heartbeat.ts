/**
 * ShareGroupHeartbeat (key 76, KIP-932): a share group member joins, stays or
 * leaves; the answer carries its epoch, the heartbeat interval and, when it
 * changed, its assignment.
 *
 * Kafka: KafkaApis.handleShareGroupHeartbeat, GroupCoordinator.shareGroupHeartbeat.
 * Served while the registered share coordinator offers its group operations
 * (coordinator/broker-context.ts); the work is share/share-group-requests.ts.
 * Rule: READ on the group, DESCRIBE on each subscribed topic (else the whole
 * heartbeat is TOPIC_AUTHORIZATION_FAILED, naming the topics).
 */
import { ShareGroupHeartbeatRequest } from '../../generated/ShareGroupHeartbeatRequest.js';
import { ShareGroupHeartbeatResponse } from '../../generated/ShareGroupHeartbeatResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: ShareGroupHeartbeatRequest,
  response: ShareGroupHeartbeatResponse,
  needsShare: 'groups',
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const denied = (request.subscribedTopicNames ?? []).filter((t) => !check.allow(Res.TOPIC, t, Op.DESCRIBE));
    if (denied.length > 0) throw new BrokerError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `not authorized to describe topic(s) ${denied.join(', ')}`);
    return next(request);
  },
  handler:
    ({ share }) =>
    async (request, ctx) => {
      const groups = share()?.groups;
      if (groups === undefined) throw new Error('ShareGroupHeartbeat is served only with a share coordinator');
      // Kafka's form of the client's address (ShareGroupHeartbeat's clientAddress.toString()): a slash, then the address, no port.
      const result = await groups.heartbeat(request, { clientId: ctx.header.clientId ?? '', clientHost: `/${ctx.clientHost ?? ''}` });
      return ShareGroupHeartbeatResponse.create({
        errorCode: result.errorCode,
        errorMessage: result.errorMessage,
        memberId: result.memberId,
        memberEpoch: result.memberEpoch,
        heartbeatIntervalMs: result.heartbeatIntervalMs,
        assignment:
          result.assignment === null ? null : { topicPartitions: result.assignment.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })) },
      });
    },
});
