import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { KafkaProducer, ProducerFencedError, ShareAcknowledgements, ShareGroupMetadata, TransactionalShareAcknowledger } from '../../client/index.js';
import { respond } from './support/fake-server.js';
import { FakeKafka, TOPIC_ID } from './support/fake-kafka.js';

let fake: FakeKafka;
afterEach(async () => fake?.close());

const acks = (offset: number) => ShareAcknowledgements.fromRecords([{ topic: 'in', partition: 0, offset: BigInt(offset), topicId: TOPIC_ID }], 'accept');
const group = new ShareGroupMetadata('g', 'm', 1);

describe('KIP-1289 share-transaction metrics', () => {
  it('count a known sequence of transactions, in the snapshot and in Prometheus', async () => {
    fake = await FakeKafka.start({
      topics: { in: { topicId: TOPIC_ID, partitions: 1 }, out: { topicId: 'zzzzzzzzzzzzzzzzzzzzzA', partitions: 1 } },
    });
    // Make EndTxn(COMMIT) take a measurable 30 ms.
    fake.on(26, (r) => (r.body.committed ? new Promise((resolve) => setTimeout(() => resolve(respond({ errorCode: 0 })), 30)) : undefined));
    const registry = new Registry();
    const p = new KafkaProducer({
      bootstrapServers: fake.bootstrap,
      transactionalId: 'tx-m',
      clientId: 'metrics-test',
      metricsRegistry: registry,
      logger: null,
      lingerMs: 0,
    });
    await p.initTransactions();
    const zero = p.metrics();
    expect(zero).toEqual({
      'share-transaction-active': 0,
      'share-transaction-prepare-time-ms': { count: 0, sum: 0, min: null, max: null, avg: null },
      'share-transaction-commit-time-ms': { count: 0, sum: 0, min: null, max: null, avg: null },
      'share-transaction-abort-total': 0,
      'share-transaction-timeout-total': 0,
    });

    // 1: share acks + output, committed.
    p.beginTransaction();
    await p.send({ topic: 'out', value: 'x' });
    await p.sendShareAcksToTransaction(acks(0), group);
    expect(p.metrics()['share-transaction-active']).toBe(1);
    await p.commitTransaction();
    expect(p.metrics()['share-transaction-active']).toBe(0);
    // 2: two sendShareAcksToTransaction calls, aborted.
    p.beginTransaction();
    await p.sendShareAcksToTransaction(acks(1), group);
    await p.sendShareAcksToTransaction(acks(2), group);
    await p.abortTransaction();
    // 3: no share acks: not a share transaction, so no commit time.
    p.beginTransaction();
    await p.send({ topic: 'out', value: 'y' });
    await p.commitTransaction();
    // 4: empty acks are a no-op.
    p.beginTransaction();
    await p.sendShareAcksToTransaction(new ShareAcknowledgements(), group);
    await p.abortTransaction();

    const m = p.metrics();
    expect(m['share-transaction-active']).toBe(0);
    expect(m['share-transaction-prepare-time-ms'].count).toBe(3);
    expect(m['share-transaction-commit-time-ms'].count).toBe(1);
    expect(m['share-transaction-commit-time-ms'].min!).toBeGreaterThanOrEqual(25);
    expect(m['share-transaction-abort-total']).toBe(1);
    expect(m['share-transaction-timeout-total']).toBe(0);

    const text = await registry.metrics();
    const labels = '{client_id="metrics-test",transactional_id="tx-m"}';
    expect(text).toContain(`kafka_producer_share_transaction_active${labels} 0`);
    expect(text).toContain(`kafka_producer_share_transaction_abort_total${labels} 1`);
    expect(text).toContain(`kafka_producer_share_transaction_timeout_total${labels} 0`);
    expect(text).toContain(`kafka_producer_share_transaction_prepare_time_ms_count${labels} 3`);
    expect(text).toContain(`kafka_producer_share_transaction_commit_time_ms_count${labels} 1`);
    expect(text).toMatch(/kafka_producer_share_transaction_commit_time_ms_bucket\{le="25",client_id="metrics-test",transactional_id="tx-m"\} 0/);
    expect(text).toMatch(/kafka_producer_share_transaction_commit_time_ms_bucket\{le="\+Inf",client_id="metrics-test",transactional_id="tx-m"\} 1/);
    await p.close();
    // Closing removes the producer's series.
    expect(await registry.metrics()).not.toContain('tx-m');
  });

  it('counts a timeout when the coordinator aborted a share transaction that outlived transaction.timeout.ms', async () => {
    fake = await FakeKafka.start({ topics: { in: { topicId: TOPIC_ID, partitions: 1 } } });
    fake.on(26, () => respond({ errorCode: 90 }));
    // A producer, not the acknowledger: the acks must be pending past the timeout before the commit, and only a
    // two-phase-commit producer may prepare (which the coordinator would then not time out).
    const a = new KafkaProducer({
      bootstrapServers: fake.bootstrap,
      transactionalId: 'tx-t',
      transactionTimeoutMs: 50,
      metricsRegistry: null,
      logger: null,
    });
    await a.initTransactions();
    a.beginTransaction();
    await a.sendShareAcksToTransaction(acks(0), group);
    await new Promise((r) => setTimeout(r, 80));
    await expect(a.commitTransaction()).rejects.toBeInstanceOf(ProducerFencedError);
    expect(a.metrics()['share-transaction-timeout-total']).toBe(1);
    expect(a.metrics()['share-transaction-abort-total']).toBe(1);
    expect(a.metrics()['share-transaction-active']).toBe(0);
    expect(a.transactionState).toBe('FATAL_ERROR');
    await a.close();
  });

  it('does not count fencing inside transaction.timeout.ms as a timeout', async () => {
    fake = await FakeKafka.start({ topics: { in: { topicId: TOPIC_ID, partitions: 1 } } });
    fake.on(26, () => respond({ errorCode: 90 }));
    const a = new TransactionalShareAcknowledger({
      bootstrapServers: fake.bootstrap,
      transactionalId: 'tx-f',
      transactionTimeoutMs: 60_000,
      metricsRegistry: null,
      logger: null,
    });
    await a.initTransactions();
    await expect(a.commitAcknowledgements(acks(0), group)).rejects.toBeInstanceOf(ProducerFencedError);
    expect(a.metrics()['share-transaction-timeout-total']).toBe(0);
    expect(a.metrics()['share-transaction-abort-total']).toBe(1);
    await a.close();
  });
});
