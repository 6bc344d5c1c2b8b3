/**
 * What the per-API ACL rules (each API's `authorize`, coordinator/apis/) are made of:
 * the rule's signature, the checks it may make, and the one way a request naming
 * several resources is split into the entries it may act on and the ones answered
 * as denied.
 */
import type { RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { ConfigResourceType } from '../admin/config-entries.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from './acl.js';

/** The checks available to a rule, for the requester of this request. */
export interface Check {
  allow(resourceType: number, name: string, operation: number): boolean;
  allowAny(resourceType: number, operation: number): boolean;
  topicName(topic: { name?: string | null; topic?: string; topicId?: string }): string | undefined;
  /**
   * The operations of its type the requester may do on one resource, as the 32-bit
   * field of Metadata / DescribeCluster / Describe*Groups answers (Kafka's
   * AuthHelper.authorizedOperations); denials are not logged.
   */
  authorizedOperations(resourceType: number, name: string): number;
}

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
 * Splits a request's entries by permission, typed by the API's request and response: `entries` are the request's list, `keep` the
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

/**
 * Handles the allowed entries and answers the denied ones in Kafka's way: a denied
 * entry never reaches the handler, the others are handled as usual. With no entry
 * left the handler is not called (a Fetch would otherwise wait for data) and
 * `empty()` is the response. A request whose entries are all allowed goes through
 * as it is, without a copy.
 */
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
