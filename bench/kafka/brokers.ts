/**
 * The two brokers bench:kafka compares: Apache Kafka 4.4 (one KRaft node, with the
 * JVM flags Kafka's start script uses) and ours (compiled JavaScript bundled into
 * one file, as the @kipgen/broker package's kipgen-broker bin runs it: see
 * packages/build.mjs, bundleBrokerCli), each timed from process start to serving, and
 * their resident memory read from /proc.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePorts, ROOT, spawnManaged, type ManagedProcess } from '../../chaos/harness.js';
import { startKafka, type KafkaCluster } from '../../test/kafka/support/kafka.js';
import { bundleBrokerCli } from '../../packages/build.mjs';

export interface BrokerUnderTest {
  readonly name: 'Kafka 4.4' | 'kipgen';
  readonly bootstrap: string;
  /** Process start to serving, in milliseconds. */
  readonly startMs: number;
  /** Resident memory now, in MiB (VmRSS of the broker process). */
  rssMiB(): number;
  stop(): Promise<void>;
}

/** VmRSS of `pid` in MiB, or NaN when it cannot be read. */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kib === undefined ? Number.NaN : Number(kib) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Compiles the project's client and broker with tsc into a folder under
 * node_modules/.cache (so that their imports resolve as installed), for both the
 * broker process and the in-process client; returns it. The caller removes it.
 */
export function compileProject(): string {
  const cache = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const out = fs.mkdtempSync(path.join(cache, 'kipgen-bench-kafka-js-'));
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', out, '--declaration', 'false'],
    { stdio: 'inherit' },
  );
  return out;
}

export async function startKipgen(compiled: string): Promise<BrokerUnderTest> {
  const cli = path.join(compiled, 'kipgen-broker.js');
  if (!fs.existsSync(cli)) bundleBrokerCli(compiled, cli);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-bench-kafka-'));
  const [port] = await freePorts(1);
  const file = path.join(dir, 'broker.json');
  fs.writeFileSync(file, JSON.stringify({ nodeId: 0, host: '127.0.0.1', port, dataDir: path.join(dir, 'data') }));
  const began = performance.now();
  const proc: ManagedProcess = spawnManaged('kipgen-broker', [cli, 'broker', '--config', file]);
  const deadline = Date.now() + 30_000;
  while (!proc.lines.some((l) => l.includes('"listening"'))) {
    if (!proc.running || Date.now() > deadline) throw new Error(`our broker did not start:\n${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const startMs = performance.now() - began;
  return {
    name: 'kipgen',
    bootstrap: `127.0.0.1:${port}`,
    startMs,
    rssMiB: () => rssMiB(proc.pid),
    async stop() {
      await proc.stop(5_000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startApacheKafka(): Promise<BrokerUnderTest> {
  // No authorizer: the bench measures the data path, as a default Kafka install runs.
  const kafka: KafkaCluster = await startKafka({ jvm: 'server', brokerProperties: { 'authorizer.class.name': '', 'num.partitions': 3 } });
  return {
    name: 'Kafka 4.4',
    bootstrap: kafka.bootstrap,
    startMs: kafka.startMs,
    rssMiB: () => rssMiB(kafka.jvmPid()),
    stop: () => kafka.stop(),
  };
}
