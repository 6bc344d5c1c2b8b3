/**
 * startBroker: assembles one node — recovered partition logs, the offset
 * store, the transaction coordinator, the share coordinator (from share/,
 * when present) and the TCP server — in the order recovery needs:
 *
 *   logs recovered → offsets replayed → share coordinator recovers →
 *   transaction coordinator replays and resumes PREPARE_* markers → port opens.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GroupConfigs } from './admin/group-configs.js';
import { TopicAdmin } from './admin/topic-admin.js';
import type { BrokerContext, RequestContext, ShareCoordinator, ShareCoordinatorFactory, ShareGroupConfigOverrides } from './broker-context.js';
import { crc32cImplementation } from '../runtime/crc32c.js';
import { Cluster, SHARE_GROUP_STATE_TOPIC } from './cluster.js';
import { listenersOf, logFlushSettings, resolveConfig, type BrokerConfig, type BrokerConfigInput } from './config.js';
import { CredentialStore } from './auth/credentials.js';
import { unsecuredJwsValidator } from './auth/oauth.js';
import { authorizationHook, mayAutoCreateTopic } from './auth/api-acls.js';
import { AclAuthorizer } from './auth/authorizer.js';
import { ANONYMOUS, type SaslSettings } from './auth/session.js';
import { AclOperation, CLUSTER_NAME, ResourceType as AclResource } from './auth/acl.js';
import { SslPrincipalMapper } from './auth/ssl-principal-mapper.js';
import { tlsProtocolOptions } from './auth/tls-settings.js';
import type { ListenerSpec } from './server/server.js';
import { OffsetStore } from './group/offset-store.js';
import { ClassicGroups } from './group/classic-groups.js';
import { ConsumerGroups } from './group/consumer-groups.js';
import { ErrorCode } from './errors.js';
import { LogManager } from './log/log-manager.js';
import type { LogWriteEvent } from './log/flush.js';
import { Metrics, describeRequestVersions, type MetricsSnapshot } from './metrics.js';
import { PeerConnections } from './net/peers.js';
import { ApiRegistry } from './server/api-registry.js';
import { BROKER_APIS } from './apis/index.js';
import { isServed } from './apis/define.js';
import type { AutoCreate, BrokerServices } from './apis/services.js';
import { KafkaServer } from './server/server.js';
import { requestBudget } from './server/request-budget.js';
import { createShareCoordinator } from './share/index.js';
import { ShareStateLog } from './broker-share-state-log.js';
import { MarkerSender } from './txn/marker-sender.js';
import { MarkerWriter } from './txn/marker-writer.js';
import { ProducerIdManager } from './txn/producer-id-manager.js';
import { TransactionCoordinator } from './txn/transaction-coordinator.js';
import { TransactionLog } from './txn/transaction-log.js';
import { describePartitions, txnStateName } from './txn/transaction-metadata.js';
import { TransactionVerifier } from './txn/verifier.js';

export interface StartOptions {
  /**
   * The share coordinator to run: a factory, `null` for none, or undefined for
   * kipgen's own (`createShareCoordinator` of coordinator/share/, a plain import).
   */
  shareCoordinator?: ShareCoordinatorFactory | null;
  /**
   * Where log lines go. Default: nowhere, so that an embedded broker in a test
   * or an application is quiet (the `kipgen broker` CLI logs to stderr).
   */
  log?: (line: string) => void;
}

export interface Broker {
  readonly nodeId: number;
  readonly host: string;
  /** The bound port (useful with port 0) of the primary listener. */
  readonly port: number;
  /** The bound port of every listener, by name (the primary one is named after its protocol). */
  readonly ports: ReadonlyMap<string, number>;
  readonly config: BrokerConfig;
  metrics(): MetricsSnapshot;
  /** Transactions, partition logs and share-partition states, human-readable. */
  dump(): string;
  /** Registers (or replaces) the share coordinator: recovers it, then serves its APIs. */
  registerShareCoordinator(coordinator: ShareCoordinator): Promise<void>;
  readonly transactions: TransactionCoordinator;
  /** Graceful stop: closes connections, stops marker retries, flushes and closes the logs. */
  close(): Promise<void>;
}

/**
 * Starts a broker node. Without `dataDir` it is throwaway, as an embedded
 * Kafka for tests should be: its data goes to a fresh `kipgen-broker-*` folder
 * under the OS temp folder, removed by close(). Give `dataDir` to keep data
 * between runs (the `kipgen broker` CLI defaults it to ./.kipgen-data).
 */
export async function startBroker(input: BrokerConfigInput, options: StartOptions = {}): Promise<Broker> {
  if (input.dataDir !== undefined) return startNode(input, options);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-broker-'));
  const removeData = (): void => fs.rmSync(dataDir, { recursive: true, force: true });
  let broker: Broker;
  try {
    broker = await startNode({ ...input, dataDir }, options);
  } catch (error) {
    removeData();
    throw error;
  }
  const close = broker.close.bind(broker);
  return Object.assign(broker, {
    async close() {
      await close();
      removeData();
    },
  });
}

async function startNode(input: BrokerConfigInput, options: StartOptions): Promise<Broker> {
  const config = resolveConfig(input);
  const write = options.log ?? (() => {});
  const log = (line: string): void => write(`[kipgen node ${config.nodeId}] ${line}`);
  fs.mkdirSync(config.dataDir, { recursive: true });

  const nodes = config.cluster.map((n) => ({ ...n }));
  const cluster = new Cluster({
    nodeId: config.nodeId,
    nodes,
    clusterId: config.clusterId,
    dataDir: config.dataDir,
    topics: config.topics,
    transactionStatePartitions: config.transactionStatePartitions,
    consumerOffsetsPartitions: config.consumerOffsetsPartitions,
  });
  const metrics = new Metrics();
  const logs = new LogManager(
    cluster,
    config.dataDir,
    config.segmentBytes,
    { expirationMs: config.producerIdExpirationMs, checkIntervalMs: config.producerIdExpirationCheckIntervalMs },
    log,
    {
      settings: logFlushSettings(config),
      stats: metrics.logFlush,
      ...(config.traceLogWrites ? { trace: (event: LogWriteEvent) => log(`log-write ${JSON.stringify(event)}`) } : {}),
    },
  );
  const registry = new ApiRegistry();
  const peers = new PeerConnections(cluster, config.requestTimeoutMs);

  const offsets = new OffsetStore(cluster, logs);
  offsets.recover();
  const classicGroups = new ClassicGroups(
    offsets,
    {
      initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
      minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
      maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
    },
    (line) => log(line),
  );
  classicGroups.recover();
  const groupConfigs = new GroupConfigs(config.dataDir, brokerGroupDefaults(config), config.groupConsumerMinHeartbeatIntervalMs);
  const consumerGroups = new ConsumerGroups(
    cluster,
    (groupId) => ({
      sessionTimeoutMs: Number(groupConfigs.value(groupId, 'consumer.session.timeout.ms')),
      heartbeatIntervalMs: Number(groupConfigs.value(groupId, 'consumer.heartbeat.interval.ms')),
    }),
    (line) => log(line),
  );

  let share: ShareCoordinator | null = null;
  const markerWriter = new MarkerWriter(logs, offsets, () => share, log);
  const markerSender = new MarkerSender(cluster, peers, markerWriter, config.markerRetryBackoffMs, metrics, log);
  const nodeIndex = nodes.findIndex((n) => n.nodeId === config.nodeId);
  const tc = new TransactionCoordinator({
    cluster,
    txnLog: new TransactionLog(cluster, logs),
    producerIds: new ProducerIdManager(config.dataDir, nodeIndex, nodes.length),
    markers: markerSender,
    maxTimeoutMs: config.transactionMaxTimeoutMs,
    abortCheckIntervalMs: config.transactionAbortCheckIntervalMs,
    transactionalIdExpirationMs: config.transactionalIdExpirationMs,
    removeExpiredTransactionalIdsIntervalMs: config.transactionRemoveExpiredTransactionCleanupIntervalMs,
    retryBackoffMs: config.markerRetryBackoffMs,
    twoPhaseCommitEnable: config.transactionTwoPhaseCommitEnable,
    metrics,
    log,
  });
  const verifier = new TransactionVerifier(cluster, tc, peers, config.transactionVersion);

  const authorizer = config.authorizer.enabled ? new AclAuthorizer(config.dataDir, config.authorizer, log) : null;
  // Peers reach this node on its primary listener (PeerConnections); with an authorizer, their principal needs ClusterAction.
  const interBroker = (ctx: RequestContext): boolean =>
    ctx.listener === config.securityProtocol &&
    (authorizer === null ||
      authorizer.authorize(
        { principal: ctx.principal ?? ANONYMOUS, host: ctx.clientHost ?? '' },
        { resourceType: AclResource.CLUSTER, resourceName: CLUSTER_NAME, operation: AclOperation.CLUSTER_ACTION },
      ));
  const topicAdmin = new TopicAdmin(
    cluster,
    logs,
    peers,
    { autoCreateTopics: config.autoCreateTopics, defaultPartitions: config.defaultPartitions },
    log,
    interBroker,
  );
  const autoCreate: AutoCreate | undefined = config.autoCreateTopics
    ? async (name, ctx) => {
        if (authorizer !== null && !mayAutoCreateTopic(authorizer, ctx, name))
          return { error: ErrorCode.TOPIC_AUTHORIZATION_FAILED, message: 'not authorized to create the topic' };
        return topicAdmin.autoCreate(name);
      }
    : undefined;

  // APIs of the broker itself.

  const services: BrokerServices = {
    config,
    cluster,
    logs,
    verifier,
    transactions: tc,
    markerWriter,
    offsets,
    classicGroups,
    consumerGroups,
    groupConfigs,
    topicAdmin,
    authorizer,
    autoCreate,
    share: () => share,
    served: () => registry.advertised(),
    log,
  };
  // Each definition's handler is built once; which are served is decided again when a share coordinator registers.
  const definitions = BROKER_APIS.map((api) => ({ api, handler: api.handler(services) }));
  const serveDefinitions = (): void => {
    for (const { api, handler } of definitions) {
      if (isServed(api, config, share)) registry.register(api.apiKey, handler, api.versions, api.authorize);
      else registry.unregister(api.apiKey);
    }
  };
  serveDefinitions();

  const shareLog = logs.get(SHARE_GROUP_STATE_TOPIC, nodeIndex)!;
  const context: BrokerContext = {
    nodeId: config.nodeId,
    cluster,
    shareGroup: config.shareGroup,
    dataDir: ensureDir(path.join(config.dataDir, 'share-coordinator')),
    partition: (topicNameOrId, partition) => {
      const found = logs.find(topicNameOrId, partition);
      return found !== undefined && !cluster.topicByName(found.topic)!.internal ? found : undefined;
    },
    shareStateLog: new ShareStateLog(shareLog, verifier),
    log: (line) => log(`share: ${line}`),
    shareGroupConfig: (groupId) => shareOverrides(groupConfigs.overrides(groupId)),
  };

  const registerShareCoordinator = async (coordinator: ShareCoordinator): Promise<void> => {
    await coordinator.recover();
    share = coordinator;
    serveDefinitions();
  };

  const factory = options.shareCoordinator === undefined ? createShareCoordinator : options.shareCoordinator;
  if (factory !== null) await registerShareCoordinator(await factory(context));

  tc.recover();
  tc.start();
  logs.startExpiringProducers();
  logs.startFlusher();

  const server = new KafkaServer({
    listeners: listenerSpecs(config),
    maxFrameBytes: config.maxFrameBytes,
    budget: requestBudget(config.queuedMaxRequestBytes, config.maxRequestElements),
    ...(authorizer ? { authorize: authorizationHook(authorizer, cluster, log) } : {}),
    registry,
    metrics,
    log,
    logRequests: config.logRequests,
    connectionsMaxIdleMs: config.connectionsMaxIdleMs,
  });
  const ports = await server.listen();
  const port = ports.get(config.securityProtocol)!;
  const self = nodes[nodeIndex]!;
  if (self.port === 0) (self as { port: number }).port = port;
  // The primary listener is reached at the address the cluster entry advertises
  // (Kafka's advertised.listeners), which need not be the port bound here: a
  // proxy or NAT may sit in front. Only the other listeners are known by their bound port.
  const otherListeners = [...ports].filter(([name]) => name !== config.securityProtocol);
  (self as { listeners?: Record<string, number> }).listeners = { ...self.listeners, ...Object.fromEntries(otherListeners) };
  log(
    `listening on ${[...ports].map(([name, p]) => `${name}://${config.host}:${p}`).join(', ')} (cluster ${nodes.map((n) => `${n.nodeId}@${n.host}:${n.port}`).join(', ')}; data ${config.dataDir}` +
      `; KIP-1289 ${config.kip1289 ? 'on' : 'off'}; share coordinator ${share ? 'on' : 'off'})`,
  );
  // Only the fallback is worth a line: it checksums every batch at about a sixth of the native speed.
  if (crc32cImplementation().kind !== 'native') log(crc32cImplementation().description);

  let closed = false;
  return {
    nodeId: config.nodeId,
    host: config.host,
    port,
    ports,
    config,
    transactions: tc,
    metrics: () => metrics.snapshot(),
    registerShareCoordinator,
    dump: () => dumpBroker(cluster, logs, tc, share),
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      classicGroups.close();
      consumerGroups.close();
      await tc.close();
      await peers.close();
      if (share) await share.close();
      logs.close();
      log(`stopped; requests served: ${describeRequestVersions(metrics.snapshot())}`);
    },
  };
}

/**
 * Kafka's share-group config names and the fields of kipgen's settings they map to: the
 * broker's defaults come from `shareGroup` settings, a group's overrides go to the share
 * coordinator (values were validated by config-defs.ts when they were set).
 */
const SHARE_GROUP_CONFIGS = [
  ['share.record.lock.duration.ms', 'recordLockDurationMs', Number],
  ['share.delivery.count.limit', 'deliveryCountLimit', Number],
  ['share.session.timeout.ms', 'sessionTimeoutMs', Number],
  ['share.heartbeat.interval.ms', 'heartbeatIntervalMs', Number],
  ['share.isolation.level', 'isolationLevel', String],
  ['share.auto.offset.reset', 'autoOffsetReset', String],
] as const satisfies readonly (readonly [string, keyof ShareGroupConfigOverrides, (text: string) => string | number])[];

/** Kafka's defaults where kipgen's settings leave a value unset. */
const SHARE_GROUP_KAFKA_DEFAULTS: Partial<Record<keyof ShareGroupConfigOverrides, string>> = { isolationLevel: 'read_uncommitted', autoOffsetReset: 'latest' };

/** The broker's defaults for group configs, where kipgen's broker settings give them. */
function brokerGroupDefaults(config: BrokerConfig): Record<string, string> {
  const settings: ShareGroupConfigOverrides = config.shareGroup;
  return {
    ...Object.fromEntries(SHARE_GROUP_CONFIGS.map(([name, field]) => [name, String(settings[field] ?? SHARE_GROUP_KAFKA_DEFAULTS[field])])),
    // Kafka's GroupConfig takes a group's default consumer.heartbeat.interval.ms from group.consumer.heartbeat.interval.ms.
    'consumer.heartbeat.interval.ms': String(config.groupConsumerHeartbeatIntervalMs),
  };
}

/** The share coordinator's view of a group's configs. */
function shareOverrides(set: Readonly<Record<string, string>>): ShareGroupConfigOverrides {
  const out: Record<string, string | number> = {};
  for (const [name, field, parse] of SHARE_GROUP_CONFIGS) if (set[name] !== undefined) out[field] = parse(set[name]);
  return out as ShareGroupConfigOverrides;
}

/** The server's listeners: TLS contexts from ssl.*, SASL settings from sasl.*. */
function listenerSpecs(config: BrokerConfig): ListenerSpec[] {
  const listeners = listenersOf(config);
  const needsTls = listeners.some((l) => l.protocol === 'SSL' || l.protocol === 'SASL_SSL');
  const needsSasl = listeners.some((l) => l.protocol === 'SASL_PLAINTEXT' || l.protocol === 'SASL_SSL');
  let tlsOptions: ListenerSpec['tls'] = null;
  if (needsTls) {
    const ssl = config.ssl!;
    const read = (inline: string | undefined, file: string | undefined, what: string): string | undefined => {
      if (inline !== undefined) return inline;
      if (file === undefined) return undefined;
      try {
        return fs.readFileSync(file, 'utf8');
      } catch (error) {
        throw new Error(`config: cannot read ssl.${what} ${file}: ${(error as Error).message}`);
      }
    };
    tlsOptions = {
      options: {
        key: read(ssl.key, ssl.keyFile, 'keyFile'),
        cert: read(ssl.cert, ssl.certFile, 'certFile'),
        ca: read(ssl.ca, ssl.caFile, 'caFile'),
        ...tlsProtocolOptions(ssl.cipherSuites, ssl.enabledProtocols),
      },
      clientAuth: ssl.clientAuth ?? 'none',
      principalMapper: new SslPrincipalMapper(ssl.principalMappingRules),
    };
  }
  let sasl: SaslSettings | null = null;
  if (needsSasl) {
    sasl = {
      mechanisms: config.sasl.mechanisms,
      deps: {
        credentials: new CredentialStore(config.sasl.users),
        oauthBearerValidator: config.sasl.oauthBearerValidator ?? unsecuredJwsValidator(),
      },
      maxReceiveBytes: config.sasl.maxReceiveBytes,
      connectionsMaxReauthMs: config.sasl.connectionsMaxReauthMs,
    };
  }
  return listeners.map((l) => ({
    name: l.name,
    host: config.host,
    port: l.port,
    protocol: l.protocol,
    // Kafka applies the broker-wide ssl.client.auth to SSL listeners only; a SASL_SSL
    // listener asks for no certificate (ChannelBuilders.create, sslClientAuthOverride).
    tls: l.protocol === 'SSL' ? tlsOptions : l.protocol === 'SASL_SSL' && tlsOptions !== null ? { ...tlsOptions, clientAuth: 'none' } : null,
    sasl: l.protocol === 'SASL_PLAINTEXT' || l.protocol === 'SASL_SSL' ? sasl : null,
    authenticationTimeoutMs: config.sasl.authenticationTimeoutMs,
  }));
}

function ensureDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function dumpBroker(cluster: Cluster, logs: LogManager, tc: TransactionCoordinator, share: ShareCoordinator | null): string {
  const lines: string[] = [`node ${cluster.nodeId}`, 'transactions:'];
  for (const t of tc.all()) {
    lines.push(
      `  ${t.transactionalId}: producer ${t.producerId} epoch ${t.producerEpoch} ${txnStateName(t.state)} timeout ${t.timeoutMs} ms partitions ${describePartitions(t.partitions)}`,
    );
  }
  lines.push('partitions:');
  for (const l of logs.all()) {
    if (l.logEndOffset() === 0n) continue;
    lines.push(`  ${l.name}: log start ${l.logStartOffset()} end ${l.logEndOffset()} LSO ${l.lastStableOffset()} segments ${l.segmentCount()}`);
    for (const p of l.producers.describe()) {
      lines.push(
        `    producer ${p.producerId} epoch ${p.epoch} last sequence ${p.lastSequence}${p.txnFirstOffset !== null ? ` open transaction from ${p.txnFirstOffset}` : ''}`,
      );
    }
  }
  if (share)
    lines.push(
      'share coordinator:',
      ...share
        .dump()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  return lines.join('\n');
}
