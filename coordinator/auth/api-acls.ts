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
import { createOffsetFetchResponseGroup } from '../../generated/OffsetFetchResponse.js';
import { createPartitionData as createShareAckPartitionData, createShareAcknowledgeTopicResponse } from '../../generated/ShareAcknowledgeResponse.js';
import { createPartitionData as createShareFetchPartitionData, createShareFetchableTopicResponse } from '../../generated/ShareFetchResponse.js';
import { createDescribedGroup } from '../../generated/ShareGroupDescribeResponse.js';
import { createTxnOffsetCommitResponsePartition, createTxnOffsetCommitResponseTopic } from '../../generated/TxnOffsetCommitResponse.js';
import { createTxnShareAcknowledgePartitionResponse, createTxnShareAcknowledgeTopicResponse } from '../../generated/TxnShareAcknowledgeResponse.js';
import { apiByKey } from '../../generated/index.js';
import type { ClusterView, RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';
import { GROUP_ADMIN_RULES } from './group-admin-acls.js';
import { hideGroupsWithUndescribableTopics, splitByPermission, topicAllowed, type AuthorizationRule, type Check, type Next, type Rule } from './rule-kit.js';
import { ANONYMOUS } from './session.js';

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

/**
 * One group's topics in an OffsetFetch: the ones the handler may see (null: all), and how
 * to complete its answer: without undescribable topics when all were asked for, with the
 * denied named topics as TOPIC_AUTHORIZATION_FAILED entries otherwise.
 */
function splitOffsetFetchTopics(check: Check, topics: any[] | null): { kept: any[] | null; answer: (found: any[]) => any[] } {
  if (topics === null) return { kept: null, answer: (found) => found.filter((t) => t.name === '' || check.allow(Res.TOPIC, t.name, Op.DESCRIBE)) };
  const denied = topics.filter((t) => !topicAllowed(check, t, Op.DESCRIBE));
  const deniedEntry = (t: any) => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitionIndexes.map((partitionIndex: number) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: TOPIC_DENIED })),
  });
  return { kept: topics.filter((t) => !denied.includes(t)), answer: (found) => [...found, ...denied.map(deniedEntry)] };
}

const RULES: Record<number, Rule> = {
  // OffsetFetch: DESCRIBE on the group (per group from v8), and DESCRIBE on each topic
  // (KafkaApis.handleOffsetFetchRequest, fetchAllOffsetsForGroup / fetchOffsetsForGroup):
  // asked for all topics, the undescribable ones are left out; asked for by name or id,
  // they are answered TOPIC_AUTHORIZATION_FAILED with no offset and never reach the handler.
  9: async (req, check, ctx, next) => {
    if (ctx.apiVersion < 8) {
      require(check, Res.GROUP, req.groupId, Op.DESCRIBE, GROUP_DENIED);
      const split = splitOffsetFetchTopics(check, req.topics);
      const response = await next({ ...req, topics: split.kept });
      // A group error (v2+) answers the group as a whole, as in the v8+ shape below.
      if (!response.errorCode) response.topics = split.answer(response.topics);
      return response;
    }
    const denied = req.groups.filter((g: any) => !check.allow(Res.GROUP, g.groupId, Op.DESCRIBE));
    const kept = req.groups.filter((g: any) => !denied.includes(g));
    const splits = new Map<string, ReturnType<typeof splitOffsetFetchTopics>>(kept.map((g: any) => [g.groupId, splitOffsetFetchTopics(check, g.topics)]));
    const response = kept.length > 0 ? await next({ ...req, groups: kept.map((g: any) => ({ ...g, topics: splits.get(g.groupId)!.kept })) }) : apiByKey(9)!.response.create();
    for (const group of response.groups) {
      const split = splits.get(group.groupId);
      if (split !== undefined && group.errorCode === ErrorCode.NONE) group.topics = split.answer(group.topics);
    }
    response.groups.push(...denied.map((g: any) => createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: GROUP_DENIED })));
    return response;
  },
  // TxnOffsetCommit: WRITE on the transactional id, READ on the group, READ on each topic.
  28: async (req, check, _ctx, next) => {
    const entry = (code: number) => (t: any) =>
      createTxnOffsetCommitResponseTopic({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p: any) => createTxnOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: code })) });
    const whole = (code: number): unknown => {
      const response = apiByKey(28)!.response.create() as any;
      response.topics = req.topics.map(entry(code));
      return response;
    };
    if (!check.allow(Res.TRANSACTIONAL_ID, req.transactionalId, Op.WRITE)) return whole(TXN_DENIED);
    if (!check.allow(Res.GROUP, req.groupId, Op.READ)) return whole(GROUP_DENIED);
    return perTopic(req, check, next, { list: 'topics', responseList: 'topics', operation: Op.READ, apiKey: 28, errorEntry: entry(TOPIC_DENIED) });
  },
  // ShareGroupHeartbeat: READ on the group, DESCRIBE on each subscribed topic.
  76: async (req, check, _ctx, next) => {
    require(check, Res.GROUP, req.groupId, Op.READ, GROUP_DENIED);
    const denied = ((req.subscribedTopicNames ?? []) as string[]).filter((t) => !check.allow(Res.TOPIC, t, Op.DESCRIBE));
    if (denied.length > 0) deny(TOPIC_DENIED, `not authorized to describe topic(s) ${denied.join(', ')}`);
    return next(req);
  },
  // ShareGroupDescribe: DESCRIBE on each group; a group whose members are assigned a topic the
  // caller may not DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED without members (KAFKA-18817).
  77: async (req, check, _ctx, next) => {
    const denied = (req.groupIds as string[]).filter((g) => !check.allow(Res.GROUP, g, Op.DESCRIBE));
    const kept = (req.groupIds as string[]).filter((g) => !denied.includes(g));
    const response = kept.length > 0 ? await next({ ...req, groupIds: kept }) : apiByKey(77)!.response.create();
    response.groups.push(...denied.map((groupId) => createDescribedGroup({ groupId, errorCode: GROUP_DENIED, errorMessage: 'not authorized' })));
    response.groups = hideGroupsWithUndescribableTopics(check, response.groups, (m) => [m.assignment], createDescribedGroup);
    return response;
  },
  // ShareFetch, ShareAcknowledge: READ on the group, READ on each topic.
  78: async (req, check, _ctx, next) => {
    require(check, Res.GROUP, req.groupId, Op.READ, GROUP_DENIED);
    return perTopic(req, check, next, {
      list: 'topics',
      responseList: 'responses',
      operation: Op.READ,
      apiKey: 78,
      errorEntry: (t) =>
        createShareFetchableTopicResponse({ topicId: t.topicId, partitions: t.partitions.map((p: any) => createShareFetchPartitionData({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED })) }),
    });
  },
  79: async (req, check, _ctx, next) => {
    require(check, Res.GROUP, req.groupId, Op.READ, GROUP_DENIED);
    return perTopic(req, check, next, {
      list: 'topics',
      responseList: 'responses',
      operation: Op.READ,
      apiKey: 79,
      errorEntry: (t) =>
        createShareAcknowledgeTopicResponse({ topicId: t.topicId, partitions: t.partitions.map((p: any) => createShareAckPartitionData({ partitionIndex: p.partitionIndex, errorCode: TOPIC_DENIED })) }),
    });
  },
  // KIP-1289 TxnShareAcknowledge: WRITE on the transactional id, READ on the share group and
  // on each topic (as TxnOffsetCommit for consumer offsets).
  96: async (req, check, _ctx, next) => {
    require(check, Res.TRANSACTIONAL_ID, req.transactionalId, Op.WRITE, TXN_DENIED);
    require(check, Res.GROUP, req.groupId, Op.READ, GROUP_DENIED);
    return perTopic(req, check, next, {
      list: 'topics',
      responseList: 'topics',
      operation: Op.READ,
      apiKey: 96,
      errorEntry: (t) =>
        createTxnShareAcknowledgeTopicResponse({
          topicId: t.topicId,
          partitions: t.partitions.map((p: any) => createTxnShareAcknowledgePartitionResponse({ partition: p.partition, errorCode: TOPIC_DENIED, errorMessage: 'not authorized to read the topic' })),
        }),
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
