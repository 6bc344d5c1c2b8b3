import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startBroker } from '../../coordinator/broker.js';
import { KafkaProducer } from '../../client/index.js';

// startBroker as a library is an embedded Kafka for tests: throwaway and quiet
// by default, with no mkdtemp/rm boilerplate and no `log: () => {}`.
describe('startBroker without dataDir or log', () => {
  afterEach(() => vi.restoreAllMocks());

  it('uses a fresh temporary folder that close() removes, writes nothing into the working directory, and logs nothing', async () => {
    const before = new Set(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('kipgen-broker-')));
    const cwdBefore = fs.readdirSync(process.cwd()).sort();
    const stderr = vi.spyOn(process.stderr, 'write');
    const broker = await startBroker({ port: 0, topics: [{ name: 'orders', partitions: 1 }] });
    const made = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('kipgen-broker-') && !before.has(n));
    expect(made).toHaveLength(1);
    const dataDir = path.join(os.tmpdir(), made[0]!);
    expect(broker.config.dataDir).toBe(dataDir);

    const producer = new KafkaProducer({ bootstrapServers: `127.0.0.1:${broker.port}`, logger: null });
    await producer.send({ topic: 'orders', value: 'kept until close' });
    await producer.close();
    expect(fs.readdirSync(dataDir)).toContain('orders-0');

    await broker.close();
    expect(fs.existsSync(dataDir)).toBe(false);
    expect(fs.readdirSync(process.cwd()).sort()).toEqual(cwdBefore);
    expect(stderr.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('kipgen node'))).toEqual([]);
  });

  it('two throwaway brokers get two folders', async () => {
    const [a, b] = await Promise.all([startBroker({ port: 0 }), startBroker({ port: 0 })]);
    expect(a.config.dataDir).not.toBe(b.config.dataDir);
    await Promise.all([a.close(), b.close()]);
    expect([fs.existsSync(a.config.dataDir), fs.existsSync(b.config.dataDir)]).toEqual([false, false]);
  });
});

describe('startBroker with a dataDir', () => {
  it('keeps it, and says "recovered" only when the folder held records', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-embedded-kept-'));
    try {
      const first: string[] = [];
      const broker = await startBroker({ port: 0, dataDir, topics: [{ name: 'orders', partitions: 1 }] }, { log: (l) => first.push(l) });
      expect(first.filter((l) => l.includes('recovered'))).toEqual([]);
      const producer = new KafkaProducer({ bootstrapServers: `127.0.0.1:${broker.port}`, logger: null });
      await producer.send({ topic: 'orders', value: 'v' });
      await producer.close();
      await broker.close();
      expect(fs.existsSync(path.join(dataDir, 'orders-0'))).toBe(true);

      const second: string[] = [];
      const again = await startBroker({ port: 0, dataDir }, { log: (l) => second.push(l) });
      await again.close();
      expect(second.filter((l) => l.includes('recovered'))).toEqual([
        expect.stringMatching(/^\[kipgen node 0\] recovered \d+ partition logs \(\d+ with records\) in \d+ ms from /),
      ]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
