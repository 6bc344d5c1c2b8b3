/**
 * Test harness for the broker: in-process brokers (fast), brokers as child
 * processes (for kill -9), a thin typed request helper over the shared
 * KafkaConnection, and record-batch helpers. 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import * as fs from 'node:fs';
import { coordinatorNode, freePorts } from '../../../chaos/harness.js';
export { freePorts };
import * as os from 'node:os';
import * as path from 'node:path';
import { apiByKey } from '../../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../../generated/FetchRequest.js';
import { KafkaConnection } from '../../../connection/connection.js';
import { decodeRecordBatches, encodeRecordBatch, type ApiMessageCodec } from '../../../runtime/index.js';
import { startBroker, type Broker } from '../../../coordinator/broker.js';
import type { BrokerConfigInput } from '../../../coordinator/config.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');

const createdDirs: string[] = [];
// Registered while the importing test file is collected, so it is that file's afterAll.
afterAll(() => {
  for (const dir of createdDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory under the OS temp dir, removed after the test file (afterAll). */
export function tempDir(prefix = 'kipgen-coord-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

/** Short timeouts so the whole set runs quickly. */
export const FAST: BrokerConfigInput = {
  transactionAbortCheckIntervalMs: 200,
  markerRetryBackoffMs: 50,
  requestTimeoutMs: 3_000,
  // The share tests consume what they produced before subscribing, and transactional output only once
  // committed: not Kafka's defaults of the share group configs (latest, read_uncommitted), so set here.
  shareGroup: { isolationLevel: 'read_committed', autoOffsetReset: 'earliest' },
};

/** FAST under `config`, share-group settings merged key by key. */
function withFast(config: BrokerConfigInput): BrokerConfigInput {
  return { ...FAST, ...config, shareGroup: { ...FAST.shareGroup, ...config.shareGroup } };
}

export async function startTestBroker(config: BrokerConfigInput, lines?: string[]): Promise<Broker> {
  return startBroker({ host: '127.0.0.1', port: 0, ...withFast(config) }, { shareCoordinator: null, log: (line) => lines?.push(line) });
}

/**
 * Node 0 of a two-node cluster whose node 1 never starts, with topic `t` (partition 1 led by
 * the missing node): transaction markers for that partition cannot be delivered, so a
 * transaction that wrote there stays PREPARE_*; `run` gets the broker and a client of it.
 */
export async function withUndeliverableMarkers(run: (broker: Broker, client: TestClient) => Promise<void>): Promise<void> {
  const [port0, port1] = await freePorts(2);
  const broker = await startTestBroker({
    nodeId: 0,
    port: port0,
    cluster: [
      { nodeId: 0, host: '127.0.0.1', port: port0! },
      { nodeId: 1, host: '127.0.0.1', port: port1! },
    ],
    dataDir: tempDir(),
    topics: [{ name: 't', partitions: 2 }],
    transactionStatePartitions: 1,
  });
  const client = await TestClient.connect(broker.port);
  try {
    await run(broker, client);
  } finally {
    await client.close();
    await broker.close();
  }
}

export interface BrokerProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** SIGKILL, then wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful), then wait for the exit. */
  stop(): Promise<void>;
  /** Resolves with the exit signal/code once the process is gone (e.g. after a KIPGEN_FAULT). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `coordinator/cli.ts broker` with a JSON config file, as a real deployment would. */
export async function spawnBroker(config: BrokerConfigInput, env: Record<string, string> = {}): Promise<BrokerProcess> {
  const dir = config.dataDir!;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'broker-config.json');
  fs.writeFileSync(file, JSON.stringify({ host: '127.0.0.1', ...withFast(config) }));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts'), 'broker', '--config', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`broker did not start within 15 s:\n${stderr}`)), 15_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`broker exited (${code ?? signal}) before listening:\n${stderr}`));
    });
  });
  return {
    port,
    child,
    stderr: () => stderr,
    exited,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A static cluster of broker processes with one client connected to each node (index = node id). */
export interface TestCluster {
  readonly configs: readonly BrokerConfigInput[];
  /** The node processes; restart() replaces an entry in place. */
  readonly nodes: BrokerProcess[];
  /** A client per node; restart() replaces an entry in place. */
  readonly clients: TestClient[];
  /** Closes the node's client, then kills the node with -9. */
  kill9(node: number): Promise<void>;
  /** Spawns a node again on its data directory and connects a new client to it. */
  restart(node: number): Promise<void>;
  /** Closes every client and kills every node. */
  close(): Promise<void>;
}

/**
 * Spawns a `count`-node static cluster on free ports: node i gets `config`,
 * the cluster list and its own data directory (`<dirPrefix><i>-…`).
 */
export async function startCluster(count: number, dirPrefix: string, config: BrokerConfigInput): Promise<TestCluster> {
  const ports = await freePorts(count);
  const cluster = ports.map((port, nodeId) => ({ nodeId, host: '127.0.0.1', port }));
  const configs = cluster.map((n) => ({ ...config, nodeId: n.nodeId, port: n.port, cluster, dataDir: tempDir(`${dirPrefix}${n.nodeId}-`) }));
  const nodes = await Promise.all(configs.map((c) => spawnBroker(c)));
  const clients = await Promise.all(nodes.map((n) => TestClient.connect(n.port)));
  return {
    configs,
    nodes,
    clients,
    async kill9(node) {
      await clients[node]!.close().catch(() => undefined);
      await nodes[node]!.kill9();
    },
    async restart(node) {
      nodes[node] = await spawnBroker(configs[node]!);
      clients[node] = await TestClient.connect(nodes[node].port);
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await Promise.all(nodes.map((n) => n.kill9()));
    },
  };
}

/** The first `<prefix>-<i>` whose coordinator partition (of `partitions`) is led by `node` of a `nodes`-node cluster. */
export function keyLedBy(prefix: string, node: number, partitions: number, nodes: number): string {
  for (let i = 0; ; i++) if (coordinatorNode(`${prefix}-${i}`, partitions, nodes) === node) return `${prefix}-${i}`;
}

/** A connection with one-line typed calls: `await c.call(22, {...}, 4)`. */
export class TestClient {
  private constructor(readonly connection: KafkaConnection) {}

  static async connect(port: number): Promise<TestClient> {
    return new TestClient(await KafkaConnection.connect({ host: '127.0.0.1', port, clientId: 'kipgen-test', requestTimeoutMs: 10_000 }));
  }

  /** Sends API `apiKey` at `version` with the given fields (defaults filled by the codec's create). */
  call(apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> {
    const api = apiByKey(apiKey)!;
    const codec = api.request as ApiMessageCodec<any>;
    return this.connection.send(codec, codec.create(fields), version, api.response as ApiMessageCodec<any>);
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

export const ENC = new TextEncoder();
export const DEC = new TextDecoder();

export interface BatchSpec {
  values: string[];
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
}

export function batch(spec: BatchSpec): Uint8Array {
  const now = BigInt(Date.now());
  return encodeRecordBatch({
    baseTimestamp: now,
    producerId: spec.producerId ?? -1n,
    producerEpoch: spec.producerEpoch ?? -1,
    baseSequence: spec.baseSequence ?? -1,
    isTransactional: spec.transactional ?? false,
    records: spec.values.map((v) => ({ value: ENC.encode(v), timestamp: now })),
  });
}

/** Produce v9 to one partition; returns the partition response. */
export async function produce(
  c: TestClient,
  topic: string,
  partition: number,
  records: Uint8Array,
  transactionalId: string | null = null,
  acks = -1,
): Promise<any> {
  const response = await c.call(0, { transactionalId, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] }, 9);
  return response.responses[0].partitionResponses[0];
}

export interface Fetched {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  /** Values of data records (control batches left out), with their offsets and producer ids. */
  records: { offset: bigint; value: string; producerId: bigint; transactional: boolean }[];
}

/**
 * Fetch v11 from offset 0, then apply read_committed filtering the way a
 * consumer does with AbortedTransactions (so tests see what a client sees).
 */
export async function fetchAll(c: TestClient, topic: string, partition: number, isolation: 'read_committed' | 'read_uncommitted'): Promise<Fetched> {
  const response = await c.call(
    1,
    {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: isolation === 'read_committed' ? 1 : 0,
      topics: [createFetchTopic({ topic, partitions: [createFetchPartition({ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })] })],
    },
    11,
  );
  const p = response.responses[0].partitions[0];
  const batches = p.records ? decodeRecordBatches(p.records).batches : [];
  const abortedRanges: { pid: bigint; first: bigint }[] = (p.abortedTransactions ?? []).map((a: any) => ({ pid: a.producerId, first: a.firstOffset }));
  const records: Fetched['records'] = [];
  // As Kafka's consumer does: a producer enters the aborted set when one of its
  // aborted transactions starts at or before the batch, and leaves it at its ABORT marker.
  const skipping = new Set<bigint>();
  abortedRanges.sort((a, b) => (a.first < b.first ? -1 : 1));
  for (const b of batches) {
    if (isolation === 'read_committed') {
      while (abortedRanges.length > 0 && abortedRanges[0]!.first <= b.lastOffset) skipping.add(abortedRanges.shift()!.pid);
      if (b.isControl) {
        skipping.delete(b.producerId);
        continue;
      }
      if (b.isTransactional && skipping.has(b.producerId)) continue;
    }
    if (b.isControl) continue;
    for (const r of b.records) records.push({ offset: r.offset, value: DEC.decode(r.value!), producerId: b.producerId, transactional: b.isTransactional });
  }
  return { errorCode: p.errorCode, highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, abortedTransactions: p.abortedTransactions, records };
}

/** Transactional-producer steps, over the wire. */
export async function initProducer(
  c: TestClient,
  transactionalId: string,
  timeoutMs = 10_000,
): Promise<{ errorCode: number; producerId: bigint; producerEpoch: number }> {
  return c.call(22, { transactionalId, transactionTimeoutMs: timeoutMs }, 4);
}

export async function addPartitions(
  c: TestClient,
  transactionalId: string,
  producerId: bigint,
  producerEpoch: number,
  topic: string,
  partitions: number[],
): Promise<number[]> {
  const response = await c.call(
    24,
    {
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: producerId,
      v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: [{ name: topic, partitions }],
    },
    3,
  );
  return response.resultsByTopicV3AndBelow[0].resultsByPartition.map((r: any) => r.partitionErrorCode);
}

export async function endTxn(c: TestClient, transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean): Promise<number> {
  return (await c.call(26, { transactionalId, producerId, producerEpoch, committed }, 3)).errorCode;
}

/** Polls `check` until it returns true (or fails after `ms`). */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 8_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
