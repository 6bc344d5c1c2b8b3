/**
 * DeleteTopics (key 20): deletes topics (their logs removed) on this node, then
 * passes the deletion on to the other nodes (admin/topic-admin.ts).
 *
 * Kafka: ControllerApis.handleDeleteTopics, ReplicationControlManager.deleteTopic.
 * - Before v6 topics are named; from v6 by name or id ({ name, topicId }).
 * - Kafka refuses to delete its internal topics; so does kipgen (a deviation in
 *   the code: INVALID_REQUEST, with the reason).
 * - A peer passing on a deletion this node already did is a success (kipgen only).
 * - v5+ carries error messages.
 * Rule: DELETE on each topic (named by name or id); a denied one is answered
 * TOPIC_AUTHORIZATION_FAILED.
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { DeleteTopicsRequest } from '../../generated/DeleteTopicsRequest.js';
import { createDeletableTopicResult, DeleteTopicsResponse, type DeletableTopicResultInit } from '../../generated/DeleteTopicsResponse.js';
import { firstError, PEER_VERSION } from '../admin/topic-admin.js';
import { AclOperation as Op } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The first version naming topics by name or id (before: names). */
const FIRST_TOPIC_ID_VERSION = 6;
/** The first version with error messages. */
const FIRST_MESSAGE_VERSION = 5;

export default defineApi({
  request: DeleteTopicsRequest,
  response: DeleteTopicsResponse,
  authorize: async (request, check, ctx, next) => {
    const denied = (name: string | null, topicId: string) =>
      createDeletableTopicResult({ name, topicId, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null });
    const answerDenied = (response: DeleteTopicsResponse, entries: { name: string | null; topicId: string }[]): void => {
      response.responses.push(...entries.map((t) => denied(t.name, t.topicId)));
    };
    if (ctx.apiVersion >= FIRST_TOPIC_ID_VERSION) {
      return splitEntries(request, next, {
        entries: request.topics,
        allowed: (t) => topicAllowed(check, t, Op.DELETE),
        keep: (topics) => ({ ...request, topics }),
        empty: () => DeleteTopicsResponse.create(),
        answerDenied,
      });
    }
    return splitEntries(request, next, {
      entries: request.topicNames,
      allowed: (name) => topicAllowed(check, { name }, Op.DELETE),
      keep: (topicNames) => ({ ...request, topicNames }),
      empty: () => DeleteTopicsResponse.create(),
      answerDenied: (response, names) =>
        answerDenied(
          response,
          names.map((name) => ({ name, topicId: ZERO_UUID })),
        ),
    });
  },
  handler:
    ({ topicAdmin: admin, cluster }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const peer = admin.isPeer(ctx);
      const wanted: readonly { name: string | null; topicId: string }[] =
        v >= FIRST_TOPIC_ID_VERSION ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
      const deleted: string[] = [];
      const responses = wanted.map((w): DeletableTopicResultInit => {
        const byId = w.name === null;
        const topic = byId ? cluster.topicById(w.topicId) : cluster.topicByName(w.name!);
        const result = (errorCode: number, errorMessage: string | null): DeletableTopicResultInit => ({
          name: topic?.name ?? w.name ?? null,
          topicId: topic?.topicId ?? w.topicId,
          errorCode,
          errorMessage: v >= FIRST_MESSAGE_VERSION ? errorMessage : null,
        });
        if (topic === undefined) {
          if (peer && !byId) return result(0, null);
          return byId
            ? result(ErrorCode.UNKNOWN_TOPIC_ID, `unknown topic id ${w.topicId}`)
            : result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
        }
        if (topic.internal) return result(ErrorCode.INVALID_REQUEST, `${topic.name} is an internal topic and cannot be deleted`);
        if (deleted.includes(topic.name)) return result(0, null);
        admin.delete(topic.name);
        deleted.push(topic.name);
        return result(0, null);
      });
      if (!peer && deleted.length > 0) {
        await admin.forward(
          'DeleteTopics',
          DeleteTopicsRequest,
          DeleteTopicsRequest.create({ topics: deleted.map((name) => ({ name, topicId: ZERO_UUID })), timeoutMs: request.timeoutMs }),
          PEER_VERSION.deleteTopics,
          DeleteTopicsResponse,
          (res) => firstError(res.responses),
        );
      }
      return DeleteTopicsResponse.create({ responses });
    },
});
