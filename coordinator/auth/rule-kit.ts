/**
 * What the per-API ACL rules (api-acls.ts, group-admin-acls.ts) are made of: the
 * rule's signature, the checks it may make, and the one way a request naming several
 * resources is split into the entries it may act on and the ones answered as denied.
 */
import { apiByKey } from '../../generated/index.js';
import type { RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { ConfigResourceType } from '../admin/config-entries.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';

export type Next = (request: any) => Promise<any>;

/** The checks available to a rule, for the requester of this request. */
export interface Check {
  allow(resourceType: number, name: string, operation: number): boolean;
  allowAny(resourceType: number, operation: number): boolean;
  topicName(topic: { name?: string | null; topic?: string; topicId?: string }): string | undefined;
}

export type Rule = (request: any, check: Check, ctx: RequestContext, next: Next) => Promise<any>;

/**
 * Runs before an API's handler when the broker has an authorizer: checks what the
 * request needs (Kafka's `authorize` calls in KafkaApis), answers denied entries in
 * the response's own shape and calls `next` with what may proceed, or throws a
 * BrokerError to answer the whole request with a top-level error.
 */
export type AuthorizationRule<Req, Res> = (request: Req, check: Check, ctx: RequestContext, next: (request: Req) => Promise<Res>) => Promise<Res>;

/** Requires `operation` on one resource, or answers the whole request with the top-level error `code`. */
export function requirePermission(check: Check, resourceType: number, name: string, operation: number, code: number): void {
  if (!check.allow(resourceType, name, operation)) throw new BrokerError(code, 'not authorized');
}

/**
 * May `operation` be done on the topic an entry names, by name or by topic id? An
 * unknown topic id is allowed through, so that the handler answers UNKNOWN_TOPIC_ID,
 * as Kafka does.
 */
export function topicAllowed(check: Check, entry: { name?: string | null; topic?: string; topicId?: string }, operation: number): boolean {
  const name = check.topicName(entry);
  return name === undefined || check.allow(Res.TOPIC, name, operation);
}

/**
 * Handles the allowed entries of `request[list]` and answers the denied ones with
 * `deniedEntry(entry)`, appended to `response[responseList]`, in Kafka's way: a denied
 * entry never reaches the handler, the others are handled as usual. With no allowed
 * entry left the handler is not called (a Fetch would otherwise wait for data).
 */
export async function splitByPermission(
  apiKey: number,
  request: any,
  next: Next,
  spec: { list: string; responseList: string; allowed: (entry: any) => boolean; deniedEntry: (entry: any) => unknown },
): Promise<any> {
  const kept: any[] = [];
  const denied: any[] = [];
  for (const entry of request[spec.list] as any[]) (spec.allowed(entry) ? kept : denied).push(entry);
  if (denied.length === 0) return next(request);
  const response = kept.length > 0 ? await next({ ...request, [spec.list]: kept }) : apiByKey(apiKey)!.response.create();
  response[spec.responseList].push(...denied.map(spec.deniedEntry));
  return response;
}

/**
 * ConsumerGroupDescribe and ShareGroupDescribe (Kafka 4.0, KAFKA-18817; KafkaApis
 * handleConsumerGroupDescribe / handleShareGroupDescribe): a described group one of whose
 * members is assigned a topic the caller may not DESCRIBE is replaced by a bare entry with
 * TOPIC_AUTHORIZATION_FAILED and no members, so the group's topics are not disclosed.
 */
export function hideGroupsWithUndescribableTopics<G extends { groupId: string; members: any[] }>(
  check: Check,
  groups: G[],
  assignmentsOf: (member: any) => Array<{ topicPartitions: { topicName: string }[] } | null | undefined>,
  bare: (fields: { groupId: string; errorCode: number; errorMessage: string; members: [] }) => G,
): G[] {
  const decided = new Map<string, boolean>();
  const describable = (topic: string): boolean => {
    let allowed = decided.get(topic);
    if (allowed === undefined) decided.set(topic, (allowed = check.allow(Res.TOPIC, topic, Op.DESCRIBE)));
    return allowed;
  };
  return groups.map((group) => {
    const hidden = group.members.some((member) => assignmentsOf(member).some((a) => a?.topicPartitions.some((tp) => !describable(tp.topicName))));
    if (!hidden) return group;
    return bare({
      groupId: group.groupId,
      errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      errorMessage: 'The group has described topic(s) that the client is not authorized to describe.',
      members: [],
    });
  });
}

/**
 * splitByPermission for the typed definitions of apis/: the entries of one list of
 * the request are split by `allowed`; the denied ones never reach the handler and are
 * answered by `answerDenied` in the response's own shape. With no entry left the
 * handler is not called and `empty()` is the response. A request whose entries are
 * all allowed goes through as it is, without a copy.
 */
export async function splitEntries<Req, Res, E>(
  request: Req,
  next: (request: Req) => Promise<Res>,
  spec: {
    readonly entries: readonly E[];
    readonly allowed: (entry: E) => boolean;
    /** The request narrowed to `kept`. */
    readonly keep: (kept: E[]) => Req;
    readonly empty: () => Res;
    readonly answerDenied: (response: Res, denied: E[]) => void;
  },
): Promise<Res> {
  const kept: E[] = [];
  const denied: E[] = [];
  for (const entry of spec.entries) (spec.allowed(entry) ? kept : denied).push(entry);
  if (denied.length === 0) return next(request);
  const response = kept.length > 0 ? await next(spec.keep(kept)) : spec.empty();
  spec.answerDenied(response, denied);
  return response;
}

/**
 * The ACL resource a config resource (DescribeConfigs, IncrementalAlterConfigs) is
 * checked on, and the error a denial of it is answered with: a topic or a group by
 * its name, anything else (a broker) on the cluster (KafkaApis
 * .handleDescribeConfigsRequest / handleIncrementalAlterConfigsRequest).
 */
export function configResource(resourceType: number, resourceName: string): { type: number; name: string; denied: number } {
  if (resourceType === ConfigResourceType.TOPIC) return { type: Res.TOPIC, name: resourceName, denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
  if (resourceType === ConfigResourceType.GROUP) return { type: Res.GROUP, name: resourceName, denied: ErrorCode.GROUP_AUTHORIZATION_FAILED };
  return { type: Res.CLUSTER, name: CLUSTER_NAME, denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
}
