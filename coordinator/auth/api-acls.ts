/**
 * The one place that says which ACLs each API needs (Kafka's KafkaApis
 * `authorize` calls, per API), and how a denial is answered: with Kafka's
 * error codes, in the response's own shape. Requests that name several
 * topics are split as Kafka splits them: denied topics get
 * TOPIC_AUTHORIZATION_FAILED, the others are handled as usual.
 *
 * An API without a rule here is denied to everyone but super users (fail
 * closed), with a log line: a new handler must add its rule to RULES.
 */
import { createAddPartitionsToTxnPartitionResult, createAddPartitionsToTxnTopicResult } from '../../generated/AddPartitionsToTxnResponse.js';
import { createAddShareAcksToTxnPartitionResult, createAddShareAcksToTxnTopicResult } from '../../generated/AddShareAcksToTxnResponse.js';
import { createFetchableTopicResponse, createPartitionData as createFetchPartitionData } from '../../generated/FetchResponse.js';
import { createListOffsetsPartitionResponse, createListOffsetsTopicResponse } from '../../generated/ListOffsetsResponse.js';
import { createPartitionProduceResponse, createTopicProduceResponse } from '../../generated/ProduceResponse.js';
import { apiByKey } from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/index.js';
import type { ClusterView, RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { transactionalProducers } from '../handlers/produce-transactional.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';
import { GROUP_ADMIN_RULES } from './group-admin-acls.js';
import { splitByPermission, topicAllowed, type Check, type Next, type Rule } from './rule-kit.js';
import { ANONYMOUS } from './session.js';
import type { AuthorizationRule } from '../apis/define.js';

export type { Check, Next, Rule } from './rule-kit.js';

const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
const CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;

function deny(code: number, what: string): never {
  throw new BrokerError(code, what);
}

/** Requires `operation` on one resource, or answers the whole request with `code` at the top level. */
function require(check: Check, type: number, name: string, operation: number, code: number): void {
  if (!check.allow(type, name, operation)) deny(code, `not authorized`);
}

/** Splits a request's topics by `operation` on each (see splitByPermission); denied topics get `errorEntry(topic)`. */
function perTopic(
  request: any,
  check: Check,
  next: Next,
  spec: { list: string; responseList: string; operation: number; apiKey: number; errorEntry: (topic: any) => unknown },
): Promise<any> {
  return splitByPermission(spec.apiKey, request, next, {
    list: spec.list,
    responseList: spec.responseList,
    allowed: (topic) => topicAllowed(check, topic, spec.operation),
    deniedEntry: spec.errorEntry,
  });
}

const RULES: Record<number, Rule> = {
  // Produce: transactional records need a transactional id and WRITE on it, else the whole
  // request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (KafkaApis.handleProduceRequest, with
  // RequestUtils.hasTransactionalRecords): without it, a principal with topic WRITE alone
  // could append into another producer's open transaction. Then WRITE on each topic.
  // A transactional id on a request without transactional records is checked too (stricter
  // than Kafka, which ignores it there; our clients set it only on transactional requests).
  0: async (req, check, _ctx, next) => {
    const entry = (code: number) => (t: any) =>
      createTopicProduceResponse({ name: t.name, topicId: t.topicId, partitionResponses: t.partitionData.map((p: any) => createPartitionProduceResponse({ index: p.index, errorCode: code, baseOffset: -1n, logStartOffset: -1n })) });
    const transactional = transactionalProducers(req.topicData).any;
    const txnIdAllowed = req.transactionalId ? check.allow(Res.TRANSACTIONAL_ID, req.transactionalId, Op.WRITE) : !transactional;
    if (!txnIdAllowed) {
      const response = apiByKey(0)!.response.create() as any;
      response.responses = req.topicData.map(entry(TXN_DENIED));
      return response;
    }
    return perTopic(req, check, next, { list: 'topicData', responseList: 'responses', operation: Op.WRITE, apiKey: 0, errorEntry: entry(TOPIC_DENIED) });
  },
  // Fetch (consumers): READ on each topic.
  1: (req, check, _ctx, next) =>
    perTopic(req, check, next, {
      list: 'topics',
      responseList: 'responses',
      operation: Op.READ,
      apiKey: 1,
      errorEntry: (t) =>
        createFetchableTopicResponse({
          topic: t.topic,
          topicId: t.topicId,
          partitions: t.partitions.map((p: any) => createFetchPartitionData({ partitionIndex: p.partition, errorCode: TOPIC_DENIED, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, records: new Uint8Array(0) })),
        }),
    }),
  // ListOffsets: DESCRIBE on each topic.
  2: (req, check, _ctx, next) =>
    perTopic(req, check, next, {
      list: 'topics',
      responseList: 'topics',
      operation: Op.DESCRIBE,
      apiKey: 2,
      errorEntry: (t) =>
        createListOffsetsTopicResponse({ name: t.name, partitions: t.partitions.map((p: any) => createListOffsetsPartitionResponse({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED, timestamp: -1n, offset: -1n })) }),
    }),
  // Metadata: DESCRIBE on each topic; when listing every topic, the others are left out (as Kafka).
  // A denied topic asked for by name is answered with its name and no id; asked for by id, with
  // its id and a null name (KafkaApis.handleTopicMetadataRequest: the id is not secret, the name is).
  // Auto-creating a named topic also needs CREATE: see mayAutoCreateTopic.
  3: async (req, check, ctx, next) => {
    const all = req.topics === null || (ctx.apiVersion === 0 && req.topics.length === 0);
    const byId = !all && (req.topics as any[]).some((t) => t.topicId !== undefined && t.topicId !== ZERO_UUID);
    const response = await next(req);
    const allowed = (t: any): boolean => t.name === null || check.allow(Res.TOPIC, t.name, Op.DESCRIBE);
    if (all) response.topics = response.topics.filter(allowed);
    else {
      for (const t of response.topics) {
        if (allowed(t)) continue;
        const identity = byId ? { name: null } : { topicId: ZERO_UUID };
        Object.assign(t, { errorCode: TOPIC_DENIED, ...identity, isInternal: false, partitions: [] });
      }
    }
    return response;
  },
  // FindCoordinator: DESCRIBE on the group / transactional id. Kafka's SHARE key type is
  // broker-internal (CLUSTER_ACTION); kipgen's clients use it to find a share partition's
  // leader (DESIGN §6), so it needs DESCRIBE on the group named in the key.
  10: async (req, check, ctx, next) => {
    const target = (key: string): [number, string, number] => {
      if (req.keyType === 1) return [Res.TRANSACTIONAL_ID, key, TXN_DENIED];
      if (req.keyType === 2) return [Res.GROUP, key.replace(/:[A-Za-z0-9_-]{22}:\d+$/, ''), GROUP_DENIED];
      return [Res.GROUP, key, GROUP_DENIED];
    };
    const allowed = (key: string): boolean => {
      const [type, name] = target(key);
      return check.allow(type, name, Op.DESCRIBE);
    };
    if (ctx.apiVersion < 4) {
      if (!allowed(req.key)) deny(target(req.key)[2], 'not authorized');
      return next(req);
    }
    const denied = (req.coordinatorKeys as string[]).filter((k) => !allowed(k));
    if (denied.length === 0) return next(req);
    const kept = (req.coordinatorKeys as string[]).filter((k) => !denied.includes(k));
    const response = kept.length > 0 ? await next({ ...req, coordinatorKeys: kept }) : apiByKey(10)!.response.create();
    response.coordinators.push(...denied.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode: target(key)[2], errorMessage: 'not authorized' })));
    return response;
  },
  // SASL: before authentication, nothing to check.
  17: (req, _c, _x, next) => next(req),
  36: (req, _c, _x, next) => next(req),
  // InitProducerId: WRITE on the transactional id, and TWO_PHASE_COMMIT on it to enable 2PC
  // (KIP-939); without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679).
  22: async (req, check, _ctx, next) => {
    if (req.transactionalId) {
      require(check, Res.TRANSACTIONAL_ID, req.transactionalId, Op.WRITE, TXN_DENIED);
      if (req.enable2Pc) require(check, Res.TRANSACTIONAL_ID, req.transactionalId, Op.TWO_PHASE_COMMIT, TXN_DENIED);
    }
    else if (!check.allow(Res.CLUSTER, CLUSTER_NAME, Op.IDEMPOTENT_WRITE) && !check.allowAny(Res.TOPIC, Op.WRITE)) deny(CLUSTER_DENIED, 'not authorized');
    return next(req);
  },
  // AddPartitionsToTxn: v0-3 from clients: WRITE on the transactional id and on each topic;
  // v4+ from brokers (verification): CLUSTER_ACTION.
  24: async (req, check, ctx, next) => {
    if (ctx.apiVersion >= 4) {
      require(check, Res.CLUSTER, CLUSTER_NAME, Op.CLUSTER_ACTION, CLUSTER_DENIED);
      return next(req);
    }
    const txnAllowed = check.allow(Res.TRANSACTIONAL_ID, req.v3AndBelowTransactionalId, Op.WRITE);
    const deniedTopics = new Set((req.v3AndBelowTopics as any[]).filter((t) => !check.allow(Res.TOPIC, t.name, Op.WRITE)).map((t) => t.name));
    if (txnAllowed && deniedTopics.size === 0) return next(req);
    const response = apiByKey(24)!.response.create() as any;
    response.resultsByTopicV3AndBelow = req.v3AndBelowTopics.map((t: any) =>
      createAddPartitionsToTxnTopicResult({
        name: t.name,
        resultsByPartition: t.partitions.map((p: number) =>
          createAddPartitionsToTxnPartitionResult({
            partitionIndex: p,
            partitionErrorCode: !txnAllowed ? TXN_DENIED : deniedTopics.has(t.name) ? TOPIC_DENIED : ErrorCode.OPERATION_NOT_ATTEMPTED,
          }),
        ),
      }),
    );
    return response;
  },
  // WriteTxnMarkers (broker to broker): CLUSTER_ACTION.
  27: async (req, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.CLUSTER_ACTION)) return next(req);
    const response = apiByKey(27)!.response.create() as any;
    response.markers = req.markers.map((m: any) => ({
      producerId: m.producerId,
      topics: m.topics.map((t: any) => ({ name: t.name, partitions: t.partitionIndexes.map((p: number) => ({ partitionIndex: p, errorCode: CLUSTER_DENIED })) })),
    }));
    return response;
  },
  // DescribeAcls: DESCRIBE on the cluster; CreateAcls, DeleteAcls: ALTER on the cluster.
  29: async (req, check, _ctx, next) => {
    require(check, Res.CLUSTER, CLUSTER_NAME, Op.DESCRIBE, CLUSTER_DENIED);
    return next(req);
  },
  30: async (req, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.ALTER)) return next(req);
    const response = apiByKey(30)!.response.create() as any;
    response.results = req.creations.map(() => ({ errorCode: CLUSTER_DENIED, errorMessage: 'not authorized to ALTER the cluster' }));
    return response;
  },
  31: async (req, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.ALTER)) return next(req);
    const response = apiByKey(31)!.response.create() as any;
    response.filterResults = req.filters.map(() => ({ errorCode: CLUSTER_DENIED, errorMessage: 'not authorized to ALTER the cluster', matchingAcls: [] }));
    return response;
  },
  // KIP-1289 AddShareAcksToTxn: WRITE on the transactional id and READ on the share group
  // (as AddOffsetsToTxn), and READ on each topic whose acks it binds (coordinator/README.md).
  95: async (req, check, _ctx, next) => {
    require(check, Res.TRANSACTIONAL_ID, req.transactionalId, Op.WRITE, TXN_DENIED);
    require(check, Res.GROUP, req.groupId, Op.READ, GROUP_DENIED);
    return perTopic(req, check, next, {
      list: 'topics',
      responseList: 'results',
      operation: Op.READ,
      apiKey: 95,
      errorEntry: (t) =>
        createAddShareAcksToTxnTopicResult({ name: t.name, partitions: t.partitions.map((p: number) => createAddShareAcksToTxnPartitionResult({ partitionIndex: p, partitionErrorCode: TOPIC_DENIED })) }),
    });
  },
};

// The group and admin APIs' rules live beside (issue 15).
Object.assign(RULES, GROUP_ADMIN_RULES);

/** API keys with a rule (for tests and docs). */
export const AUTHORIZED_APIS: readonly number[] = Object.keys(RULES).map(Number);

/** Who sent a request, as the authorizer names requesters. */
const requester = (ctx: RequestContext) => ({ principal: ctx.principal ?? ANONYMOUS, host: ctx.clientHost ?? '' });

/**
 * Metadata's auto-creation of `topic` (auto.create.topics.enable): CREATE on
 * the cluster or on the topic, as Kafka's KafkaApis asks. Checked by the
 * Metadata handler's creation callback (broker.ts), because only the handler
 * knows which named topics are missing; a denied one is answered with
 * TOPIC_AUTHORIZATION_FAILED and not created.
 */
export function mayAutoCreateTopic(authorizer: AclAuthorizer, ctx: RequestContext, topic: string): boolean {
  const who = requester(ctx);
  return (
    authorizer.authorize(who, { resourceType: Res.CLUSTER, resourceName: CLUSTER_NAME, operation: Op.CREATE }) ||
    authorizer.authorize(who, { resourceType: Res.TOPIC, resourceName: topic, operation: Op.CREATE })
  );
}

/** The server's authorization hook: runs the API's rule around its handler. */
export function authorizationHook(authorizer: AclAuthorizer, cluster: ClusterView, log: (line: string) => void) {
  return (request: unknown, ctx: RequestContext, next: Next, apiRule: AuthorizationRule<unknown, unknown> | undefined): Promise<unknown> => {
    const who = requester(ctx);
    const check: Check = {
      allow: (resourceType, resourceName, operation) => authorizer.authorize(who, { resourceType, resourceName, operation }),
      allowAny: (resourceType, operation) => authorizer.authorizeAny(who, resourceType, operation),
      topicName: (t) => {
        const name = t.name ?? t.topic;
        if (typeof name === 'string' && name !== '') return name;
        return t.topicId !== undefined ? cluster.topicById(t.topicId)?.name : undefined;
      },
    };
    const rule = apiRule ?? RULES[ctx.apiKey];
    if (rule === undefined) {
      if (authorizer.isSuperUser(who.principal)) return next(request);
      log(`authorizer: API key ${ctx.apiKey} has no ACL rule (coordinator/auth/api-acls.ts); denied to ${who.principal}`);
      return Promise.reject(new BrokerError(CLUSTER_DENIED, `API key ${ctx.apiKey} has no ACL rule on this broker`));
    }
    return rule(request, check, ctx, next);
  };
}
