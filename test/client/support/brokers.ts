/**
 * Real kipgen brokers (coordinator/, startBroker) on 127.0.0.1 for the
 * client's end-to-end tests, plus a read_committed reader for checking what a
 * transaction made visible (the examples' reader, examples/support.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type Broker } from '../../../coordinator/broker.js';
import type { BrokerConfigInput } from '../../../coordinator/config.js';
import { readTopic } from '../../../examples/support.js';
import { freePorts } from '../../../chaos/harness.js';

export interface TestCluster {
  brokers: Broker[];
  bootstrap: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startCluster(options: { nodes?: number; config?: BrokerConfigInput; shareCoordinator?: null } = {}): Promise<TestCluster> {
  const count = options.nodes ?? 1;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-client-e2e-'));
  const ports = count === 1 ? [0] : await freePorts(count);
  const cluster = ports.map((port, i) => ({ nodeId: i, host: '127.0.0.1', port }));
  const logLines: string[] = [];
  const brokers = await Promise.all(
    cluster.map((node) =>
      startBroker(
        {
          transactionAbortCheckIntervalMs: 100,
          markerRetryBackoffMs: 20,
          ...options.config,
          // KIP-1289 flows read committed output from the start (not Kafka's group-config defaults).
          shareGroup: { isolationLevel: 'read_committed', autoOffsetReset: 'earliest', ...options.config?.shareGroup },
          nodeId: node.nodeId,
          host: '127.0.0.1',
          port: node.port,
          cluster: count === 1 ? [] : cluster,
          dataDir: path.join(dataDir, `node-${node.nodeId}`),
        },
        {
          log: (line) => logLines.push(line),
          ...(options.shareCoordinator === null ? { shareCoordinator: null } : {}),
        },
      ),
    ),
  );
  return {
    brokers,
    bootstrap: brokers.map((b) => `127.0.0.1:${b.port}`).join(','),
    dataDir,
    async close() {
      await Promise.all(brokers.map((b) => b.close()));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Values of the committed records of `topic` (all partitions), as a
 * read_committed consumer sees them once no transaction is open on the topic
 * (last stable offset = high watermark; waits up to `waitMs` for markers).
 */
export async function readCommitted(bootstrap: string, topic: string, waitMs = 3_000): Promise<string[]> {
  return (await readTopic(bootstrap, topic, 'read_committed', waitMs)).map((r) => r.value);
}
