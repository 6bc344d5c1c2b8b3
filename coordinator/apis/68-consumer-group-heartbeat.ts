/**
 * ConsumerGroupHeartbeat (key 68): a KIP-848 consumer group member joins, stays or
 * leaves; the server-side assignor answers with the member's epoch and assignment.
 *
 * Kafka: KafkaApis.handleConsumerGroupHeartbeat, GroupCoordinator
 * consumerGroupHeartbeat (GroupMetadataManager.consumerGroupHeartbeat).
 * - An empty group id is INVALID_REQUEST with Kafka's message; an error answered
 *   here has no member id and member epoch −1.
 * - v0: the broker makes the member id; v1+ the client does.
 * - Deviation: a classic group with members is not converted to the consumer
 *   protocol (GROUP_ID_NOT_FOUND with a message); Kafka converts it.
 * Rule: READ on the group, and DESCRIBE on every subscribed topic, else the whole
 * heartbeat is TOPIC_AUTHORIZATION_FAILED (Kafka 4.0, KAFKA-18813), so no partition
 * of such a topic is assigned.
 */
import { ConsumerGroupHeartbeatRequest } from '../../generated/ConsumerGroupHeartbeatRequest.js';
import { ConsumerGroupHeartbeatResponse } from '../../generated/ConsumerGroupHeartbeatResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The version in which the broker, not the client, makes the member id. */
const BROKER_MEMBER_ID_VERSION = 0;

export default defineApi({
  request: ConsumerGroupHeartbeatRequest,
  response: ConsumerGroupHeartbeatResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const denied = (request.subscribedTopicNames ?? []).filter((t) => !check.allow(Res.TOPIC, t, Op.DESCRIBE));
    if (denied.length > 0) throw new BrokerError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'not authorized to describe every subscribed topic');
    return next(request);
  },
  handler:
    ({ offsets, classicGroups: groups, consumerGroups }) =>
    async (request, ctx) => {
      const error = request.groupId === '' ? ErrorCode.INVALID_REQUEST : offsets.coordinatorError(request.groupId);
      if (error !== ErrorCode.NONE) {
        return ConsumerGroupHeartbeatResponse.create({
          errorCode: error,
          errorMessage: request.groupId === '' ? 'GroupId can not be empty' : null,
          memberId: null,
          memberEpoch: -1,
        });
      }
      if ((groups.get(request.groupId)?.members.size ?? 0) > 0) {
        return ConsumerGroupHeartbeatResponse.create({
          errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
          errorMessage: `${request.groupId} is a classic group with members; kipgen does not convert groups between protocols`,
          memberId: null,
          memberEpoch: -1,
        });
      }
      const out = consumerGroups.heartbeat({
        groupId: request.groupId,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch,
        instanceId: request.instanceId,
        rackId: request.rackId,
        rebalanceTimeoutMs: request.rebalanceTimeoutMs,
        subscribedTopicNames: request.subscribedTopicNames,
        subscribedTopicRegex: request.subscribedTopicRegex ?? null,
        serverAssignor: request.serverAssignor,
        topicPartitions: request.topicPartitions,
        clientId: ctx.header.clientId ?? '',
        clientHost: `/${ctx.clientHost ?? ''}`, // Kafka's form: a slash, then the address
        brokerMakesMemberId: ctx.apiVersion === BROKER_MEMBER_ID_VERSION,
      });
      return ConsumerGroupHeartbeatResponse.create(out);
    },
});
