/**
 * The client's connections (Kafka's NetworkClient with its
 * ClusterConnectionStates): one connection per node, opened on demand with
 * ApiVersions and SASL, reopened after a reconnect backoff that grows with
 * each failure; requests at the highest version both sides support. Nodes are
 * the bootstrap servers (negative ids) until Metadata and FindCoordinator name
 * the brokers.
 *
 * A caller may ask for a connection of its own to a node (a `lane`): a broker
 * handles one connection's requests one at a time, in order (Kafka mutes a
 * channel while one of its requests is in flight), so requests that must not
 * wait behind others — a transaction's coordinator requests behind its
 * Produce, whose answer waits for acks=all — go on their own connection, as
 * Kafka's consumer gives its group coordinator a connection of its own
 * (AbstractCoordinator: node id Integer.MAX_VALUE - id). The lane shares the
 * node's address, API versions and reconnect backoff.
 */
import { ApiKey } from '../../generated/index.js';
import { KafkaConnection, NetworkError, type TlsOptions } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/codec.js';
import { ConfigError, KafkaError } from '../errors.js';
import { authenticate, reauthenticationDelay } from '../sasl/authenticate.js';
import { mechanismName, type SaslConfig } from '../sasl/mechanisms.js';
import { describeMissingApi, latestUsableVersion, negotiateApiVersions, type NodeApiVersions } from './api-versions.js';
import type { ClientTimings, Logger } from './config.js';
import type { ClientLifecycle } from './lifecycle.js';
import { sleep, type Retrier } from './retry.js';

/** One connection to a node, or the one being opened. */
interface Link {
  connection: KafkaConnection | null;
  connecting: Promise<KafkaConnection> | null;
}

interface NodeState extends NodeApiVersions, Link {
  id: number;
  host: string;
  port: number;
  /** Connections of their own, by lane name (see the module comment). */
  lanes: Map<string, Link>;
  failures: number;
  nextAttemptAt: number;
}

function newNode(id: number, host: string, port: number): NodeState {
  return {
    id,
    host,
    port,
    connection: null,
    connecting: null,
    lanes: new Map(),
    versions: new Map(),
    features: new Map(),
    failures: 0,
    nextAttemptAt: 0,
  };
}

export class NetworkClient {
  private readonly nodes = new Map<number, NodeState>();
  private readonly bootstrapIds: number[] = [];
  private readonly sasl: SaslConfig | null;

  constructor(
    private readonly clientId: string,
    private readonly timings: ClientTimings,
    private readonly tls: TlsOptions | null,
    sasl: SaslConfig | null,
    bootstrap: ReadonlyArray<{ host: string; port: number }>,
    private readonly lifecycle: ClientLifecycle,
    private readonly retrier: Retrier,
    private readonly logger: Logger,
  ) {
    this.sasl = sasl;
    bootstrap.forEach(({ host, port }, i) => {
      const id = -(i + 1);
      this.bootstrapIds.push(id);
      this.nodes.set(id, newNode(id, host, port));
    });
  }

  /** ConfigError now, not at the first connection, for a SASL mechanism kipgen does not have. */
  static checkSasl(sasl: SaslConfig | null): void {
    if (!sasl) return;
    try {
      mechanismName(sasl);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }

  /** An open connection to `nodeId` (the `lane`'s own one when given), opening one (with ApiVersions) if needed. */
  async connection(nodeId: number, deadline = Date.now() + this.timings.requestTimeoutMs, lane?: string): Promise<KafkaConnection> {
    this.lifecycle.checkOpen();
    const node = this.nodes.get(nodeId);
    if (!node) throw new KafkaError(`unknown node ${nodeId}`, { retriable: true });
    let link: Link = node;
    if (lane !== undefined) {
      link = node.lanes.get(lane) ?? { connection: null, connecting: null };
      node.lanes.set(lane, link);
    }
    if (link.connection?.isOpen) return link.connection;
    if (!link.connecting) {
      const opening = link;
      opening.connecting = this.open(node, opening, deadline).finally(() => (opening.connecting = null));
    }
    return link.connecting!;
  }

  private async open(node: NodeState, link: Link, deadline: number): Promise<KafkaConnection> {
    const wait = node.nextAttemptAt - Date.now();
    if (wait > 0) {
      if (Date.now() + wait > deadline) {
        throw new NetworkError(`node ${node.id} (${node.host}:${node.port}) is in reconnect backoff`, node.host, node.port);
      }
      await sleep(wait, this.lifecycle.signal);
      this.lifecycle.checkOpen();
    }
    let connection: KafkaConnection | undefined;
    try {
      connection = await KafkaConnection.connect({
        host: node.host,
        port: node.port,
        clientId: this.clientId,
        connectTimeoutMs: Math.max(1, Math.min(this.timings.connectTimeoutMs, deadline - Date.now())),
        requestTimeoutMs: this.timings.requestTimeoutMs,
        maxFrameBytes: this.timings.maxFrameBytes,
        tls: this.tls,
      });
      if (this.lifecycle.closed) {
        void connection.close();
        throw this.lifecycle.closedError();
      }
      const { versions, features } = await negotiateApiVersions(connection, node.id);
      node.versions = versions;
      node.features = features;
      if (this.sasl) await this.authenticate(node, connection, false);
    } catch (error) {
      if (connection) void connection.close();
      node.failures++;
      // Kafka's ClusterConnectionStates: reconnect.backoff.ms doubling per failure up to reconnect.backoff.max.ms.
      node.nextAttemptAt = Date.now() + this.retrier.backoff(node.failures, this.timings.reconnectBackoffMs, this.timings.reconnectBackoffMaxMs);
      throw error;
    }
    node.failures = 0;
    link.connection = connection;
    connection.on('close', (cause?: Error) => {
      if (link.connection === connection) link.connection = null;
      if (cause && !this.lifecycle.closed) this.logger.debug(`connection to node ${node.id} closed: ${cause.message}`);
    });
    return connection;
  }

  /**
   * SASL on a fresh connection, or again on a live one (KIP-368) with the
   * connection held for the exchange alone. Schedules the next
   * re-authentication when the broker set a session lifetime.
   */
  private async authenticate(node: NodeState, connection: KafkaConnection, again: boolean): Promise<void> {
    const versions = { handshake: node.versions.get(ApiKey.SaslHandshake), authenticate: node.versions.get(ApiKey.SaslAuthenticate) };
    const run = (): Promise<{ mechanism: string; sessionLifetimeMs: number }> => authenticate(connection, this.sasl!, versions, { exclusive: again });
    const outcome = again ? await connection.exclusive(run) : await run();
    this.logger.debug(
      `${again ? 're-' : ''}authenticated to node ${node.id} with ${outcome.mechanism}; session lifetime ${outcome.sessionLifetimeMs || 'unlimited'} ms`,
    );
    if (outcome.sessionLifetimeMs <= 0) return;
    const timer = setTimeout(() => {
      if (!connection.isOpen || this.lifecycle.closed) return;
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
    return latestUsableVersion(node, node, codec, limits);
  }

  /**
   * Sends one request to `nodeId` at the highest common version. `build` gets
   * the version chosen. No retries here; see Retrier.retry.
   */
  async send<Req, Res>(
    nodeId: number,
    requestCodec: ApiMessageCodec<Req>,
    responseCodec: ApiMessageCodec<Res>,
    build: (version: number) => Req,
    options: { min?: number; max?: number; timeoutMs?: number; deadline?: number; lane?: string } = {},
  ): Promise<{ response: Res; version: number }> {
    const connection = await this.connection(nodeId, options.deadline, options.lane);
    const version = this.versionFor(nodeId, requestCodec as ApiMessageCodec<unknown>, options);
    const response = await connection.send(requestCodec, build(version), version, responseCodec, {
      timeoutMs: options.timeoutMs ?? this.timings.requestTimeoutMs,
    });
    return { response, version };
  }

  /** The known brokers (not the bootstrap entries), by id. */
  brokerIds(): number[] {
    return [...this.nodes.keys()].filter((id) => id >= 0);
  }

  hasNode(nodeId: number): boolean {
    return this.nodes.has(nodeId);
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
   * A broker's address as Metadata or FindCoordinator names it. A new address
   * replaces the node (its connection closed). From Metadata
   * (`reuseBootstrap`), an open bootstrap connection to the same address
   * becomes the broker's, with the API versions it negotiated.
   */
  setNode(id: number, host: string, port: number, reuseBootstrap: boolean): void {
    const existing = this.nodes.get(id);
    if (existing && existing.host === host && existing.port === port) return;
    void existing?.connection?.close();
    for (const lane of existing?.lanes.values() ?? []) void lane.connection?.close();
    const node = newNode(id, host, port);
    if (reuseBootstrap) {
      for (const bootId of this.bootstrapIds) {
        const boot = this.nodes.get(bootId)!;
        if (boot.host === host && boot.port === port && boot.connection?.isOpen) {
          node.connection = boot.connection;
          node.versions = boot.versions;
          boot.connection = null;
          const connection = node.connection;
          connection.on('close', () => {
            if (node.connection === connection) node.connection = null;
          });
        }
      }
    }
    this.nodes.set(id, node);
  }

  /** See api-versions.ts describeMissingApi. */
  describeMissingApi(nodeId: number, codec: ApiMessageCodec<unknown>, note = ''): string {
    return describeMissingApi(this.describeNode(nodeId), this.nodes.get(nodeId), codec, note);
  }

  describeNode(nodeId: number): string {
    const node = this.nodes.get(nodeId);
    return node ? `node ${nodeId} (${node.host}:${node.port})` : `node ${nodeId}`;
  }

  /** Closes every connection; requests in flight fail with NetworkError. */
  async close(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const node of this.nodes.values()) {
      for (const link of [node, ...node.lanes.values()]) {
        if (link.connection) closing.push(link.connection.close());
        link.connection = null;
      }
    }
    await Promise.all(closing);
  }
}
