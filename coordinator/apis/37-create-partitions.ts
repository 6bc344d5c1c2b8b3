/**
 * CreatePartitions (key 37): grows topics on this node, then passes the change on
 * to the other nodes (admin/topic-admin.ts).
 *
 * Kafka: ControllerApis.handleCreatePartitions,
 * ReplicationControlManager.createPartitions.
 * - Grow only: fewer or as many partitions as now is INVALID_PARTITIONS, with
 *   Kafka's messages. A topic named twice is INVALID_REQUEST.
 * - kipgen places partitions itself (partition p on node p mod n): a manual
 *   assignment is INVALID_REPLICA_ASSIGNMENT; internal topics are
 *   INVALID_REQUEST (their partition count is set in the broker configuration);
 *   more than 10000 partitions is INVALID_PARTITIONS (kipgen's limit).
 * - A peer passing on a change this node already has is a success (kipgen only).
 * Rule: ALTER on each topic; a denied one is answered TOPIC_AUTHORIZATION_FAILED.
 */
import { CreatePartitionsRequest, type CreatePartitionsTopicInit } from '../../generated/CreatePartitionsRequest.js';
import { createCreatePartitionsTopicResult, CreatePartitionsResponse, type CreatePartitionsTopicResultInit } from '../../generated/CreatePartitionsResponse.js';
import { firstError, PEER_VERSION } from '../admin/topic-admin.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** kipgen's limit on a topic's partitions. */
const MAX_PARTITIONS = 10_000;

export default defineApi({
  request: CreatePartitionsRequest,
  response: CreatePartitionsResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => check.allow(Res.TOPIC, t.name, Op.ALTER),
      keep: (topics) => ({ ...request, topics }),
      empty: () => CreatePartitionsResponse.create(),
      answerDenied: (response, denied) =>
        response.results.push(
          ...denied.map((t) =>
            createCreatePartitionsTopicResult({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'not authorized' }),
          ),
        ),
    }),
  handler:
    ({ topicAdmin: admin, cluster }) =>
    async (request, ctx) => {
      const peer = admin.isPeer(ctx);
      const counts = new Map<string, number>();
      for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
      const grown: CreatePartitionsTopicInit[] = [];
      const results = request.topics.map((t): CreatePartitionsTopicResultInit => {
        const result = (errorCode: number, errorMessage: string | null): CreatePartitionsTopicResultInit => ({ name: t.name, errorCode, errorMessage });
        if (counts.get(t.name)! > 1) return result(ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.');
        const topic = cluster.topicByName(t.name);
        if (topic === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
        if (topic.internal) return result(ErrorCode.INVALID_REQUEST, `${t.name} is an internal topic; its partition count is set in the broker configuration`);
        if (peer && t.count === topic.partitions) return result(0, null);
        if (t.count < topic.partitions)
          return result(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${topic.partitions} partitions, which is higher than the requested ${t.count}.`);
        if (t.count === topic.partitions) return result(ErrorCode.INVALID_PARTITIONS, `Topic already has ${topic.partitions} partitions.`);
        if (t.count > MAX_PARTITIONS)
          return result(ErrorCode.INVALID_PARTITIONS, `Number of partitions ${t.count} is above kipgen's limit of ${MAX_PARTITIONS}`);
        if (t.assignments !== null)
          return result(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            'kipgen places partitions itself (partition p on node p mod n); manual assignments are not supported',
          );
        if (!request.validateOnly) {
          admin.grow(t.name, t.count);
          grown.push({ name: t.name, count: t.count, assignments: null });
        }
        return result(0, null);
      });
      if (!peer && grown.length > 0) {
        await admin.forward(
          'CreatePartitions',
          CreatePartitionsRequest,
          CreatePartitionsRequest.create({ topics: grown, timeoutMs: request.timeoutMs, validateOnly: false }),
          PEER_VERSION.createPartitions,
          CreatePartitionsResponse,
          (res) => firstError(res.results),
        );
      }
      return CreatePartitionsResponse.create({ results });
    },
});
