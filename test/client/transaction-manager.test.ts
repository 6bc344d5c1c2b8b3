import { afterEach, describe, expect, it } from 'vitest';
import {
  IllegalStateError,
  InvalidTxnStateError,
  KafkaProducer,
  PreparedTxnState,
  ProducerFencedError,
  ShareAcknowledgements,
  ShareGroupMetadata,
  TransactionAbortableError,
  TransactionAbortedError,
} from '../../client/index.js';
import { createPartitionProduceResponse, createTopicProduceResponse } from '../../generated/ProduceResponse.js';
import { apis } from '../../generated/index.js';
import { respond } from './support/fake-server.js';
import { FakeKafka, TOPIC_ID } from './support/fake-kafka.js';

let fake: FakeKafka;
const producers: KafkaProducer[] = [];

async function setup(options: ConstructorParameters<typeof FakeKafka>[0] = {}) {
  fake = await FakeKafka.start({ topics: { out: { topicId: TOPIC_ID, partitions: 2 } }, ...options });
  const producer = new KafkaProducer({
    bootstrapServers: fake.bootstrap,
    transactionalId: 'tx-1',
    lingerMs: 0,
    maxBlockMs: 2_000,
    retryBackoffMs: 10,
    metricsRegistry: null,
    logger: null,
  });
  producers.push(producer);
  return producer;
}

afterEach(async () => {
  await Promise.all(producers.splice(0).map((p) => p.close(500)));
  await fake?.close();
});

const acks = () => ShareAcknowledgements.fromRecords([{ topic: 'out', partition: 0, offset: 3n, topicId: TOPIC_ID }], 'accept');
const group = new ShareGroupMetadata('g', 'm-1', 2);

/** Every call a producer offers, as thunks. */
function calls(p: KafkaProducer) {
  return {
    initTransactions: () => p.initTransactions(),
    beginTransaction: async () => p.beginTransaction(),
    send: () => p.send({ topic: 'out', partition: 0, value: 'v' }),
    sendOffsetsToTransaction: () => p.sendOffsetsToTransaction([{ topic: 'out', partition: 0, offset: 1n }], 'cg'),
    sendShareAcksToTransaction: () => p.sendShareAcksToTransaction(acks(), group),
    commitTransaction: () => p.commitTransaction(),
    abortTransaction: () => p.abortTransaction(),
  };
}

/** Makes each of the calls `names` on `p` and expects every one to fail with `type`, its message matching `message`. */
async function expectEachFails(
  p: KafkaProducer,
  names: ReadonlyArray<keyof ReturnType<typeof calls>>,
  type: new (...args: any[]) => Error,
  message: RegExp,
  label = (name: string): string => name,
): Promise<void> {
  const c = calls(p);
  for (const name of names) {
    const error = await c[name]().catch((e: unknown) => e);
    expect(error, label(name)).toBeInstanceOf(type);
    expect((error as Error).message, name).toMatch(message);
  }
}

describe('TransactionManager state machine', () => {
  it('walks UNINITIALIZED → READY → IN_TRANSACTION → COMMITTING → READY', async () => {
    const p = await setup();
    expect(p.transactionState).toBe('UNINITIALIZED');
    const init = p.initTransactions();
    expect(p.transactionState).toBe('INITIALIZING');
    await init;
    expect(p.transactionState).toBe('READY');
    p.beginTransaction();
    expect(p.transactionState).toBe('IN_TRANSACTION');
    const sent = p.send({ topic: 'out', partition: 1, value: 'hello' });
    await p.sendShareAcksToTransaction(acks(), group);
    const commit = p.commitTransaction();
    expect(p.transactionState).toBe('COMMITTING_TRANSACTION');
    await commit;
    expect((await sent).offset).toBe(0n);
    expect(p.transactionState).toBe('READY');
    // The order on the wire: InitProducerId, AddPartitionsToTxn, AddShareAcksToTxn, TxnShareAcknowledge v1, Produce, EndTxn(commit).
    const keys = fake.server.received.map((r) => r.apiKey).filter((k) => ![18, 3, 10].includes(k));
    expect(keys.indexOf(95)).toBeLessThan(keys.indexOf(96));
    expect(keys.at(-1)).toBe(26);
    expect(fake.requests(26)[0]!.body.committed).toBe(true);
    const txnAck = fake.requests(96)[0]!;
    expect(txnAck.apiVersion).toBe(1);
    expect(txnAck.body).toMatchObject({ groupId: 'g', memberId: 'm-1', generationId: 2, transactionalId: 'tx-1' });
    expect(txnAck.body.topics[0].partitions[0].acknowledgementBatches).toEqual([{ firstOffset: 3n, lastOffset: 3n, acknowledgeType: 1 }]);
    expect(fake.requests(95)[0]!.body).toMatchObject({ groupId: 'g', topics: [{ name: 'out', partitions: [0] }] });
    expect(fake.requests(0)[0]!.body.transactionalId).toBe('tx-1');
  });

  it('UNINITIALIZED: every call but initTransactions raises IllegalStateError naming initTransactions()', async () => {
    const p = await setup();
    await expectEachFails(
      p,
      ['beginTransaction', 'send', 'sendOffsetsToTransaction', 'sendShareAcksToTransaction', 'commitTransaction', 'abortTransaction'],
      IllegalStateError,
      /call initTransactions\(\) first/,
    );
  });

  it('READY: transactional calls raise IllegalStateError naming beginTransaction()', async () => {
    const p = await setup();
    await p.initTransactions();
    await expectEachFails(
      p,
      ['send', 'sendOffsetsToTransaction', 'sendShareAcksToTransaction', 'commitTransaction', 'abortTransaction'],
      IllegalStateError,
      /in state READY: no transaction is in progress: call beginTransaction\(\) first/,
    );
    await expect(p.initTransactions()).rejects.toThrow(/initTransactions\(\) was already called \(state READY\)/);
  });

  it('IN_TRANSACTION: beginTransaction and initTransactions are illegal', async () => {
    const p = await setup();
    await p.initTransactions();
    p.beginTransaction();
    expect(() => p.beginTransaction()).toThrow(IllegalStateError);
    expect(() => p.beginTransaction()).toThrow(/a transaction is in progress: call send\(\), .*commitTransaction\(\) or abortTransaction\(\)/);
    await expect(p.initTransactions()).rejects.toBeInstanceOf(IllegalStateError);
    await p.abortTransaction();
    expect(p.transactionState).toBe('READY');
    // Nothing reached the coordinator: no EndTxn needed.
    expect(fake.requests(26)).toHaveLength(0);
  });

  it('COMMITTING_TRANSACTION / ABORTING_TRANSACTION: only the same call again (awaiting the same outcome) is allowed', async () => {
    const p = await setup();
    fake.on(26, () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 80)));
    await p.initTransactions();
    for (const [end, other, state] of [
      ['commitTransaction', 'abortTransaction', 'COMMITTING_TRANSACTION'],
      ['abortTransaction', 'commitTransaction', 'ABORTING_TRANSACTION'],
    ] as const) {
      p.beginTransaction();
      await p.send({ topic: 'out', partition: 0, value: 'x' }).catch(() => {});
      const first = p[end]();
      expect(p.transactionState).toBe(state);
      await expectEachFails(
        p,
        ['beginTransaction', 'send', 'sendOffsetsToTransaction', 'sendShareAcksToTransaction', other],
        IllegalStateError,
        new RegExp(`in state ${state}: ${end}\\(\\) is in progress`),
        (name) => `${name} in ${state}`,
      );
      const again = p[end]();
      await Promise.all([first, again]);
      expect(p.transactionState).toBe('READY');
    }
    expect(fake.requests(26).map((r) => r.body.committed)).toEqual([true, false]);
  });

  it('a failed send makes the transaction abortable: only abortTransaction() is allowed', async () => {
    const p = await setup();
    fake.on(0, (r) =>
      respond({
        responses: r.body.topicData.map((t: any) =>
          createTopicProduceResponse({
            name: t.name,
            partitionResponses: t.partitionData.map((x: any) => createPartitionProduceResponse({ index: x.index, errorCode: 87, errorMessage: 'bad record' })),
          }),
        ),
      }),
    );
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.send({ topic: 'out', partition: 0, value: 'x' })).rejects.toThrow(/INVALID_RECORD \(87\): bad record/);
    expect(p.transactionState).toBe('ABORTABLE_ERROR');
    await expectEachFails(
      p,
      ['send', 'sendOffsetsToTransaction', 'sendShareAcksToTransaction', 'commitTransaction'],
      TransactionAbortableError,
      /can only be aborted; call abortTransaction\(\)/,
    );
    await expect(calls(p).beginTransaction()).rejects.toThrow(
      /in state ABORTABLE_ERROR: the transaction failed and can only be aborted: call abortTransaction\(\)/,
    );
    await p.abortTransaction();
    expect(p.transactionState).toBe('READY');
    expect(fake.requests(26).at(-1)!.body.committed).toBe(false);
    // The failed batch had a sequence number: the epoch was bumped (KIP-360) after the abort.
    expect(fake.requests(22).at(-1)!.body.producerId).toBe(1000n);
  });

  it('unsent records fail with TransactionAbortedError when the transaction aborts', async () => {
    const p = await setup();
    fake.on(24, () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)));
    await p.initTransactions();
    p.beginTransaction();
    const sent = p.send({ topic: 'out', partition: 0, value: 'x' });
    const outcome = expect(sent).rejects.toBeInstanceOf(TransactionAbortedError);
    await p.abortTransaction();
    await outcome;
  });

  it('TRANSACTION_ABORTABLE from a coordinator makes the transaction abortable', async () => {
    const p = await setup();
    fake.on(95, () => respond({ errorCode: 120 }));
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.sendShareAcksToTransaction(acks(), group)).rejects.toBeInstanceOf(TransactionAbortableError);
    expect(p.transactionState).toBe('ABORTABLE_ERROR');
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(TransactionAbortableError);
    await p.abortTransaction();
    expect(p.transactionState).toBe('READY');
  });

  it('INVALID_RECORD_STATE from the share coordinator makes the transaction abortable', async () => {
    const p = await setup();
    fake.on(96, (r) =>
      respond({
        topics: r.body.topics.map((t: any) => ({
          topicId: t.topicId,
          partitions: t.partitions.map((x: any) => ({
            partition: x.partition,
            errorCode: 121,
            errorMessage: 'offset 3 not acquired by m-1',
          })),
        })),
      }),
    );
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.sendShareAcksToTransaction(acks(), group)).rejects.toThrow(/INVALID_RECORD_STATE \(121\): offset 3 not acquired by m-1/);
    expect(p.transactionState).toBe('ABORTABLE_ERROR');
    await p.abortTransaction();
  });

  it('PRODUCER_FENCED is fatal: every later call rethrows it', async () => {
    const p = await setup();
    fake.on(26, () => respond({ errorCode: 90 }));
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', partition: 0, value: 'x' });
    const error = await p.commitTransaction().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProducerFencedError);
    expect((error as Error).message).toMatch(/Close this producer/);
    expect(p.transactionState).toBe('FATAL_ERROR');
    const c = calls(p);
    for (const name of Object.keys(c) as Array<keyof typeof c>) {
      await expect(c[name](), name).rejects.toBe(error);
    }
  });

  it('INVALID_PRODUCER_EPOCH from the transaction coordinator means fenced (fatal)', async () => {
    const p = await setup();
    fake.on(24, (r) =>
      respond({
        resultsByTopicV3AndBelow: r.body.v3AndBelowTopics.map((t: any) => ({
          name: t.name,
          resultsByPartition: t.partitions.map((x: number) => ({ partitionIndex: x, partitionErrorCode: 47 })),
        })),
      }),
    );
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.send({ topic: 'out', partition: 0, value: 'x' })).rejects.toBeInstanceOf(ProducerFencedError);
    expect(p.transactionState).toBe('FATAL_ERROR');
  });

  it('a broker without KIP-1289 fails sendShareAcksToTransaction with UnsupportedVersionError (abortable)', async () => {
    const p = await setup({ without: [95, 96] });
    await p.initTransactions();
    p.beginTransaction();
    await expect(p.sendShareAcksToTransaction(acks(), group)).rejects.toThrow(
      /does not support AddShareAcksToTxn \(API 95, KIP-1289; kipgen sends v0\): it advertises API keys/,
    );
    expect(p.transactionState).toBe('ABORTABLE_ERROR');
    await p.abortTransaction();
  });

  it('TxnShareAcknowledge uses v0 when the broker lacks v1, and when the member is unknown', async () => {
    const p = await setup({ maxVersions: { 96: 0 } });
    await p.initTransactions();
    p.beginTransaction();
    await p.sendShareAcksToTransaction(acks(), group);
    await p.sendShareAcksToTransaction(acks(), new ShareGroupMetadata('g'));
    await p.commitTransaction();
    expect(fake.requests(96).map((r) => r.apiVersion)).toEqual([0, 0]);
  });

  it('retries CONCURRENT_TRANSACTIONS and NOT_COORDINATOR until they clear', async () => {
    const p = await setup();
    let n = 0;
    fake.on(26, () => (n++ < 2 ? respond({ errorCode: n === 1 ? 51 : 16 }) : undefined));
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', partition: 0, value: 'x' });
    await p.commitTransaction();
    expect(fake.requests(26)).toHaveLength(3);
    expect(p.transactionState).toBe('READY');
  });

  it("the first add of a transaction retries CONCURRENT_TRANSACTIONS after 20 ms (Kafka's ADD_PARTITIONS_RETRY_BACKOFF_MS), later ones after retry.backoff.ms", async () => {
    fake = await FakeKafka.start({ topics: { out: { topicId: TOPIC_ID, partitions: 2 } } });
    const p = new KafkaProducer({
      bootstrapServers: fake.bootstrap,
      transactionalId: 'tx-1',
      lingerMs: 0,
      maxBlockMs: 10_000,
      retryBackoffMs: 400,
      metricsRegistry: null,
      logger: null,
    });
    producers.push(p);
    await p.initTransactions();
    // The previous transaction's markers are still being written: the first add meets CONCURRENT_TRANSACTIONS twice.
    let shareAcks = 0;
    fake.on(95, () => (shareAcks++ < 2 ? respond({ errorCode: 51 }) : undefined));
    p.beginTransaction();
    let t0 = performance.now();
    await p.sendShareAcksToTransaction(acks(), group);
    const first = performance.now() - t0;
    expect(fake.requests(95)).toHaveLength(3);
    expect(first).toBeLessThan(300); // two retries of 20 ms, not 400 + 800
    // The transaction has started: CONCURRENT_TRANSACTIONS now is not that race, and gets the usual backoff.
    let offsets = 0;
    fake.on(25, () => (offsets++ < 1 ? respond({ errorCode: 51 }) : undefined));
    t0 = performance.now();
    await p.sendOffsetsToTransaction([{ topic: 'out', partition: 0, offset: 1n }], 'cg');
    expect(fake.requests(25)).toHaveLength(2);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300); // 400 ms ± 20 %
    await p.commitTransaction();
    // A new transaction whose first add is AddOffsetsToTxn: 20 ms again.
    offsets = 0;
    p.beginTransaction();
    t0 = performance.now();
    await p.sendOffsetsToTransaction([{ topic: 'out', partition: 0, offset: 2n }], 'cg');
    expect(performance.now() - t0).toBeLessThan(300);
    await p.commitTransaction();
  });

  it('sends its add requests to the transaction coordinator one at a time', async () => {
    const p = await setup();
    await p.initTransactions();
    let inFlight = 0;
    let most = 0;
    const slow = (): undefined => {
      most = Math.max(most, ++inFlight);
      return undefined;
    };
    for (const key of [24, 25, 95]) {
      fake.on(key, async () => {
        slow();
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        return undefined;
      });
    }
    p.beginTransaction();
    const sent = p.send({ topic: 'out', partition: 1, value: 'x' });
    await Promise.all([p.sendShareAcksToTransaction(acks(), group), p.sendOffsetsToTransaction([{ topic: 'out', partition: 0, offset: 1n }], 'cg')]);
    await p.commitTransaction();
    await sent;
    expect(fake.requests(24).length + fake.requests(25).length + fake.requests(95).length).toBe(3);
    expect(most).toBe(1);
  });

  it('prepareTransaction needs two-phase commit (InitProducerId v6, Transactions V2: not on this classic broker); a saved snapshot is ended by completeTransaction only with classicProtocolFallback', async () => {
    const p = await setup();
    await p.initTransactions();
    p.beginTransaction();
    await p.send({ topic: 'out', partition: 0, value: 'x' });
    // As Kafka's KafkaProducer.prepareTransaction: InvalidTxnStateException without 2PC; the transaction stays open.
    await expect(p.prepareTransaction()).rejects.toBeInstanceOf(InvalidTxnStateError);
    expect(p.transactionState).toBe('IN_TRANSACTION');
    const prepared = p.transactionSnapshot();
    expect(prepared).toEqual({ transactionalId: 'tx-1', producerId: 1000n, producerEpoch: 1 });
    // The fake broker speaks the classic protocol only: recovery there needs the explicit opt-in (else UnsupportedVersionError).
    await expect(KafkaProducer.completeTransaction({ bootstrapServers: fake.bootstrap, logger: null }, prepared, 'commit')).rejects.toThrow(
      /pass classicProtocolFallback: true/,
    );
    await KafkaProducer.completeTransaction({ bootstrapServers: fake.bootstrap, logger: null, classicProtocolFallback: true }, prepared, 'commit');
    expect(fake.requests(26).at(-1)!.body).toMatchObject({
      producerId: 1000n,
      producerEpoch: 1,
      committed: true,
      transactionalId: 'tx-1',
    });
  });

  describe('completeTransaction on a Transactions V2 broker without keepPreparedTxn (Apache Kafka 4.4)', () => {
    /**
     * Kafka 4.4 as the fake: transaction.version 2 finalized, InitProducerId v6, and keepPreparedTxn
     * answered with UNSUPPORTED_VERSION (TransactionCoordinator.handleInitProducerId); EndTxn answers `endTxn`.
     */
    async function kafka44(endTxn: number): Promise<void> {
      await setup();
      fake.on(18, () =>
        respond({
          apiKeys: [...apis.values()].map((a) => ({
            apiKey: a.apiKey,
            minVersion: a.request.validVersions.lowest,
            maxVersion: a.request.validVersions.highest,
          })),
          finalizedFeaturesEpoch: 1n,
          finalizedFeatures: [{ name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 }],
        }),
      );
      fake.on(22, (r) => (r.body.keepPreparedTxn ? respond({ errorCode: 35, producerId: -1n, producerEpoch: -1 }) : undefined));
      fake.on(26, () => respond({ errorCode: endTxn, producerId: 1000n, producerEpoch: 8 }));
    }
    const config = () => ({ bootstrapServers: fake.bootstrap, logger: null, maxBlockMs: 2_000, retryBackoffMs: 10 });

    it('commits with EndTxn(COMMIT) v5+ for exactly the saved producer id and epoch', async () => {
      await kafka44(0);
      expect(await KafkaProducer.completeTransaction(config(), PreparedTxnState.fromString('1000:7:tx-9'), 'commit')).toBe('committed');
      const end = fake.requests(26);
      expect(end).toHaveLength(1);
      expect(end[0]!.apiVersion).toBeGreaterThanOrEqual(5);
      expect(end[0]!.body).toMatchObject({ transactionalId: 'tx-9', producerId: 1000n, producerEpoch: 7, committed: true });
    });

    it('PRODUCER_FENCED (the coordinator is past the saved transaction: a later one may be open) aborts whatever is open with a 2PC InitProducerId: unknown', async () => {
      await kafka44(90);
      expect(await KafkaProducer.completeTransaction(config(), PreparedTxnState.fromString('1000:7:tx-9'), 'commit')).toBe('unknown');
      const inits = fake.requests(22).map((r) => r.body);
      expect(inits.at(-1)).toMatchObject({ transactionalId: 'tx-9', enable2Pc: true, keepPreparedTxn: false });
    });

    it('INVALID_TXN_STATE (the saved transaction ended aborted) ends nothing: aborted', async () => {
      await kafka44(48);
      expect(await KafkaProducer.completeTransaction(config(), PreparedTxnState.fromString('1000:7:tx-9'), 'commit')).toBe('aborted');
      expect(fake.requests(22).map((r) => r.body.keepPreparedTxn)).toEqual([]);
    });
  });

  it('a non-transactional producer refuses transactional calls', async () => {
    fake = await FakeKafka.start({ topics: { out: { topicId: TOPIC_ID, partitions: 1 } } });
    const p = new KafkaProducer({ bootstrapServers: fake.bootstrap, metricsRegistry: null, logger: null });
    producers.push(p);
    await expect(p.initTransactions()).rejects.toThrow(/has no transactionalId/);
    expect(() => p.beginTransaction()).toThrow(IllegalStateError);
  });
});

describe('TransactionalShareAcknowledger behaves as Kafka’s producer', () => {
  it('abortAcknowledgements() with nothing in progress is an IllegalStateError (as Kafka’s abortTransaction() in READY) and leaves it usable; a commit that timed out is finished by calling commit again', async () => {
    const { TransactionalShareAcknowledger, KafkaTimeoutError } = await import('../../client/index.js');
    fake = await FakeKafka.start({ topics: { out: { topicId: TOPIC_ID, partitions: 2 } } });
    const acker = new TransactionalShareAcknowledger({
      bootstrapServers: fake.bootstrap,
      transactionalId: 'acker-1',
      maxBlockMs: 600,
      requestTimeoutMs: 200,
      retryBackoffMs: 10,
      metricsRegistry: null,
      logger: null,
    });
    try {
      await acker.initTransactions();
      await expect(acker.abortAcknowledgements()).rejects.toThrow(IllegalStateError);
      await expect(acker.abortAcknowledgements()).rejects.toThrow(/no transaction is in progress/);
      expect(acker.transactionState).toBe('READY');
      fake.on(26, () => ({ kind: 'stall' }));
      await expect(acker.commitAcknowledgements(acks(), group)).rejects.toThrow(KafkaTimeoutError);
      expect(acker.transactionState).toBe('COMMITTING_TRANSACTION');
      fake.overrides.delete(26);
      await acker.commitPrepared(); // the retry finishes the same commit
      expect(acker.transactionState).toBe('READY');
      expect(fake.requests(26).length).toBeGreaterThanOrEqual(2);
    } finally {
      await acker.close(500);
    }
  });
});
