/**
 * Real kipgen brokers (coordinator/, startBroker) on 127.0.0.1 for the
 * client's end-to-end tests, plus a read_committed reader for checking what a
 * transaction made visible.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type Broker } from '../../../coordinator/broker.js';
import type { BrokerConfigInput } from '../../../coordinator/config.js';
import { ClusterClient } from '../../../client/cluster.js';
import { FetchRequest, FetchResponse } from '../../../generated/index.js';
import { decodeRecordBatches, readControlRecord } from '../../../runtime/record-batch.js';

export interface TestCluster {
  brokers: Broker[];
  bootstrap: string;
  dataDir: string;
  close(): Promise<void>;
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

export async function startCluster(
  options: { nodes?: number; config?: BrokerConfigInput; shareCoordinator?: null } = {},
): Promise<TestCluster> {
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
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { values, stable } = await readOnce(bootstrap, topic);
    if (stable || Date.now() > deadline) return values;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function readOnce(bootstrap: string, topic: string): Promise<{ values: string[]; stable: boolean }> {
  const client = new ClusterClient({ bootstrapServers: bootstrap, logger: null });
  try {
    const meta = await client.topic(topic);
    const out: string[] = [];
    let stable = true;
    for (const p of meta.partitions) {
      const { response } = await client.send(p.leader, FetchRequest, FetchResponse, () =>
        FetchRequest.create({
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 24,
          isolationLevel: 1,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic,
              topicId: meta.topicId,
              partitions: [
                {
                  partition: p.partition,
                  currentLeaderEpoch: -1,
                  fetchOffset: 0n,
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 1 << 24,
                  replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
                  highWatermark: -1n,
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        }),
      );
      const part = response.responses[0]?.partitions[0];
      if (!part || part.errorCode !== 0) throw new Error(`fetch ${topic}-${p.partition}: error ${part?.errorCode}`);
      if (part.lastStableOffset !== part.highWatermark) stable = false;
      const aborted = [...(part.abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
      const abortedPids = new Set<bigint>();
      for (const batch of part.records ? decodeRecordBatches(part.records).batches : []) {
        while (aborted.length > 0 && aborted[0]!.firstOffset <= batch.lastOffset)
          abortedPids.add(aborted.shift()!.producerId);
        if (batch.isControl) {
          const marker = readControlRecord(batch.records[0]!);
          if (marker.type === 'ABORT') abortedPids.delete(batch.producerId);
          continue;
        }
        if (batch.isTransactional && abortedPids.has(batch.producerId)) continue;
        if (batch.baseOffset >= part.lastStableOffset) continue;
        for (const r of batch.records) out.push(r.value ? Buffer.from(r.value).toString() : '');
      }
    }
    return { values: out, stable };
  } finally {
    await client.close();
  }
}
