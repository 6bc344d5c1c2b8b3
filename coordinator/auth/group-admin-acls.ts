/**
 * ACL rules for the group APIs (issue 15), in Kafka's terms:
 * group membership and commits need READ on the group (commits also READ on
 * the topics), describing DESCRIBE, deleting DELETE. (The admin APIs' rules are
 * in their definitions, coordinator/apis/.) Denied entries are answered with
 * the AUTHORIZATION_FAILED code of their resource and never reach the handler.
 */
import { createDescribedGroup } from '../../generated/ConsumerGroupDescribeResponse.js';
import { apiByKey } from '../../generated/index.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, ResourceType as Res } from './acl.js';
import { hideGroupsWithUndescribableTopics, splitByPermission, topicAllowed, type Next, type Rule } from './rule-kit.js';

/** authorizedOperations when the request did not ask for them. */
const NO_OPERATIONS = -2147483648;

const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;

/** Whole request refused at the top level (APIs with a top-level ErrorCode). */
const needs = (type: number, name: (req: any) => string, op: number, code: number): Rule => async (req, check, _ctx, next) => {
  if (!check.allow(type, name(req), op)) throw new BrokerError(code, 'not authorized');
  return next(req);
};

/** splitByPermission, positionally: these rules are one line each. */
const split = (apiKey: number, req: any, next: Next, list: string, responseList: string, allowed: (e: any) => boolean, deniedEntry: (e: any) => unknown): Promise<any> =>
  splitByPermission(apiKey, req, next, { list, responseList, allowed, deniedEntry });

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
};
