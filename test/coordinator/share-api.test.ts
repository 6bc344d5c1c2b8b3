/**
 * The share APIs over TCP against an in-process broker (startBroker) whose
 * share coordinator runs on a ManualClock: share groups, share sessions,
 * ShareFetch/ShareAcknowledge with KIP-932's record states, read_committed
 * acquisition, and KIP-1289's TxnShareAcknowledge through real transactions.
 * Each test uses its own topic and group.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerContext, ShareCoordinator, SharePartitionOperations } from '../../coordinator/broker-context.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import { ManualClock } from '../../coordinator/share/clock.js';
import { ErrorCode } from '../../coordinator/share/share-error.js';
import { createShareCoordinator, type KipgenShareCoordinator } from '../../coordinator/share/index.js';
import { FAST, TestClient, addPartitions, batch, endTxn, eventually, initProducer, produce, tempDir } from './support/broker-harness.js';
import { ShareStateStore } from '../../coordinator/share/share-state-store.js';
import { KafkaProducer, ShareAcknowledgements, ShareGroupMetadata } from '../../client/index.js';
import {
  addShareAcksToTxn,
  delivered,
  heartbeat,
  partitionOf,
  sendTxnShareAcknowledgeFrame,
  shareAcknowledge,
  shareFetch,
  txnShareAcknowledge,
  txnShareAcknowledgeFrame,
  type TxnAckArgs,
} from './share-wire.js';

const LOCK_MS = 30_000;
const TOPICS = [
  'groups',
  'fetch',
  'acks',
  'committed',
  'locks',
  'limit',
  'conn',
  'txn-commit',
  'txn-abort',
  'txn-iso',
  'txn-errors',
  'txn-twice',
  'txn-fence',
  'txn-keep',
  'txn-retry',
  'txn-retry-client',
  'ack-expiry',
  'restart',
  'expired',
  'cfg-iso',
  'cfg-lock',
];

let dataDir: string;
let broker: Broker;
let ctx: BrokerContext;
let sc: KipgenShareCoordinator;
let c: TestClient;
const clock = new ManualClock(Date.now());
const lines: string[] = [];
/** TxnShareAcknowledge requests to answer by dropping the connection after the share coordinator handled them (a lost response). */
let dropTxnAckResponses = 0;
let txnAckCalls = 0;

/** The share coordinator as the broker sees it, with TxnShareAcknowledge able to lose its response. */
function withLossyTxnAck(inner: KipgenShareCoordinator): ShareCoordinator {
  const partitions: SharePartitionOperations = {
    shareFetch: (request, requestCtx, answer) => inner.shareFetch(request, requestCtx, answer),
    shareAcknowledge: (request, requestCtx, answer) => inner.shareAcknowledge(request, requestCtx, answer),
    txnShareAcknowledge: async (request, memberId) => {
      txnAckCalls++;
      const result = await inner.txnShareAcknowledge(request, memberId);
      if (dropTxnAckResponses > 0) {
        dropTxnAckResponses--;
        throw new Error('test: TxnShareAcknowledge handled, response lost'); // not a BrokerError: the broker closes the connection
      }
      return result;
    },
  };
  return {
    groups: inner.groups,
    partitions,
    recover: () => inner.recover(),
    completeTransaction: (producerId, producerEpoch, commit) => inner.completeTransaction(producerId, producerEpoch, commit),
    dump: () => inner.dump(),
    close: () => inner.close(),
  };
}

async function start(): Promise<void> {
  broker = await startBroker(
    {
      host: '127.0.0.1',
      port: 0,
      ...FAST,
      dataDir,
      // Two-phase commit for the KeepPreparedTxn test (Kafka's default, and kipgen's, is off).
      transactionTwoPhaseCommitEnable: true,
      topics: TOPICS.map((name) => ({ name, partitions: name === 'groups' ? 2 : 1 })),
      shareGroup: {
        recordLockDurationMs: LOCK_MS,
        deliveryCountLimit: 3,
        sessionTimeoutMs: 45_000,
        heartbeatIntervalMs: 5_000,
        maxRecordLocks: 200,
        isolationLevel: 'read_committed',
        autoOffsetReset: 'earliest',
      },
    },
    {
      shareCoordinator: (context) => {
        ctx = context;
        sc = createShareCoordinator(context, { clock, housekeeping: false, config: { maxFetchWaitMs: 2_000 } });
        return withLossyTxnAck(sc);
      },
      log: (line) => lines.push(line),
    },
  );
}

beforeAll(async () => {
  dataDir = tempDir('kipgen-share-api-');
  await start();
  c = await TestClient.connect(broker.port);
});

afterAll(async () => {
  await c?.close();
  await broker?.close();
});

const topicId = (name: string): string => ctx.cluster.topicByName(name)!.topicId;

async function produceValues(topic: string, values: string[]): Promise<bigint> {
  const p = await produce(c, topic, 0, batch({ values }));
  expect(p.errorCode).toBe(0);
  return p.baseOffset;
}

/** Opens a share session for a member on a topic's partition 0 and returns the first fetch and the next epoch. */
async function open(
  client: TestClient,
  groupId: string,
  memberId: string,
  topic: string,
  maxRecords = 500,
): Promise<{ response: any; records: ReturnType<typeof delivered> }> {
  const response = await shareFetch(client, {
    groupId,
    memberId,
    epoch: 0,
    partitions: [{ topicId: topicId(topic), partition: 0 }],
    maxRecords,
  });
  expect(response.errorCode).toBe(0);
  return { response, records: delivered(partitionOf(response, topicId(topic), 0)) };
}

describe('ShareGroupHeartbeat and ShareGroupDescribe', () => {
  it('joins, spreads partitions, bumps epochs, fences stale epochs, leaves', async () => {
    const a = await heartbeat(c, 'g-groups', 'member-a', 0, ['groups']);
    expect(a.errorCode).toBe(0);
    expect(a.memberEpoch).toBe(1);
    expect(a.heartbeatIntervalMs).toBe(5_000);
    expect(a.assignment.topicPartitions).toEqual([{ topicId: topicId('groups'), partitions: [0, 1] }]);

    const b = await heartbeat(c, 'g-groups', 'member-b', 0, ['groups']);
    expect(b.memberEpoch).toBe(2);
    expect(b.assignment.topicPartitions).toEqual([{ topicId: topicId('groups'), partitions: [1] }]);
    // member-a moves to the new epoch and assignment on its next heartbeat.
    const a2 = await heartbeat(c, 'g-groups', 'member-a', 1, null);
    expect(a2.memberEpoch).toBe(2);
    expect(a2.assignment.topicPartitions).toEqual([{ topicId: topicId('groups'), partitions: [0] }]);
    // Unchanged: no assignment in the response.
    expect((await heartbeat(c, 'g-groups', 'member-a', 2, null)).assignment).toBeNull();

    // More members than partitions: partitions are shared.
    const third = await heartbeat(c, 'g-groups', 'member-c', 0, ['groups']);
    expect(third.assignment.topicPartitions[0].partitions).toHaveLength(1);

    expect((await heartbeat(c, 'g-groups', 'member-a', 7, null)).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect((await heartbeat(c, 'g-groups', 'nobody', 1, null)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await heartbeat(c, 'g-groups', 'member-d', 0, null)).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await heartbeat(c, 'g-groups', '', 0, ['groups'])).errorCode).toBe(ErrorCode.INVALID_REQUEST);

    const described = await c.call(77, { groupIds: ['g-groups', 'g-none'], includeAuthorizedOperations: false }, 1);
    const [group, none] = described.groups;
    expect(group.errorCode).toBe(0);
    expect(group.groupState).toBe('Stable');
    expect(group.members.map((m: any) => m.memberId).sort()).toEqual(['member-a', 'member-b', 'member-c']);
    expect(group.members.find((m: any) => m.memberId === 'member-a').assignment.topicPartitions[0].topicName).toBe('groups');
    // Kafka's form of the member's host (its InetAddress.toString(): a slash, the address, no port), as for the other
    // group kinds (found by the Kafka judge, test/kafka: it printed 127.0.0.1:<port>).
    expect(group.members.map((m: any) => m.clientHost)).toEqual(['/127.0.0.1', '/127.0.0.1', '/127.0.0.1']);
    expect(group.authorizedOperations).toBe(-2147483648);
    expect(none.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);

    const left = await heartbeat(c, 'g-groups', 'member-c', -1, null);
    expect(left.memberEpoch).toBe(-1);
    expect((await heartbeat(c, 'g-groups', 'member-c', 3, null)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  /** `memberId` joins `groupId` and holds `value` (just produced to 'groups') in its share session. */
  async function joinHolding(groupId: string, memberId: string, value: string): Promise<void> {
    await produceValues('groups', [value]);
    await heartbeat(c, groupId, memberId, 0, ['groups']);
    expect((await open(c, groupId, memberId, 'groups')).records.map((r) => r.value)).toContain(value);
    expect(sc.dump()).toContain(`${groupId}/${memberId} connection`);
  }

  /** `gone`'s session is closed at once (no place held under the session limit) and the next member gets `value` again. */
  async function expectGivenUp(groupId: string, gone: string, value: string): Promise<void> {
    expect(sc.dump()).not.toContain(`${groupId}/${gone} connection`);
    await heartbeat(c, groupId, 'next', 0, ['groups']);
    expect((await open(c, groupId, 'next', 'groups')).records.find((r) => r.value === value)?.deliveryCount).toBe(2);
  }

  it('a member that leaves gives up its share session and its records at once', async () => {
    await joinHolding('g-leave', 'leaver', 'l0');
    expect((await heartbeat(c, 'g-leave', 'leaver', -1, null)).memberEpoch).toBe(-1);
    await expectGivenUp('g-leave', 'leaver', 'l0');
  });

  it('removes a member silent for the session timeout, closes its share session and releases its records', async () => {
    await joinHolding('g-timeout', 'quiet', 's0');
    clock.advance(45_000);
    await sc.housekeeping();
    expect((await heartbeat(c, 'g-timeout', 'quiet', 1, null)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    await expectGivenUp('g-timeout', 'quiet', 's0');
  });

  it('a member expired by the session timeout gets UNKNOWN_MEMBER_ID on ShareFetch/ShareAcknowledge and acquires nothing until it rejoins', async () => {
    const offset = await produceValues('expired', ['e0', 'e1']);
    const state = () => sc.describe().partitions.find((x) => x.key.groupId === 'g-expired')!.state;
    const part = [{ topicId: topicId('expired'), partition: 0 }];
    expect((await heartbeat(c, 'g-expired', 'zombie', 0, ['expired'])).errorCode).toBe(0);
    const zc = await TestClient.connect(broker.port);
    const first = await open(zc, 'g-expired', 'zombie', 'expired');
    expect(first.records.map((r) => [r.value, r.deliveryCount])).toEqual([
      ['e0', 1],
      ['e1', 1],
    ]);

    // No heartbeat for the session timeout: expired, its records released (delivered once).
    clock.advance(45_000);
    await sc.housekeeping();
    expect(lines.some((l) => l.includes('member zombie timed out'))).toBe(true);
    expect(state().ranges).toMatchObject([{ firstOffset: offset, lastOffset: offset + 1n, state: 'AVAILABLE', deliveryCount: 1 }]);

    // It keeps fetching, in its session and by reopening one, and acknowledging: refused, nothing acquired.
    for (const epoch of [1, 1, 0, 0]) {
      const refused = await shareFetch(zc, { groupId: 'g-expired', memberId: 'zombie', epoch, partitions: part });
      expect(refused.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      expect(refused.responses).toEqual([]);
    }
    const ack = await shareAcknowledge(zc, {
      groupId: 'g-expired',
      memberId: 'zombie',
      epoch: 1,
      partitions: [{ ...part[0]!, acks: [{ first: offset, last: offset + 1n, types: [AckType.ACCEPT] }] }],
    });
    expect(ack.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    // The delivery count did not grow: no delivery was made to the expired member.
    expect(state().ranges).toMatchObject([{ firstOffset: offset, lastOffset: offset + 1n, state: 'AVAILABLE', deliveryCount: 1 }]);

    // Joined again, it fetches as before: the second delivery.
    expect((await heartbeat(c, 'g-expired', 'zombie', 0, ['expired'])).errorCode).toBe(0);
    const again = await open(zc, 'g-expired', 'zombie', 'expired');
    expect(again.records.map((r) => [r.value, r.deliveryCount])).toEqual([
      ['e0', 2],
      ['e1', 2],
    ]);
    await zc.close();
  });
});

describe('ShareFetch and share sessions', () => {
  it('acquires records for one member at a time, with the raw batches and AcquisitionLockTimeoutMs', async () => {
    await produceValues('fetch', ['a', 'b', 'c', 'd', 'e']);
    const first = await open(c, 'g-fetch', 'm1', 'fetch', 3);
    expect(first.response.acquisitionLockTimeoutMs).toBe(LOCK_MS);
    expect(first.records.map((r) => [r.offset, r.value, r.deliveryCount])).toEqual([
      [0n, 'a', 1],
      [1n, 'b', 1],
      [2n, 'c', 1],
    ]);
    const c2 = await TestClient.connect(broker.port);
    const second = await open(c2, 'g-fetch', 'm2', 'fetch');
    expect(second.records.map((r) => r.value)).toEqual(['d', 'e']);
    // Another group has its own share partition.
    expect((await open(c2, 'g-fetch-other', 'm1', 'fetch')).records).toHaveLength(5);
    await c2.close();
  });

  it('enforces session epochs: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, acks on open → INVALID_REQUEST', async () => {
    const t = topicId('fetch');
    expect((await shareFetch(c, { groupId: 'g-sess', memberId: 'm', epoch: 3, partitions: [{ topicId: t, partition: 0 }] })).errorCode).toBe(
      ErrorCode.SHARE_SESSION_NOT_FOUND,
    );
    const withAcks = await shareFetch(c, {
      groupId: 'g-sess',
      memberId: 'm',
      epoch: 0,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 0n, types: [1] }] }],
    });
    expect(withAcks.errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await shareFetch(c, { groupId: 'g-sess', memberId: 'm', epoch: 0, partitions: [{ topicId: t, partition: 0 }], maxRecords: 1 })).errorCode).toBe(0);
    expect((await shareFetch(c, { groupId: 'g-sess', memberId: 'm', epoch: 2, partitions: [] })).errorCode).toBe(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    expect((await shareFetch(c, { groupId: 'g-sess', memberId: 'm', epoch: 1, partitions: [], maxRecords: 1 })).errorCode).toBe(0);
    expect((await shareAcknowledge(c, { groupId: 'g-sess', memberId: 'm', epoch: 1, partitions: [] })).errorCode).toBe(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    expect((await shareAcknowledge(c, { groupId: 'g-sess', memberId: 'm', epoch: 0, partitions: [] })).errorCode).toBe(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    expect((await shareAcknowledge(c, { groupId: 'g-sess', memberId: 'm', epoch: 2, partitions: [] })).errorCode).toBe(0);
    // The session remembers its partitions: an incremental fetch with no topics still fetches.
    const next = await shareFetch(c, { groupId: 'g-sess', memberId: 'm', epoch: 3, partitions: [], maxRecords: 1 });
    expect(delivered(partitionOf(next, t, 0))).toHaveLength(1);
    // Forgetting the partition releases this member's records in it.
    const forgot = await shareFetch(c, {
      groupId: 'g-sess',
      memberId: 'm',
      epoch: 4,
      partitions: [],
      forget: [{ topicId: t, partitions: [0] }],
    });
    expect(forgot.responses).toEqual([]);
    expect(
      sc
        .describe()
        .partitions.find((p) => p.key.groupId === 'g-sess')!
        .state.ranges.every((r) => r.state !== 'ACQUIRED'),
    ).toBe(true);
    expect((await shareFetch(c, { groupId: '', memberId: 'm', epoch: 0, partitions: [] })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });

  it('answers unknown topics and partitions per partition', async () => {
    const response = await shareFetch(c, {
      groupId: 'g-unknown',
      memberId: 'm',
      epoch: 0,
      partitions: [
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 0 },
        { topicId: topicId('fetch'), partition: 9 },
      ],
    });
    expect(partitionOf(response, 'AAAAAAAAAAAAAAAAAAAAAQ', 0).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
    expect(partitionOf(response, topicId('fetch'), 9).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('long-polls up to MaxWaitMs and answers as soon as records arrive', async () => {
    const t = topicId('fetch');
    const c2 = await TestClient.connect(broker.port);
    await open(c2, 'g-poll', 'm', 'fetch'); // takes everything there is
    const started = Date.now();
    const empty = await shareFetch(c2, { groupId: 'g-poll', memberId: 'm', epoch: 1, partitions: [], maxWaitMs: 300 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(empty.responses).toEqual([]);
    const waiting = shareFetch(c2, { groupId: 'g-poll', memberId: 'm', epoch: 2, partitions: [], maxWaitMs: 1_500 });
    await new Promise((r) => setTimeout(r, 100));
    const at = Date.now();
    await produceValues('fetch', ['late']);
    const got = await waiting;
    expect(Date.now() - at).toBeLessThan(1_000);
    expect(delivered(partitionOf(got, t, 0)).map((r) => r.value)).toEqual(['late']);
    await c2.close();
  });

  it('a long poll whose connection drops acquires nothing more: the records its session held stay available', async () => {
    await produceValues('fetch', ['held']);
    const c2 = await TestClient.connect(broker.port);
    const { records } = await open(c2, 'g-dropped-poll', 'm', 'fetch'); // takes everything there is
    expect(records.map((r) => r.value)).toContain('held');
    // Nothing left to acquire: this fetch waits, until the release of its own session's records wakes it.
    const waiting = shareFetch(c2, { groupId: 'g-dropped-poll', memberId: 'm', epoch: 1, partitions: [], maxWaitMs: 1_500 }).catch(() => null);
    await new Promise((r) => setTimeout(r, 100));
    await c2.close();
    await waiting;
    // The woken request ends at once in either case; give it time to run.
    await new Promise((r) => setTimeout(r, 300));
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-dropped-poll')!.state;
    expect(state.ranges.every((r) => r.state === 'AVAILABLE' && r.deliveryCount === 1)).toBe(true);
  });
});

describe('acknowledgements (KIP-932)', () => {
  it('ACCEPT, RELEASE, REJECT piggybacked on ShareFetch and by ShareAcknowledge; released records come back', async () => {
    const t = topicId('acks');
    await produceValues('acks', ['0', '1', '2', '3', '4', '5']);
    await open(c, 'g-acks', 'm1', 'acks');
    const fetch = await shareFetch(c, {
      groupId: 'g-acks',
      memberId: 'm1',
      epoch: 1,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 2n, types: [AckType.ACCEPT, AckType.RELEASE, AckType.REJECT] }] }],
    });
    const p = partitionOf(fetch, t, 0);
    expect(p.acknowledgeErrorCode).toBe(0);
    expect(delivered(p).map((r) => [r.offset, r.deliveryCount])).toEqual([[1n, 2]]); // the released record, redelivered
    const ack = await shareAcknowledge(c, {
      groupId: 'g-acks',
      memberId: 'm1',
      epoch: 2,
      partitions: [
        {
          topicId: t,
          partition: 0,
          acks: [
            { first: 1n, last: 1n, types: [AckType.ACCEPT] },
            { first: 3n, last: 5n, types: [AckType.ACCEPT] },
          ],
        },
      ],
    });
    expect(ack.errorCode).toBe(0);
    expect(ack.acquisitionLockTimeoutMs).toBe(LOCK_MS);
    expect(partitionOf(ack, t, 0).errorCode).toBe(0);
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-acks')!.state.startOffset).toBe(6n);
  });

  it('INVALID_RECORD_STATE for records not acquired by the member; INVALID_REQUEST for malformed batches', async () => {
    const t = topicId('acks');
    const c2 = await TestClient.connect(broker.port);
    await open(c, 'g-ack-errors', 'm1', 'acks', 3); // offsets 0-2
    await open(c2, 'g-ack-errors', 'm2', 'acks', 3); // offsets 3-5
    const ack = (acks: { first: bigint; last: bigint; types: number[] }[], epoch: number) =>
      shareAcknowledge(c, { groupId: 'g-ack-errors', memberId: 'm1', epoch, partitions: [{ topicId: t, partition: 0, acks }] });
    expect(partitionOf(await ack([{ first: 3n, last: 3n, types: [1] }], 1), t, 0).errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(partitionOf(await ack([{ first: 2n, last: 1n, types: [1] }], 2), t, 0).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(partitionOf(await ack([{ first: 0n, last: 2n, types: [1, 1] }], 3), t, 0).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(partitionOf(await ack([{ first: 0n, last: 0n, types: [9] }], 4), t, 0).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(
      partitionOf(
        await ack(
          [
            { first: 1n, last: 2n, types: [1] },
            { first: 0n, last: 0n, types: [1] },
          ],
          5,
        ),
        t,
        0,
      ).errorCode,
    ).toBe(ErrorCode.INVALID_REQUEST);
    // Nothing was applied by the failed requests.
    expect(partitionOf(await ack([{ first: 0n, last: 2n, types: [1] }], 6), t, 0).errorCode).toBe(0);
    await c2.close();
  });

  it('RENEW (v2, IsRenewAck) extends the lock and fetches nothing', async () => {
    const t = topicId('acks');
    await open(c, 'g-renew', 'm1', 'acks', 1);
    clock.advance(LOCK_MS - 1_000);
    const renew = await shareFetch(c, {
      groupId: 'g-renew',
      memberId: 'm1',
      epoch: 1,
      isRenewAck: true,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 0n, types: [AckType.RENEW] }] }],
    });
    expect(partitionOf(renew, t, 0).acknowledgeErrorCode).toBe(0);
    expect(partitionOf(renew, t, 0).acquiredRecords).toEqual([]);
    clock.advance(5_000);
    await sc.housekeeping();
    const ok = await shareAcknowledge(c, {
      groupId: 'g-renew',
      memberId: 'm1',
      epoch: 2,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 0n, types: [1] }] }],
    });
    expect(partitionOf(ok, t, 0).errorCode).toBe(0);
  });
});

describe('persisted delivery counts', () => {
  it('a lock that expired before a refused acknowledgement is still written, with its delivery count', async () => {
    const t = topicId('ack-expiry');
    await produceValues('ack-expiry', ['x']);
    const c1 = await TestClient.connect(broker.port);
    expect((await open(c1, 'g-exp', 'm1', 'ack-expiry')).records.map((r) => r.deliveryCount)).toEqual([1]);
    clock.advance(LOCK_MS); // no housekeeping: the acknowledgement is the first to see the expiry
    const late = await shareAcknowledge(c1, {
      groupId: 'g-exp',
      memberId: 'm1',
      epoch: 1,
      partitions: [{ topicId: t, partition: 0, acks: [{ first: 0n, last: 0n, types: [AckType.ACCEPT] }] }],
    });
    expect(partitionOf(late, t, 0).errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    // What the log says (a replay, as after a restart): offset 0 released after one delivery.
    const onDisk = new ShareStateStore(ctx.shareStateLog, { snapshotUpdateRecords: 500, now: () => 0 }).recover().find((p) => p.key.groupId === 'g-exp')!;
    expect(onDisk.state.restoredRanges()).toEqual([{ firstOffset: 0n, lastOffset: 0n, state: 'AVAILABLE', deliveryCount: 1 }]);
    await c1.close();
  });
});

describe('read_committed acquisition', () => {
  it('acquires only committed records: not open transactions, not aborted data, not control records', async () => {
    const t = topicId('committed');
    await produceValues('committed', ['plain']); // 0
    const a = await initProducer(c, 'rc-abort');
    await addPartitions(c, 'rc-abort', a.producerId, a.producerEpoch, 'committed', [0]);
    await produce(
      c,
      'committed',
      0,
      batch({ values: ['aborted'], producerId: a.producerId, producerEpoch: a.producerEpoch, baseSequence: 0, transactional: true }),
      'rc-abort',
    ); // 1
    const k = await initProducer(c, 'rc-commit');
    await addPartitions(c, 'rc-commit', k.producerId, k.producerEpoch, 'committed', [0]);
    await produce(
      c,
      'committed',
      0,
      batch({ values: ['committed'], producerId: k.producerId, producerEpoch: k.producerEpoch, baseSequence: 0, transactional: true }),
      'rc-commit',
    ); // 2

    // Both transactions open: only the record before them is acquirable.
    expect((await open(c, 'g-rc', 'm', 'committed')).records.map((r) => r.value)).toEqual(['plain']);
    expect(await endTxn(c, 'rc-abort', a.producerId, a.producerEpoch, false)).toBe(0);
    expect(await endTxn(c, 'rc-commit', k.producerId, k.producerEpoch, true)).toBe(0);
    await eventually(() => ctx.partition('committed', 0)!.lastStableOffset() === ctx.partition('committed', 0)!.logEndOffset(), 5_000, 'markers');

    const next = await shareFetch(c, { groupId: 'g-rc', memberId: 'm', epoch: 1, partitions: [] });
    const p = partitionOf(next, t, 0);
    expect(delivered(p).map((r) => [r.offset, r.value])).toEqual([[2n, 'committed']]);
    expect(p.acquiredRecords).toEqual([{ firstOffset: 2n, lastOffset: 2n, deliveryCount: 1 }]);
    // Accepting it moves the start offset past the aborted record and both markers.
    await shareAcknowledge(c, {
      groupId: 'g-rc',
      memberId: 'm',
      epoch: 2,
      partitions: [
        {
          topicId: t,
          partition: 0,
          acks: [
            { first: 0n, last: 0n, types: [1] },
            { first: 2n, last: 2n, types: [1] },
          ],
        },
      ],
    });
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-rc')!.state.startOffset).toBe(5n);
  });
});

describe('group configs (KIP-932, IncrementalAlterConfigs on GROUP)', () => {
  async function setGroupConfigs(groupId: string, configs: Record<string, string>): Promise<void> {
    const r = await c.call(
      44,
      {
        resources: [
          { resourceType: 32, resourceName: groupId, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) },
        ],
        validateOnly: false,
      },
      1,
    );
    expect(r.responses[0].errorCode).toBe(0);
  }

  it('share.isolation.level and share.auto.offset.reset: each group reads as its configs say', async () => {
    // This broker's defaults are read_committed and earliest (set in its config); groups override them.
    await setGroupConfigs('g-ru', { 'share.isolation.level': 'read_uncommitted' });
    await setGroupConfigs('g-latest', { 'share.auto.offset.reset': 'latest' });
    await produceValues('cfg-iso', ['before']); // 0
    const a = await initProducer(c, 'cfg-abort');
    await addPartitions(c, 'cfg-abort', a.producerId, a.producerEpoch, 'cfg-iso', [0]);
    await produce(
      c,
      'cfg-iso',
      0,
      batch({ values: ['aborted'], producerId: a.producerId, producerEpoch: a.producerEpoch, baseSequence: 0, transactional: true }),
      'cfg-abort',
    ); // 1
    expect(await endTxn(c, 'cfg-abort', a.producerId, a.producerEpoch, false)).toBe(0); // marker at 2
    await eventually(() => ctx.partition('cfg-iso', 0)!.lastStableOffset() === 3n, 5_000, 'abort marker');
    const o = await initProducer(c, 'cfg-open');
    await addPartitions(c, 'cfg-open', o.producerId, o.producerEpoch, 'cfg-iso', [0]);
    await produce(
      c,
      'cfg-iso',
      0,
      batch({ values: ['open'], producerId: o.producerId, producerEpoch: o.producerEpoch, baseSequence: 0, transactional: true }),
      'cfg-open',
    ); // 3

    expect((await open(c, 'g-ru', 'm', 'cfg-iso')).records.map((r) => r.value)).toEqual(['before', 'aborted', 'open']);
    expect((await open(c, 'g-rc-default', 'm', 'cfg-iso')).records.map((r) => r.value)).toEqual(['before']);
    // latest: the share partition starts at the end (the last stable offset for this read_committed group).
    const latest = await TestClient.connect(broker.port);
    try {
      expect((await open(latest, 'g-latest', 'm', 'cfg-iso')).records).toEqual([]);
      expect(await endTxn(c, 'cfg-open', o.producerId, o.producerEpoch, true)).toBe(0);
      await eventually(() => ctx.partition('cfg-iso', 0)!.lastStableOffset() === 5n, 5_000, 'commit marker');
      await produceValues('cfg-iso', ['after']); // 5
      const next = await shareFetch(latest, { groupId: 'g-latest', memberId: 'm', epoch: 1, partitions: [] });
      expect(delivered(partitionOf(next, topicId('cfg-iso'), 0)).map((r) => r.value)).toEqual(['open', 'after']);
    } finally {
      await latest.close();
    }
  });

  it('share.session.timeout.ms and share.heartbeat.interval.ms: the group’s own membership timings', async () => {
    await setGroupConfigs('g-timings', { 'share.session.timeout.ms': '50000', 'share.heartbeat.interval.ms': '10000' });
    const joined = await heartbeat(c, 'g-timings', 'slow', 0, ['cfg-lock']);
    expect(joined).toMatchObject({ errorCode: 0, heartbeatIntervalMs: 10_000 });
    // 45 s of silence removes a member at the broker's timeout, not at this group's 50 s.
    clock.advance(45_000);
    await sc.housekeeping();
    expect((await heartbeat(c, 'g-timings', 'slow', joined.memberEpoch, null)).errorCode).toBe(0);
    clock.advance(50_000);
    await sc.housekeeping();
    expect((await heartbeat(c, 'g-timings', 'slow', joined.memberEpoch, null)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('share.record.lock.duration.ms and share.delivery.count.limit: the group’s own lock and limit', async () => {
    await setGroupConfigs('g-lock', { 'share.record.lock.duration.ms': '15000', 'share.delivery.count.limit': '2' });
    await produceValues('cfg-lock', ['short-lock']);
    for (let delivery = 1; delivery <= 2; delivery++) {
      const client = await TestClient.connect(broker.port);
      const { response, records } = await open(client, 'g-lock', `m${delivery}`, 'cfg-lock');
      expect(response.acquisitionLockTimeoutMs).toBe(15_000);
      expect(records.map((r) => [r.value, r.deliveryCount])).toEqual([['short-lock', delivery]]);
      // Half the broker's lock (30 s) is the group's whole lock.
      clock.advance(15_000);
      await sc.housekeeping();
      await client.close();
    }
    // Delivered twice (the group's limit, not the broker's 3): archived.
    expect((await open(c, 'g-lock', 'm3', 'cfg-lock')).records).toEqual([]);
    // Another group on the same partition still has the broker's lock.
    const other = await open(c, 'g-lock-default', 'm', 'cfg-lock');
    expect(other.response.acquisitionLockTimeoutMs).toBe(LOCK_MS);
    expect(other.records.map((r) => r.value)).toEqual(['short-lock']);
  });
});

describe('locks and delivery counts', () => {
  it('an expired lock makes the record available again, redelivered with its count; the limit archives it', async () => {
    await produceValues('limit', ['poison']);
    for (let delivery = 1; delivery <= 3; delivery++) {
      const client = await TestClient.connect(broker.port);
      const { records } = await open(client, 'g-limit', `m${delivery}`, 'limit');
      expect(records.map((r) => [r.value, r.deliveryCount])).toEqual([['poison', delivery]]);
      clock.advance(LOCK_MS);
      await sc.housekeeping();
      await client.close();
    }
    // Delivered 3 times (the limit): archived, never again.
    expect((await open(c, 'g-limit', 'm4', 'limit')).records).toEqual([]);
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-limit')!.state.startOffset).toBe(1n);
  });

  it('a dropped connection and a closing fetch (epoch −1) release the member’s records at once', async () => {
    await produceValues('conn', ['x', 'y']);
    const c1 = await TestClient.connect(broker.port);
    expect((await open(c1, 'g-conn', 'm1', 'conn')).records).toHaveLength(2);
    await c1.close();
    await eventually(
      () =>
        sc
          .describe()
          .partitions.find((x) => x.key.groupId === 'g-conn')!
          .state.ranges.every((r) => r.state === 'AVAILABLE'),
      3_000,
      'release on close',
    );
    const c2 = await TestClient.connect(broker.port);
    const again = await open(c2, 'g-conn', 'm2', 'conn');
    expect(again.records.map((r) => r.deliveryCount)).toEqual([2, 2]);
    const closed = await shareFetch(c2, { groupId: 'g-conn', memberId: 'm2', epoch: -1, partitions: [] });
    expect(closed.errorCode).toBe(0);
    expect((await shareFetch(c2, { groupId: 'g-conn', memberId: 'm2', epoch: 1, partitions: [] })).errorCode).toBe(ErrorCode.SHARE_SESSION_NOT_FOUND);
    expect(
      sc
        .describe()
        .partitions.find((x) => x.key.groupId === 'g-conn')!
        .state.ranges.every((r) => r.state === 'AVAILABLE'),
    ).toBe(true);
    await c2.close();
  });
});

describe('TxnShareAcknowledge (KIP-1289)', () => {
  /**
   * Joins `memberId` and starts `transactionalId`'s transaction with the share acks of `topic`-0 added.
   * `acks` gives the fields of that member's TxnShareAcknowledge of `batches` on `topic`-0.
   */
  async function txnSetup(topic: string, transactionalId: string, groupId: string, memberId: string) {
    await heartbeat(c, groupId, memberId, 0, [topic]);
    const member = await heartbeat(c, groupId, memberId, 1, null);
    const producer = await initProducer(c, transactionalId);
    expect(producer.errorCode).toBe(0);
    const added = await addShareAcksToTxn(c, transactionalId, producer.producerId, producer.producerEpoch, groupId, topic, [0]);
    expect(added.errorCode).toBe(0);
    const acks = (batches: TxnAckArgs['partitions'][number]['batches'], generationId?: number): TxnAckArgs => ({
      groupId,
      transactionalId,
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      memberId,
      generationId,
      partitions: [{ topicId: topicId(topic), partition: 0, batches }],
    });
    return { producer, memberEpoch: member.memberEpoch as number, acks };
  }

  it('pins acknowledged records until COMMIT, which applies them', async () => {
    const t = topicId('txn-commit');
    await produceValues('txn-commit', ['a', 'b', 'c']);
    const { producer, memberEpoch, acks } = await txnSetup('txn-commit', 'tx-commit', 'g-txc', 'm1');
    expect((await open(c, 'g-txc', 'm1', 'txn-commit')).records).toHaveLength(3);
    const r = await txnShareAcknowledge(
      c,
      acks(
        [
          { first: 0n, last: 1n, type: AckType.ACCEPT },
          { first: 2n, last: 2n, type: AckType.RELEASE },
        ],
        memberEpoch,
      ),
    );
    expect(r.errorCode).toBe(0);
    expect(r.topics[0].partitions[0]).toMatchObject({ partition: 0, errorCode: 0 });
    // Locks do not run out while pending, and nobody else gets the records.
    clock.advance(LOCK_MS * 10);
    await sc.housekeeping();
    const c2 = await TestClient.connect(broker.port);
    await heartbeat(c, 'g-txc', 'm2', 0, ['txn-commit']); // fetching needs membership where the group is known
    expect((await open(c2, 'g-txc', 'm2', 'txn-commit')).records).toEqual([]);
    expect(sc.dump()).toContain('TX_PENDING');

    expect(await endTxn(c, 'tx-commit', producer.producerId, producer.producerEpoch, true)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'commit marker');
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-txc')!.state;
    expect(state.startOffset).toBe(2n);
    // The released record (Release in the committed transaction) is delivered again.
    const after = await shareFetch(c2, { groupId: 'g-txc', memberId: 'm2', epoch: 1, partitions: [] });
    expect(delivered(partitionOf(after, t, 0)).map((x) => [x.offset, x.deliveryCount])).toEqual([[2n, 2]]);
    await c2.close();
  });

  it('ABORT makes the records available at once, delivery count kept', async () => {
    await produceValues('txn-abort', ['a', 'b']);
    const { producer, acks } = await txnSetup('txn-abort', 'tx-abort', 'g-txa', 'm1');
    await open(c, 'g-txa', 'm1', 'txn-abort');
    const r = await txnShareAcknowledge(c, acks([{ first: 0n, last: 1n, type: AckType.ACCEPT }]));
    expect(r.errorCode).toBe(0);
    expect(await endTxn(c, 'tx-abort', producer.producerId, producer.producerEpoch, false)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'abort marker');
    const c2 = await TestClient.connect(broker.port);
    await heartbeat(c, 'g-txa', 'm2', 0, ['txn-abort']);
    expect((await open(c2, 'g-txa', 'm2', 'txn-abort')).records.map((x) => [x.value, x.deliveryCount])).toEqual([
      ['a', 2],
      ['b', 2],
    ]);
    await c2.close();
  });

  it('a transaction holding acks for one share group is refused acks for another (INVALID_TXN_STATE) until it adds that group', async () => {
    await produceValues('txn-iso', ['a', 'b']);
    const { producer, acks } = await txnSetup('txn-iso', 'tx-iso', 'g-iso-a', 'm1');
    await open(c, 'g-iso-a', 'm1', 'txn-iso');
    const c2 = await TestClient.connect(broker.port);
    await heartbeat(c2, 'g-iso-b', 'mb', 0, ['txn-iso']);
    await open(c2, 'g-iso-b', 'mb', 'txn-iso');
    const codeOf = (r: any): number => (r.errorCode !== 0 ? r.errorCode : r.topics[0].partitions[0].errorCode);
    // Group A's acks open the transaction in this node's __share_group_state partition…
    expect(codeOf(await txnShareAcknowledge(c, acks([{ first: 0n, last: 0n, type: AckType.ACCEPT }])))).toBe(0);
    // …which must not let group B's acks in: the transaction added group A only.
    const forB = { ...acks([{ first: 0n, last: 1n, type: AckType.ACCEPT }]), groupId: 'g-iso-b', memberId: 'mb' };
    expect(codeOf(await txnShareAcknowledge(c2, forB))).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(
      sc
        .describe()
        .partitions.find((x) => x.key.groupId === 'g-iso-b')!
        .state.ranges.some((r) => r.state === 'TX_PENDING'),
    ).toBe(false);
    // Once the transaction holds acks for group B too, they are accepted.
    expect((await addShareAcksToTxn(c, 'tx-iso', producer.producerId, producer.producerEpoch, 'g-iso-b', 'txn-iso', [0])).errorCode).toBe(0);
    expect(codeOf(await txnShareAcknowledge(c2, forB))).toBe(0);
    expect(await endTxn(c, 'tx-iso', producer.producerId, producer.producerEpoch, false)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'abort marker');
    await c2.close();
  });

  it('refuses what it must: no AddShareAcksToTxn, another member’s records, pending twice, unknown member, generation ahead, v0', async () => {
    const t = topicId('txn-errors');
    await produceValues('txn-errors', ['a', 'b', 'c', 'd']);
    const { producer, memberEpoch } = await txnSetup('txn-errors', 'tx-errors', 'g-txe', 'm1');
    const c2 = await TestClient.connect(broker.port);
    await open(c, 'g-txe', 'm1', 'txn-errors', 2); // 0-1
    await heartbeat(c, 'g-txe', 'm2', 0, ['txn-errors']);
    await open(c2, 'g-txe', 'm2', 'txn-errors', 2); // 2-3
    const base = {
      groupId: 'g-txe',
      transactionalId: 'tx-errors',
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      memberId: 'm1',
      generationId: memberEpoch,
    };
    const on = (first: bigint, last: bigint, type: number = AckType.ACCEPT) => [{ topicId: t, partition: 0, batches: [{ first, last, type }] }];

    const notAdded = await initProducer(c, 'tx-not-added');
    const r0 = await txnShareAcknowledge(c, {
      ...base,
      transactionalId: 'tx-not-added',
      producerId: notAdded.producerId,
      producerEpoch: notAdded.producerEpoch,
      partitions: on(0n, 0n),
    });
    expect(r0.errorCode).toBe(48); // INVALID_TXN_STATE: the transaction does not hold the partition
    expect(r0.topics[0].partitions[0].errorCode).toBe(48);

    expect((await txnShareAcknowledge(c, { ...base, partitions: on(2n, 2n) })).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect((await txnShareAcknowledge(c, { ...base, partitions: on(0n, 0n) })).errorCode).toBe(0);
    // Pending already, as ACCEPT: another type is refused, all or nothing (1 stays ACQUIRED).
    expect((await txnShareAcknowledge(c, { ...base, partitions: on(0n, 1n, AckType.REJECT) })).topics[0].partitions[0].errorCode).toBe(
      ErrorCode.INVALID_RECORD_STATE,
    );
    expect((await txnShareAcknowledge(c, { ...base, partitions: on(1n, 1n, AckType.GAP) })).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await txnShareAcknowledge(c, { ...base, memberId: 'ghost', partitions: on(1n, 1n) })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    // Only a retry of acks already pending (nothing new) skips the member check; an empty request is no retry.
    expect((await txnShareAcknowledge(c, { ...base, memberId: 'ghost', partitions: [{ topicId: t, partition: 0, batches: [] }] })).errorCode).toBe(
      ErrorCode.UNKNOWN_MEMBER_ID,
    );
    expect((await txnShareAcknowledge(c, { ...base, generationId: memberEpoch + 5, partitions: on(1n, 1n) })).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    // v0 cannot name the member: any ACQUIRED record is accepted, even m2's.
    expect((await txnShareAcknowledge(c, { ...base, partitions: on(2n, 2n) }, 0)).errorCode).toBe(0);
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-txe')!.state;
    expect(state.ranges.map((r) => [r.firstOffset, r.state])).toEqual([
      [0n, 'TX_PENDING'],
      [1n, 'ACQUIRED'],
      [2n, 'TX_PENDING'],
      [3n, 'ACQUIRED'],
    ]);
    expect(await endTxn(c, 'tx-errors', producer.producerId, producer.producerEpoch, false)).toBe(0);
    await c2.close();
  });

  it('an offset named twice in one transaction is refused: INVALID_REQUEST within one request, INVALID_RECORD_STATE across requests', async () => {
    const t = topicId('txn-twice');
    await produceValues('txn-twice', ['a', 'b', 'c', 'd']);
    const { producer, acks } = await txnSetup('txn-twice', 'tx-twice', 'g-tw', 'm1');
    await open(c, 'g-tw', 'm1', 'txn-twice');
    const codeOf = (r: any): number => (r.errorCode !== 0 ? r.errorCode : r.topics[0].partitions[0].errorCode);
    // Within one request: batches overlapping, or the partition listed twice.
    expect(
      codeOf(
        await txnShareAcknowledge(
          c,
          acks([
            { first: 0n, last: 1n, type: AckType.ACCEPT },
            { first: 1n, last: 1n, type: AckType.ACCEPT },
          ]),
        ),
      ),
    ).toBe(ErrorCode.INVALID_REQUEST);
    const twiceListed = acks([{ first: 0n, last: 0n, type: AckType.ACCEPT }]);
    twiceListed.partitions.push({ topicId: t, partition: 0, batches: [{ first: 0n, last: 0n, type: AckType.ACCEPT }] });
    expect(codeOf(await txnShareAcknowledge(c, twiceListed))).toBe(ErrorCode.INVALID_REQUEST);
    // Across requests: 0-1 pending, then 1-2 names 1 again next to the new 2.
    expect(codeOf(await txnShareAcknowledge(c, acks([{ first: 0n, last: 1n, type: AckType.ACCEPT }])))).toBe(0);
    const again = await txnShareAcknowledge(c, acks([{ first: 1n, last: 2n, type: AckType.ACCEPT }]));
    expect(codeOf(again)).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(again.topics[0].partitions[0].errorMessage).toMatch(/offset 1 is already acknowledged in this transaction/);
    // The same request again is a retry (its response lost): accepted, nothing new.
    expect(codeOf(await txnShareAcknowledge(c, acks([{ first: 0n, last: 1n, type: AckType.ACCEPT }])))).toBe(0);
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-tw')!.state;
    expect(state.ranges.map((r) => [r.firstOffset, r.state])).toEqual([
      [0n, 'TX_PENDING'],
      [2n, 'ACQUIRED'],
    ]);
    expect(await endTxn(c, 'tx-twice', producer.producerId, producer.producerEpoch, false)).toBe(0);
  });

  it('a fenced producer gets PRODUCER_FENCED, and its pending acks are aborted with its transaction', async () => {
    const t = topicId('txn-fence');
    await produceValues('txn-fence', ['a', 'b']);
    const { producer } = await txnSetup('txn-fence', 'tx-fence', 'g-txf', 'm1');
    await open(c, 'g-txf', 'm1', 'txn-fence');
    const base = { groupId: 'g-txf', transactionalId: 'tx-fence', producerId: producer.producerId, memberId: 'm1' };
    expect(
      (
        await txnShareAcknowledge(c, {
          ...base,
          producerEpoch: producer.producerEpoch,
          partitions: [{ topicId: t, partition: 0, batches: [{ first: 0n, last: 0n, type: 1 }] }],
        })
      ).errorCode,
    ).toBe(0);
    // A new instance with the same transactional id: the TC bumps the epoch and aborts the old transaction.
    const zombie = producer.producerEpoch;
    // The TC answers CONCURRENT_TRANSACTIONS while it aborts the old transaction; a client retries.
    let fresh = await initProducer(c, 'tx-fence');
    await eventually(async () => (fresh = await initProducer(c, 'tx-fence')).errorCode === 0, 5_000, 'InitProducerId');
    expect(fresh.producerEpoch).toBeGreaterThan(zombie);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'fencing abort');
    const late = await txnShareAcknowledge(c, {
      ...base,
      producerEpoch: zombie,
      partitions: [{ topicId: t, partition: 0, batches: [{ first: 1n, last: 1n, type: 1 }] }],
    });
    expect([ErrorCode.PRODUCER_FENCED, 47]).toContain(late.errorCode); // PRODUCER_FENCED here, INVALID_PRODUCER_EPOCH from the TC
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-txf')!.state;
    expect(state.ranges.find((r) => r.firstOffset === 0n)!.state).toBe('AVAILABLE');
  });

  it('after KeepPreparedTxn the old producer epoch is fenced on the share-state partition its transaction already holds', async () => {
    const t = topicId('txn-keep');
    await produceValues('txn-keep', ['a', 'b']);
    await heartbeat(c, 'g-txk', 'm1', 0, ['txn-keep']);
    await heartbeat(c, 'g-txk', 'm1', 1, null);
    const old = await c.call(22, { transactionalId: 'tx-keep', transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1, enable2Pc: true }, 6);
    expect(old.errorCode).toBe(0);
    expect((await addShareAcksToTxn(c, 'tx-keep', old.producerId, old.producerEpoch, 'g-txk', 'txn-keep', [0])).errorCode).toBe(0);
    await open(c, 'g-txk', 'm1', 'txn-keep');
    const ack = (producerEpoch: number, offset: bigint) =>
      txnShareAcknowledge(c, {
        groupId: 'g-txk',
        transactionalId: 'tx-keep',
        producerId: old.producerId,
        producerEpoch,
        memberId: 'm1',
        partitions: [{ topicId: t, partition: 0, batches: [{ first: offset, last: offset, type: AckType.ACCEPT }] }],
      });
    expect((await ack(old.producerEpoch, 0n)).errorCode).toBe(0);
    // A recovery producer keeps the prepared transaction: the producer that prepared it may not add to it any more,
    // though its transaction is open in this __share_group_state partition for this very group.
    const kept = await c.call(
      22,
      { transactionalId: 'tx-keep', transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1, enable2Pc: true, keepPreparedTxn: true },
      6,
    );
    expect(kept).toMatchObject({ errorCode: 0, ongoingTxnProducerEpoch: old.producerEpoch });
    expect((await ack(old.producerEpoch, 1n)).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect(await endTxn(c, 'tx-keep', kept.producerId, kept.producerEpoch, true)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'commit marker');
    const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-txk')!.state;
    // Offset 0 committed with the transaction (the start moved past it); offset 1 was never part of it: still acquired.
    expect(state.startOffset).toBe(1n);
    expect(state.ranges.find((r) => r.firstOffset === 1n)!.state).toBe('ACQUIRED');
  });

  it('a retry of a stored TxnShareAcknowledge (same bytes, response lost) succeeds without a second write; commit applies it once', async () => {
    const t = topicId('txn-retry');
    await produceValues('txn-retry', ['a', 'b', 'c']);
    const { producer, memberEpoch, acks } = await txnSetup('txn-retry', 'tx-retry', 'g-txr', 'm1');
    expect((await open(c, 'g-txr', 'm1', 'txn-retry')).records).toHaveLength(3);
    const args = acks(
      [
        { first: 0n, last: 1n, type: AckType.ACCEPT },
        { first: 2n, last: 2n, type: AckType.REJECT },
      ],
      memberEpoch,
    );
    const frame = txnShareAcknowledgeFrame(args);
    const writes = () => [...ctx.shareStateLog.batches()].filter((b) => b.isTransactional && !b.isControl && b.producerId === producer.producerId).length;

    dropTxnAckResponses = 1;
    expect(await sendTxnShareAcknowledgeFrame(broker.port, frame)).toBeNull(); // stored, then the connection dropped
    const pending = () => sc.describe().partitions.find((x) => x.key.groupId === 'g-txr')!.state.ranges;
    expect(pending().map((r) => [r.firstOffset, r.lastOffset, r.state, r.pending?.ackType])).toEqual([
      [0n, 1n, 'TX_PENDING', 'ACCEPT'],
      [2n, 2n, 'TX_PENDING', 'REJECT'],
    ]);
    expect(writes()).toBe(1);

    const retried = await sendTxnShareAcknowledgeFrame(broker.port, frame);
    expect(retried.errorCode).toBe(0);
    expect(retried.topics[0].partitions).toEqual([{ partition: 0, errorCode: 0, errorMessage: null }]);
    expect(writes()).toBe(1); // no second write
    // Again through an ordinary connection, and a part of it: still the same acknowledgements.
    expect(
      (
        await txnShareAcknowledge(c, {
          ...args,
          partitions: [{ topicId: t, partition: 0, batches: [{ first: 1n, last: 1n, type: AckType.ACCEPT }] }],
        })
      ).errorCode,
    ).toBe(0);
    expect(writes()).toBe(1);

    // Another type from the same producer and epoch, or another producer: INVALID_RECORD_STATE, nothing changes.
    const differentType = await txnShareAcknowledge(c, {
      ...args,
      partitions: [{ topicId: t, partition: 0, batches: [{ first: 0n, last: 1n, type: AckType.RELEASE }] }],
    });
    expect(differentType.errorCode).toBe(0);
    expect(differentType.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    const other = await initProducer(c, 'tx-retry-other');
    expect((await addShareAcksToTxn(c, 'tx-retry-other', other.producerId, other.producerEpoch, 'g-txr', 'txn-retry', [0])).errorCode).toBe(0);
    const otherProducer = await txnShareAcknowledge(c, {
      ...args,
      transactionalId: 'tx-retry-other',
      producerId: other.producerId,
      producerEpoch: other.producerEpoch,
    });
    expect(otherProducer.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_RECORD_STATE);
    expect(await endTxn(c, 'tx-retry-other', other.producerId, other.producerEpoch, false)).toBe(0);
    expect(writes()).toBe(1);

    expect(await endTxn(c, 'tx-retry', producer.producerId, producer.producerEpoch, true)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'commit marker');
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-txr')!.state).toMatchObject({ startOffset: 3n, ranges: [] });
    const c2 = await TestClient.connect(broker.port);
    await heartbeat(c, 'g-txr', 'm2', 0, ['txn-retry']);
    expect((await open(c2, 'g-txr', 'm2', 'txn-retry')).records).toEqual([]);
    await c2.close();
  });

  it('the producer retries TxnShareAcknowledge over a new connection when the response is lost; stored once, committed once', async () => {
    await produceValues('txn-retry-client', ['x', 'y', 'z']);
    await heartbeat(c, 'g-txrc', 'm1', 0, ['txn-retry-client']);
    const member = await heartbeat(c, 'g-txrc', 'm1', 1, null);
    expect((await open(c, 'g-txrc', 'm1', 'txn-retry-client')).records).toHaveLength(3);
    const producer = new KafkaProducer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      transactionalId: 'tx-retry-client',
      metricsRegistry: null,
      logger: null,
      retryBackoffMs: 10,
      maxBlockMs: 10_000,
    });
    try {
      await producer.initTransactions();
      const { producerId } = producer.transactionSnapshot();
      producer.beginTransaction();
      const calls = txnAckCalls;
      dropTxnAckResponses = 1;
      await producer.sendShareAcksToTransaction(
        new ShareAcknowledgements().addRange('txn-retry-client', 0, 0n, 1n, 'accept').addRange('txn-retry-client', 0, 2n, 2n, 'release'),
        new ShareGroupMetadata('g-txrc', 'm1', member.memberEpoch),
      );
      expect(txnAckCalls - calls).toBe(2); // the lost one and its retry
      expect(dropTxnAckResponses).toBe(0);
      const writes = [...ctx.shareStateLog.batches()].filter((b) => b.isTransactional && !b.isControl && b.producerId === producerId);
      expect(writes).toHaveLength(1);
      await producer.commitTransaction();
      await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'commit marker');
      // 0-1 acknowledged once; 2 released by the committed transaction, so delivered again (count 2).
      const state = sc.describe().partitions.find((x) => x.key.groupId === 'g-txrc')!.state;
      expect(state.startOffset).toBe(2n);
      expect(state.ranges).toEqual([{ firstOffset: 2n, lastOffset: 2n, state: 'AVAILABLE', deliveryCount: 1 }]);
    } finally {
      await producer.close();
    }
  });

  it('keeps pending acks pending across a broker restart, then the commit applies them', async () => {
    await produceValues('restart', ['a', 'b', 'c']);
    const { producer, acks } = await txnSetup('restart', 'tx-restart', 'g-rs', 'm1');
    await open(c, 'g-rs', 'm1', 'restart');
    const r = await txnShareAcknowledge(c, acks([{ first: 0n, last: 1n, type: AckType.ACCEPT }]));
    expect(r.errorCode).toBe(0);
    await c.close();
    await broker.close();
    await start();
    c = await TestClient.connect(broker.port);
    // Offset 2 was only ACQUIRED (not persisted): back to AVAILABLE. 0-1 are still pinned.
    const after = await open(c, 'g-rs', 'm2', 'restart');
    expect(after.records.map((x) => x.offset)).toEqual([2n]);
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-rs')!.state.ranges[0]).toMatchObject({
      firstOffset: 0n,
      lastOffset: 1n,
      state: 'TX_PENDING',
    });
    expect(await endTxn(c, 'tx-restart', producer.producerId, producer.producerEpoch, true)).toBe(0);
    await eventually(() => sc.describe().pendingTransactions.length === 0, 5_000, 'commit after restart');
    expect(sc.describe().partitions.find((x) => x.key.groupId === 'g-rs')!.state.startOffset).toBe(2n);
  });
});
