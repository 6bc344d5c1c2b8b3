/**
 * Apache Kafka 4.4 on demand, for tests: one KRaft node that is broker and
 * controller at once (Kafka's own `kafka.Kafka` main with a properties file),
 * started from the class path Maven resolves for test/kafka/pom.xml, on free
 * loopback ports, with
 *
 * - a PLAINTEXT listener (principal ANONYMOUS, a super user, so that tests
 *   without security need no ACLs) and a SASL_SSL listener (PLAIN and
 *   SCRAM-SHA-512; the certificates are made for the run) — the
 *   StandardAuthorizer decides every request, and on SASL_SSL only the super
 *   user passes without ACLs;
 * - Transactions V2 (`transaction.version=2` finalized at format time) and
 *   KIP-939's `transaction.two.phase.commit.enable=true`, with
 *   `unstable.api.versions.enable=true` because 4.4 still marks InitProducerId
 *   v6 (two-phase commit) unstable — the only API version that changes;
 * - share groups: `share.version` is finalized at its 4.4 default (2) by the
 *   format command; the readiness check insists on ≥ 1 and on
 *   `transaction.version` ≥ 2, so a Kafka that lacks them fails the start
 *   instead of the tests;
 * - single-node internal topics (replication factor 1, min ISR 1, one
 *   partition each, so that coordinators load fast) and
 *   `group.initial.rebalance.delay.ms=0`.
 *
 * Everything lives in one `kipgen-kafka-*` temp folder (properties, log4j2
 * config, certificates, data, the broker's log) that `stop()` removes after
 * killing the JVM. The JVM runs under a small /bin/sh guard that kills it when
 * the Node process that started it goes away, however it ends, so that no
 * broker outlives its test run.
 *
 * Kafka sources for the settings: config/server.properties (KRaft combined
 * mode), core/src/main/scala/kafka/tools/StorageTool.scala (format, --feature,
 * --add-scram), server-common's ShareVersion/TransactionVersion,
 * TransactionStateManagerConfig (transaction.two.phase.commit.enable),
 * ShareGroupConfig (group.share.*), GroupCoordinatorConfig (group.consumer.*).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { KafkaConnection } from '../../../connection/connection.js';
import { ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse } from '../../../generated/index.js';
import { makeTestPki } from '../../security/certificates.js';
import { kafkaPrerequisites } from './prerequisites.js';

export { kafkaPrerequisites, type KafkaPrerequisites } from './prerequisites.js';

export type KafkaSaslMechanism = 'PLAIN' | 'SCRAM-SHA-512';

export interface KafkaUser {
  username: string;
  password: string;
}

export interface StartKafkaOptions {
  /** Extra users (PLAIN and SCRAM-SHA-512, neither super users) besides the super user and `alice`/`bob`. */
  users?: KafkaUser[];
  /** Broker properties added to (or replacing) the harness's own. */
  brokerProperties?: Record<string, string | number | boolean>;
  /** Give up starting after this long (default 120 s; about 10–25 s on a loaded 2-core machine). */
  readyTimeoutMs?: number;
  /** JVM heap, `-Xmx` (default `512m`; with `jvm: 'server'`, Kafka's own 1g). */
  heap?: string;
  /**
   * 'test' (default): one GC thread and C1 only, for a quick start on a shared machine.
   * 'server': the flags Kafka's own start script gives a broker (G1, C2, a 1 GiB heap),
   * for benchmarks that compare throughput with it.
   */
  jvm?: 'test' | 'server';
}

export interface KafkaSaslSsl {
  /** `127.0.0.1:<port>` of the SASL_SSL listener. */
  bootstrap: string;
  /** The CA that signed the broker's certificate (for 127.0.0.1 and localhost), PEM: Node's `ssl: { ca }`. */
  caPem: string;
  /** The same CA as a file, for Java clients: `ssl.truststore.type=PEM`, `ssl.truststore.location=<this>`. */
  truststorePath: string;
  /** The listener's SASL mechanisms. */
  mechanisms: readonly KafkaSaslMechanism[];
  /** In `super.users`: passes every ACL check. */
  superUser: KafkaUser;
  /** Users that ACLs decide for (`alice`, `bob`, then `options.users`): principal `User:<username>`. */
  users: readonly KafkaUser[];
  /** Properties for a Java client of this listener as `user` (security.protocol, sasl.*, ssl.truststore.*). */
  javaClientProperties(user: KafkaUser, mechanism?: KafkaSaslMechanism): Record<string, string>;
}

export interface KafkaCluster {
  /** `127.0.0.1:<port>` of the PLAINTEXT listener (principal ANONYMOUS, a super user). */
  bootstrap: string;
  saslSsl: KafkaSaslSsl;
  /** Kafka 4.4.0's class path (broker, kafka-clients, kafka-tools), for Java helpers the tests run. */
  javaClasspath: string;
  /** The cluster id the storage was formatted with. */
  clusterId: string;
  /** The `kipgen-kafka-*` folder holding everything of this broker; removed by stop(). */
  dir: string;
  /** The broker's log4j2 log file (INFO), inside `dir`. */
  logFile: string;
  /** Milliseconds from spawning the JVM to the broker serving (format not included). */
  startMs: number;
  /** The last `lines` lines of the broker's log, for failure messages. */
  logTail(lines?: number): string;
  /** The broker JVM's process id (for its resident memory), undefined once it has exited. */
  jvmPid(): number | undefined;
  /** Kills the JVM (SIGKILL: nothing is left to flush that a test needs) and removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;

/** JVM flags for a quiet, small, quick-to-start broker on a shared 2-core machine. */
function jvmFlags(heap: string, log4jConfig: string): string[] {
  return [
    `-Xmx${heap}`,
    '-Xms128m',
    // One GC thread and C1 only: start-up and test traffic, not throughput, matter here.
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:-UsePerfData',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jConfig}`,
  ];
}

/** The flags kafka-run-class.sh and kafka-server-start.sh give a broker (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS). */
function serverJvmFlags(heap: string, log4jConfig: string): string[] {
  return [
    `-Xmx${heap}`,
    `-Xms${heap}`,
    '-server',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jConfig}`,
  ];
}

/** The child process of the guard shell `guardPid`: the JVM. */
function childOf(guardPid: number | undefined): number | undefined {
  if (guardPid === undefined) return undefined;
  try {
    const children = fs.readFileSync(`/proc/${guardPid}/task/${guardPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    for (const pid of children) if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'java') return pid;
  } catch {
    /* gone, or no /proc: unknown */
  }
  return undefined;
}

/** A port the kernel just handed out on 127.0.0.1 (free now; Kafka binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Kafka cluster ids are a Uuid in URL-safe base64 without padding
 * (Uuid.randomUuid().toString()). Like Kafka's Uuid.randomUuid, never one that
 * starts with '-': kafka-storage's argument parser reads `--cluster-id -abc…`
 * as a missing value (one start in 64 failed so).
 */
export function clusterIdOf(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function propertiesFile(props: Record<string, string | number | boolean>): string {
  // java.util.Properties: a backslash escapes, so double it; values here have no newlines.
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${String(v).replace(/\\/g, '\\\\')}`)
    .join('\n')}\n`;
}

function log4jYaml(logFile: string): string {
  return [
    'Configuration:',
    '  Appenders:',
    '    File:',
    '      name: FILE',
    `      fileName: "${logFile}"`,
    '      PatternLayout:',
    '        pattern: "[%d] %p %m (%c)%n"',
    '  Loggers:',
    '    Root:',
    '      level: INFO',
    '      AppenderRef:',
    '        - ref: FILE',
    // The request log and state-change log say nothing a failed start needs.
    '    Logger:',
    '      - name: kafka.request.logger',
    '        level: WARN',
    '      - name: state.change.logger',
    '        level: WARN',
    '',
  ].join('\n');
}

function tail(file: string, lines: number): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log written)';
  }
}

/**
 * Runs `java args…` under /bin/sh, which kills the JVM with SIGKILL when its
 * stdin closes: when we end it, or when this Node process exits or is killed
 * (the pipe closes with it). A JVM alone would outlive a crashed test run.
 */
function spawnGuardedJava(args: string[], logFile: string): ChildProcess {
  const script = 'exec 3<&0; "$@" </dev/null & pid=$!; { read -r _ <&3; kill -9 $pid 2>/dev/null; } & wait $pid';
  const out = fs.openSync(logFile, 'a');
  try {
    return spawn('/bin/sh', ['-c', script, 'kafka-guard', 'java', ...args], { stdio: ['pipe', out, out] });
  } finally {
    fs.closeSync(out);
  }
}

function runJava(args: string[], timeoutMs: number): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

interface Ready {
  transactionVersion: number;
  shareVersion: number;
}

/** One readiness probe: ApiVersions (finalized features) and Metadata listing this broker. Throws while not ready. */
async function probeReady(port: number): Promise<Ready> {
  const conn = await KafkaConnection.connect({ host: '127.0.0.1', port, clientId: 'kipgen-kafka-harness', requestTimeoutMs: 5_000, connectTimeoutMs: 2_000 });
  try {
    const versions = (await conn.send(
      ApiVersionsRequest,
      ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0' }),
      3,
      ApiVersionsResponse,
    )) as ApiVersionsResponse;
    if (versions.errorCode !== 0) throw new Error(`ApiVersions error ${versions.errorCode}`);
    const level = (name: string): number => versions.finalizedFeatures.find((f) => f.name === name)?.maxVersionLevel ?? 0;
    const metadata = (await conn.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 12, MetadataResponse)) as MetadataResponse;
    if (metadata.brokers.length === 0) throw new Error('Metadata lists no broker yet');
    return { transactionVersion: level('transaction.version'), shareVersion: level('share.version') };
  } finally {
    await conn.close().catch(() => undefined);
  }
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Formats KRaft storage and starts one Kafka 4.4 broker+controller; resolves
 * once both listeners serve, with Transactions V2 and share groups finalized.
 * Fails with one line (what is missing) when Java, Maven or a jar is, and with
 * the tail of the broker's log when it does not start.
 */
export async function startKafka(options: StartKafkaOptions = {}): Promise<KafkaCluster> {
  const prerequisites = kafkaPrerequisites();
  if (!prerequisites.ok) throw new Error(prerequisites.missing);
  // A port found free can be taken by another process before Kafka binds it (other brokers start on this
  // machine too): then Kafka exits with "Address already in use", and one more try with new ports is enough.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, prerequisites.classpath);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof PortTakenError)) throw error;
    }
  }
}

/** Kafka could not bind a listener port that was free a moment before. */
class PortTakenError extends Error {}

async function startOnce(options: StartKafkaOptions, classpath: string): Promise<KafkaCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  const logFile = path.join(dir, 'kafka.log');
  const stop = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      // Closing the guard's stdin makes it kill -9 the JVM; the guard exits once the JVM has.
      child.stdin?.end();
      const guard = child;
      const timer = setTimeout(() => guard.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [plaintextPort, saslSslPort, controllerPort] = (await distinctFreePorts(3)) as [number, number, number];
    const pki = await makeTestPki();
    const tlsDir = path.join(dir, 'tls');
    fs.mkdirSync(tlsDir);
    const keystorePath = path.join(tlsDir, 'broker.pem');
    fs.writeFileSync(keystorePath, `${pki.server.key}\n${pki.server.cert}\n`, { mode: 0o600 });
    const truststorePath = path.join(tlsDir, 'ca.pem');
    fs.writeFileSync(truststorePath, pki.ca);

    const secret = (): string => randomBytes(12).toString('hex');
    const superUser: KafkaUser = { username: 'kipgen-admin', password: secret() };
    const users: KafkaUser[] = [{ username: 'alice', password: secret() }, { username: 'bob', password: secret() }, ...(options.users ?? [])];
    const everyone = [superUser, ...users];
    for (const u of everyone) {
      if (!/^[A-Za-z0-9._-]+$/.test(u.username) || !/^[A-Za-z0-9._-]+$/.test(u.password)) {
        throw new Error(
          `startKafka: user ${JSON.stringify(u.username)}: names and passwords are limited to [A-Za-z0-9._-] (they go into JAAS and --add-scram as they are)`,
        );
      }
    }

    const dataDir = path.join(dir, 'data');
    const props: Record<string, string | number | boolean> = {
      'process.roles': 'broker,controller',
      'node.id': 1,
      'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
      listeners: `PLAINTEXT://127.0.0.1:${plaintextPort},SASL_SSL://127.0.0.1:${saslSslPort},CONTROLLER://127.0.0.1:${controllerPort}`,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${plaintextPort},SASL_SSL://127.0.0.1:${saslSslPort}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': dataDir,
      'num.partitions': 1,
      'num.network.threads': 2,
      'num.io.threads': 4,
      'offsets.topic.replication.factor': 1,
      'offsets.topic.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
      'transaction.state.log.num.partitions': 1,
      'share.coordinator.state.topic.replication.factor': 1,
      'share.coordinator.state.topic.min.isr': 1,
      'share.coordinator.state.topic.num.partitions': 1,
      'group.initial.rebalance.delay.ms': 0,
      'transaction.two.phase.commit.enable': true,
      // Kafka 4.4 marks InitProducerId v6 (KIP-939's Enable2Pc/KeepPreparedTxn) latestVersionUnstable, its only
      // unstable API version (clients' InitProducerIdRequest.json): without this no client can run two-phase commit.
      'unstable.api.versions.enable': true,
      // Lets a test shorten a group's lock (share.record.lock.duration.ms) to seconds; the default stays 30 s.
      'group.share.min.record.lock.duration.ms': 1000,
      // A new member gets its partitions at its second heartbeat (the assignment is computed in the background,
      // group.share.assignment.interval.ms = 1 s): at Kafka's 5 s interval every share test would wait 5 s for it.
      'group.share.heartbeat.interval.ms': 1000,
      'group.share.min.heartbeat.interval.ms': 1000,
      // KIP-848 members reconcile over a few heartbeats: at Kafka's 5 s (GroupCoordinatorConfig's default and minimum)
      // each membership step of a test would take seconds.
      'group.consumer.heartbeat.interval.ms': 200,
      'group.consumer.min.heartbeat.interval.ms': 100,
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      // ANONYMOUS: the PLAINTEXT and CONTROLLER listeners (the node talks to itself through them).
      'super.users': `User:ANONYMOUS;User:${superUser.username}`,
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required ${everyone.map((u) => `user_${u.username}="${u.password}"`).join(' ')};`,
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': keystorePath,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': truststorePath,
      ...options.brokerProperties,
    };
    const propsPath = path.join(dir, 'server.properties');
    fs.writeFileSync(propsPath, propertiesFile(props));
    const log4jPath = path.join(dir, 'log4j2.yaml');
    fs.writeFileSync(log4jPath, log4jYaml(logFile));
    const flags = options.jvm === 'server' ? serverJvmFlags(options.heap ?? '1g', log4jPath) : jvmFlags(options.heap ?? '512m', log4jPath);

    const clusterId = clusterIdOf();
    const format = await runJava(
      [
        ...flags,
        '-cp',
        classpath,
        'kafka.tools.StorageTool',
        'format',
        '--cluster-id',
        clusterId,
        '--config',
        propsPath,
        '--feature',
        'transaction.version=2',
        ...everyone.flatMap((u) => ['--add-scram', `SCRAM-SHA-512=[name=${u.username},password=${u.password}]`]),
      ],
      120_000,
    );
    if (format.status !== 0) {
      throw new Error(`Kafka's StorageTool format failed (exit ${format.status}):\n${format.output.trim().split('\n').slice(-15).join('\n')}`);
    }

    const started = Date.now();
    const guard = spawnGuardedJava([...flags, '-cp', classpath, 'kafka.Kafka', propsPath], path.join(dir, 'kafka.out'));
    child = guard;
    exited = new Promise((resolve) => guard.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));

    const deadline = started + (options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
    let last: unknown;
    let ready: Ready | undefined;
    while (ready === undefined) {
      if (gone) {
        const out = tail(path.join(dir, 'kafka.out'), 10).trim();
        if (/Socket server failed to bind to .*Address already in use/.test(tail(logFile, 200))) {
          throw new PortTakenError(`Kafka 4.4 could not bind a listener port: ${tail(logFile, 5)}`);
        }
        throw new Error(
          `Kafka 4.4 exited during start-up (exit ${guard.exitCode}); the end of its log:\n${tail(logFile, 25)}${out ? `\nstdout/stderr:\n${out}` : ''}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `Kafka 4.4 did not serve on 127.0.0.1:${plaintextPort} within ${options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS} ms (last: ${String(last)}); the end of its log:\n${tail(logFile, 25)}`,
        );
      }
      try {
        ready = await probeReady(plaintextPort);
        if (!(await tcpOpen(saslSslPort))) {
          last = 'SASL_SSL listener not accepting yet';
          ready = undefined;
        }
      } catch (e) {
        last = e instanceof Error ? e.message : e;
      }
      if (ready === undefined) await sleep(250);
    }
    const startMs = Date.now() - started;
    if (ready.transactionVersion < 2 || ready.shareVersion < 1) {
      throw new Error(
        `Kafka started without the features the tests need: transaction.version=${ready.transactionVersion} (need 2), share.version=${ready.shareVersion} (need ≥ 1)`,
      );
    }

    const mechanisms: readonly KafkaSaslMechanism[] = ['PLAIN', 'SCRAM-SHA-512'];
    return {
      bootstrap: `127.0.0.1:${plaintextPort}`,
      saslSsl: {
        bootstrap: `127.0.0.1:${saslSslPort}`,
        caPem: pki.ca,
        truststorePath,
        mechanisms,
        superUser,
        users,
        javaClientProperties(user, mechanism = 'SCRAM-SHA-512') {
          const module =
            mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule';
          return {
            'bootstrap.servers': `127.0.0.1:${saslSslPort}`,
            'security.protocol': 'SASL_SSL',
            'sasl.mechanism': mechanism,
            'sasl.jaas.config': `${module} required username="${user.username}" password="${user.password}";`,
            'ssl.truststore.type': 'PEM',
            'ssl.truststore.location': truststorePath,
          };
        },
      },
      javaClasspath: classpath,
      clusterId,
      dir,
      logFile,
      startMs,
      logTail: (lines = 40) => tail(logFile, lines),
      jvmPid: () => (gone ? undefined : childOf(guard.pid)),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
