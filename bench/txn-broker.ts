/**
 * The broker process bench:txn runs against: one node on 127.0.0.1 with the
 * input and output topics, in a fresh `kipgen-bench-txn-*` directory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePorts, ROOT, spawnManaged, type ManagedProcess } from '../chaos/harness.js';

export interface BenchBroker {
  proc: ManagedProcess;
  /** What clients bootstrap from: the broker, or the port it advertises (`advertisedPort`). */
  bootstrap: string;
  /** The port the broker listens on. */
  port: number;
  dir: string;
}

export interface BenchBrokerOptions {
  /** Advertise this port in Metadata and FindCoordinator instead of the listener's (a tap in front of the broker). */
  advertisedPort?: number;
  /** More broker config fields (coordinator/config.ts), e.g. the flush settings or traceLogWrites. */
  config?: Record<string, unknown>;
}

export async function startBenchBroker(transactionVersion: number, options: BenchBrokerOptions = {}): Promise<BenchBroker> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-bench-txn-'));
  const [port] = await freePorts(1);
  const file = path.join(dir, 'broker.json');
  const advertised = options.advertisedPort ?? port!;
  fs.writeFileSync(
    file,
    JSON.stringify({
      nodeId: 0,
      host: '127.0.0.1',
      port,
      // The node's endpoint as clients are told it; the listener stays on `port`.
      cluster: [{ nodeId: 0, host: '127.0.0.1', port: advertised }],
      dataDir: path.join(dir, 'data'),
      topics: [
        { name: 'bench-in', partitions: 1 },
        { name: 'bench-out', partitions: 1 },
      ],
      transactionAbortCheckIntervalMs: 500,
      transactionVersion,
      shareGroup: {
        recordLockDurationMs: 30_000,
        maxRecordLocks: 5_000,
        heartbeatIntervalMs: 1_000,
        sessionTimeoutMs: 30_000,
        isolationLevel: 'read_committed',
        autoOffsetReset: 'earliest',
      },
      ...options.config,
    }),
  );
  const proc = spawnManaged('broker', ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts'), 'broker', '--config', file]);
  const deadline = Date.now() + 30_000;
  while (!proc.lines.some((l) => l.includes('"listening"'))) {
    if (!proc.running || Date.now() > deadline) throw new Error(`broker did not start:\n${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { proc, bootstrap: `127.0.0.1:${advertised}`, port: port!, dir };
}
