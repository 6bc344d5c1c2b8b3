// KIP-1289's consume-transform-produce loop against an embedded broker, by package name only:
// orders → (value × 2) → orders-priced, one transaction per poll, the share acks in the transaction.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '@kipgen/broker';
import { KafkaProducer, KafkaShareConsumer, ShareAcknowledgements } from '@kipgen/client';

const ORDERS = 6;
const dataDir = mkdtempSync(join(tmpdir(), 'kipgen-app-'));
const broker = await startBroker(
  // Orders are produced before the share consumer's first poll, and only committed output counts: not the
  // defaults of Kafka's share-group configs (latest, read_uncommitted), so the broker's defaults are set here.
  {
    port: 0,
    dataDir,
    topics: [
      { name: 'orders', partitions: 1 },
      { name: 'orders-priced', partitions: 1 },
    ],
    shareGroup: { autoOffsetReset: 'earliest', isolationLevel: 'read_committed' },
  },
  { log: () => {} },
);
const bootstrapServers = `127.0.0.1:${broker.port}`;
try {
  const seed = new KafkaProducer({ bootstrapServers });
  for (let i = 0; i < ORDERS; i++) await seed.send({ topic: 'orders', key: `order-${i}`, value: String(i + 1) });
  await seed.close();

  const consumer = new KafkaShareConsumer({ bootstrapServers, groupId: 'pricers', acknowledgementMode: 'transactional' });
  const producer = new KafkaProducer({ bootstrapServers, transactionalId: 'pricer-1' });
  consumer.subscribe(['orders']);
  await producer.initTransactions();
  let priced = 0;
  let transactions = 0;
  const deadline = Date.now() + 30_000;
  while (priced < ORDERS && Date.now() < deadline) {
    producer.beginTransaction();
    const records = await consumer.poll(500);
    await Promise.all(records.map((r) => producer.send({ topic: 'orders-priced', key: r.key, value: String(Number(Buffer.from(r.value).toString()) * 2) })));
    if (records.length > 0) await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
    await producer.commitTransaction();
    priced += records.length;
    if (records.length > 0) transactions += 1;
  }
  const left = (await consumer.poll(300)).length;
  await consumer.close();
  await producer.close();

  const reader = new KafkaShareConsumer({ bootstrapServers, groupId: 'readers' });
  reader.subscribe(['orders-priced']);
  const out = [];
  while (out.length < ORDERS && Date.now() < deadline) out.push(...(await reader.poll(500)));
  await reader.close();
  console.log(
    JSON.stringify({ priced, transactions, left, output: out.map((r) => `${Buffer.from(r.key).toString()}=${Buffer.from(r.value).toString()}`).sort() }),
  );
} finally {
  await broker.close();
  rmSync(dataDir, { recursive: true, force: true });
}
