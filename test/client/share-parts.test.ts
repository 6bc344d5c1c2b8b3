import { describe, expect, it } from 'vitest';
import { Errors } from '../../client/errors.js';
import { InFlightRecords } from '../../client/share/in-flight-records.js';
import { GAP_ACKNOWLEDGE_TYPE, MAX_SHARE_SESSION_EPOCH } from '../../client/share/protocol.js';
import { ShareSession, ShareSessions } from '../../client/share/session.js';
import type { ShareConsumerRecord } from '../../client/share/acknowledgements.js';

// The share consumer's parts on their own; the end-to-end suites (e2e, share-transaction-redelivery,
// share-heartbeat, share-api) drive them together against a real broker.

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const ref = { topicId: TOPIC_ID, topic: 'in', partition: 0 };
const record = (offset: number): ShareConsumerRecord => ({
  ...ref,
  offset: BigInt(offset),
  timestamp: 0n,
  key: null,
  value: null,
  headers: [],
  deliveryCount: 1,
});

describe('ShareSession (Kafka ShareSessionHandler / ShareRequestMetadata)', () => {
  it('opens at epoch 0, moves on per request, and wraps from the largest epoch to 1', () => {
    const session = new ShareSession();
    expect(session.isNew).toBe(true);
    session.fetched(new Set([`${TOPIC_ID}:0`]));
    expect(session.epoch).toBe(1);
    expect(session.forgotten(new Set())).toEqual([`${TOPIC_ID}:0`]);
    session.epoch = MAX_SHARE_SESSION_EPOCH;
    session.acknowledged(false);
    expect(session.epoch).toBe(1);
  });

  it('closes with the final epoch −1 and is new again afterwards', () => {
    const session = new ShareSession();
    session.fetched(new Set());
    expect(session.acknowledgeEpoch(true)).toBe(-1);
    expect(session.acknowledgeEpoch(false)).toBe(1);
    session.acknowledged(true);
    expect(session.isNew).toBe(true);
  });

  it('resets only on the errors that end a session', async () => {
    const sessions = new ShareSessions();
    await sessions.run(1, async (s) => s.fetched(new Set([`${TOPIC_ID}:0`])));
    sessions.onError(1, Errors.GROUP_AUTHORIZATION_FAILED);
    expect(sessions.get(1)!.epoch).toBe(1);
    for (const code of [Errors.SHARE_SESSION_NOT_FOUND, Errors.INVALID_SHARE_SESSION_EPOCH, Errors.UNKNOWN_MEMBER_ID]) {
      sessions.get(1)!.fetched(new Set([`${TOPIC_ID}:0`]));
      sessions.onError(1, code);
      expect([sessions.get(1)!.epoch, sessions.get(1)!.partitions.size]).toEqual([0, 0]);
    }
  });

  it('runs the requests of one session one after the other, even when one fails', async () => {
    const sessions = new ShareSessions();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = sessions.run(7, async () => {
      order.push('first starts');
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      order.push('first ends');
      throw new Error('first failed');
    });
    const second = sessions.run(7, async () => void order.push('second'));
    await Promise.resolve();
    releaseFirst();
    await expect(first).rejects.toThrow('first failed');
    await second;
    expect(order).toEqual(['first starts', 'first ends', 'second']);
  });
});

describe('InFlightRecords', () => {
  it('takes pending acks as wire batches of consecutive offsets of one type, and forgets their records', () => {
    const inFlight = new InFlightRecords(true);
    for (const offset of [0, 1, 2, 4]) inFlight.delivered!.set(`${InFlightRecords.deliveredPrefix(TOPIC_ID, 0)}${offset}`, record(offset));
    inFlight.add(ref, 2n, 1);
    inFlight.add(ref, 0n, 1);
    inFlight.add(ref, 1n, 1);
    inFlight.add(ref, 3n, GAP_ACKNOWLEDGE_TYPE);
    inFlight.add(ref, 4n, 2);
    expect(inFlight.unacknowledged()).toEqual([]);
    const taken = inFlight.take(() => true);
    expect(taken.get(`${TOPIC_ID}:0`)!.batches).toEqual([
      { firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [1] },
      { firstOffset: 3n, lastOffset: 3n, acknowledgeTypes: [0] },
      { firstOffset: 4n, lastOffset: 4n, acknowledgeTypes: [2] },
    ]);
    expect(inFlight.delivered!.size).toBe(0);
    expect(inFlight.take(() => true).size).toBe(0);
  });

  it('accepts every delivered record without an ack (implicit mode), keeping an explicit one', () => {
    const inFlight = new InFlightRecords(true);
    for (const offset of [5, 6]) inFlight.delivered!.set(`${InFlightRecords.deliveredPrefix(TOPIC_ID, 0)}${offset}`, record(offset));
    inFlight.add(ref, 6n, 3);
    expect(inFlight.unacknowledged().map((r) => r.offset)).toEqual([5n]);
    inFlight.acceptAllDelivered();
    expect(inFlight.take(() => true).get(`${TOPIC_ID}:0`)!.batches).toEqual([
      { firstOffset: 5n, lastOffset: 5n, acknowledgeTypes: [1] },
      { firstOffset: 6n, lastOffset: 6n, acknowledgeTypes: [3] },
    ]);
  });

  it('keeps only GAP acks when a transactional consumer closes, and tracks nothing when it never acknowledges', () => {
    const inFlight = new InFlightRecords(false);
    expect(inFlight.delivered).toBeNull();
    inFlight.add(ref, 0n, 1);
    inFlight.add(ref, 1n, GAP_ACKNOWLEDGE_TYPE);
    inFlight.keepGapsOnly();
    expect(inFlight.take(() => true).get(`${TOPIC_ID}:0`)!.batches).toEqual([{ firstOffset: 1n, lastOffset: 1n, acknowledgeTypes: [0] }]);
  });
});
