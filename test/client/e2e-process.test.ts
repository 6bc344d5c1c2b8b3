/**
 * Against a broker in its own process: a transaction prepared at a checkpoint
 * survives kill -9 of the broker, and is committed after both restart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, ShareAcknowledgements, type ShareConsumerRecord } from '../../client/index.js';
import { BrokerProcess } from './support/broker-process.js';
import { readCommitted } from './support/brokers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

it('a prepared transaction (sink output + share acks) survives kill -9 of the broker and commits from its checkpoint', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-client-proc-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const broker = await BrokerProcess.start(dir, {
    topics: [
      { name: 'in', partitions: 2 },
      { name: 'out', partitions: 1 },
    ],
    shareGroup: { recordLockDurationMs: 3_000, heartbeatIntervalMs: 100 },
    // The sink prepares its transaction: two-phase commit (KIP-939).
    transactionTwoPhaseCommitEnable: true,
  });
  cleanups.push(() => broker.stop());
  const quiet = { logger: null, metricsRegistry: null } as const;

  const seed = new KafkaProducer({ bootstrapServers: broker.bootstrap, lingerMs: 1, ...quiet });
  await Promise.all([0, 1, 2, 3].map((i) => seed.send({ topic: 'in', key: `k${i}`, value: `v${i}` })));
  await seed.close();

  const consumer = new KafkaShareConsumer({
    bootstrapServers: broker.bootstrap,
    groupId: 'job',
    acknowledgementMode: 'transactional',
    fetchMaxWaitMs: 50,
    logger: null,
  });
  consumer.subscribe(['in']);
  const records: ShareConsumerRecord[] = [];
  const until = Date.now() + 5_000;
  while (records.length < 4 && Date.now() < until) records.push(...(await consumer.poll(300)));
  expect(records).toHaveLength(4);

  const sink = new KafkaProducer({
    bootstrapServers: broker.bootstrap,
    transactionalId: 'job-sink',
    transactionTwoPhaseCommitEnable: true,
    lingerMs: 1,
    maxBlockMs: 3_000,
    ...quiet,
  });
  await sink.initTransactions();
  sink.beginTransaction();
  for (const r of records) void sink.send({ topic: 'out', value: `out-${Buffer.from(r.value!).toString()}` });
  await sink.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
  const checkpoint = await sink.prepareTransaction();

  // Crash everything: the broker (kill -9) and the clients (dropped without ending anything).
  await broker.kill();
  await Promise.all([sink.close(0), consumer.close(0)]);

  await broker.launch();
  // notifyCheckpointComplete after the restart.
  expect(await KafkaProducer.completeTransaction({ bootstrapServers: broker.bootstrap, logger: null, maxBlockMs: 10_000 }, checkpoint, 'commit')).toBe(
    'committed',
  );
  expect((await readCommitted(broker.bootstrap, 'out')).sort()).toEqual(['out-v0', 'out-v1', 'out-v2', 'out-v3']);

  // The acks committed too: a new member of the group gets nothing back, even after the lock time.
  const after = new KafkaShareConsumer({
    bootstrapServers: broker.bootstrap,
    groupId: 'job',
    acknowledgementMode: 'transactional',
    fetchMaxWaitMs: 50,
    logger: null,
  });
  cleanups.push(() => after.close(500));
  after.subscribe(['in']);
  expect(await after.poll(1_500)).toEqual([]);
});
