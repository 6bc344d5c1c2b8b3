/**
 * How an Admin call reaches the cluster, as KafkaAdminClient's Call and its
 * NodeProviders do: one request to any broker (LeastLoadedNodeProvider), to
 * the controller (ControllerNodeProvider) or to one named broker
 * (ConstantNodeIdProvider), retried on retriable errors with backoff until the
 * call's deadline (default.api.timeout.ms, or the call's own timeoutMs).
 */
import type { ApiMessageCodec } from '../../runtime/codec.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import type { ClusterClient } from '../cluster.js';
import { ConfigError, errorFromCode, KafkaError } from '../errors.js';

/** What the admin/ modules need of an Admin: its cluster and its default deadline. */
export interface AdminContext {
  readonly cluster: ClusterClient;
  readonly defaultApiTimeoutMs: number;
}

/** Options every Admin call takes (Kafka's AbstractOptions). */
export interface AdminCallOptions {
  /** How long the call may take in all, retries included; default the Admin's defaultApiTimeoutMs. */
  timeoutMs?: number;
}

/** The call's deadline (Kafka's calcDeadlineMs). */
export function deadlineOf(admin: AdminContext, options: AdminCallOptions | undefined): number {
  const timeoutMs = options?.timeoutMs ?? admin.defaultApiTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new ConfigError(`timeoutMs must be a non-negative number of milliseconds, not ${timeoutMs}`);
  return Date.now() + timeoutMs;
}

/** The request's own timeoutMs field: what is left of the call (Kafka's calcTimeoutMsRemainingAsInt). */
export function remainingMs(deadline: number): number {
  return Math.max(0, Math.min(0x7fffffff, deadline - Date.now()));
}

type Target = 'any' | 'controller' | number;

export interface SendOptions<Res> {
  min?: number;
  max?: number;
  /**
   * The top-level error code of a response that fails the whole request (0 for
   * none): a retriable one is retried, another rejects the call.
   */
  topLevelError?: (response: Res) => { code: number; message: string | null } | null;
  /** Whether the response names NOT_CONTROLLER anywhere: the controller moved, look it up and send again (Kafka's handleNotControllerError). */
  notController?: (response: Res) => boolean;
}

/**
 * Sends one request to `target` and retries it, within the deadline, when the
 * connection fails, the broker answers a retriable top-level error or the
 * controller moved. Entry errors are the caller's to read from the response.
 */
export function sendWithRetries<Req, Res>(
  admin: AdminContext,
  what: string,
  target: Target,
  deadline: number,
  requestCodec: ApiMessageCodec<Req>,
  responseCodec: ApiMessageCodec<Res>,
  build: (version: number) => Req,
  options: SendOptions<Res> = {},
): Promise<{ response: Res; version: number; nodeId: number }> {
  const cluster = admin.cluster;
  return cluster.retry(what, deadline, async () => {
    const nodeId = await nodeFor(cluster, target, deadline);
    const { response, version } = await cluster.send(nodeId, requestCodec, responseCodec, build, {
      min: options.min,
      max: options.max,
      deadline,
      timeoutMs: Math.max(1, Math.min(cluster.requestTimeoutMs, remainingMs(deadline))),
    });
    if (target === 'controller' && options.notController?.(response)) {
      cluster.invalidateController();
      throw new KafkaError(`${what}: node ${nodeId} is not the controller any more (NOT_CONTROLLER)`, { code: ErrorCode.NOT_CONTROLLER, retriable: true });
    }
    const failed = options.topLevelError?.(response);
    if (failed && failed.code !== ErrorCode.NONE) {
      throw errorFromCode(failed.code, `${what} to ${cluster.describeNode(nodeId)}`, failed.message);
    }
    return { response, version, nodeId };
  });
}

/** The node a request goes to: any broker, the controller, or the named broker once metadata knows it. */
async function nodeFor(cluster: ClusterClient, target: Target, deadline: number): Promise<number> {
  if (target === 'any') return cluster.anyNode();
  if (target === 'controller') return cluster.controller(deadline);
  if (!cluster.brokerIds().includes(target)) await cluster.refreshMetadata([], deadline);
  // Kafka's ConstantNodeIdProvider waits (retrying metadata) until the node appears.
  if (!cluster.brokerIds().includes(target)) throw new KafkaError(`broker ${target} is not in the cluster's metadata`, { retriable: true });
  return target;
}

/** Entries named more than once are sent once, under their first key (Kafka's futures map de-duplicates the same way). */
export function uniqueBy<T>(items: Iterable<T>, keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items) {
    const key = keyOf(item);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}
