/**
 * ACL rules for the admin APIs (issue 15; the group APIs' rules are in their
 * definitions, coordinator/apis/), in Kafka's terms: CreateTopics needs
 * CREATE on the cluster or the topic, DeleteTopics DELETE and
 * CreatePartitions ALTER on the topic, DescribeConfigs / IncrementalAlterConfigs
 * DESCRIBE_CONFIGS / ALTER_CONFIGS on the resource (the cluster for a broker),
 * DescribeCluster DESCRIBE on the cluster. Denied entries are answered with
 * the AUTHORIZATION_FAILED code of their resource and never reach the handler.
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';
import { splitByPermission, topicAllowed, type Next, type Rule } from './rule-kit.js';

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
  60: needs(Res.CLUSTER, () => CLUSTER_NAME, Op.DESCRIBE, CLUSTER_DENIED),
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
