/**
 * CreateTopics (key 19): creates topics on this node, then passes the creation on
 * to the other nodes (admin/topic-admin.ts: kipgen has no controller).
 *
 * Kafka: KafkaApis (ControllerApis.handleCreateTopics in KRaft),
 * ReplicationControlManager.createTopics.
 * - validateOnly still names a fresh topic id, one never used: Kafka's
 *   ReplicationControlManager.createTopic draws it (Uuid.randomUuid) before deciding
 *   not to commit the topic.
 * - A topic named twice is INVALID_REQUEST, as Kafka's.
 * - A peer passing on a creation this node already has (e.g. a repeated request)
 *   is a success (kipgen only: see topic-admin.ts).
 * - v5+ answers the new topic's configs.
 * Rule: CREATE on the cluster or on the topic; a denied topic is answered
 * TOPIC_AUTHORIZATION_FAILED and never reaches the handler.
 */
import { randomBytes } from 'node:crypto';
import { ZERO_UUID } from '../../runtime/index.js';
import { CreateTopicsRequest, type CreatableTopicInit } from '../../generated/CreateTopicsRequest.js';
import { createCreatableTopicResult, CreateTopicsResponse, type CreatableTopicResultInit } from '../../generated/CreateTopicsResponse.js';
import { topicEntriesFor } from '../admin/config-entries.js';
import { firstError, PEER_VERSION } from '../admin/topic-admin.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The first version answering the new topic's configs. */
const FIRST_CONFIGS_VERSION = 5;

export default defineApi({
  request: CreateTopicsRequest,
  response: CreateTopicsResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => check.allow(Res.CLUSTER, CLUSTER_NAME, Op.CREATE) || check.allow(Res.TOPIC, t.name, Op.CREATE),
      keep: (topics) => ({ ...request, topics }),
      empty: () => CreateTopicsResponse.create(),
      answerDenied: (response, denied) =>
        response.topics.push(
          ...denied.map((t) =>
            createCreatableTopicResult({
              name: t.name,
              topicId: ZERO_UUID,
              errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              errorMessage: 'not authorized',
              topicConfigErrorCode: 0,
              numPartitions: -1,
              replicationFactor: -1,
              configs: null,
            }),
          ),
        ),
    }),
  handler:
    ({ topicAdmin: admin, cluster }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const peer = admin.isPeer(ctx);
      const counts = new Map<string, number>();
      for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
      const created: CreatableTopicInit[] = [];
      const topics = request.topics.map((t): CreatableTopicResultInit => {
        // An empty config list, not null, as Kafka's CreatableTopicResult leaves it (v5+).
        const failed = (error: number, message: string): CreatableTopicResultInit => ({
          name: t.name,
          topicId: ZERO_UUID,
          errorCode: error,
          errorMessage: message,
          topicConfigErrorCode: 0,
          numPartitions: -1,
          replicationFactor: -1,
          configs: [],
        });
        if (counts.get(t.name)! > 1) return failed(ErrorCode.INVALID_REQUEST, 'Found multiple entries for this topic.');
        const existing = cluster.topicByName(t.name);
        if (peer && existing !== undefined && existing.partitions === t.numPartitions) {
          return {
            name: t.name,
            topicId: existing.topicId,
            errorCode: 0,
            errorMessage: null,
            topicConfigErrorCode: 0,
            numPartitions: existing.partitions,
            replicationFactor: 1,
            configs: null,
          };
        }
        const checked = admin.checkCreate(t);
        if ('error' in checked) return failed(checked.error, checked.message);
        let topicId = randomBytes(16).toString('base64url');
        if (!request.validateOnly) {
          topicId = admin.create(t.name, checked.partitions, checked.configs).topicId;
          created.push({
            name: t.name,
            numPartitions: checked.partitions,
            replicationFactor: -1,
            assignments: [],
            configs: Object.entries(checked.configs).map(([name, value]) => ({ name, value })),
          });
        }
        const configs = v >= FIRST_CONFIGS_VERSION ? topicEntriesFor(checked.configs) : null;
        return {
          name: t.name,
          topicId,
          errorCode: 0,
          errorMessage: null,
          topicConfigErrorCode: 0,
          numPartitions: checked.partitions,
          replicationFactor: 1,
          configs,
        };
      });
      if (!peer && created.length > 0) {
        await admin.forward(
          'CreateTopics',
          CreateTopicsRequest,
          CreateTopicsRequest.create({ topics: created, timeoutMs: request.timeoutMs }),
          PEER_VERSION.createTopics,
          CreateTopicsResponse,
          (res) => firstError(res.topics),
        );
      }
      return CreateTopicsResponse.create({ topics });
    },
});
