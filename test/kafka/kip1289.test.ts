/**
 * KIP-1289 against a broker without it: Apache Kafka 4.4 has neither
 * AddShareAcksToTxn (95) nor TxnShareAcknowledge (96). Each of our entry
 * points — producer.sendShareAcksToTransaction, a share consumer in
 * 'transactional' mode, TransactionalShareAcknowledger — must fail at once
 * with an UnsupportedVersionError naming the missing API and what the broker
 * offers, before a record is acquired or an acknowledgement lost, and never
 * fall back silently to non-transactional acknowledgements.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  KafkaProducer,
  KafkaShareConsumer,
  ShareAcknowledgements,
  TransactionAbortableError,
  TransactionalShareAcknowledger,
  UnsupportedVersionError,
  type Logger,
  type ShareConsumerRecord,
} from '../../client/index.js';
import { Cleanups, createTopic, kafka, shareGroup, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

const quiet = { logger: null, metricsRegistry: null } as const;

function consumer(
  groupId: string,
  mode: 'explicit' | 'transactional',
  extra: Partial<ConstructorParameters<typeof KafkaShareConsumer>[0]> = {},
): KafkaShareConsumer {
  return cleanups.track(
    new KafkaShareConsumer({ bootstrapServers: kafka().bootstrap, groupId, acknowledgementMode: mode, fetchMaxWaitMs: 200, logger: null, ...extra }),
    (c) => c.close(5_000),
  );
}

async function seeded(name: string, values: string[]): Promise<{ topic: string; group: string }> {
  const topic = unique(name);
  await createTopic(kafka(), topic);
  const p = new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, ...quiet });
  await Promise.all(values.map((value) => p.send({ topic, partition: 0, value })));
  await p.close();
  return { topic, group: await shareGroup(kafka(), unique(`${name}-group`)) };
}

async function pollUntil(c: KafkaShareConsumer, count: number, ack?: (r: ShareConsumerRecord) => void): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + 60_000;
  const records: ShareConsumerRecord[] = [];
  while (records.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${records.length} of ${count} records within 60 s`);
    const batch = await c.poll(500);
    if (ack) batch.forEach(ack);
    records.push(...batch);
  }
  return records;
}

const text = (r: ShareConsumerRecord): string => Buffer.from(r.value!).toString();

/** The message names the API, its key, and says what the broker offers. */
function expectNamesMissingApi(error: unknown, api: string, key: number): void {
  expect(error).toBeInstanceOf(UnsupportedVersionError);
  const message = (error as Error).message;
  expect(message).toContain(`${api} (API ${key}`);
  expect(message).toMatch(/advertises API keys 0–\d+/);
}

const settle = <T>(p: Promise<T>): Promise<unknown> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );

describe('KIP-1289 against Kafka 4.4 (no APIs 95 and 96)', () => {
  it("a share consumer in 'transactional' mode fails its first poll, before joining the group: another member then gets every record at delivery count 1", async () => {
    const { topic, group } = await seeded('txn-consumer', ['t0', 't1', 't2']);
    const c = consumer(group, 'transactional');
    c.subscribe([topic]);
    const error = await settle(c.poll(5_000));
    expectNamesMissingApi(error, 'TxnShareAcknowledge', 96);
    // It stays failed: no silent switch to another mode on the next call.
    await expect(c.poll(100)).rejects.toBe(error);
    expect(c.acknowledgementMode).toBe('transactional');

    const other = consumer(group, 'explicit');
    other.subscribe([topic]);
    const records = await pollUntil(other, 3, (r) => other.acknowledge(r, 'accept'));
    expect(records.map((r) => [text(r), r.deliveryCount])).toEqual([
      ['t0', 1],
      ['t1', 1],
      ['t2', 1],
    ]);
    await other.commitSync();
  });

  it('with allowExplicitFallback the fallback is logged, naming API 96, and the mode says explicit', async () => {
    const { topic, group } = await seeded('fallback', ['f0']);
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };
    const c = consumer(group, 'transactional', { allowExplicitFallback: true, logger });
    c.subscribe([topic]);
    const records = await pollUntil(c, 1, (r) => c.acknowledge(r, 'accept'));
    expect(records.map(text)).toEqual(['f0']);
    expect(c.acknowledgementMode).toBe('explicit');
    expect(warnings.some((w) => w.includes('TxnShareAcknowledge (API 96'))).toBe(true);
  });

  it('producer.sendShareAcksToTransaction fails fast naming AddShareAcksToTxn (95); the acks are not lost: the consumer still holds the records and acknowledges them itself', async () => {
    const { topic, group } = await seeded('send-acks', ['s0', 's1']);
    const c = consumer(group, 'explicit');
    c.subscribe([topic]);
    const records = await pollUntil(c, 2);
    const p = cleanups.track(
      new KafkaProducer({ bootstrapServers: kafka().bootstrap, transactionalId: unique('send-acks-txn'), lingerMs: 1, maxBlockMs: 30_000, ...quiet }),
      (x) => x.close(2_000),
    );
    await p.initTransactions();
    p.beginTransaction();
    const error = await settle(p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), c.groupMetadata()));
    expectNamesMissingApi(error, 'AddShareAcksToTxn', 95);
    // The transaction cannot commit as if the acks were in it.
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(TransactionAbortableError);
    await p.abortTransaction();

    // Nothing was acknowledged on the records' behalf: the consumer's own acks are accepted, and release brings one back.
    c.acknowledge(records[0]!, 'accept');
    c.acknowledge(records[1]!, 'release');
    const results = await c.commitSync();
    expect([...results.values()]).toEqual([null]);
    const again = await pollUntil(c, 1, (r) => c.acknowledge(r, 'accept'));
    expect(again.map((r) => [text(r), r.deliveryCount])).toEqual([['s1', 2]]);
    await c.commitSync();
  });

  it('TransactionalShareAcknowledger fails at initTransactions, naming AddShareAcksToTxn (95), before any record is consumed', async () => {
    const acker = cleanups.track(
      new TransactionalShareAcknowledger({ bootstrapServers: kafka().bootstrap, transactionalId: unique('acker'), maxBlockMs: 30_000, ...quiet }),
      (a) => a.close(2_000),
    );
    const error = await settle(acker.initTransactions());
    expectNamesMissingApi(error, 'AddShareAcksToTxn', 95);
  });

  it('TransactionalShareAcknowledger.commitAcknowledgements after a failed init still fails with the same clear error, and acks nothing', async () => {
    const { topic, group } = await seeded('acker-commit', ['c0']);
    const c = consumer(group, 'explicit');
    c.subscribe([topic]);
    const records = await pollUntil(c, 1);
    const acker = cleanups.track(
      new TransactionalShareAcknowledger({ bootstrapServers: kafka().bootstrap, transactionalId: unique('acker-commit'), maxBlockMs: 30_000, ...quiet }),
      (a) => a.close(2_000),
    );
    await acker.initTransactions().catch(() => undefined);
    const error = await settle(acker.commitAcknowledgements(ShareAcknowledgements.fromRecords(records, 'accept'), c.groupMetadata()));
    expect(error).toBeInstanceOf(Error);
    c.acknowledge(records[0]!, 'release');
    await c.commitSync();
    const again = await pollUntil(c, 1, (r) => c.acknowledge(r, 'accept'));
    expect(again.map((r) => r.deliveryCount)).toEqual([2]);
    await c.commitSync();
  });
});
