/**
 * Broker configuration: defaults, validation, and loading from a JSON file.
 * Names follow Kafka's settings where there is one (in the comments).
 */
import * as fs from 'node:fs';
import { checkCompressionLevel } from '../runtime/index.js';
import { TOPIC_COMPRESSION_TYPES, type NodeEndpoint, type ShareGroupSettings, type TopicCompressionType } from './broker-context.js';
import type { UserConfig } from './auth/credentials.js';
import type { OAuthBearerValidator } from './auth/oauth.js';
import { SUPPORTED_MECHANISMS, type ServerMechanismName } from './auth/sasl-server.js';
import { SECURITY_PROTOCOLS, type SecurityProtocol } from './auth/session.js';
import { SslPrincipalMapper } from './auth/ssl-principal-mapper.js';
import { tlsProtocolOptions } from './auth/tls-settings.js';
import { defaultMaxRequestElements, defaultQueuedMaxRequestBytes } from './server/request-budget.js';
import { NEVER, type LogFlushSettings } from './log/flush.js';

/** One more listener besides the primary (`port`) one: Kafka's `listeners` entry NAME://host:port. */
export interface ListenerConfig {
  name: string;
  port: number;
  /** listener.security.protocol.map; default: the name, when it is a protocol's. */
  securityProtocol?: SecurityProtocol;
}

/** ssl.* settings of the SSL and SASL_SSL listeners: PEM text inline, or files. */
export interface SslServerConfig {
  key?: string;
  cert?: string;
  /** CAs trusted for client certificates. */
  ca?: string;
  keyFile?: string;
  certFile?: string;
  caFile?: string;
  /**
   * ssl.client.auth: none | requested | required. Default none. With
   * requested, a client may come without a certificate (User:ANONYMOUS) but
   * one whose certificate `ca` does not verify is refused.
   */
  clientAuth?: 'none' | 'requested' | 'required';
  /** ssl.principal.mapping.rules: DEFAULT and RULE:pattern/replacement/[LU] entries (auth/ssl-principal-mapper.ts). Default DEFAULT. */
  principalMappingRules?: string;
  /** ssl.cipher.suites (Kafka or OpenSSL names). Default: the TLS 1.3 suites and TLS 1.2's ECDHE AES-GCM suites (auth/tls-settings.ts). */
  cipherSuites?: string[];
  /** ssl.enabled.protocols: TLSv1.2 and/or TLSv1.3. Default both. */
  enabledProtocols?: string[];
}

/** sasl.* settings of the SASL listeners. */
export interface SaslServerConfig {
  /** sasl.enabled.mechanisms. Default PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. */
  mechanisms: ServerMechanismName[];
  /** Users and their SCRAM credentials (never passwords); PLAIN is checked against them. */
  users: UserConfig[];
  /** sasl.server.max.receive.size: the largest frame before authentication. Default 524 288. */
  maxReceiveBytes: number;
  /** connections.max.reauth.ms: session lifetime; 0 (default) for none. */
  connectionsMaxReauthMs: number;
  /** A connection still unauthenticated after this long is closed. Default 30 000. */
  authenticationTimeoutMs: number;
  /** OAUTHBEARER token validation; default: unsecured JWS (alg none), for tests only, as Kafka's default. */
  oauthBearerValidator?: OAuthBearerValidator;
}

/** authorizer.* settings (coordinator/auth/authorizer.ts). */
export interface AuthorizerConfig {
  /** authorizer.class.name set: ACLs are checked. Default false (everything allowed, as Kafka without an authorizer). */
  enabled: boolean;
  /** super.users: principals allowed everything, e.g. `User:admin`. */
  superUsers: string[];
  /** allow.everyone.if.no.acl.found. Default false. */
  allowEveryoneIfNoAclFound: boolean;
}

export interface TopicConfig {
  name: string;
  partitions: number;
  /** compression.type (default 'producer': batches are stored in the codec they came in). */
  compressionType?: TopicCompressionType;
  /** compression.gzip.level or compression.zstd.level, for compressionType gzip or zstd. */
  compressionLevel?: number;
}

export interface BrokerConfig {
  /** node.id */
  nodeId: number;
  /** Listener host; tests use 127.0.0.1 only. */
  host: string;
  /** Listener port; 0 picks a free one (single-node only: peers need to know it). */
  port: number;
  /** Every node of the static cluster, this one included. Default: this node alone. */
  cluster: NodeEndpoint[];
  /** Reported in Metadata and used to derive topic ids. */
  clusterId: string;
  /** log.dirs (one). */
  dataDir: string;
  /** Data topics created at start. */
  topics: TopicConfig[];
  /** auto.create.topics.enable (Kafka's default: true): Metadata creates the topics it names. */
  autoCreateTopics: boolean;
  /** num.partitions (Kafka: 1): partitions of an auto-created topic, or of CreateTopics with -1. */
  defaultPartitions: number;
  /** transaction.state.log.num.partitions (Kafka: 50). */
  transactionStatePartitions: number;
  /** offsets.topic.num.partitions (Kafka: 50). */
  consumerOffsetsPartitions: number;
  /** group.initial.rebalance.delay.ms (Kafka: 3000): how long a rebalance of an empty classic group waits for more members. */
  groupInitialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms (Kafka: 6000). */
  groupMinSessionTimeoutMs: number;
  /** group.max.session.timeout.ms (Kafka: 1800000). */
  groupMaxSessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms (Kafka: 5000): the KIP-848 heartbeat interval of a group without its own consumer.heartbeat.interval.ms. */
  groupConsumerHeartbeatIntervalMs: number;
  /** group.consumer.min.heartbeat.interval.ms (Kafka: 5000): the lowest consumer.heartbeat.interval.ms a group or the broker may set. */
  groupConsumerMinHeartbeatIntervalMs: number;
  /** transaction.max.timeout.ms */
  transactionMaxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (Kafka: 10 s). */
  transactionAbortCheckIntervalMs: number;
  /**
   * producer.id.expiration.ms (Kafka: 86400000, one day): a partition forgets a producer id (epoch, last sequences) idle this long,
   * unless it has a transaction open there; "idle" counts from the max timestamp of its last batch (or its last marker's timestamp).
   */
  producerIdExpirationMs: number;
  /**
   * producer.id.expiration.check.interval.ms (Kafka: 600000, ten minutes; an
   * internal setting there): how often partitions look for expired producer
   * ids. Both are static here; Kafka can change producer.id.expiration.ms at run time.
   */
  producerIdExpirationCheckIntervalMs: number;
  /**
   * transactional.id.expiration.ms (Kafka: 604800000, seven days): the transaction coordinator forgets a transactional id with no transaction
   * open or completing (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) whose state was last written this long ago, writing a tombstone for it to
   * `__transaction_state`.
   */
  transactionalIdExpirationMs: number;
  /**
   * transaction.remove.expired.transaction.cleanup.interval.ms (Kafka: 3600000, one hour): how often the transaction coordinator looks for
   * expired transactional ids. Both are static, as in Kafka.
   */
  transactionRemoveExpiredTransactionCleanupIntervalMs: number;
  /** request.timeout.ms, for broker-to-broker requests. */
  requestTimeoutMs: number;
  /** Backoff between WriteTxnMarkers retries. */
  markerRetryBackoffMs: number;
  /** socket.request.max.bytes */
  maxFrameBytes: number;
  /** connections.max.idle.ms (Kafka's broker default: 600000, 10 min): a connection idle this long is closed; 0: never. */
  connectionsMaxIdleMs: number;
  /**
   * queued.max.request.bytes: what all requests in flight may cost, as decoded
   * (coordinator/server/request-budget.ts); -1 for unbounded. Default: a
   * quarter of the process's heap limit (Kafka's default is -1).
   */
  queuedMaxRequestBytes: number;
  /**
   * Array elements one request may decode into (no Kafka setting;
   * request-budget.ts). Default: a million, fewer on a heap too small for
   * one such request to fit the default pool.
   */
  maxRequestElements: number;
  /** log.segment.bytes */
  segmentBytes: number;
  /**
   * log.flush.interval.messages (Kafka: Long.MAX_VALUE; here
   * Number.MAX_SAFE_INTEGER, never): a partition log fsyncs once this many
   * offsets are unflushed, before the append that reached it is answered.
   * 1 fsyncs every write, markers and the coordinators' state included,
   * before the reply: what survives a power failure of a single node (Kafka
   * relies on replication instead). The default leaves writes in the page
   * cache, which survives `kill -9` of the broker. Topic config flush.messages
   * overrides it per topic.
   */
  logFlushIntervalMessages: number;
  /** log.flush.interval.ms (Kafka: unset, which means log.flush.scheduler.interval.ms): the flusher fsyncs a log whose last flush is this old. Topic config flush.ms overrides it per topic. */
  logFlushIntervalMs: number | null;
  /** log.flush.scheduler.interval.ms (Kafka: Long.MAX_VALUE; here Number.MAX_SAFE_INTEGER, never): how often the flusher looks for logs due under flush.ms; above 2147483647 it never runs. */
  logFlushSchedulerIntervalMs: number;
  /**
   * Log one line per partition-log append, fsync and marker write with its
   * wall-clock start and duration (`log-write {json}`), for bench:txn --timeline.
   * No Kafka setting. Default false.
   */
  traceLogWrites: boolean;
  /** KIP-932 settings, passed to the share coordinator. */
  shareGroup: ShareGroupSettings;
  /** When false, AddShareAcksToTxn (95) and TxnShareAcknowledge (96) are neither advertised nor served. */
  kip1289: boolean;
  /** Log one line per request (API, version, client id): for interoperability checks. */
  logRequests: boolean;
  /**
   * The finalized level of the `transaction.version` feature advertised in
   * ApiVersions: 2 (Transactions V2, KIP-890 part 2; Kafka 4.x's default) or 1
   * (the classic protocol only).
   */
  transactionVersion: number;
  /**
   * transaction.two.phase.commit.enable (KIP-939): whether producers may
   * enable two-phase commit. Default false, as Kafka's
   * (TransactionStateManagerConfig): a broker that serves checkpoint
   * recovery (prepareTransaction(), completeTransaction(), DESIGN §5.6)
   * turns it on.
   */
  transactionTwoPhaseCommitEnable: boolean;
  /** The primary listener's protocol (and name); in a cluster it carries inter-broker traffic. Default PLAINTEXT. */
  securityProtocol: SecurityProtocol;
  /** More listeners, each on its own port (port 0: any free port, single node only). */
  listeners: ListenerConfig[];
  ssl: SslServerConfig | null;
  sasl: SaslServerConfig;
  authorizer: AuthorizerConfig;
}

export const DEFAULT_DATA_DIR = './.kipgen-data';

export function defaultConfig(): BrokerConfig {
  return {
    nodeId: 0,
    host: '127.0.0.1',
    port: 9092,
    cluster: [],
    clusterId: 'kipgen-cluster',
    dataDir: DEFAULT_DATA_DIR,
    topics: [],
    autoCreateTopics: true,
    defaultPartitions: 1,
    transactionStatePartitions: 8,
    consumerOffsetsPartitions: 8,
    groupInitialRebalanceDelayMs: 3_000,
    groupMinSessionTimeoutMs: 6_000,
    groupMaxSessionTimeoutMs: 1_800_000,
    groupConsumerHeartbeatIntervalMs: 5_000,
    groupConsumerMinHeartbeatIntervalMs: 5_000,
    transactionMaxTimeoutMs: 900_000,
    transactionAbortCheckIntervalMs: 1_000,
    producerIdExpirationMs: 86_400_000,
    producerIdExpirationCheckIntervalMs: 600_000,
    transactionalIdExpirationMs: 604_800_000,
    transactionRemoveExpiredTransactionCleanupIntervalMs: 3_600_000,
    requestTimeoutMs: 30_000,
    markerRetryBackoffMs: 100,
    maxFrameBytes: 104_857_600,
    connectionsMaxIdleMs: 600_000,
    queuedMaxRequestBytes: defaultQueuedMaxRequestBytes(),
    maxRequestElements: defaultMaxRequestElements(),
    segmentBytes: 16 * 1024 * 1024,
    logFlushIntervalMessages: NEVER,
    logFlushIntervalMs: null,
    logFlushSchedulerIntervalMs: NEVER,
    traceLogWrites: false,
    shareGroup: {
      recordLockDurationMs: 30_000,
      deliveryCountLimit: 5,
      sessionTimeoutMs: 45_000,
      heartbeatIntervalMs: 5_000,
      maxRecordLocks: 200,
      // Kafka's defaults of the share.isolation.level and share.auto.offset.reset group configs.
      isolationLevel: 'read_uncommitted',
      autoOffsetReset: 'latest',
    },
    kip1289: true,
    logRequests: false,
    transactionVersion: 2,
    transactionTwoPhaseCommitEnable: false,
    securityProtocol: 'PLAINTEXT',
    listeners: [],
    ssl: null,
    sasl: {
      mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
      users: [],
      maxReceiveBytes: 524_288,
      connectionsMaxReauthMs: 0,
      authenticationTimeoutMs: 30_000,
    },
    authorizer: { enabled: false, superUsers: [], allowEveryoneIfNoAclFound: false },
  };
}

export type BrokerConfigInput = Partial<Omit<BrokerConfig, 'shareGroup' | 'sasl' | 'authorizer'>> & {
  shareGroup?: Partial<ShareGroupSettings>;
  sasl?: Partial<SaslServerConfig>;
  authorizer?: Partial<AuthorizerConfig>;
};

/** Fills defaults and checks every value; throws an Error naming the bad setting. */
export function resolveConfig(input: BrokerConfigInput): BrokerConfig {
  const base = defaultConfig();
  const config: BrokerConfig = {
    ...base,
    ...stripUndefined(input),
    shareGroup: { ...base.shareGroup, ...stripUndefined(input.shareGroup ?? {}) },
    sasl: { ...base.sasl, ...stripUndefined(input.sasl ?? {}) },
    authorizer: { ...base.authorizer, ...stripUndefined(input.authorizer ?? {}) },
  } as BrokerConfig;
  if (config.cluster.length === 0) config.cluster = [{ nodeId: config.nodeId, host: config.host, port: config.port }];
  const self = config.cluster.find((n) => n.nodeId === config.nodeId);
  if (self === undefined) throw new Error(`config: nodeId ${config.nodeId} is not in cluster [${config.cluster.map((n) => n.nodeId).join(', ')}]`);
  if (input.port === undefined) config.port = self.port;
  if (config.cluster.length > 1 && config.port === 0) throw new Error('config: port 0 (any free port) works only for a single node');
  const ids = new Set<number>();
  for (const node of config.cluster) {
    intIn(node.nodeId, 0, 0x7fffffff, 'cluster[].nodeId');
    intIn(node.port, 0, 65535, `cluster[node ${node.nodeId}].port`);
    if (ids.has(node.nodeId)) throw new Error(`config: node id ${node.nodeId} appears twice in cluster`);
    ids.add(node.nodeId);
  }
  intIn(config.transactionStatePartitions, 1, 1000, 'transactionStatePartitions');
  intIn(config.consumerOffsetsPartitions, 1, 1000, 'consumerOffsetsPartitions');
  intIn(config.transactionMaxTimeoutMs, 1, 0x7fffffff, 'transactionMaxTimeoutMs');
  intIn(config.transactionAbortCheckIntervalMs, 1, 0x7fffffff, 'transactionAbortCheckIntervalMs');
  // Kafka defines both as INT, atLeast(1).
  intIn(config.producerIdExpirationMs, 1, 0x7fffffff, 'producerIdExpirationMs');
  intIn(config.producerIdExpirationCheckIntervalMs, 1, 0x7fffffff, 'producerIdExpirationCheckIntervalMs');
  // Kafka's TransactionStateManagerConfig defines both as INT, atLeast(1).
  intIn(config.transactionalIdExpirationMs, 1, 0x7fffffff, 'transactionalIdExpirationMs');
  intIn(config.transactionRemoveExpiredTransactionCleanupIntervalMs, 1, 0x7fffffff, 'transactionRemoveExpiredTransactionCleanupIntervalMs');
  intIn(config.requestTimeoutMs, 1, 0x7fffffff, 'requestTimeoutMs');
  intIn(config.markerRetryBackoffMs, 1, 60_000, 'markerRetryBackoffMs');
  intIn(config.maxFrameBytes, 64, 0x7fffffff, 'maxFrameBytes');
  intIn(config.connectionsMaxIdleMs, 0, 0x7fffffff, 'connectionsMaxIdleMs');
  if (config.queuedMaxRequestBytes !== -1) intIn(config.queuedMaxRequestBytes, 1, Number.MAX_SAFE_INTEGER, 'queuedMaxRequestBytes');
  intIn(config.maxRequestElements, 1, Number.MAX_SAFE_INTEGER, 'maxRequestElements');
  intIn(config.segmentBytes, 1024, 0x7fffffff, 'segmentBytes');
  // ServerLogConfigs / LogConfig: log.flush.interval.messages is atLeast(1); flush.ms atLeast(0). Kafka does not
  // bound the scheduler interval, but its executor refuses a period of 0.
  intIn(config.logFlushIntervalMessages, 1, NEVER, 'logFlushIntervalMessages');
  if (config.logFlushIntervalMs !== null) intIn(config.logFlushIntervalMs, 0, NEVER, 'logFlushIntervalMs');
  intIn(config.logFlushSchedulerIntervalMs, 1, NEVER, 'logFlushSchedulerIntervalMs');
  if (typeof config.traceLogWrites !== 'boolean') throw new Error(`config: traceLogWrites must be true or false, got ${JSON.stringify(config.traceLogWrites)}`);
  intIn(config.defaultPartitions, 1, 10_000, 'defaultPartitions');
  intIn(config.groupInitialRebalanceDelayMs, 0, 0x7fffffff, 'groupInitialRebalanceDelayMs');
  intIn(config.groupMinSessionTimeoutMs, 1, 0x7fffffff, 'groupMinSessionTimeoutMs');
  intIn(config.groupMaxSessionTimeoutMs, config.groupMinSessionTimeoutMs, 0x7fffffff, 'groupMaxSessionTimeoutMs');
  // GroupCoordinatorConfig's requires: min ≤ interval ≤ group.consumer.max.heartbeat.interval.ms (kipgen keeps Kafka's 15000).
  intIn(config.groupConsumerMinHeartbeatIntervalMs, 1, 15_000, 'groupConsumerMinHeartbeatIntervalMs');
  intIn(config.groupConsumerHeartbeatIntervalMs, config.groupConsumerMinHeartbeatIntervalMs, 15_000, 'groupConsumerHeartbeatIntervalMs');
  if (typeof config.autoCreateTopics !== 'boolean')
    throw new Error(`config: autoCreateTopics must be true or false, got ${JSON.stringify(config.autoCreateTopics)}`);
  intIn(config.transactionVersion, 1, 2, 'transactionVersion');
  if (typeof config.transactionTwoPhaseCommitEnable !== 'boolean') throw new Error('config: transactionTwoPhaseCommitEnable must be true or false');
  const seen = new Set<string>();
  for (const topic of config.topics) {
    if (!/^[a-zA-Z0-9._-]{1,249}$/.test(topic.name) || topic.name === '.' || topic.name === '..') {
      throw new Error(`config: invalid topic name ${JSON.stringify(topic.name)} (letters, digits, '.', '_', '-'; at most 249)`);
    }
    if (topic.name.startsWith('__')) throw new Error(`config: topic ${topic.name}: names starting with '__' are internal`);
    if (seen.has(topic.name)) throw new Error(`config: topic ${topic.name} is listed twice`);
    seen.add(topic.name);
    intIn(topic.partitions, 1, 10_000, `topics[${topic.name}].partitions`);
    checkTopicCompression(topic);
  }
  checkSecurity(config);
  const sg = config.shareGroup;
  intIn(sg.recordLockDurationMs, 1, 0x7fffffff, 'shareGroup.recordLockDurationMs');
  intIn(sg.deliveryCountLimit, 1, 100, 'shareGroup.deliveryCountLimit');
  intIn(sg.sessionTimeoutMs, 1, 0x7fffffff, 'shareGroup.sessionTimeoutMs');
  intIn(sg.heartbeatIntervalMs, 1, 0x7fffffff, 'shareGroup.heartbeatIntervalMs');
  intIn(sg.maxRecordLocks, 1, 0x7fffffff, 'shareGroup.maxRecordLocks');
  if (sg.isolationLevel !== 'read_committed' && sg.isolationLevel !== 'read_uncommitted') {
    throw new Error(`config: shareGroup.isolationLevel must be "read_committed" or "read_uncommitted", got ${JSON.stringify(sg.isolationLevel)}`);
  }
  if (sg.autoOffsetReset !== 'earliest' && sg.autoOffsetReset !== 'latest') {
    throw new Error(`config: shareGroup.autoOffsetReset must be "earliest" or "latest", got ${JSON.stringify(sg.autoOffsetReset)}`);
  }
  return config;
}

/** Reads a JSON config file (same shape as BrokerConfigInput). */
export function loadConfigFile(file: string): BrokerConfigInput {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read config file ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as BrokerConfigInput;
  } catch (error) {
    throw new Error(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * `orders:3` → { name: 'orders', partitions: 3 } (partitions default to 1);
 * `orders:3:zstd` also sets the topic's compression.type.
 */
export function parseTopicArg(arg: string): TopicConfig {
  const match = /^([^:]+)(?::(\d+)(?::([a-z0-9]+))?)?$/.exec(arg);
  if (!match) throw new Error(`--topic ${arg}: expected name, name:partitions or name:partitions:compression.type`);
  const topic: TopicConfig = { name: match[1]!, partitions: match[2] === undefined ? 1 : Number(match[2]) };
  if (match[3] !== undefined) topic.compressionType = match[3] as TopicCompressionType;
  return topic;
}

function checkTopicCompression(topic: TopicConfig): void {
  const type = topic.compressionType;
  if (type === undefined) {
    if (topic.compressionLevel !== undefined) throw new Error(`config: topics[${topic.name}].compressionLevel needs a compressionType`);
    return;
  }
  if (!TOPIC_COMPRESSION_TYPES.includes(type)) {
    throw new Error(`config: topics[${topic.name}].compressionType must be one of ${TOPIC_COMPRESSION_TYPES.join(', ')}, got ${JSON.stringify(type)}`);
  }
  if (topic.compressionLevel === undefined) return;
  if (type === 'producer' || type === 'uncompressed')
    throw new Error(`config: topics[${topic.name}].compressionLevel does not apply to compression.type ${type}`);
  try {
    checkCompressionLevel(type, topic.compressionLevel);
  } catch (error) {
    throw new Error(`config: topics[${topic.name}]: ${(error as Error).message}`);
  }
}

/** The primary listener and the others, with their protocols resolved. */
export function listenersOf(config: BrokerConfig): Array<{ name: string; port: number; protocol: SecurityProtocol }> {
  return [
    { name: config.securityProtocol, port: config.port, protocol: config.securityProtocol },
    ...config.listeners.map((l) => ({ name: l.name, port: l.port, protocol: (l.securityProtocol ?? l.name) as SecurityProtocol })),
  ];
}

function checkSecurity(config: BrokerConfig): void {
  if (!SECURITY_PROTOCOLS.includes(config.securityProtocol)) {
    throw new Error(`config: securityProtocol must be one of ${SECURITY_PROTOCOLS.join(', ')}, got ${JSON.stringify(config.securityProtocol)}`);
  }
  const names = new Set<string>([config.securityProtocol]);
  for (const listener of config.listeners) {
    if (typeof listener.name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(listener.name))
      throw new Error(`config: listeners[].name ${JSON.stringify(listener.name)} must be letters, digits, '_' or '-'`);
    if (names.has(listener.name))
      throw new Error(`config: listener name ${listener.name} is used twice (the primary listener is named ${config.securityProtocol})`);
    names.add(listener.name);
    intIn(listener.port, 0, 65535, `listeners[${listener.name}].port`);
    if (listener.port === 0 && config.cluster.length > 1) throw new Error(`config: listeners[${listener.name}].port 0 works only for a single node`);
    const protocol = listener.securityProtocol ?? listener.name;
    if (!SECURITY_PROTOCOLS.includes(protocol as SecurityProtocol)) {
      throw new Error(
        `config: listeners[${listener.name}]: securityProtocol must be one of ${SECURITY_PROTOCOLS.join(', ')} (or the name one of them), got ${JSON.stringify(protocol)}`,
      );
    }
  }
  const protocols = listenersOf(config).map((l) => l.protocol);
  if (config.cluster.length > 1 && config.securityProtocol !== 'PLAINTEXT') {
    throw new Error(
      'config: in a cluster the primary listener carries inter-broker requests, which kipgen sends unauthenticated: its securityProtocol must be PLAINTEXT (add secured listeners with `listeners`)',
    );
  }
  if (protocols.some((p) => p === 'SSL' || p === 'SASL_SSL')) {
    const ssl = config.ssl;
    if (!ssl || (!ssl.key && !ssl.keyFile) || (!ssl.cert && !ssl.certFile))
      throw new Error('config: an SSL or SASL_SSL listener needs ssl.key (or ssl.keyFile) and ssl.cert (or ssl.certFile)');
    if (ssl.clientAuth !== undefined && !['none', 'requested', 'required'].includes(ssl.clientAuth))
      throw new Error(`config: ssl.clientAuth must be none, requested or required, got ${JSON.stringify(ssl.clientAuth)}`);
    if (ssl.clientAuth && ssl.clientAuth !== 'none' && !ssl.ca && !ssl.caFile)
      throw new Error('config: ssl.clientAuth needs ssl.ca (or ssl.caFile) to verify client certificates');
    if (ssl.principalMappingRules !== undefined && typeof ssl.principalMappingRules !== 'string')
      throw new Error('config: ssl.principalMappingRules must be a string of rules, like "RULE:^CN=([^,]*).*$/$1/,DEFAULT"');
    new SslPrincipalMapper(ssl.principalMappingRules);
    tlsProtocolOptions(ssl.cipherSuites, ssl.enabledProtocols);
  }
  const sasl = config.sasl;
  for (const mechanism of sasl.mechanisms) {
    if (!SUPPORTED_MECHANISMS.includes(mechanism))
      throw new Error(`config: sasl.mechanisms: ${JSON.stringify(mechanism)} is not one of ${SUPPORTED_MECHANISMS.join(', ')}`);
  }
  if (protocols.some((p) => p === 'SASL_PLAINTEXT' || p === 'SASL_SSL') && sasl.mechanisms.length === 0)
    throw new Error('config: a SASL listener needs at least one of sasl.mechanisms');
  intIn(sasl.maxReceiveBytes, 64, 0x7fffffff, 'sasl.maxReceiveBytes');
  intIn(sasl.connectionsMaxReauthMs, 0, 0x7fffffff, 'sasl.connectionsMaxReauthMs');
  intIn(sasl.authenticationTimeoutMs, 1, 0x7fffffff, 'sasl.authenticationTimeoutMs');
  if (!Array.isArray(sasl.users)) throw new Error('config: sasl.users must be a list');
  const authz = config.authorizer;
  if (typeof authz.enabled !== 'boolean' || typeof authz.allowEveryoneIfNoAclFound !== 'boolean')
    throw new Error('config: authorizer.enabled and authorizer.allowEveryoneIfNoAclFound are booleans');
  for (const user of authz.superUsers) {
    if (typeof user !== 'string' || !/^[^:]+:.+$/.test(user))
      throw new Error(`config: authorizer.superUsers: ${JSON.stringify(user)} is not a principal like User:admin`);
  }
}

/** The log.flush.* settings as the logs take them. */
export function logFlushSettings(config: BrokerConfig): LogFlushSettings {
  return { intervalMessages: config.logFlushIntervalMessages, intervalMs: config.logFlushIntervalMs, schedulerIntervalMs: config.logFlushSchedulerIntervalMs };
}

function intIn(value: unknown, min: number, max: number, what: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`config: ${what} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
