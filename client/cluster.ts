/**
 * The client's view of a cluster: bootstrap, one connection per node with its
 * negotiated API versions, topic metadata (with topic ids), coordinator
 * discovery, retries within a deadline and reconnects with backoff. Kafka's
 * NetworkClient + Metadata + coordinator lookups, in one small class.
 */
import { randomBytes } from 'node:crypto';
import {
  ApiVersionsRequest,
  ApiVersionsResponse,
  FindCoordinatorRequest,
  FindCoordinatorResponse,
  MetadataRequest,
  MetadataResponse,
} from '../generated/index.js';
import type { ApiMessageCodec } from '../runtime/codec.js';
import { KafkaConnection, NetworkError, type TlsOptions } from '../connection/connection.js';
import { uuidToString, ZERO_UUID } from '../runtime/uuid.js';
import {
  ClientClosedError,
  ConfigError,
  Errors,
  errorFromCode,
  KafkaError,
  KafkaTimeoutError,
  UnsupportedVersionError,
  isRetriableCode,
} from './errors.js';
import { authenticate, reauthenticationDelay } from './sasl/authenticate.js';
import { mechanismName, type SaslConfig } from './sasl/mechanisms.js';

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** Logs warnings and errors to stderr, as Kafka's default log4j setup does. */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (m) => console.warn(`[kipgen] WARN ${m}`),
  error: (m) => console.error(`[kipgen] ERROR ${m}`),
};

/** Settings every client shares (Kafka's CommonClientConfigs), in milliseconds. */
export interface CommonClientConfig {
  /** `host:port` list, or a comma-separated string (bootstrap.servers). */
  bootstrapServers: string | readonly string[];
  clientId?: string;
  /** request.timeout.ms: one request's timeout. Default 30 000. */
  requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms. Default 10 000. */
  connectTimeoutMs?: number;
  /** retry.backoff.ms / retry.backoff.max.ms. Defaults 100 / 1 000. */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /** reconnect.backoff.ms / reconnect.backoff.max.ms. Defaults 50 / 1 000. */
  reconnectBackoffMs?: number;
  reconnectBackoffMaxMs?: number;
  /** metadata.max.age.ms. Default 300 000. */
  metadataMaxAgeMs?: number;
  /** The largest response accepted. Default 100 MiB. */
  maxFrameBytes?: number;
  /** Default: warnings and errors to stderr. `null` silences the client. */
  logger?: Logger | null;
  /**
   * TLS (security.protocol SSL / SASL_SSL): `true` for the system's trusted
   * CAs, or node:tls options (ca, cert, key, passphrase, servername,
   * rejectUnauthorized, ...). Absent or false: plain TCP.
   */
  ssl?: boolean | SslConfig;
  /**
   * SASL (security.protocol SASL_PLAINTEXT / SASL_SSL): `{ mechanism: 'PLAIN' |
   * 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username, password }` or `{ mechanism:
   * 'OAUTHBEARER', oauthBearerProvider }`. Every connection authenticates
   * after ApiVersions and re-authenticates before the session lifetime the
   * broker returns (KIP-368).
   */
  sasl?: SaslConfig;
}

/** node:tls options for the client's connections. */
export type SslConfig = TlsOptions;

export const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;
export type CoordinatorKeyType = (typeof CoordinatorType)[keyof typeof CoordinatorType];

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  errorCode: number;
}

export interface TopicMetadata {
  name: string;
  topicId: string;
  partitions: PartitionInfo[];
}

interface NodeState {
  id: number;
  host: string;
  port: number;
  connection: KafkaConnection | null;
  connecting: Promise<KafkaConnection> | null;
  /** API key → [min, max] the node supports; known once connected. */
  versions: Map<number, readonly [number, number]>;
  /** Finalized feature levels the node reported (ApiVersions v3+), e.g. transaction.version. */
  features: Map<string, number>;
  failures: number;
  nextAttemptAt: number;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `items` grouped by `keyOf`: keys in the order first seen, each group in input order. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Kafka's Uuid.randomUuid().toString(): 22 base64url characters. */
export function randomUuid(): string {
  return uuidToString(randomBytes(16), 0);
}

function parseBootstrap(servers: string | readonly string[]): Array<{ host: string; port: number }> {
  const list = (typeof servers === 'string' ? servers.split(',') : servers).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new ConfigError('bootstrapServers must name at least one host:port');
  return list.map((entry) => {
    const at = entry.lastIndexOf(':');
    const port = Number(entry.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      throw new ConfigError(`bootstrapServers entry ${JSON.stringify(entry)} is not host:port`);
    }
    return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
  });
}

/** Is this error worth retrying (network failure, timeout of one request, retriable error code)? */
function isRetriable(error: unknown): boolean {
  if (error instanceof NetworkError) return error.retriable; // false for TLS handshake failures
  if (error instanceof KafkaError) return error.retriable;
  return false;
}

export class ClusterClient {
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  readonly logger: Logger;
  private readonly config: Required<Omit<CommonClientConfig, 'logger' | 'clientId' | 'bootstrapServers' | 'ssl' | 'sasl'>>;
  private readonly nodes = new Map<number, NodeState>();
  private readonly bootstrapIds: number[] = [];
  private readonly topicsByName = new Map<string, TopicMetadata>();
  private readonly topicsById = new Map<string, TopicMetadata>();
  private readonly coordinators = new Map<string, number>();
  /** Topics the last Metadata answered with a non-retriable error (TOPIC_AUTHORIZATION_FAILED, ...). */
  private readonly topicErrors = new Map<string, number>();
  /** Topics the last Metadata said do not exist (UNKNOWN_TOPIC_OR_PARTITION): for the message of a wait that times out. */
  private readonly absentTopics = new Set<string>();
  private readonly closer = new AbortController();
  private metadataFetchedAt = 0;
  private closed = false;
  private readonly tls: TlsOptions | null;
  private readonly sasl: SaslConfig | null;

  constructor(config: CommonClientConfig, defaultClientId = 'kipgen') {
    this.clientId = config.clientId ?? defaultClientId;
    this.logger = config.logger === null ? SILENT : (config.logger ?? consoleLogger);
    this.config = {
      requestTimeoutMs: config.requestTimeoutMs ?? 30_000,
      connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
      retryBackoffMs: config.retryBackoffMs ?? 100,
      retryBackoffMaxMs: config.retryBackoffMaxMs ?? 1_000,
      reconnectBackoffMs: config.reconnectBackoffMs ?? 50,
      reconnectBackoffMaxMs: config.reconnectBackoffMaxMs ?? 1_000,
      metadataMaxAgeMs: config.metadataMaxAgeMs ?? 300_000,
      maxFrameBytes: config.maxFrameBytes ?? 100 * 1024 * 1024,
    };
    this.requestTimeoutMs = this.config.requestTimeoutMs;
    this.tls = config.ssl === true ? {} : config.ssl ? config.ssl : null;
    this.sasl = config.sasl ?? null;
    if (this.sasl) {
      try {
        mechanismName(this.sasl);
      } catch (error) {
        throw new ConfigError((error as Error).message);
      }
    }
    parseBootstrap(config.bootstrapServers).forEach(({ host, port }, i) => {
      const id = -(i + 1);
      this.bootstrapIds.push(id);
      this.nodes.set(id, this.newNode(id, host, port));
    });
  }

  /** Aborted when the client closes; long waits listen to it. */
  get closeSignal(): AbortSignal {
    return this.closer.signal;
  }

  private newNode(id: number, host: string, port: number): NodeState {
    return {
      id,
      host,
      port,
      connection: null,
      connecting: null,
      versions: new Map(),
      features: new Map(),
      failures: 0,
      nextAttemptAt: 0,
    };
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientClosedError(`client ${this.clientId}`);
  }

  // -------------------------------------------------------------------------
  // Retries

  /** retry.backoff.ms as configured. */
  get retryBackoffMs(): number {
    return this.config.retryBackoffMs;
  }

  /** Backoff before attempt `attempt` (1-based): exponential with ±20% jitter, as Kafka's ExponentialBackoff. */
  backoff(attempt: number, base = this.config.retryBackoffMs, max = this.config.retryBackoffMaxMs): number {
    const value = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
    return Math.round(value * (0.8 + Math.random() * 0.4));
  }

  /**
   * Runs `fn` until it succeeds, retrying retriable errors with backoff until
   * `deadline` (epoch ms). Then throws KafkaTimeoutError with the last error as
   * its cause; a non-retriable error is thrown at once.
   */
  async retry<T>(
    what: string,
    deadline: number,
    fn: (attempt: number) => Promise<T>,
    /** A backoff of its own for some errors (else undefined: the exponential one). */
    backoffFor?: (error: unknown, attempt: number) => number | undefined,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.checkOpen();
      try {
        return await fn(attempt);
      } catch (error) {
        if (this.closed) throw new ClientClosedError(`client ${this.clientId}`);
        if (!isRetriable(error)) throw error;
        const wait = backoffFor?.(error, attempt) ?? this.backoff(attempt);
        if (Date.now() + wait >= deadline) {
          throw new KafkaTimeoutError(
            `${what} did not complete within its deadline after ${attempt} attempt(s); last error: ${(error as Error).message}`,
            error,
          );
        }
        this.logger.debug(`${what}: attempt ${attempt} failed (${(error as Error).message}); retrying in ${wait} ms`);
        await sleep(wait, this.closer.signal);
      }
    }
  }

  // -------------------------------------------------------------------------
  // Connections and versions

  /** An open connection to `nodeId`, opening one (with ApiVersions) if needed. */
  async connection(nodeId: number, deadline = Date.now() + this.config.requestTimeoutMs): Promise<KafkaConnection> {
    this.checkOpen();
    const node = this.nodes.get(nodeId);
    if (!node) throw new KafkaError(`unknown node ${nodeId}`, { retriable: true });
    if (node.connection?.isOpen) return node.connection;
    if (!node.connecting) {
      node.connecting = this.open(node, deadline).finally(() => (node.connecting = null));
    }
    return node.connecting;
  }

  private async open(node: NodeState, deadline: number): Promise<KafkaConnection> {
    const wait = node.nextAttemptAt - Date.now();
    if (wait > 0) {
      if (Date.now() + wait > deadline) {
        throw new NetworkError(
          `node ${node.id} (${node.host}:${node.port}) is in reconnect backoff`,
          node.host,
          node.port,
        );
      }
      await sleep(wait, this.closer.signal);
      this.checkOpen();
    }
    let connection: KafkaConnection | undefined;
    try {
      connection = await KafkaConnection.connect({
        host: node.host,
        port: node.port,
        clientId: this.clientId,
        connectTimeoutMs: Math.max(1, Math.min(this.config.connectTimeoutMs, deadline - Date.now())),
        requestTimeoutMs: this.config.requestTimeoutMs,
        maxFrameBytes: this.config.maxFrameBytes,
        tls: this.tls,
      });
      if (this.closed) {
        void connection.close();
        throw new ClientClosedError(`client ${this.clientId}`);
      }
      await this.negotiate(node, connection);
      if (this.sasl) await this.authenticate(node, connection, false);
    } catch (error) {
      if (connection) void connection.close();
      node.failures++;
      node.nextAttemptAt =
        Date.now() + this.backoff(node.failures, this.config.reconnectBackoffMs, this.config.reconnectBackoffMaxMs);
      throw error;
    }
    node.failures = 0;
    node.connection = connection;
    connection.on('close', (cause?: Error) => {
      if (node.connection === connection) node.connection = null;
      if (cause && !this.closed) this.logger.debug(`connection to node ${node.id} closed: ${cause.message}`);
    });
    return connection;
  }

  /**
   * SASL on a fresh connection, or again on a live one (KIP-368) with the
   * connection held for the exchange alone. Schedules the next
   * re-authentication when the broker set a session lifetime.
   */
  private async authenticate(node: NodeState, connection: KafkaConnection, again: boolean): Promise<void> {
    const versions = { handshake: node.versions.get(17), authenticate: node.versions.get(36) };
    const run = (): Promise<{ mechanism: string; sessionLifetimeMs: number }> =>
      authenticate(connection, this.sasl!, versions, { exclusive: again });
    const outcome = again ? await connection.exclusive(run) : await run();
    this.logger.debug(`${again ? 're-' : ''}authenticated to node ${node.id} with ${outcome.mechanism}; session lifetime ${outcome.sessionLifetimeMs || 'unlimited'} ms`);
    if (outcome.sessionLifetimeMs <= 0) return;
    const timer = setTimeout(() => {
      if (!connection.isOpen || this.closed) return;
      this.authenticate(node, connection, true).catch((error: Error) => {
        // The broker will close the connection once the session ends; close it
        // now so that the next request reconnects and reports the failure.
        this.logger.error(`re-authentication to node ${node.id} failed: ${error.message}; closing the connection`);
        void connection.close();
      });
    }, reauthenticationDelay(outcome.sessionLifetimeMs));
    timer.unref();
    connection.once('close', () => clearTimeout(timer));
  }

  /** ApiVersions at the highest version we know, falling back to the broker's (KIP-511). */
  private async negotiate(node: NodeState, connection: KafkaConnection): Promise<void> {
    let version = ApiVersionsRequest.validVersions.highest;
    for (let i = 0; i < 2; i++) {
      const request = ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0.1.0' });
      const response = await connection.send(ApiVersionsRequest, request, version, ApiVersionsResponse);
      if (response.errorCode === Errors.UNSUPPORTED_VERSION) {
        const theirs = response.apiKeys.find((k) => k.apiKey === ApiVersionsRequest.apiKey);
        if (theirs && i === 0) {
          version = Math.min(theirs.maxVersion, version);
          continue;
        }
      }
      if (response.errorCode !== 0) throw errorFromCode(response.errorCode, `ApiVersions to node ${node.id}`);
      node.versions = new Map(response.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion] as const]));
      node.features =
        response.finalizedFeaturesEpoch >= 0n
          ? new Map(response.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel] as const))
          : new Map();
      return;
    }
  }

  /** The finalized level of a feature on the (connected) node; 0 when it reports none. */
  async finalizedFeature(nodeId: number, name: string, deadline?: number): Promise<number> {
    await this.connection(nodeId, deadline);
    return this.nodes.get(nodeId)!.features.get(name) ?? 0;
  }

  /** Does the (connected) node advertise this API, optionally at `minVersion`? */
  async supports(nodeId: number, apiKey: number, minVersion = 0, deadline?: number): Promise<boolean> {
    await this.connection(nodeId, deadline);
    const range = this.nodes.get(nodeId)!.versions.get(apiKey);
    return range !== undefined && range[1] >= minVersion;
  }

  /**
   * The highest version of `codec`'s API both sides support, within
   * [min, max]; UnsupportedVersionError if there is none.
   */
  versionFor(nodeId: number, codec: ApiMessageCodec<unknown>, limits: { min?: number; max?: number } = {}): number {
    const node = this.nodes.get(nodeId)!;
    const name = codec.name.replace(/Request$/, '');
    const range = node.versions.get(codec.apiKey);
    if (!range) {
      throw new UnsupportedVersionError(
        `node ${nodeId} (${node.host}:${node.port}) does not support ${name} (API key ${codec.apiKey}); upgrade the broker`,
      );
    }
    const low = Math.max(range[0], codec.validVersions.lowest, limits.min ?? 0);
    const high = Math.min(range[1], codec.validVersions.highest, limits.max ?? Infinity);
    if (low > high) {
      throw new UnsupportedVersionError(
        `node ${nodeId} supports ${name} v${range[0]}-${range[1]}, this client v${Math.max(codec.validVersions.lowest, limits.min ?? 0)}-${Math.min(codec.validVersions.highest, limits.max ?? Infinity)}; no common version`,
      );
    }
    return high;
  }

  /**
   * Sends one request to `nodeId` at the highest common version. `build` gets
   * the version chosen. No retries here; see `retry`.
   */
  async send<Req, Res>(
    nodeId: number,
    requestCodec: ApiMessageCodec<Req>,
    responseCodec: ApiMessageCodec<Res>,
    build: (version: number) => Req,
    options: { min?: number; max?: number; timeoutMs?: number; deadline?: number } = {},
  ): Promise<{ response: Res; version: number }> {
    const connection = await this.connection(nodeId, options.deadline);
    const version = this.versionFor(nodeId, requestCodec as ApiMessageCodec<unknown>, options);
    const response = await connection.send(requestCodec, build(version), version, responseCodec, {
      timeoutMs: options.timeoutMs ?? this.config.requestTimeoutMs,
    });
    return { response, version };
  }

  // -------------------------------------------------------------------------
  // Metadata

  /** The known brokers (not the bootstrap entries), by id. */
  brokerIds(): number[] {
    return [...this.nodes.keys()].filter((id) => id >= 0);
  }

  /** A node to send cluster-wide requests to: a connected one if any, else a known broker, else a bootstrap server. */
  anyNode(): number {
    const real = this.brokerIds();
    const connected = real.find((id) => this.nodes.get(id)!.connection?.isOpen);
    if (connected !== undefined) return connected;
    if (real.length > 0) return real[Math.floor(Math.random() * real.length)]!;
    const ready = this.bootstrapIds.filter((id) => this.nodes.get(id)!.nextAttemptAt <= Date.now());
    const pool = ready.length > 0 ? ready : this.bootstrapIds;
    return pool[Math.floor(Math.random() * pool.length)]!;
  }

  /**
   * Fetches metadata for `topics` (all topics when null), retrying within the
   * deadline. `allowAutoTopicCreation` asks the broker to create missing topics
   * (Kafka's producer does, per allow.auto.create.topics; the broker decides,
   * per its auto.create.topics.enable).
   */
  async refreshMetadata(
    topics: readonly string[] | null,
    deadline = Date.now() + this.config.requestTimeoutMs,
    allowAutoTopicCreation = false,
  ): Promise<void> {
    await this.retry('Metadata', deadline, async () => {
      const nodeId = this.anyNode();
      const { response } = await this.send(
        nodeId,
        MetadataRequest,
        MetadataResponse,
        (version) =>
          MetadataRequest.create({
            topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
            allowAutoTopicCreation,
          }),
        { deadline },
      );
      if (response.errorCode) throw errorFromCode(response.errorCode, 'Metadata');
      this.applyMetadata(response);
    });
  }

  private applyMetadata(response: MetadataResponse): void {
    for (const broker of response.brokers) {
      const existing = this.nodes.get(broker.nodeId);
      if (existing && existing.host === broker.host && existing.port === broker.port) continue;
      if (existing) {
        void existing.connection?.close();
      }
      const node = this.newNode(broker.nodeId, broker.host, broker.port);
      // Reuse a bootstrap connection to the same address.
      for (const id of this.bootstrapIds) {
        const boot = this.nodes.get(id)!;
        if (boot.host === broker.host && boot.port === broker.port && boot.connection?.isOpen) {
          node.connection = boot.connection;
          node.versions = boot.versions;
          boot.connection = null;
          const connection = node.connection;
          connection.on('close', () => {
            if (node.connection === connection) node.connection = null;
          });
        }
      }
      this.nodes.set(broker.nodeId, node);
    }
    for (const topic of response.topics) {
      if (topic.name !== null) {
        if (topic.errorCode !== 0 && !isRetriableCode(topic.errorCode)) this.topicErrors.set(topic.name, topic.errorCode);
        else this.topicErrors.delete(topic.name);
        if (topic.errorCode === Errors.UNKNOWN_TOPIC_OR_PARTITION) this.absentTopics.add(topic.name);
        else this.absentTopics.delete(topic.name);
      }
      if (topic.errorCode !== 0 || topic.name === null) continue;
      const metadata: TopicMetadata = {
        name: topic.name,
        topicId: topic.topicId,
        partitions: topic.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            leader: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            errorCode: p.errorCode,
          }))
          .sort((a, b) => a.partition - b.partition),
      };
      const old = this.topicsByName.get(topic.name);
      if (old && old.topicId !== metadata.topicId) this.topicsById.delete(old.topicId);
      this.topicsByName.set(topic.name, metadata);
      if (metadata.topicId !== ZERO_UUID) this.topicsById.set(metadata.topicId, metadata);
    }
    this.metadataFetchedAt = Date.now();
  }

  /**
   * Metadata of one topic, fetched if unknown or stale; waits (retrying) while
   * the topic or its leaders are unknown. `allowAutoTopicCreation`: see refreshMetadata.
   */
  async topic(name: string, deadline = Date.now() + this.config.requestTimeoutMs, allowAutoTopicCreation = false): Promise<TopicMetadata> {
    const cached = this.topicsByName.get(name);
    if (cached && Date.now() - this.metadataFetchedAt < this.config.metadataMaxAgeMs) return cached;
    return this.retry(`Metadata for topic ${name}`, deadline, async () => {
      await this.refreshMetadata([name], deadline, allowAutoTopicCreation);
      const topic = this.topicsByName.get(name);
      const refused = this.topicErrors.get(name);
      // Not retried: waiting does not grant an ACL.
      if (!topic && refused !== undefined) throw errorFromCode(refused, `Metadata for topic ${name}`);
      if (!topic) {
        throw new KafkaError(`topic ${name} is not in the cluster's metadata (UNKNOWN_TOPIC_OR_PARTITION)`, {
          code: Errors.UNKNOWN_TOPIC_OR_PARTITION,
          retriable: true,
        });
      }
      return topic;
    });
  }

  /** Whether the last Metadata that named `topic` said it does not exist. */
  saidAbsent(topic: string): boolean {
    return this.absentTopics.has(topic);
  }

  /** A cached topic by id (no I/O). */
  topicById(topicId: string): TopicMetadata | undefined {
    return this.topicsById.get(topicId);
  }

  /** A cached topic by name (no I/O). */
  cachedTopic(name: string): TopicMetadata | undefined {
    return this.topicsByName.get(name);
  }

  /** Resolves topic ids to metadata, fetching all topics if some are unknown. */
  async topicsByIds(topicIds: readonly string[], deadline?: number): Promise<Map<string, TopicMetadata>> {
    if (topicIds.some((id) => !this.topicsById.has(id))) await this.refreshMetadata(null, deadline);
    const out = new Map<string, TopicMetadata>();
    for (const id of topicIds) {
      const topic = this.topicsById.get(id);
      if (topic) out.set(id, topic);
    }
    return out;
  }

  /** Forget cached metadata so the next lookup fetches it (after NOT_LEADER_OR_FOLLOWER and similar). */
  invalidateMetadata(): void {
    this.metadataFetchedAt = 0;
  }

  // -------------------------------------------------------------------------
  // Coordinators

  /** The node that coordinates `key` (FindCoordinator), cached until invalidated. */
  async findCoordinator(
    keyType: CoordinatorKeyType,
    key: string,
    deadline = Date.now() + this.config.requestTimeoutMs,
  ): Promise<number> {
    const cacheKey = `${keyType}:${key}`;
    const cached = this.coordinators.get(cacheKey);
    if (cached !== undefined && this.nodes.has(cached)) return cached;
    const kind = ['group', 'transaction', 'share'][keyType]!;
    return this.retry(`FindCoordinator (${kind} ${key})`, deadline, async () => {
      const nodeId = this.anyNode();
      const { response, version } = await this.send(
        nodeId,
        FindCoordinatorRequest,
        FindCoordinatorResponse,
        (v) =>
          v >= 4
            ? FindCoordinatorRequest.create({ keyType, coordinatorKeys: [key] })
            : FindCoordinatorRequest.create({ key, keyType }),
        { min: keyType === CoordinatorType.SHARE ? 6 : keyType === CoordinatorType.TRANSACTION ? 1 : 0, deadline },
      );
      let found: { errorCode: number; errorMessage: string | null; nodeId: number; host: string; port: number };
      if (version >= 4) {
        const entry = response.coordinators.find((c) => c.key === key) ?? response.coordinators[0];
        if (!entry) throw new KafkaError('FindCoordinator answered without a coordinator', { retriable: true });
        found = entry;
      } else {
        found = response;
      }
      if (found.errorCode !== 0)
        throw errorFromCode(found.errorCode, `FindCoordinator (${kind} ${key})`, found.errorMessage);
      const existing = this.nodes.get(found.nodeId);
      if (!existing || existing.host !== found.host || existing.port !== found.port) {
        void existing?.connection?.close();
        this.nodes.set(found.nodeId, this.newNode(found.nodeId, found.host, found.port));
      }
      this.coordinators.set(cacheKey, found.nodeId);
      return found.nodeId;
    });
  }

  invalidateCoordinator(keyType: CoordinatorKeyType, key: string): void {
    this.coordinators.delete(`${keyType}:${key}`);
  }

  /**
   * One request to the coordinator of `key`, retried within the deadline. A
   * coordinator error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or a
   * network failure) forgets the coordinator and looks it up again;
   * COORDINATOR_LOAD_IN_PROGRESS waits and retries. `check` returns the error
   * code of the response to act on (0 for success) — other codes are for the
   * caller, which can throw from `check` to retry or fail.
   */
  async coordinatorRequest<Req, Res>(
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
      /** A backoff of its own for some errors (see retry). */
      backoffFor?: (error: unknown, attempt: number) => number | undefined;
    },
  ): Promise<{ response: Res; version: number; nodeId: number }> {
    return this.retry(what, options.deadline, async () => {
      const nodeId = await this.findCoordinator(keyType, key, options.deadline);
      let result: { response: Res; version: number };
      try {
        result = await this.send(nodeId, requestCodec, responseCodec, build, options);
      } catch (error) {
        if (error instanceof NetworkError) this.invalidateCoordinator(keyType, key);
        throw error;
      }
      const code = check(result.response, result.version);
      if (code === Errors.NOT_COORDINATOR || code === Errors.COORDINATOR_NOT_AVAILABLE) {
        this.invalidateCoordinator(keyType, key);
        throw errorFromCode(code, `${what} to node ${nodeId}`);
      }
      if (code === Errors.COORDINATOR_LOAD_IN_PROGRESS || code === Errors.CONCURRENT_TRANSACTIONS) {
        throw errorFromCode(code, `${what} to node ${nodeId}`);
      }
      return { ...result, nodeId };
    }, options.backoffFor);
  }

  /**
   * Why a (connected) node lacks an API, for an UnsupportedVersionError:
   * the API by name and key, the versions kipgen speaks, and what the node's
   * ApiVersions offers instead, e.g. "node 1 (…) does not support
   * TxnShareAcknowledge (API 96; kipgen sends v0–1): it advertises API keys
   * 0–92 (87 APIs) and no version of 96". A broker reports no software
   * version, so its API key range is what tells an operator how old it is.
   */
  describeMissingApi(nodeId: number, codec: ApiMessageCodec<unknown>, note = ''): string {
    const node = this.nodes.get(nodeId);
    const name = codec.name.replace(/Request$/, '');
    const { lowest, highest } = codec.validVersions;
    const ours = `kipgen sends v${lowest}${highest === lowest ? '' : `–${highest}`}`;
    const head = `${this.describeNode(nodeId)} does not support ${name} (API ${codec.apiKey}${note ? `, ${note}` : ''}; ${ours})`;
    if (node === undefined || node.versions.size === 0) return `${head}: its ApiVersions is not known`;
    const keys = [...node.versions.keys()];
    const range = node.versions.get(codec.apiKey);
    const offers = range === undefined ? `no version of ${codec.apiKey}` : `${name} v${range[0]}–${range[1]} only`;
    return `${head}: it advertises API keys ${Math.min(...keys)}–${Math.max(...keys)} (${keys.length} APIs) and ${offers}`;
  }

  describeNode(nodeId: number): string {
    const node = this.nodes.get(nodeId);
    return node ? `node ${nodeId} (${node.host}:${node.port})` : `node ${nodeId}`;
  }

  /** Closes every connection; requests in flight fail with NetworkError, later ones with ClientClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closer.abort();
    const closing: Promise<void>[] = [];
    for (const node of this.nodes.values()) {
      if (node.connection) closing.push(node.connection.close());
      node.connection = null;
    }
    await Promise.all(closing);
  }
}
