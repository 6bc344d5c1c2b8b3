/**
 * What a test file of the kafka project uses: the Kafka the globalSetup
 * started (`kafka()`), unique names, and admin calls made on a raw
 * connection to the PLAINTEXT listener (ANONYMOUS there is a super user):
 * CreateTopics, IncrementalAlterConfigs on a share group, CreateAcls; and
 * Kafka's own console consumer for reading a topic back with Kafka's client.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { KafkaConnection } from '../../../connection/connection.js';
import {
  CreateAclsRequest,
  CreateAclsResponse,
  CreateTopicsRequest,
  CreateTopicsResponse,
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../../generated/index.js';
import type { KafkaCluster, KafkaSaslMechanism, KafkaUser } from './kafka.js';

/** The serialisable part of a KafkaCluster, as the globalSetup provides it. */
export interface KafkaInfo {
  bootstrap: string;
  saslSsl: {
    bootstrap: string;
    caPem: string;
    truststorePath: string;
    mechanisms: KafkaSaslMechanism[];
    superUser: KafkaUser;
    users: KafkaUser[];
  };
  javaClasspath: string;
  logFile: string;
}

/** What of a started cluster the test files get. */
export function kafkaInfo(kafka: KafkaCluster): KafkaInfo {
  return {
    bootstrap: kafka.bootstrap,
    saslSsl: {
      bootstrap: kafka.saslSsl.bootstrap,
      caPem: kafka.saslSsl.caPem,
      truststorePath: kafka.saslSsl.truststorePath,
      mechanisms: [...kafka.saslSsl.mechanisms],
      superUser: kafka.saslSsl.superUser,
      users: [...kafka.saslSsl.users],
    },
    javaClasspath: kafka.javaClasspath,
    logFile: kafka.logFile,
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    kafka: KafkaInfo;
  }
}

/** The Kafka 4.4 of this run. */
export function kafka(): KafkaInfo {
  return inject('kafka');
}

/** A name no other test of the run uses. */
export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

function hostPort(bootstrap: string): { host: string; port: number } {
  const at = bootstrap.lastIndexOf(':');
  return { host: bootstrap.slice(0, at), port: Number(bootstrap.slice(at + 1)) };
}

async function withAdmin<T>(info: KafkaInfo, fn: (c: KafkaConnection) => Promise<T>): Promise<T> {
  const c = await KafkaConnection.connect({ ...hostPort(info.bootstrap), clientId: 'kipgen-kafka-admin', requestTimeoutMs: 30_000 });
  try {
    return await fn(c);
  } finally {
    await c.close().catch(() => undefined);
  }
}

/** CreateTopics v7 and waits for it (Kafka's timeoutMs); throws on any error but TOPIC_ALREADY_EXISTS. */
export async function createTopic(info: KafkaInfo, name: string, partitions = 1, configs: Record<string, string> = {}): Promise<void> {
  const res = await withAdmin(info, (c) =>
    c.send(
      CreateTopicsRequest,
      CreateTopicsRequest.create({
        topics: [
          { name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) },
        ],
        timeoutMs: 30_000,
        validateOnly: false,
      }),
      7,
      CreateTopicsResponse,
    ),
  );
  for (const t of res.topics) {
    if (t.errorCode !== 0 && t.errorCode !== 36) throw new Error(`CreateTopics ${name}: error ${t.errorCode} ${t.errorMessage ?? ''}`);
  }
}

/** Kafka's ConfigResource.Type.GROUP. */
const GROUP_RESOURCE = 32;

/**
 * Sets share-group configs (GroupConfig: share.auto.offset.reset,
 * share.record.lock.duration.ms, share.delivery.count.limit,
 * share.isolation.level, …) with IncrementalAlterConfigs SET.
 */
export async function alterGroupConfig(info: KafkaInfo, groupId: string, configs: Record<string, string | number>): Promise<void> {
  const res = await withAdmin(info, (c) =>
    c.send(
      IncrementalAlterConfigsRequest,
      IncrementalAlterConfigsRequest.create({
        resources: [
          {
            resourceType: GROUP_RESOURCE,
            resourceName: groupId,
            configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value: String(value) })),
          },
        ],
        validateOnly: false,
      }),
      1,
      IncrementalAlterConfigsResponse,
    ),
  );
  for (const r of res.responses) {
    if (r.errorCode !== 0) throw new Error(`IncrementalAlterConfigs group ${groupId}: error ${r.errorCode} ${r.errorMessage ?? ''}`);
  }
}

/** A share group every test can read from the start: earliest, read_committed, plus `extra`. */
export async function shareGroup(info: KafkaInfo, groupId: string, extra: Record<string, string | number> = {}): Promise<string> {
  await alterGroupConfig(info, groupId, { 'share.auto.offset.reset': 'earliest', 'share.isolation.level': 'read_committed', ...extra });
  return groupId;
}

export interface AclGrant {
  principal: string;
  /** Kafka's ResourceType: 2 TOPIC, 3 GROUP, 4 CLUSTER, 5 TRANSACTIONAL_ID. */
  resourceType: number;
  resourceName: string;
  /** Kafka's AclOperation: 2 ALL, 3 READ, 4 WRITE, 5 CREATE, 8 DESCRIBE, 12 IDEMPOTENT_WRITE, 15 TWO_PHASE_COMMIT. */
  operation: number;
  /** 3 ALLOW (default), 2 DENY. */
  permission?: number;
  /** 3 LITERAL (default), 4 PREFIXED. */
  patternType?: number;
}

export async function createAcls(info: KafkaInfo, grants: AclGrant[]): Promise<void> {
  const res = await withAdmin(info, (c) =>
    c.send(
      CreateAclsRequest,
      CreateAclsRequest.create({
        creations: grants.map((g) => ({
          resourceType: g.resourceType,
          resourceName: g.resourceName,
          resourcePatternType: g.patternType ?? 3,
          principal: g.principal,
          host: '*',
          operation: g.operation,
          permissionType: g.permission ?? 3,
        })),
      }),
      3,
      CreateAclsResponse,
    ),
  );
  for (const r of res.results) {
    if (r.errorCode !== 0) throw new Error(`CreateAcls: error ${r.errorCode} ${r.errorMessage ?? ''}`);
  }
}

export interface ConsoleRecord {
  /** `CreateTime:<ms>` or `LogAppendTime:<ms>`, as Kafka's DefaultMessageFormatter prints it. */
  timestamp: string;
  partition: number;
  offset: bigint;
  /** `name:value,…` (a null value prints `null`), or `NO_HEADERS`. */
  headers: string;
  /** A null key or value prints as `null`. */
  key: string;
  value: string;
}

/**
 * Reads `topic` from the beginning with Kafka's own Java consumer
 * (org.apache.kafka.tools.consumer.ConsoleConsumer, kafka-tools 4.4.0) at the
 * given isolation level, until `expected` records or `idleMs` without one.
 */
export async function readWithKafkaConsumer(
  info: KafkaInfo,
  topic: string,
  options: { isolationLevel: 'read_committed' | 'read_uncommitted'; expected?: number; idleMs?: number },
): Promise<ConsoleRecord[]> {
  const args = [
    '-Xmx128m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    // Log4j 2's default configuration logs ERROR to stdout, among the records: the idle timeout that ends the read is one.
    '-Dlog4j2.level=OFF',
    '-cp',
    info.javaClasspath,
    'org.apache.kafka.tools.consumer.ConsoleConsumer',
    '--bootstrap-server',
    info.bootstrap,
    '--topic',
    topic,
    '--from-beginning',
    '--isolation-level',
    options.isolationLevel,
    '--timeout-ms',
    String(options.idleMs ?? 4_000),
    '--formatter-property',
    'print.timestamp=true',
    '--formatter-property',
    'print.headers=true',
    '--formatter-property',
    'print.partition=true',
    '--formatter-property',
    'print.offset=true',
    '--formatter-property',
    'print.key=true',
    '--formatter-property',
    'key.separator=\t',
  ];
  if (options.expected !== undefined) args.push('--max-messages', String(options.expected));
  const { status, stdout, stderr } = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code, stdout, stderr });
    });
  });
  const records: ConsoleRecord[] = [];
  for (const line of stdout.split('\n')) {
    if (line.length === 0) continue;
    // CreateTime:1700000000123\tPartition:0\tOffset:3\ta:1,b:null\tkey\tvalue
    const m = /^((?:CreateTime|LogAppendTime|NoTimestampType):-?\d+)\tPartition:(\d+)\tOffset:(\d+)\t([^\t]*)\t([^\t]*)\t(.*)$/.exec(line);
    if (m === null) throw new Error(`ConsoleConsumer printed an unexpected line: ${JSON.stringify(line)} (stderr: ${stderr.trim()})`);
    records.push({ timestamp: m[1]!, partition: Number(m[2]), offset: BigInt(m[3]!), headers: m[4]!, key: m[5]!, value: m[6]! });
  }
  if (status !== 0 && !/Processed a total of/.test(stderr)) {
    throw new Error(`Kafka's ConsoleConsumer failed (exit ${status}): ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
  }
  return records;
}

/**
 * Closes what a test made, newest first, whatever happened: register with
 * `track(x, () => x.close())` and call `closeAll()` in afterEach.
 */
export class Cleanups {
  private readonly fns: Array<() => Promise<unknown>> = [];
  track<T>(value: T, close: (value: T) => Promise<unknown>): T {
    this.fns.push(() => close(value));
    return value;
  }
  async closeAll(): Promise<void> {
    for (const fn of this.fns.splice(0).reverse()) await fn().catch(() => undefined);
  }
}
