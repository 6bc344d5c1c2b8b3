/**
 * The client's view of a cluster: bootstrap, one connection per node with its
 * negotiated API versions, topic metadata (with topic ids), coordinator
 * discovery, retries within a deadline and reconnects with backoff. One
 * object for the producer and the consumers, composed of the parts in
 * client/cluster/ as Kafka splits them: NetworkClient (connections,
 * ApiVersions, SASL), Metadata, Coordinators, Retrier.
 */
import type { KafkaConnection } from '../connection/connection.js';
import type { ApiMessageCodec } from '../runtime/codec.js';
import { clientTimings, consoleLogger, parseBootstrap, silentLogger, type CommonClientConfig, type Logger } from './cluster/config.js';
import { Coordinators, type CoordinatorKeyType } from './cluster/coordinators.js';
import { ClientLifecycle } from './cluster/lifecycle.js';
import { Metadata, type TopicMetadata } from './cluster/metadata.js';
import { NetworkClient } from './cluster/network-client.js';
import { Retrier } from './cluster/retry.js';

export { consoleLogger, type CommonClientConfig, type Logger, type SslConfig } from './cluster/config.js';
export { CoordinatorType, type CoordinatorKeyType } from './cluster/coordinators.js';
export type { PartitionInfo, TopicMetadata } from './cluster/metadata.js';
export { sleep } from './cluster/retry.js';
export { groupBy, randomUuid } from './cluster/util.js';

export class ClusterClient {
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  readonly metadataMaxAgeMs: number;
  readonly logger: Logger;
  /** retry.backoff.ms as configured. */
  readonly retryBackoffMs: number;
  private readonly lifecycle: ClientLifecycle;
  private readonly retrier: Retrier;
  private readonly network: NetworkClient;
  private readonly metadata: Metadata;
  private readonly coordinators: Coordinators;

  constructor(config: CommonClientConfig, defaultClientId = 'kipgen') {
    this.clientId = config.clientId ?? defaultClientId;
    this.logger = config.logger === null ? silentLogger : (config.logger ?? consoleLogger);
    const timings = clientTimings(config);
    this.requestTimeoutMs = timings.requestTimeoutMs;
    this.metadataMaxAgeMs = timings.metadataMaxAgeMs;
    this.retryBackoffMs = timings.retryBackoffMs;
    const tls = config.ssl === true ? {} : config.ssl ? config.ssl : null;
    const sasl = config.sasl ?? null;
    NetworkClient.checkSasl(sasl);
    const bootstrap = parseBootstrap(config.bootstrapServers);
    this.lifecycle = new ClientLifecycle(this.clientId);
    this.retrier = new Retrier(this.lifecycle, this.logger, timings);
    this.network = new NetworkClient(this.clientId, timings, tls, sasl, bootstrap, this.lifecycle, this.retrier, this.logger);
    this.metadata = new Metadata(this.network, this.retrier, timings);
    this.coordinators = new Coordinators(this.network, this.retrier, timings.requestTimeoutMs);
  }

  /** Aborted when the client closes; long waits listen to it. */
  get closeSignal(): AbortSignal {
    return this.lifecycle.signal;
  }

  // -------------------------------------------------------------------------
  // Retries (cluster/retry.ts)

  /** Backoff before attempt `attempt` (1-based): exponential with ±20% jitter, as Kafka's ExponentialBackoff. */
  backoff(attempt: number, base?: number, max?: number): number {
    return this.retrier.backoff(attempt, base, max);
  }

  /**
   * Runs `fn` until it succeeds, retrying retriable errors with backoff until
   * `deadline` (epoch ms). Then throws KafkaTimeoutError with the last error as
   * its cause; a non-retriable error is thrown at once.
   */
  retry<T>(
    what: string,
    deadline: number,
    fn: (attempt: number) => Promise<T>,
    backoffFor?: (error: unknown, attempt: number) => number | undefined,
  ): Promise<T> {
    return this.retrier.retry(what, deadline, fn, backoffFor);
  }

  // -------------------------------------------------------------------------
  // Connections and versions (cluster/network-client.ts)

  /** An open connection to `nodeId`, opening one (with ApiVersions) if needed. */
  connection(nodeId: number, deadline?: number): Promise<KafkaConnection> {
    return this.network.connection(nodeId, deadline);
  }

  /** The finalized level of a feature on the (connected) node; 0 when it reports none. */
  finalizedFeature(nodeId: number, name: string, deadline?: number): Promise<number> {
    return this.network.finalizedFeature(nodeId, name, deadline);
  }

  /** Does the (connected) node advertise this API, optionally at `minVersion`? */
  supports(nodeId: number, apiKey: number, minVersion?: number, deadline?: number): Promise<boolean> {
    return this.network.supports(nodeId, apiKey, minVersion, deadline);
  }

  /** The highest version of `codec`'s API both sides support, within [min, max]; UnsupportedVersionError if there is none. */
  versionFor(nodeId: number, codec: ApiMessageCodec<unknown>, limits?: { min?: number; max?: number }): number {
    return this.network.versionFor(nodeId, codec, limits);
  }

  /**
   * Sends one request to `nodeId` at the highest common version; `build` gets the version chosen. No retries here; see `retry`.
   * With `lane`, on that lane's own connection to the node (cluster/network-client.ts).
   */
  send<Req, Res>(
    nodeId: number,
    requestCodec: ApiMessageCodec<Req>,
    responseCodec: ApiMessageCodec<Res>,
    build: (version: number) => Req,
    options?: { min?: number; max?: number; timeoutMs?: number; deadline?: number; lane?: string },
  ): Promise<{ response: Res; version: number }> {
    return this.network.send(nodeId, requestCodec, responseCodec, build, options);
  }

  /** The known brokers (not the bootstrap entries), by id. */
  brokerIds(): number[] {
    return this.network.brokerIds();
  }

  /** A node to send cluster-wide requests to: a connected one if any, else a known broker, else a bootstrap server. */
  anyNode(): number {
    return this.network.anyNode();
  }

  /** Why a (connected) node lacks an API, for an UnsupportedVersionError (see cluster/api-versions.ts). */
  describeMissingApi(nodeId: number, codec: ApiMessageCodec<unknown>, note?: string): string {
    return this.network.describeMissingApi(nodeId, codec, note);
  }

  describeNode(nodeId: number): string {
    return this.network.describeNode(nodeId);
  }

  // -------------------------------------------------------------------------
  // Metadata (cluster/metadata.ts)

  /** Fetches metadata for `topics` (all topics when null), retrying within the deadline; `allowAutoTopicCreation` asks the broker to create missing ones. */
  refreshMetadata(topics: readonly string[] | null, deadline?: number, allowAutoTopicCreation?: boolean): Promise<void> {
    return this.metadata.refresh(topics, deadline, allowAutoTopicCreation);
  }

  /** Metadata of one topic, fetched if unknown or stale; waits (retrying) while the topic or its leaders are unknown. */
  topic(name: string, deadline?: number, allowAutoTopicCreation?: boolean): Promise<TopicMetadata> {
    return this.metadata.topic(name, deadline, allowAutoTopicCreation);
  }

  /** Whether the last Metadata that named `topic` said it does not exist. */
  saidAbsent(topic: string): boolean {
    return this.metadata.saidAbsent(topic);
  }

  /** The non-retriable error the last Metadata gave `topic` (an ACL refusal, ...), else undefined. */
  topicRefusedCode(topic: string): number | undefined {
    return this.metadata.refusedCode(topic);
  }

  /** The controller's node id, from fresh metadata when needed (Kafka's ControllerNodeProvider). */
  controller(deadline?: number): Promise<number> {
    return this.metadata.controller(deadline);
  }

  /** Forget the controller after NOT_CONTROLLER, so the next call looks it up again. */
  invalidateController(): void {
    this.metadata.invalidateController();
  }

  /** A cached topic by id (no I/O). */
  topicById(topicId: string): TopicMetadata | undefined {
    return this.metadata.topicById(topicId);
  }

  /** Every topic in the cluster, from a Metadata request for all topics sent now. */
  allTopics(deadline?: number): Promise<TopicMetadata[]> {
    return this.metadata.allTopics(deadline);
  }

  /** A cached topic by name (no I/O). */
  cachedTopic(name: string): TopicMetadata | undefined {
    return this.metadata.cachedTopic(name);
  }

  /** Resolves topic ids to metadata, fetching all topics if some are unknown. */
  topicsByIds(topicIds: readonly string[], deadline?: number): Promise<Map<string, TopicMetadata>> {
    return this.metadata.topicsByIds(topicIds, deadline);
  }

  /** Forget cached metadata so the next lookup fetches it (after NOT_LEADER_OR_FOLLOWER and similar). */
  invalidateMetadata(): void {
    this.metadata.invalidate();
  }

  // -------------------------------------------------------------------------
  // Coordinators (cluster/coordinators.ts)

  /** The node that coordinates `key` (FindCoordinator), cached until invalidated. */
  findCoordinator(keyType: CoordinatorKeyType, key: string, deadline?: number): Promise<number> {
    return this.coordinators.find(keyType, key, deadline);
  }

  invalidateCoordinator(keyType: CoordinatorKeyType, key: string): void {
    this.coordinators.invalidate(keyType, key);
  }

  /**
   * One request to the coordinator of `key`, retried within the deadline
   * through coordinator moves and loads; `check` returns the response's error
   * code to act on (see Coordinators.request).
   */
  coordinatorRequest<Req, Res>(
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
      backoffFor?: (error: unknown, attempt: number) => number | undefined;
      lane?: string;
    },
  ): Promise<{ response: Res; version: number; nodeId: number }> {
    return this.coordinators.request(what, keyType, key, requestCodec, responseCodec, build, check, options);
  }

  /** Closes every connection; requests in flight fail with NetworkError, later ones with ClientClosedError. */
  async close(): Promise<void> {
    if (!this.lifecycle.close()) return;
    await this.network.close();
  }
}
