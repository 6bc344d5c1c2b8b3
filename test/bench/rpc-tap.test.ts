/**
 * bench/rpc-tap.ts, the timing tap of `bench:txn --timeline`: bytes pass
 * through untouched (the client gets its answers) and every request/response
 * pair comes out as one JSON line, named by API, with a start before its end.
 */
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { freePorts, ROOT, spawnManaged, type ManagedProcess } from '../../chaos/harness.js';
import { TestClient, batch, produce, startTestBroker, tempDir } from '../coordinator/support/broker-harness.js';

let broker: Broker | null = null;
let tap: ManagedProcess | null = null;
let client: TestClient | null = null;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await tap?.stop(2_000);
  await broker?.close();
  client = tap = broker = null;
});

describe('rpc-tap', () => {
  it('forwards requests and answers, and times each pair at the socket', async () => {
    broker = await startTestBroker({ dataDir: tempDir('kipgen-tap-'), topics: [{ name: 'events', partitions: 1 }] });
    const [tapPort] = await freePorts(1);
    tap = spawnManaged('rpc-tap', ['--import', 'tsx', path.join(ROOT, 'bench/rpc-tap.ts'), String(tapPort), String(broker.port)]);
    await tap.waitFor((e) => e.event === 'listening', 30_000, 'listening');
    client = await TestClient.connect(tapPort!);
    expect((await produce(client, 'events', 0, batch({ values: ['a'] }))).errorCode).toBe(0);
    expect((await produce(client, 'events', 0, batch({ values: ['b'] }))).errorCode).toBe(0);
    const timed = () =>
      tap!.lines.filter((l) => l.startsWith('{"rpc"')).map((l) => JSON.parse(l) as { rpc: string; v: number; client: string; startMs: number; endMs: number });
    const deadline = Date.now() + 5_000;
    while (timed().filter((r) => r.rpc === 'Produce').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const produces = timed().filter((r) => r.rpc === 'Produce');
    expect(produces).toHaveLength(2);
    for (const r of produces) {
      expect(r).toMatchObject({ v: 9, client: 'kipgen-test' });
      expect(r.endMs).toBeGreaterThan(r.startMs);
    }
    expect(produces[1]!.startMs).toBeGreaterThanOrEqual(produces[0]!.endMs);
  });

  it('refuses to start without both ports, saying how to call it', async () => {
    tap = spawnManaged('rpc-tap', ['--import', 'tsx', path.join(ROOT, 'bench/rpc-tap.ts'), '9']);
    expect((await tap.exited).code).toBe(2);
    expect(tap.stderr()).toContain('usage: rpc-tap.ts <listen port> <broker port>');
  });
});
