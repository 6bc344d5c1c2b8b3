/**
 * Metadata and FindCoordinator: answers from the static cluster, no state of
 * their own.
 */
import { FindCoordinatorResponse, MetadataResponse } from '../../generated/index.js';
import { endpointFor, type Handler, type RequestContext, type ShareCoordinator } from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { ZERO_UUID } from '../../runtime/index.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;
const KEY_TYPE_SHARE = 2;

/**
 * Creates a topic a Metadata request names when it does not exist
 * (auto.create.topics.enable); null when the topic now exists, or the error
 * for that topic. Absent: no auto-creation.
 */
export type AutoCreate = (name: string, ctx: RequestContext) => Promise<{ error: number; message: string } | null>;

export function metadataHandler(cluster: Cluster, autoCreate?: AutoCreate): Handler {
  return async (req, ctx) => {
    const v = ctx.apiVersion;
    // Kafka creates the topics a request names, by name only, when both the
    // request (always before v4) and the broker allow it. kipgen's creation is
    // done before the answer, so the topic is returned ready at once instead
    // of with Kafka's transient LEADER_NOT_AVAILABLE.
    // By id when the entry has a non-zero topic id, whatever its name, as Kafka's KafkaApis.handleTopicMetadataRequest
    // decides: Kafka's Java client (MetadataRequest.Builder.forTopicIds) sends "" as the name beside the id.
    const byIdEntry = (w: { name?: string | null; topicId?: string }): boolean =>
      w.name === null || w.name === undefined || (w.topicId !== undefined && w.topicId !== ZERO_UUID);
    const autoErrors = new Map<string, { error: number; message: string }>();
    if (autoCreate !== undefined && req.topics !== null && (v < 4 || req.allowAutoTopicCreation)) {
      for (const w of req.topics as { name: string | null; topicId?: string }[]) {
        const name = w.name;
        if (byIdEntry(w) || name === null || cluster.topicByName(name) !== undefined) continue;
        const failed = await autoCreate(name, ctx);
        if (failed !== null) autoErrors.set(name, failed);
      }
    }
    // v0: an empty list means every topic; v1+: null means every topic.
    const all = req.topics === null || (v === 0 && req.topics.length === 0);
    const wanted: { name: string | null; topicId: string }[] = all
      ? cluster.topics().map((t) => ({ name: t.name, topicId: t.topicId }))
      : req.topics;
    const topics = wanted.map((w) => {
      const byId = byIdEntry(w);
      const info = byId ? cluster.topicById(w.topicId) : cluster.topicByName(w.name!);
      if (info === undefined) {
        return {
          errorCode: byId ? ErrorCode.UNKNOWN_TOPIC_ID : (autoErrors.get(w.name!)?.error ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
          // The name is nullable only from v12 (Kafka answers an unknown id with a null name).
          name: byId ? (v >= 12 ? null : '') : w.name,
          topicId: w.topicId ?? ZERO_UUID,
          isInternal: false,
          partitions: [],
          topicAuthorizedOperations: -2147483648,
        };
      }
      const partitions = [];
      for (let p = 0; p < info.partitions; p++) {
        const leader = cluster.leaderOf(info.name, p);
        partitions.push({ errorCode: 0, partitionIndex: p, leaderId: leader, leaderEpoch: 0, replicaNodes: [leader], isrNodes: [leader], offlineReplicas: [] });
      }
      return { errorCode: 0, name: info.name, topicId: info.topicId, isInternal: info.internal, partitions, topicAuthorizedOperations: -2147483648 };
    });
    return MetadataResponse.create({
      brokers: cluster.nodes.map((n) => ({ nodeId: n.nodeId, ...endpointFor(n, ctx), rack: null })),
      clusterId: cluster.clusterId,
      controllerId: cluster.nodes[0]!.nodeId,
      topics,
    });
  };
}

export function findCoordinatorHandler(cluster: Cluster, share: () => ShareCoordinator | null): Handler {
  /** The node coordinating `key`, or an error code and message. */
  const locate = (keyType: number, key: string, version: number): { nodeId: number } | { error: number; message: string } => {
    switch (keyType) {
      case KEY_TYPE_GROUP:
        if (key === '') return { error: ErrorCode.INVALID_REQUEST, message: 'group id is empty' };
        return { nodeId: cluster.leaderOf(CONSUMER_OFFSETS_TOPIC, cluster.offsetsPartitionFor(key)) };
      case KEY_TYPE_TRANSACTION:
        if (key === '') return { error: ErrorCode.INVALID_REQUEST, message: 'transactional id is empty' };
        return { nodeId: cluster.leaderOf(TRANSACTION_STATE_TOPIC, cluster.transactionPartitionFor(key)) };
      case KEY_TYPE_SHARE: {
        if (version < 6) return { error: ErrorCode.INVALID_REQUEST, message: 'key type SHARE needs FindCoordinator v6' };
        if (share() === null) return { error: ErrorCode.COORDINATOR_NOT_AVAILABLE, message: 'this broker runs no share coordinator' };
        // groupId:topicId:partition — the group id may itself contain ':'.
        const match = /^(.+):([A-Za-z0-9_-]{22}):(\d+)$/.exec(key);
        if (!match) return { error: ErrorCode.INVALID_REQUEST, message: `share key ${JSON.stringify(key)} is not groupId:topicId:partition` };
        const topic = cluster.topicById(match[2]!);
        const partition = Number(match[3]);
        if (topic === undefined) return { error: ErrorCode.UNKNOWN_TOPIC_ID, message: `unknown topic id ${match[2]}` };
        if (partition >= topic.partitions) return { error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `${topic.name} has no partition ${partition}` };
        return { nodeId: cluster.leaderOf(topic.name, partition) };
      }
      default:
        return { error: ErrorCode.INVALID_REQUEST, message: `unknown coordinator key type ${keyType}` };
    }
  };

  return async (req, ctx) => {
    const v = ctx.apiVersion;
    if (v <= 3) {
      const found = locate(req.keyType, req.key, v);
      if ('error' in found) return FindCoordinatorResponse.create({ errorCode: found.error, errorMessage: found.message, nodeId: -1, host: '', port: -1 });
      const node = cluster.node(found.nodeId)!;
      return FindCoordinatorResponse.create({ errorCode: 0, errorMessage: null, nodeId: node.nodeId, ...endpointFor(node, ctx) });
    }
    const coordinators = (req.coordinatorKeys as string[]).map((key) => {
      const found = locate(req.keyType, key, v);
      if ('error' in found) return { key, nodeId: -1, host: '', port: -1, errorCode: found.error, errorMessage: found.message };
      const node = cluster.node(found.nodeId)!;
      return { key, nodeId: node.nodeId, ...endpointFor(node, ctx), errorCode: 0, errorMessage: null };
    });
    return FindCoordinatorResponse.create({ coordinators });
  };
}
