/**
 * What the interoperability tests read off the broker: `logRequests` lines,
 * per-version request counts in metrics(), and the summary logged on stop.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBroker } from '../../coordinator/broker.js';
import { ApiVersionsRequest, MetadataRequest, RequestHeader } from '../../generated/index.js';
import { encodeFrame } from '../../runtime/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { apisUsed, parseRequestLog } from '../interop/support/broker-process.js';

describe('request log and per-version metrics', () => {
  it('logs each request with API, version, correlation and client id; counts versions; summarises on stop', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-reqlog-'));
    const lines: string[] = [];
    const broker = await startBroker({ port: 0, dataDir, logRequests: true }, { shareCoordinator: null, log: (l) => lines.push(l) });
    try {
      const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'log "quoted" client' });
      await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 0);
      await c.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 1);
      await c.send(MetadataRequest, MetadataRequest.create({ topics: null }), 12);
      await c.close();
      // ApiVersions in a version the broker does not serve: answered in v0, logged with a note.
      const raw = Buffer.from(
        encodeFrame(
          RequestHeader,
          RequestHeader.create({ requestApiKey: 18, requestApiVersion: 99, correlationId: 5, clientId: 'future' }),
          2,
          ApiVersionsRequest,
          ApiVersionsRequest.create(),
          3,
        ),
      );
      await new Promise<void>((resolve) => {
        const socket = net.connect(broker.port, '127.0.0.1', () => socket.write(raw));
        socket.once('data', () => (socket.destroy(), resolve()));
      });
      const c2 = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: null });
      await c2.send(MetadataRequest, MetadataRequest.create({ topics: [] }), 1);
      await c2.close();
      expect(broker.metrics().requestVersions).toEqual({ ApiVersions: { 0: 1, 99: 1 }, Metadata: { 1: 2, 12: 1 } });
      const logged = parseRequestLog(lines.map((l) => `${l}\n`).join(''));
      expect(logged.map((r) => [r.api, r.version, r.correlationId, r.clientId])).toEqual([
        ['ApiVersions', 0, 0, 'log "quoted" client'],
        ['Metadata', 1, 1, 'log "quoted" client'],
        ['Metadata', 12, 2, 'log "quoted" client'],
        ['ApiVersions', 99, 5, 'future'],
        ['Metadata', 1, 0, null],
      ]);
      expect(lines.some((l) => l.endsWith('ApiVersions v99 correlation 5 client "future" (unsupported: answered with v0)'))).toBe(true);
      expect(apisUsed(logged, (id) => id !== null)).toEqual({ ApiVersions: [0, 99], Metadata: [1, 12] });
    } finally {
      await broker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(lines[lines.length - 1]).toMatch(/stopped; requests served: ApiVersions v0×1 v99×1, Metadata v1×2 v12×1$/);
  });
});
