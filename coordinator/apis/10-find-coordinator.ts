/**
 * FindCoordinator (key 10): the node coordinating a group, a transactional id, or
 * (kipgen's use of the SHARE key type) a share partition.
 *
 * Kafka: KafkaApis.handleFindCoordinatorRequest (getCoordinator: the leader of the
 * key's partition of __consumer_offsets / __transaction_state).
 * - v4+ batches keys (CoordinatorKeys), each answered on its own; before, one key.
 * - Key type SHARE (v6, `groupId:topicId:partition`, the group id may itself
 *   contain ':'): in Kafka it is broker-internal and finds the share coordinator of
 *   __share_group_state; kipgen's clients use it to find the share partition's
 *   leader, which holds that partition's share state (DESIGN §6). Without a share
 *   coordinator: COORDINATOR_NOT_AVAILABLE.
 * - An empty key is INVALID_REQUEST, as Kafka's.
 * Rule: DESCRIBE on the group / transactional id. Kafka's SHARE key type needs
 * CLUSTER_ACTION (broker-internal); here it needs DESCRIBE on the group named in the
 * key. Before v4 a denial answers the whole request; from v4 per key.
 */
import { FindCoordinatorRequest } from '../../generated/FindCoordinatorRequest.js';
import { createCoordinator, FindCoordinatorResponse } from '../../generated/FindCoordinatorResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { endpointFor } from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC } from '../cluster.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;
const KEY_TYPE_SHARE = 2;

/** The first version with CoordinatorKeys (KIP-699). */
const FIRST_BATCHED_VERSION = 4;

/** `groupId:topicId:partition`; the group id may itself contain ':'. */
const SHARE_KEY = /^(.+):([A-Za-z0-9_-]{22}):(\d+)$/;

export default defineApi({
  request: FindCoordinatorRequest,
  response: FindCoordinatorResponse,
  authorize: async (request, check, ctx, next) => {
    /** The resource a key names, and the error a denial of it is answered with. */
    const target = (key: string): [number, string, number] => {
      if (request.keyType === KEY_TYPE_TRANSACTION) return [Res.TRANSACTIONAL_ID, key, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED];
      if (request.keyType === KEY_TYPE_SHARE) return [Res.GROUP, key.replace(/:[A-Za-z0-9_-]{22}:\d+$/, ''), ErrorCode.GROUP_AUTHORIZATION_FAILED];
      return [Res.GROUP, key, ErrorCode.GROUP_AUTHORIZATION_FAILED];
    };
    const allowed = (key: string): boolean => {
      const [type, name] = target(key);
      return check.allow(type, name, Op.DESCRIBE);
    };
    if (ctx.apiVersion < FIRST_BATCHED_VERSION) {
      if (!allowed(request.key)) throw new BrokerError(target(request.key)[2], 'not authorized');
      return next(request);
    }
    const denied = request.coordinatorKeys.filter((k) => !allowed(k));
    if (denied.length === 0) return next(request);
    const kept = request.coordinatorKeys.filter((k) => !denied.includes(k));
    const response = kept.length > 0 ? await next({ ...request, coordinatorKeys: kept }) : FindCoordinatorResponse.create();
    response.coordinators.push(
      ...denied.map((key) => createCoordinator({ key, nodeId: -1, host: '', port: -1, errorCode: target(key)[2], errorMessage: 'not authorized' })),
    );
    return response;
  },
  handler: ({ cluster, share }) => {
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
          const match = SHARE_KEY.exec(key);
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

    return async (request, ctx) => {
      const v = ctx.apiVersion;
      if (v < FIRST_BATCHED_VERSION) {
        const found = locate(request.keyType, request.key, v);
        if ('error' in found) return FindCoordinatorResponse.create({ errorCode: found.error, errorMessage: found.message, nodeId: -1, host: '', port: -1 });
        const node = cluster.node(found.nodeId)!;
        return FindCoordinatorResponse.create({ errorCode: 0, errorMessage: null, nodeId: node.nodeId, ...endpointFor(node, ctx) });
      }
      const coordinators = request.coordinatorKeys.map((key) => {
        const found = locate(request.keyType, key, v);
        if ('error' in found) return { key, nodeId: -1, host: '', port: -1, errorCode: found.error, errorMessage: found.message };
        const node = cluster.node(found.nodeId)!;
        return { key, nodeId: node.nodeId, ...endpointFor(node, ctx), errorCode: 0, errorMessage: null };
      });
      return FindCoordinatorResponse.create({ coordinators });
    };
  },
});
