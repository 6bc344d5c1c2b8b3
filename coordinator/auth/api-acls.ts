/**
 * The server's authorization hook: runs each API's own rule (its definition in
 * coordinator/apis/, Kafka's `authorize` calls in KafkaApis) around its handler,
 * with the checks of the requester of this request. An API served without a rule
 * is denied to everyone but super users (fail closed), with a log line; a
 * definition cannot be written without one (apis/define.ts), so that is a guard.
 */
import type { ClusterView, RequestContext } from '../broker-context.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { AclOperation as Op, CLUSTER_NAME, operationsField, ResourceType as Res, SUPPORTED_OPERATIONS } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';
import type { AuthorizationRule, Check } from './rule-kit.js';
import { ANONYMOUS } from './session.js';

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
  return (
    request: unknown,
    ctx: RequestContext,
    next: (request: unknown) => Promise<unknown>,
    rule: AuthorizationRule<unknown, unknown> | undefined,
  ): Promise<unknown> => {
    const who = requester(ctx);
    const check: Check = {
      allow: (resourceType, resourceName, operation) => authorizer.authorize(who, { resourceType, resourceName, operation }),
      allowAny: (resourceType, operation) => authorizer.authorizeAny(who, resourceType, operation),
      authorizedOperations: (resourceType, resourceName) =>
        operationsField(
          (SUPPORTED_OPERATIONS[resourceType] ?? []).filter((operation) => authorizer.authorize(who, { resourceType, resourceName, operation }, false)),
        ),
      topicName: (t) => {
        const name = t.name ?? t.topic;
        if (typeof name === 'string' && name !== '') return name;
        return t.topicId !== undefined ? cluster.topicById(t.topicId)?.name : undefined;
      },
    };
    if (rule === undefined) {
      if (authorizer.isSuperUser(who.principal)) return next(request);
      log(`authorizer: API key ${ctx.apiKey} has no ACL rule; denied to ${who.principal}`);
      return Promise.reject(new BrokerError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `API key ${ctx.apiKey} has no ACL rule on this broker`));
    }
    return rule(request, check, ctx, next);
  };
}
