/**
 * Metadata (key 3): the nodes, and the topics asked for (or all) with their
 * partitions and leaders, from the static cluster.
 *
 * Kafka: KafkaApis.handleTopicMetadataRequest, MetadataCache.getTopicMetadata.
 * - By name or by topic id: a non-zero id decides, whatever the name beside it
 *   (Kafka's Java client, MetadataRequest.Builder.forTopicIds, sends "" beside the id).
 * - v0: an empty list means every topic; v1+: null does. An unknown id is answered
 *   with a null name from v12 (the name is nullable only from there), "" before.
 * - Auto-creation (auto.create.topics.enable, and the request allows it: always
 *   before v4) of topics named, by name only. Kafka answers LEADER_NOT_AVAILABLE
 *   while its controller creates the topic; kipgen creates it before answering, so
 *   the topic comes back ready at once.
 * - topicAuthorizedOperations (v8+, when asked): every topic operation without an
 *   authorizer, as Kafka's AuthHelper.authorizedOperations; the rule narrows it to
 *   what the requester may do.
 * Rule: DESCRIBE on each topic; when listing every topic, the others are left out
 * (as Kafka). A denied topic asked for by name is answered with its name and no id;
 * asked for by id, with its id and a null name (the id is not secret, the name is).
 * Auto-creating a named topic also needs CREATE: checked by the creation callback
 * (services.autoCreate, auth/api-acls.ts mayAutoCreateTopic), because only the
 * handler knows which named topics are missing.
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { MetadataRequest, type MetadataRequestTopic } from '../../generated/MetadataRequest.js';
import {
  MetadataResponse,
  type MetadataResponsePartitionInit,
  type MetadataResponseTopic,
  type MetadataResponseTopicInit,
} from '../../generated/MetadataResponse.js';
import { AclOperation as Op, operationsField, ResourceType as Res, SUPPORTED_OPERATIONS } from '../auth/acl.js';
import { endpointFor } from '../broker-context.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** topicAuthorizedOperations when the request did not ask for them. */
const NO_OPERATIONS = -2147483648;

/** What a broker without an authorizer answers for topicAuthorizedOperations when asked. */
const ALL_TOPIC_OPERATIONS = operationsField(SUPPORTED_OPERATIONS[Res.TOPIC]!);

/** A request entry names its topic by id when the id is non-zero, or when it has no name. */
const byIdEntry = (w: { name: string | null; topicId: string }): boolean => w.name === null || w.topicId !== ZERO_UUID;

export default defineApi({
  request: MetadataRequest,
  response: MetadataResponse,
  authorize: async (request, check, ctx, next) => {
    const all = request.topics === null || (ctx.apiVersion === 0 && request.topics.length === 0);
    const byId = !all && request.topics!.some((t) => t.topicId !== ZERO_UUID);
    const response = await next(request);
    const allowed = (t: MetadataResponseTopic): boolean => t.name === null || check.allow(Res.TOPIC, t.name, Op.DESCRIBE);
    if (all) response.topics = response.topics.filter(allowed);
    else {
      for (const t of response.topics) {
        if (allowed(t)) continue;
        if (byId) t.name = null;
        else t.topicId = ZERO_UUID;
        Object.assign(t, { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, isInternal: false, partitions: [] });
      }
    }
    if (request.includeTopicAuthorizedOperations) {
      for (const t of response.topics) {
        if (t.errorCode === ErrorCode.NONE && t.name !== null) t.topicAuthorizedOperations = check.authorizedOperations(Res.TOPIC, t.name);
      }
    }
    return response;
  },
  handler:
    ({ cluster, autoCreate }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const autoErrors = new Map<string, { error: number; message: string }>();
      if (autoCreate !== undefined && request.topics !== null && (v < 4 || request.allowAutoTopicCreation)) {
        for (const w of request.topics) {
          const name = w.name;
          if (byIdEntry(w) || name === null || cluster.topicByName(name) !== undefined) continue;
          const failed = await autoCreate(name, ctx);
          if (failed !== null) autoErrors.set(name, failed);
        }
      }
      const all = request.topics === null || (v === 0 && request.topics.length === 0);
      const wanted: readonly MetadataRequestTopic[] = all ? cluster.topics().map((t) => ({ name: t.name, topicId: t.topicId })) : request.topics!;
      const topics = wanted.map((w): MetadataResponseTopicInit => {
        const byId = byIdEntry(w);
        const info = byId ? cluster.topicById(w.topicId) : cluster.topicByName(w.name!);
        if (info === undefined) {
          return {
            errorCode: byId ? ErrorCode.UNKNOWN_TOPIC_ID : (autoErrors.get(w.name!)?.error ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            name: byId ? (v >= 12 ? null : '') : w.name,
            topicId: w.topicId,
            isInternal: false,
            partitions: [],
            topicAuthorizedOperations: NO_OPERATIONS,
          };
        }
        const partitions: MetadataResponsePartitionInit[] = [];
        for (let p = 0; p < info.partitions; p++) {
          const leader = cluster.leaderOf(info.name, p);
          partitions.push({
            errorCode: 0,
            partitionIndex: p,
            leaderId: leader,
            leaderEpoch: 0,
            replicaNodes: [leader],
            isrNodes: [leader],
            offlineReplicas: [],
          });
        }
        const operations = request.includeTopicAuthorizedOperations ? ALL_TOPIC_OPERATIONS : NO_OPERATIONS;
        return { errorCode: 0, name: info.name, topicId: info.topicId, isInternal: info.internal, partitions, topicAuthorizedOperations: operations };
      });
      return MetadataResponse.create({
        brokers: cluster.nodes.map((n) => ({ nodeId: n.nodeId, ...endpointFor(n, ctx), rack: null })),
        clusterId: cluster.clusterId,
        controllerId: cluster.nodes[0]!.nodeId,
        topics,
      });
    },
});
