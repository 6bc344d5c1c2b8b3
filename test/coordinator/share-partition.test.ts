import { describe, expect, it } from 'vitest';
import { AckType, validateAckBatches, validateTxnAckBatches, type AckRange } from '../../coordinator/share/acknowledgements.js';
import { ErrorCode, type ShareError } from '../../coordinator/share/share-error.js';
import { SharePartition, type LogWindow } from '../../coordinator/share/share-partition.js';
import { shareErrorCode as errorCodeOf } from './support/share-errors.js';

const KEY = { groupId: 'g', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 0 };
const LIMITS = { deliveryCountLimit: 3, recordLockDurationMs: 30_000, maxRecordLocks: 200 };
const T0 = 1_000_000;
const TXN = { producerId: 7n, producerEpoch: 2 };

/** A log window over [start, end) where every offset is a committed data record except `holes`. */
function window(start: bigint, end: bigint, holes: bigint[] = []): LogWindow {
  return { startOffset: start, endOffset: end, isAcquirable: (o) => !holes.includes(o) };
}

function ack(first: bigint, last: bigint, ...types: number[]): AckRange {
  return { firstOffset: first, lastOffset: last, types };
}

function fresh(limits = LIMITS): SharePartition {
  return new SharePartition(KEY, limits);
}

describe('SharePartition: acquisition', () => {
  it('acquires AVAILABLE records up to MaxRecords, counting a delivery, and moves the end offset', () => {
    const sp = fresh();
    expect(sp.acquire('m1', window(0n, 10n), 4, T0)).toEqual([{ firstOffset: 0n, lastOffset: 3n, deliveryCount: 1 }]);
    expect(sp.endOffset).toBe(4n);
    expect(sp.stateOf(3n)).toBe('ACQUIRED');
    expect(sp.stateOf(4n)).toBe('UNTRACKED');
    // Another member gets the next ones, not the locked ones.
    expect(sp.acquire('m2', window(4n, 10n), 100, T0)).toEqual([{ firstOffset: 4n, lastOffset: 9n, deliveryCount: 1 }]);
    expect(sp.acquire('m3', window(10n, 10n), 100, T0)).toEqual([]);
  });

  it('archives offsets that are not committed data records and never delivers them', () => {
    const sp = fresh();
    expect(sp.acquire('m1', window(0n, 6n, [2n, 3n]), 100, T0)).toEqual([
      { firstOffset: 0n, lastOffset: 1n, deliveryCount: 1 },
      { firstOffset: 4n, lastOffset: 5n, deliveryCount: 1 },
    ]);
    expect(sp.stateOf(2n)).toBe('ARCHIVED');
    // Acknowledging 0-1 moves the start past the archived 2-3.
    sp.acknowledge('m1', [ack(0n, 1n, AckType.ACCEPT)], T0);
    expect(sp.startOffset).toBe(4n);
  });

  it('stops adding new offsets at group.share.partition.max.record.locks in flight', () => {
    const sp = fresh({ ...LIMITS, maxRecordLocks: 5 });
    expect(sp.acquire('m1', window(0n, 100n), 100, T0)).toEqual([{ firstOffset: 0n, lastOffset: 4n, deliveryCount: 1 }]);
    expect(sp.acquire('m2', window(5n, 100n), 100, T0)).toEqual([]);
    sp.acknowledge('m1', [ack(0n, 1n, AckType.ACCEPT)], T0);
    expect(sp.acquire('m2', window(5n, 100n), 100, T0)).toEqual([{ firstOffset: 5n, lastOffset: 6n, deliveryCount: 1 }]);
  });

  it('does not acquire beyond the window (the last stable offset)', () => {
    const sp = fresh();
    expect(sp.acquire('m1', window(0n, 3n), 100, T0)).toEqual([{ firstOffset: 0n, lastOffset: 2n, deliveryCount: 1 }]);
    expect(sp.endOffset).toBe(3n);
  });

  it('moves the start offset to the log start offset', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 5n), 100, T0);
    sp.moveStartTo(3n);
    expect(sp.startOffset).toBe(3n);
    expect(sp.stateOf(3n)).toBe('ACQUIRED');
    sp.moveStartTo(10n);
    expect(sp.endOffset).toBe(10n);
  });
});

describe('SharePartition: acknowledgement (KIP-932)', () => {
  it('ACCEPT → ACKNOWLEDGED, REJECT and GAP → ARCHIVED, RELEASE → AVAILABLE; the start offset moves past finished records', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 6n), 100, T0);
    const changes = sp.acknowledge('m1', [ack(0n, 1n, AckType.ACCEPT), ack(2n, 5n, AckType.REJECT, AckType.GAP, AckType.RELEASE, AckType.ACCEPT)], T0);
    expect(changes.map((c) => [c.offset, c.state, c.deliveryCount])).toEqual([
      [0n, 'ACKNOWLEDGED', 1],
      [1n, 'ACKNOWLEDGED', 1],
      [2n, 'ARCHIVED', 1],
      [3n, 'ARCHIVED', 1],
      [4n, 'AVAILABLE', 1],
      [5n, 'ACKNOWLEDGED', 1],
    ]);
    expect(sp.startOffset).toBe(4n);
    expect(sp.stateOf(4n)).toBe('AVAILABLE');
    // Released records are delivered again, with the delivery count going up.
    expect(sp.acquire('m2', window(4n, 6n), 100, T0)).toEqual([{ firstOffset: 4n, lastOffset: 4n, deliveryCount: 2 }]);
  });

  it('refuses, all or nothing, offsets not ACQUIRED by the member: INVALID_RECORD_STATE', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 3n), 100, T0);
    sp.acquire('m2', window(3n, 5n), 100, T0);
    expect(errorCodeOf(() => sp.acknowledge('m1', [ack(0n, 3n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(sp.stateOf(0n)).toBe('ACQUIRED'); // nothing applied
    expect(errorCodeOf(() => sp.acknowledge('m1', [ack(5n, 5n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE); // never fetched
    sp.acknowledge('m1', [ack(0n, 0n, AckType.ACCEPT)], T0);
    expect(errorCodeOf(() => sp.acknowledge('m1', [ack(0n, 0n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE); // already done
    expect(errorCodeOf(() => sp.acknowledge('m1', [ack(1n, 1n, AckType.ACCEPT)], T0 + 30_000))).toBe(ErrorCode.INVALID_RECORD_STATE); // lock ran out
  });

  it('accepts a GAP for an offset archived at fetch time (a control record)', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 3n, [1n]), 100, T0);
    expect(sp.acknowledge('m1', [ack(0n, 2n, AckType.ACCEPT, AckType.GAP, AckType.ACCEPT)], T0).length).toBe(2);
    expect(sp.startOffset).toBe(3n);
  });

  it('RENEW resets the lock without persisting anything', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 1n), 100, T0);
    expect(sp.acknowledge('m1', [ack(0n, 0n, AckType.RENEW)], T0 + 20_000)).toEqual([]);
    expect(sp.expireLocks(T0 + 40_000)).toEqual([]);
    expect(sp.expireLocks(T0 + 50_000).map((c) => c.state)).toEqual(['AVAILABLE']);
  });
});

describe('SharePartition: locks and the delivery-count limit', () => {
  it('expired locks make records AVAILABLE and they are redelivered', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 2n), 100, T0);
    expect(sp.earliestLockDeadline()).toBe(T0 + 30_000);
    expect(sp.expireLocks(T0 + 29_999)).toEqual([]);
    expect(sp.expireLocks(T0 + 30_000).map((c) => [c.offset, c.state])).toEqual([
      [0n, 'AVAILABLE'],
      [1n, 'AVAILABLE'],
    ]);
    expect(sp.acquire('m2', window(0n, 2n), 100, T0 + 30_000)).toEqual([{ firstOffset: 0n, lastOffset: 1n, deliveryCount: 2 }]);
  });

  it('archives a record once its delivery count reached the limit (release, expiry, member leaving)', () => {
    const sp = fresh(); // limit 3
    sp.acquire('m1', window(0n, 1n), 1, T0);
    sp.acknowledge('m1', [ack(0n, 0n, AckType.RELEASE)], T0); // 1 delivery
    sp.acquire('m1', window(0n, 1n), 1, T0);
    sp.expireLocks(T0 + 30_000); // 2
    sp.acquire('m1', window(0n, 1n), 1, T0 + 30_000);
    expect(sp.deliveryCountOf(0n)).toBe(3);
    expect(sp.releaseMember('m1').map((c) => [c.state, c.deliveryCount])).toEqual([['ARCHIVED', 3]]);
    expect(sp.startOffset).toBe(1n);
  });

  it('releases only the leaving member’s records', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 2n), 100, T0);
    sp.acquire('m2', window(2n, 4n), 100, T0);
    expect(sp.releaseMember('m2').map((c) => c.offset)).toEqual([2n, 3n]);
    expect(sp.stateOf(0n)).toBe('ACQUIRED');
  });
});

describe('SharePartition: transactional acknowledgements (DESIGN §5)', () => {
  it('pins records TX_PENDING: the lock stops, nobody else gets them, member release does not touch them', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 3n), 100, T0);
    const staged = sp.stageTransactional(TXN, 'm1', [ack(0n, 1n, AckType.ACCEPT)], T0);
    expect(staged).toEqual([
      { offset: 0n, type: AckType.ACCEPT, deliveryCount: 1 },
      { offset: 1n, type: AckType.ACCEPT, deliveryCount: 1 },
    ]);
    expect(sp.stateOf(0n)).toBe('TX_PENDING');
    expect(sp.expireLocks(T0 + 10 * 60_000).map((c) => c.offset)).toEqual([2n]); // only the non-pending record expires
    expect(sp.releaseMember('m1')).toEqual([]);
    expect(sp.acquire('m2', window(0n, 3n), 100, T0 + 10 * 60_000)).toEqual([{ firstOffset: 2n, lastOffset: 2n, deliveryCount: 2 }]);
    expect(sp.hasPendingFor(7n)).toBe(true);
    expect(sp.startOffset).toBe(0n); // pending records pin the start offset
  });

  it('commit applies the pending acks: Accept → ACKNOWLEDGED, Reject → ARCHIVED, Release → AVAILABLE (count kept)', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 3n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(0n, 0n, AckType.ACCEPT), ack(1n, 1n, AckType.REJECT), ack(2n, 2n, AckType.RELEASE)], T0);
    const changes = sp.completeTransaction(7n, 2, true);
    expect(changes.map((c) => [c.offset, c.state, c.deliveryCount])).toEqual([
      [0n, 'ACKNOWLEDGED', 1],
      [1n, 'ARCHIVED', 1],
      [2n, 'AVAILABLE', 1],
    ]);
    expect(sp.startOffset).toBe(2n);
    expect(sp.hasPendingFor(7n)).toBe(false);
  });

  it('abort makes the records AVAILABLE at once, delivery count kept, so they are redelivered', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 2n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(0n, 1n, AckType.ACCEPT)], T0);
    expect(sp.completeTransaction(7n, 2, false).map((c) => [c.state, c.deliveryCount])).toEqual([
      ['AVAILABLE', 1],
      ['AVAILABLE', 1],
    ]);
    expect(sp.acquire('m2', window(0n, 2n), 100, T0)).toEqual([{ firstOffset: 0n, lastOffset: 1n, deliveryCount: 2 }]);
  });

  it('abort archives a record that reached the delivery-count limit (one that fails every time)', () => {
    const sp = fresh(); // limit 3
    for (let round = 0; round < 3; round++) {
      expect(sp.acquire('m1', window(0n, 1n), 1, T0)).toEqual([{ firstOffset: 0n, lastOffset: 0n, deliveryCount: round + 1 }]);
      sp.stageTransactional(TXN, 'm1', [ack(0n, 0n, AckType.ACCEPT)], T0);
      const [change] = sp.completeTransaction(7n, 2, false);
      expect(change!.state).toBe(round < 2 ? 'AVAILABLE' : 'ARCHIVED');
    }
    expect(sp.startOffset).toBe(1n);
  });

  it('a second transactional ack of records already pending is INVALID_RECORD_STATE, and changes nothing', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 3n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(1n, 1n, AckType.ACCEPT)], T0);
    // Another type from the same producer and epoch, another producer, another epoch: all refused, all or nothing.
    expect(errorCodeOf(() => sp.stageTransactional(TXN, 'm1', [ack(0n, 2n, AckType.REJECT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(errorCodeOf(() => sp.stageTransactional({ producerId: 8n, producerEpoch: 0 }, null, [ack(1n, 1n, AckType.ACCEPT)], T0))).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
    expect(errorCodeOf(() => sp.stageTransactional({ producerId: 7n, producerEpoch: 3 }, 'm1', [ack(1n, 1n, AckType.ACCEPT)], T0))).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
    expect(sp.stateOf(0n)).toBe('ACQUIRED');
    expect(sp.stateOf(2n)).toBe('ACQUIRED');
    // Nor can a pending record be acknowledged outside the transaction.
    expect(errorCodeOf(() => sp.acknowledge('m1', [ack(1n, 1n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
  });

  it('a retry by the same producer and epoch with the same type is a repeat: nothing new staged, no member check', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 4n), 100, T0);
    expect(sp.stageTransactional(TXN, 'm1', [ack(0n, 1n, AckType.ACCEPT)], T0)).toHaveLength(2);
    // The same request again, even long after the lock would have run out, even with another member named.
    expect(sp.planTransactional(TXN, 'm1', [ack(0n, 1n, AckType.ACCEPT)], T0 + 10 * 60_000)).toEqual({ staged: [], repeated: 2 });
    expect(sp.planTransactional(TXN, 'other', [ack(0n, 1n, AckType.ACCEPT)], T0)).toEqual({ staged: [], repeated: 2 });
    // A later ack of the same transaction naming a pending offset next to a new one is no retry: see the next test.
    expect(errorCodeOf(() => sp.planTransactional(TXN, 'm1', [ack(1n, 2n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(sp.stageTransactional(TXN, 'm1', [ack(2n, 2n, AckType.ACCEPT)], T0)).toHaveLength(1);
    // The commit applies the acknowledgement once.
    expect(sp.completeTransaction(7n, 2, true).map((c) => [c.offset, c.state])).toEqual([
      [0n, 'ACKNOWLEDGED'],
      [1n, 'ACKNOWLEDGED'],
      [2n, 'ACKNOWLEDGED'],
    ]);
    expect(errorCodeOf(() => sp.stageTransactional(TXN, 'm1', [ack(0n, 1n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
  });

  it('an offset already pending in a transaction is refused in a later acknowledgement of it that is no retry', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 6n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(0n, 2n, AckType.ACCEPT)], T0);
    // Offsets 0-2 pending, 3-5 acquired by m1: an entry naming 2 again next to 3 acknowledges 2 twice in one transaction.
    const error = (() => {
      try {
        sp.stageTransactional(TXN, 'm1', [ack(2n, 3n, AckType.ACCEPT)], T0);
      } catch (caught) {
        return caught as ShareError;
      }
      return null;
    })();
    expect(error?.code).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(error?.message).toMatch(/offset 2 is already acknowledged in this transaction/);
    // Also split over two batches of one entry; nothing was staged.
    expect(errorCodeOf(() => sp.stageTransactional(TXN, 'm1', [ack(0n, 0n, AckType.ACCEPT), ack(4n, 5n, AckType.ACCEPT)], T0))).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
    expect(sp.stateOf(3n)).toBe('ACQUIRED');
    expect(sp.stateOf(4n)).toBe('ACQUIRED');
    // Within one request the same offset twice is INVALID_REQUEST before any state is looked at (Kafka's
    // KafkaApis.validateAcknowledgementBatches; we refuse an overlap of one offset too, which Kafka lets pass).
    expect(() =>
      validateTxnAckBatches([
        { firstOffset: 3n, lastOffset: 4n, acknowledgeType: AckType.ACCEPT },
        { firstOffset: 4n, lastOffset: 5n, acknowledgeType: AckType.ACCEPT },
      ]),
    ).toThrow(/overlap or precede/);
    // New offsets alone, and a pure retry, still go through.
    expect(sp.stageTransactional(TXN, 'm1', [ack(3n, 5n, AckType.ACCEPT)], T0)).toHaveLength(3);
    expect(sp.planTransactional(TXN, 'm1', [ack(2n, 3n, AckType.ACCEPT)], T0)).toEqual({ staged: [], repeated: 2 });
  });

  it('after a restart a pending ARCHIVED at the limit may have been a Reject or a Release: a retry of either is a repeat', () => {
    const restored = (type: number, deliveryCount: number) =>
      SharePartition.restore(KEY, LIMITS, 0n, [], [{ offset: 0n, producerId: 7n, producerEpoch: 2, type: type as 1 | 2 | 3, deliveryCount }]);
    expect(restored(AckType.REJECT, 3).planTransactional(TXN, 'm1', [ack(0n, 0n, AckType.RELEASE)], T0).repeated).toBe(1);
    expect(restored(AckType.REJECT, 3).planTransactional(TXN, 'm1', [ack(0n, 0n, AckType.REJECT)], T0).repeated).toBe(1);
    expect(errorCodeOf(() => restored(AckType.REJECT, 3).planTransactional(TXN, 'm1', [ack(0n, 0n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
    // Below the limit the disk tells them apart.
    expect(errorCodeOf(() => restored(AckType.REJECT, 1).planTransactional(TXN, 'm1', [ack(0n, 0n, AckType.RELEASE)], T0))).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
    expect(errorCodeOf(() => restored(AckType.RELEASE, 1).planTransactional(TXN, 'm1', [ack(0n, 0n, AckType.REJECT)], T0))).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
  });

  it('v1 acks only records acquired by that member; v0 (no member) any acquired record, never AVAILABLE or finished ones', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 2n), 100, T0);
    sp.acquire('m2', window(2n, 4n), 100, T0);
    expect(errorCodeOf(() => sp.stageTransactional(TXN, 'm1', [ack(2n, 2n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(sp.stageTransactional(TXN, null, [ack(2n, 2n, AckType.ACCEPT)], T0)).toHaveLength(1);
    sp.releaseMember('m1');
    expect(errorCodeOf(() => sp.stageTransactional(TXN, null, [ack(0n, 0n, AckType.ACCEPT)], T0))).toBe(ErrorCode.INVALID_RECORD_STATE); // AVAILABLE
    expect(errorCodeOf(() => sp.stageTransactional(TXN, 'm2', [ack(3n, 3n, AckType.ACCEPT)], T0 + 30_000))).toBe(ErrorCode.INVALID_RECORD_STATE); // lock expired
  });

  it('resolves only the producer’s own pending acks, and ignores a marker older than them; completion is idempotent', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 2n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(0n, 0n, AckType.ACCEPT)], T0);
    sp.stageTransactional({ producerId: 9n, producerEpoch: 0 }, 'm1', [ack(1n, 1n, AckType.ACCEPT)], T0);
    expect(sp.completeTransaction(7n, 1, true)).toEqual([]); // stale epoch
    expect(sp.completeTransaction(7n, 3, true).map((c) => c.offset)).toEqual([0n]); // a bumped epoch (TV2 markers) resolves it
    expect(sp.completeTransaction(7n, 3, true)).toEqual([]);
    expect(sp.stateOf(1n)).toBe('TX_PENDING');
  });

  it('restores committed ranges and pending acks from persisted state', () => {
    const sp = SharePartition.restore(
      KEY,
      LIMITS,
      10n,
      [
        { firstOffset: 10n, lastOffset: 11n, state: 'AVAILABLE', deliveryCount: 2 },
        { firstOffset: 12n, lastOffset: 12n, state: 'ACKNOWLEDGED', deliveryCount: 1 },
      ],
      [{ offset: 14n, producerId: 7n, producerEpoch: 2, type: AckType.REJECT, deliveryCount: 1 }],
    );
    expect([10n, 11n, 12n, 13n, 14n, 15n].map((o) => sp.stateOf(o))).toEqual([
      'AVAILABLE',
      'AVAILABLE',
      'ACKNOWLEDGED',
      'AVAILABLE',
      'TX_PENDING',
      'UNTRACKED',
    ]);
    expect(sp.acquire('m', window(10n, 20n), 100, T0)).toEqual([
      { firstOffset: 10n, lastOffset: 11n, deliveryCount: 3 },
      { firstOffset: 13n, lastOffset: 13n, deliveryCount: 1 },
      { firstOffset: 15n, lastOffset: 19n, deliveryCount: 1 },
    ]);
    sp.completeTransaction(7n, 2, true);
    expect(sp.stateOf(14n)).toBe('ARCHIVED');
  });

  it('describes its state as coalesced ranges', () => {
    const sp = fresh();
    sp.acquire('m1', window(0n, 4n), 100, T0);
    sp.stageTransactional(TXN, 'm1', [ack(2n, 3n, AckType.ACCEPT)], T0);
    const { ranges } = sp.describe();
    expect(ranges).toEqual([
      { firstOffset: 0n, lastOffset: 1n, state: 'ACQUIRED', deliveryCount: 1, memberId: 'm1', lockDeadline: T0 + 30_000 },
      {
        firstOffset: 2n,
        lastOffset: 3n,
        state: 'TX_PENDING',
        deliveryCount: 1,
        memberId: 'm1',
        pending: { producerId: 7n, producerEpoch: 2, ackType: 'ACCEPT' },
      },
    ]);
  });
});

describe('acknowledgement batch validation: INVALID_REQUEST', () => {
  const batch = (first: bigint, last: bigint, types: number[]) => ({ firstOffset: first, lastOffset: last, acknowledgeTypes: types });
  const code = (fn: () => unknown) => errorCodeOf(fn);

  it('accepts sorted, disjoint batches with 1 or one-per-offset types', () => {
    expect(validateAckBatches([batch(0n, 2n, [1]), batch(3n, 4n, [2, 3])], false)).toHaveLength(2);
  });

  it.each([
    ['first > last', [batch(3n, 2n, [1])]],
    ['negative offset', [batch(-1n, 2n, [1])]],
    ['overlapping', [batch(0n, 3n, [1]), batch(3n, 4n, [1])]],
    ['unsorted', [batch(5n, 6n, [1]), batch(0n, 1n, [1])]],
    ['wrong number of types', [batch(0n, 3n, [1, 1])]],
    ['type out of range', [batch(0n, 0n, [5])]],
    ['negative type', [batch(0n, 0n, [-1])]],
    ['RENEW without IsRenewAck', [batch(0n, 0n, [4])]],
  ])('refuses %s', (_name, batches) => {
    expect(code(() => validateAckBatches(batches, false))).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('allows RENEW with IsRenewAck', () => {
    expect(validateAckBatches([batch(0n, 0n, [4])], true)).toHaveLength(1);
  });

  it('transactional batches take only Accept, Release, Reject', () => {
    expect(validateTxnAckBatches([{ firstOffset: 0n, lastOffset: 1n, acknowledgeType: 3 }])).toHaveLength(1);
    for (const type of [0, 4, 7]) {
      expect(code(() => validateTxnAckBatches([{ firstOffset: 0n, lastOffset: 1n, acknowledgeType: type }]))).toBe(ErrorCode.INVALID_REQUEST);
    }
  });
});
