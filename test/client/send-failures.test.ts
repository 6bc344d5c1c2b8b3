import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { KafkaProducer } from '../../client/index.js';

// A record of an open transaction that never reaches the broker must stop the
// transaction from committing without it (else share acks bound to the same
// transaction would commit with no output), and an unobserved failed send must
// not crash the process.
describe('failed sends inside a transaction', () => {
  let broker: Broker;
  let dataDir: string;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kipgen-send-failures-'));
    broker = await startBroker({ port: 0, dataDir, topics: [{ name: 'out', partitions: 2 }] }, { shareCoordinator: null });
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Auto-creation off: else the broker would create the missing topic of the third case.
  function producer(id: string): KafkaProducer {
    return new KafkaProducer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      transactionalId: id,
      maxRequestSize: 4096,
      maxBlockMs: 500,
      allowAutoCreateTopics: false,
    });
  }

  for (const [name, record] of [
    ['a record larger than max.request.size', { topic: 'out', value: new Uint8Array(8192) }],
    ['a partition the topic does not have', { topic: 'out', partition: 7, value: 'x' }],
    ['a topic that does not exist (metadata times out)', { topic: 'no-such-topic', value: 'x' }],
  ] as const) {
    it(`${name}: commitTransaction fails and the transaction must be aborted`, async () => {
      const p = producer(`tx-${name.length}`);
      try {
        await p.initTransactions();
        p.beginTransaction();
        await p.send({ topic: 'out', partition: 0, value: 'kept' });
        void p.send(record as never); // not awaited, as in a fire-and-forget loop
        await new Promise((resolve) => setTimeout(resolve, 700));
        await expect(p.commitTransaction()).rejects.toThrow();
        await p.abortTransaction();
        p.beginTransaction();
        await p.send({ topic: 'out', partition: 1, value: 'next' });
        await p.commitTransaction();
      } finally {
        await p.close();
      }
      expect(unhandled).toEqual([]);
    });
  }
});
