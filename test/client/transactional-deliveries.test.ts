/**
 * TransactionalDeliveries.screen: the records of a prefetch (the next batch
 * fetched while the application works in the open transaction) are judged
 * against the transaction open when they arrive, as poll() judges its own
 * (DESIGN §5.8); the consumer-level behaviour is in transaction-overlap.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CommitFailedError } from '../../client/index.js';
import type { ShareConsumerRecord } from '../../client/share/acknowledgements.js';
import { TransactionalDeliveries } from '../../client/share/transactional-deliveries.js';

const record = (offset: bigint, deliveryCount = 1): ShareConsumerRecord => ({
  topic: 'in',
  topicId: 'topic-id-in',
  partition: 0,
  offset,
  timestamp: 0n,
  key: null,
  value: null,
  headers: [],
  deliveryCount,
});

function ledger(): { deliveries: TransactionalDeliveries; released: bigint[] } {
  const released: bigint[] = [];
  const deliveries = new TransactionalDeliveries((r) => released.push(r.offset), 'test consumer');
  return { deliveries, released };
}

describe('TransactionalDeliveries.screen (prefetched records)', () => {
  it('withholds a second delivery of a record the open transaction holds, and releases it when that transaction ends without its ack', () => {
    const { deliveries, released } = ledger();
    expect(deliveries.admit([record(0n), record(1n)])).toHaveLength(2);
    deliveries.check();
    expect(deliveries.screen([record(1n, 2), record(2n)]).map((r) => r.offset)).toEqual([2n]);
    expect(deliveries.withheldCount).toBe(1);
    deliveries.transactionEnded();
    expect(released).toEqual([1n]);
  });

  it('keeps a withheld delivery acquired when the open transaction staged its ack: the ack landed on it', () => {
    const { deliveries, released } = ledger();
    deliveries.admit([record(0n)]);
    deliveries.check();
    expect(deliveries.screen([record(0n, 2)])).toEqual([]);
    deliveries.staged([{ topicId: 'topic-id-in', partition: 0, batches: [{ firstOffset: 0n, lastOffset: 0n }] }]);
    deliveries.transactionEnded();
    expect(released).toEqual([]);
  });

  it('a record whose ack is pending in the open transaction and comes back is judged when a poll hands it out: in that transaction it breaks it', () => {
    const { deliveries } = ledger();
    deliveries.admit([record(0n)]);
    deliveries.check();
    deliveries.staged([{ topicId: 'topic-id-in', partition: 0, batches: [{ firstOffset: 0n, lastOffset: 0n }] }]);
    const kept = deliveries.screen([record(0n, 2)]);
    expect(kept).toHaveLength(1);
    // The coordinator aborted it (a fence): the producer learns that from its own requests, not from this consumer.
    expect(() => deliveries.check()).not.toThrow();
    expect(deliveries.admit(kept)).toHaveLength(1);
    expect(() => deliveries.check()).toThrow(CommitFailedError);
  });

  it('hands out a record whose earlier delivery was in a transaction that has ended, and admits it into the next one at poll time', () => {
    const { deliveries } = ledger();
    deliveries.admit([record(0n)]);
    deliveries.check();
    deliveries.transactionEnded();
    const kept = deliveries.screen([record(0n, 2)]);
    expect(kept).toHaveLength(1);
    expect(deliveries.handedOutCount).toBe(0);
    expect(deliveries.admit(kept)).toHaveLength(1);
    expect(deliveries.handedOutCount).toBe(1);
  });
});
