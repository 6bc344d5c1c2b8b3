/**
 * What the per-API ACL rules (api-acls.ts, group-admin-acls.ts) are made of: the
 * rule's signature, the checks it may make, and the one way a request naming several
 * resources is split into the entries it may act on and the ones answered as denied.
 */
import { apiByKey } from '../../generated/index.js';
import type { RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, ResourceType as Res } from './acl.js';

export type Next = (request: any) => Promise<any>;

/** The checks available to a rule, for the requester of this request. */
export interface Check {
  allow(resourceType: number, name: string, operation: number): boolean;
  allowAny(resourceType: number, operation: number): boolean;
  topicName(topic: { name?: string | null; topic?: string; topicId?: string }): string | undefined;
}

export type Rule = (request: any, check: Check, ctx: RequestContext, next: Next) => Promise<any>;

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
 * splitByPermission for a typed rule: `entries` are the request's list, `keep` the
 * request with only the allowed ones, `empty` the answer when none is allowed, and
 * `answerDenied` adds the denied ones to the response in its own shape.
 */
export interface EntrySplit<Req, Res, E> {
  readonly entries: readonly E[];
  readonly allowed: (entry: E) => boolean;
  readonly keep: (kept: E[]) => Req;
  readonly empty: () => Res;
  readonly answerDenied: (response: Res, denied: E[]) => void;
}

/** splitByPermission, typed by the API's request and response (see EntrySplit). */
export async function splitEntries<Req, Res, E>(request: Req, next: (request: Req) => Promise<Res>, spec: EntrySplit<Req, Res, E>): Promise<Res> {
  const kept: E[] = [];
  const denied: E[] = [];
  for (const entry of spec.entries) (spec.allowed(entry) ? kept : denied).push(entry);
  if (denied.length === 0) return next(request);
  const response = kept.length > 0 ? await next(spec.keep(kept)) : spec.empty();
  spec.answerDenied(response, denied);
  return response;
}

/**
 * ConsumerGroupDescribe and ShareGroupDescribe (Kafka 4.0, KAFKA-18817; KafkaApis
 * handleConsumerGroupDescribe / handleShareGroupDescribe): a described group one of whose
 * members is assigned a topic the caller may not DESCRIBE is replaced by a bare entry with
 * TOPIC_AUTHORIZATION_FAILED and no members, so the group's topics are not disclosed.
 */
export function hideGroupsWithUndescribableTopics<G extends { groupId: string; members: readonly object[] }>(
  check: Check,
  groups: G[],
  assignmentsOf: (member: G['members'][number]) => Array<{ topicPartitions: { topicName: string }[] } | null | undefined>,
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
