/**
 * Coordinator discovery and requests to a coordinator: FindCoordinator for a
 * group, transactional id or share-partition key, cached until the
 * coordinator moves, and one request retried through such moves (Kafka's
 * AbstractCoordinator.lookupCoordinator / markCoordinatorUnknown and
 * TransactionManager's FindCoordinatorHandler).
 */
import { FindCoordinatorRequest, FindCoordinatorResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/codec.js';
import { Errors, errorFromCode, KafkaError } from '../errors.js';
import { COORDINATOR_BUSY_CODES, COORDINATOR_MOVED_CODES } from '../transaction-protocol.js';
import type { NetworkClient } from './network-client.js';
import type { Retrier } from './retry.js';

export const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;
export type CoordinatorKeyType = (typeof CoordinatorType)[keyof typeof CoordinatorType];

const KIND = ['group', 'transaction', 'share'] as const;

/** FindCoordinator asks for a list of keys and answers a list of coordinators from this version (KIP-699). */
const FIND_COORDINATOR_BATCHED_VERSION = 4;
/** The lowest FindCoordinator version that can ask for each key type: the key type came in v1, SHARE in v6 (KIP-932). */
const FIND_COORDINATOR_MIN_VERSION: Record<CoordinatorKeyType, number> = { 0: 0, 1: 1, 2: 6 };

export class Coordinators {
  /** `keyType:key` → node id. */
  private readonly cache = new Map<string, number>();

  constructor(
    private readonly network: NetworkClient,
    private readonly retrier: Retrier,
    private readonly requestTimeoutMs: number,
  ) {}

  /** The node that coordinates `key` (FindCoordinator), cached until invalidated. */
  async find(keyType: CoordinatorKeyType, key: string, deadline = Date.now() + this.requestTimeoutMs): Promise<number> {
    const cacheKey = `${keyType}:${key}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined && this.network.hasNode(cached)) return cached;
    const kind = KIND[keyType];
    return this.retrier.retry(`FindCoordinator (${kind} ${key})`, deadline, async () => {
      const nodeId = this.network.anyNode();
      const { response, version } = await this.network.send(
        nodeId,
        FindCoordinatorRequest,
        FindCoordinatorResponse,
        (v) =>
          v >= FIND_COORDINATOR_BATCHED_VERSION
            ? FindCoordinatorRequest.create({ keyType, coordinatorKeys: [key] })
            : FindCoordinatorRequest.create({ key, keyType }),
        { min: FIND_COORDINATOR_MIN_VERSION[keyType], deadline },
      );
      let found: { errorCode: number; errorMessage: string | null; nodeId: number; host: string; port: number };
      if (version >= FIND_COORDINATOR_BATCHED_VERSION) {
        const entry = response.coordinators.find((c) => c.key === key) ?? response.coordinators[0];
        if (!entry) throw new KafkaError('FindCoordinator answered without a coordinator', { retriable: true });
        found = entry;
      } else {
        found = response;
      }
      if (found.errorCode !== Errors.NONE) throw errorFromCode(found.errorCode, `FindCoordinator (${kind} ${key})`, found.errorMessage);
      this.network.setNode(found.nodeId, found.host, found.port, false);
      this.cache.set(cacheKey, found.nodeId);
      return found.nodeId;
    });
  }

  invalidate(keyType: CoordinatorKeyType, key: string): void {
    this.cache.delete(`${keyType}:${key}`);
  }

  /**
   * One request to the coordinator of `key`, retried within the deadline. A
   * coordinator error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or a
   * network failure) forgets the coordinator and looks it up again;
   * COORDINATOR_LOAD_IN_PROGRESS and CONCURRENT_TRANSACTIONS wait and retry.
   * `check` returns the error code of the response to act on (0 for success) —
   * other codes are for the caller, which can throw from `check` to retry or fail.
   */
  async request<Req, Res>(
    what: string,
    keyType: CoordinatorKeyType,
    key: string,
    requestCodec: ApiMessageCodec<Req>,
    responseCodec: ApiMessageCodec<Res>,
    build: (version: number) => Req,
    check: (response: Res, version: number) => number,
    options: {
      deadline: number;
      min?: number;
      max?: number;
      /** One request's timeout, for requests the broker may hold (JoinGroup waits for the rebalance). */
      timeoutMs?: number;
      /** A backoff of its own for some errors (see Retrier.retry). */
      backoffFor?: (error: unknown, attempt: number) => number | undefined;
      /** The connection of its own to send on (network-client.ts). */
      lane?: string;
    },
  ): Promise<{ response: Res; version: number; nodeId: number }> {
    return this.retrier.retry(
      what,
      options.deadline,
      async () => {
        const nodeId = await this.find(keyType, key, options.deadline);
        let result: { response: Res; version: number };
        try {
          result = await this.network.send(nodeId, requestCodec, responseCodec, build, options);
        } catch (error) {
          if (error instanceof NetworkError) this.invalidate(keyType, key);
          throw error;
        }
        const code = check(result.response, result.version);
        if (COORDINATOR_MOVED_CODES.has(code)) {
          this.invalidate(keyType, key);
          throw errorFromCode(code, `${what} to node ${nodeId}`);
        }
        if (COORDINATOR_BUSY_CODES.has(code)) throw errorFromCode(code, `${what} to node ${nodeId}`);
        return { ...result, nodeId };
      },
      options.backoffFor,
    );
  }
}
