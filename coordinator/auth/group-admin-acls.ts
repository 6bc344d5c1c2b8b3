/**
 * ACL rules for the group and admin APIs (issue 15), in Kafka's terms:
 * group membership and commits need READ on the group (commits also READ on
 * the topics), describing DESCRIBE, deleting DELETE; CreateTopics needs
 * CREATE on the cluster or the topic, DeleteTopics DELETE and
 * CreatePartitions ALTER on the topic, DescribeConfigs / IncrementalAlterConfigs
 * DESCRIBE_CONFIGS / ALTER_CONFIGS on the resource (the cluster for a broker),
 * DescribeCluster DESCRIBE on the cluster. Denied entries are answered with
 * the AUTHORIZATION_FAILED code of their resource and never reach the handler.
 */
import { createDescribedGroup } from '../../generated/ConsumerGroupDescribeResponse.js';
import { apiByKey } from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/index.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';
import { hideGroupsWithUndescribableTopics, splitByPermission, topicAllowed, type Next, type Rule } from './rule-kit.js';

/** authorizedOperations when the request did not ask for them. */
const NO_OPERATIONS = -2147483648;

const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;

/** Whole request refused at the top level (APIs with a top-level ErrorCode). */
const needs = (type: number, name: (req: any) => string, op: number, code: number): Rule => async (req, check, _ctx, next) => {
  if (!check.allow(type, name(req), op)) throw new BrokerError(code, 'not authorized');
  return next(req);
};

/** splitByPermission, positionally: these rules are one line each. */
const split = (apiKey: number, req: any, next: Next, list: string, responseList: string, allowed: (e: any) => boolean, deniedEntry: (e: any) => unknown): Promise<any> =>
  splitByPermission(apiKey, req, next, { list, responseList, allowed, deniedEntry });

const configResource = (type: number, name: string): [number, string] => (type === 2 ? [Res.TOPIC, name] : type === 32 ? [Res.GROUP, name] : [Res.CLUSTER, CLUSTER_NAME]);
const configCode = (type: number): number => (type === 2 ? TOPIC_DENIED : type === 32 ? GROUP_DENIED : CLUSTER_DENIED);

export const GROUP_ADMIN_RULES: Record<number, Rule> = {
  11: needs(Res.GROUP, (r) => r.groupId, Op.READ, GROUP_DENIED),
  12: needs(Res.GROUP, (r) => r.groupId, Op.READ, GROUP_DENIED),
  13: needs(Res.GROUP, (r) => r.groupId, Op.READ, GROUP_DENIED),
  14: needs(Res.GROUP, (r) => r.groupId, Op.READ, GROUP_DENIED),
  // ConsumerGroupHeartbeat: READ on the group, and DESCRIBE on every subscribed topic, else the
  // whole heartbeat is TOPIC_AUTHORIZATION_FAILED (Kafka 4.0, KAFKA-18813;
  // KafkaApis.handleConsumerGroupHeartbeat), so no partition of such a topic is assigned.
  68: async (req, check, _ctx, next) => {
    if (!check.allow(Res.GROUP, req.groupId, Op.READ)) throw new BrokerError(GROUP_DENIED, 'not authorized');
    const denied = ((req.subscribedTopicNames ?? []) as string[]).filter((t) => !check.allow(Res.TOPIC, t, Op.DESCRIBE));
    if (denied.length > 0) throw new BrokerError(TOPIC_DENIED, 'not authorized to describe every subscribed topic');
    return next(req);
  },
  60: needs(Res.CLUSTER, () => CLUSTER_NAME, Op.DESCRIBE, CLUSTER_DENIED),
  // OffsetCommit: READ on the group (else every partition GROUP_AUTHORIZATION_FAILED), READ on each topic.
  8: async (req, check, _ctx, next) => {
    const entry = (code: number) => (t: any) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p: any) => ({ partitionIndex: p.partitionIndex, errorCode: code })) });
    if (!check.allow(Res.GROUP, req.groupId, Op.READ)) {
      const res = apiByKey(8)!.response.create() as any;
      res.topics = req.topics.map(entry(GROUP_DENIED));
      return res;
    }
    return split(8, req, next, 'topics', 'topics', (t) => topicAllowed(check, t, Op.READ), entry(TOPIC_DENIED));
  },
  // ListGroups: the groups the caller may DESCRIBE.
  16: async (req, check, _ctx, next) => {
    const res = await next(req);
    res.groups = res.groups.filter((g: any) => check.allow(Res.GROUP, g.groupId, Op.DESCRIBE));
    return res;
  },
  15: (req, check, _ctx, next) =>
    split(15, req, next, 'groups', 'groups', (g: string) => check.allow(Res.GROUP, g, Op.DESCRIBE), (g: string) => ({ groupId: g, errorCode: GROUP_DENIED, errorMessage: null, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NO_OPERATIONS })),
  // ConsumerGroupDescribe: DESCRIBE on each group; then groups with an undescribable topic in a
  // member's assignment or target assignment are hidden (KAFKA-18817, rule-kit.ts).
  69: async (req, check, _ctx, next) => {
    const res = await split(69, req, next, 'groupIds', 'groups', (g: string) => check.allow(Res.GROUP, g, Op.DESCRIBE), (g: string) => ({ groupId: g, errorCode: GROUP_DENIED, errorMessage: null, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [], authorizedOperations: NO_OPERATIONS }));
    res.groups = hideGroupsWithUndescribableTopics(check, res.groups, (m) => [m.assignment, m.targetAssignment], createDescribedGroup);
    return res;
  },
  42: (req, check, _ctx, next) =>
    split(42, req, next, 'groupsNames', 'results', (g: string) => check.allow(Res.GROUP, g, Op.DELETE), (g: string) => ({ groupId: g, errorCode: GROUP_DENIED, errorMessage: null })),
  19: (req, check, _ctx, next) =>
    split(19, req, next, 'topics', 'topics', (t) => check.allow(Res.CLUSTER, CLUSTER_NAME, Op.CREATE) || check.allow(Res.TOPIC, t.name, Op.CREATE), (t) => ({ name: t.name, topicId: ZERO_UUID, errorCode: TOPIC_DENIED, errorMessage: 'not authorized', topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null })),
  20: async (req, check, ctx, next) => {
    const list = ctx.apiVersion >= 6 ? 'topics' : 'topicNames';
    // Before v6 the list is of names; from v6 of { name, topicId }, either of which may name the topic.
    const asEntry = (t: any): { name?: string | null; topicId?: string } => (typeof t === 'string' ? { name: t } : t);
    return split(20, req, next, list, 'responses', (t) => topicAllowed(check, asEntry(t), Op.DELETE), (t) => ({ name: asEntry(t).name ?? null, topicId: asEntry(t).topicId ?? ZERO_UUID, errorCode: TOPIC_DENIED, errorMessage: null }));
  },
  37: (req, check, _ctx, next) =>
    split(37, req, next, 'topics', 'results', (t) => check.allow(Res.TOPIC, t.name, Op.ALTER), (t) => ({ name: t.name, errorCode: TOPIC_DENIED, errorMessage: 'not authorized' })),
  32: (req, check, _ctx, next) =>
    split(32, req, next, 'resources', 'results', (r) => check.allow(...configResource(r.resourceType, r.resourceName), Op.DESCRIBE_CONFIGS), (r) => ({ errorCode: configCode(r.resourceType), errorMessage: 'not authorized', resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })),
  44: (req, check, _ctx, next) =>
    split(44, req, next, 'resources', 'responses', (r) => check.allow(...configResource(r.resourceType, r.resourceName), Op.ALTER_CONFIGS), (r) => ({ errorCode: configCode(r.resourceType), errorMessage: 'not authorized', resourceType: r.resourceType, resourceName: r.resourceName })),
};
