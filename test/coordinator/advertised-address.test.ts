/**
 * A broker behind a proxy or NAT binds one port and is reached at another:
 * the cluster entry is what it advertises (Kafka's advertised.listeners), and
 * Metadata and FindCoordinator must name that address, never the bound port,
 * or clients would go around whatever sits in front (the chaos suite's fault
 * proxies did exactly that before this was fixed).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../coordinator/broker.js';
import { KafkaConnection } from '../../connection/connection.js';
import { FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { freePorts } from './support/broker-harness.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('advertised address', () => {
  it('Metadata and FindCoordinator name the cluster entry, not the bound port', async () => {
    const [bound, advertised] = await freePorts(2);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-advertised-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const broker = await startBroker(
      { nodeId: 0, port: bound!, cluster: [{ nodeId: 0, host: '127.0.0.1', port: advertised! }], dataDir, topics: [{ name: 't', partitions: 1 }] },
      { shareCoordinator: null, log: () => {} },
    );
    cleanups.push(() => broker.close());
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: bound!, clientId: 'advertised-test' });
    cleanups.push(() => c.close());

    const metadata = await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12, MetadataResponse);
    expect(metadata.brokers.map((b) => [b.nodeId, b.host, b.port])).toEqual([[0, '127.0.0.1', advertised]]);
    const coordinator = await c.send(
      FindCoordinatorRequest,
      FindCoordinatorRequest.create({ keyType: 1, coordinatorKeys: ['tx'] }),
      4,
      FindCoordinatorResponse,
    );
    expect(coordinator.coordinators.map((k) => [k.nodeId, k.port])).toEqual([[0, advertised]]);
  });
});
