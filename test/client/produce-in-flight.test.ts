/**
 * Several Produce requests in flight per broker connection, and several
 * batches of one partition among them (max.in.flight.requests.per.connection,
 * Kafka's default 5 with idempotence): the records still land once and in
 * order when the first of them fails, for a while or for good. A FakeKafka
 * stands in front of a real kipgen broker: it names itself the partition's
 * leader, holds the Produce answers until the producer has three requests
 * out, can fail one, and forwards the rest (and InitProducerId) to the real
 * broker, whose producer state checks the sequences.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterClient } from '../../client/cluster.js';
import { ApiError, ConfigError, KafkaProducer, KafkaTimeoutError, type ProducerConfig } from '../../client/index.js';
import { Errors } from '../../client/errors.js';
import { apiByKey } from '../../generated/index.js';
import { readBatchHeader } from '../../runtime/record-batch.js';
import { readTopic } from '../../examples/support.js';
import { readCommitted, startCluster, type TestCluster } from './support/brokers.js';
import { FakeKafka } from './support/fake-kafka.js';
import { respond, type ReceivedRequest, type Reply } from './support/fake-server.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TOPIC = 'in-flight';

async function cluster(): Promise<TestCluster> {
  const c = await startCluster({ config: { defaultPartitions: 3 } });
  closers.push(() => c.close());
  return c;
}

function producer(bootstrap: string, extra: Partial<ProducerConfig> = {}): KafkaProducer {
  const p = new KafkaProducer({ bootstrapServers: bootstrap, metricsRegistry: null, logger: null, retryBackoffMs: 5, lingerMs: 0, ...extra });
  closers.push(() => p.close(500));
  return p;
}

/** The base sequence and epoch of the one batch of a forwarded Produce request. */
function batchOf(request: ReceivedRequest): { sequence: number; epoch: number; count: number } {
  const header = readBatchHeader(request.body.topicData[0].partitionData[0].records as Uint8Array);
  return { sequence: header.baseSequence, epoch: header.producerEpoch, count: header.lastSequence - header.baseSequence + 1 };
}

interface Front {
  fake: FakeKafka;
  /** The error code of each Produce answer, in order, forwarded or made up. */
  answers: number[];
  /** The most Produce requests the fake held unanswered at once. */
  maxOutstanding: number;
  /** While set, Produce requests get no answer and never reach the real broker. */
  stalled: boolean;
  /** Holds the next `count` Produce requests until all have arrived (or `waitMs` passed); `fail` answers the first of them with that error instead of forwarding it. */
  hold(count: number, fail?: number, waitMs?: number): void;
}

/** A FakeKafka in front of the real broker of `real`, for one single-partition topic. */
async function frontOf(real: TestCluster): Promise<Front> {
  const client = new ClusterClient({ bootstrapServers: real.bootstrap, logger: null });
  closers.push(() => client.close());
  const meta = await client.topic(TOPIC, Date.now() + 5_000, true);
  const leader = meta.partitions[0]!.leader;
  const fake = await FakeKafka.start({ topics: { [TOPIC]: { topicId: meta.topicId, partitions: 1 } } });
  closers.push(() => fake.close());
  const forward = async (request: ReceivedRequest): Promise<Reply> => {
    const api = apiByKey(request.apiKey)!;
    const { response } = await client.send(leader, api.request, api.response, () => request.body, { min: request.apiVersion, max: request.apiVersion });
    return respond(response);
  };
  let held: Array<() => void> = [];
  let toHold = 0;
  let failFirst: number | undefined;
  let holdMs = 2_000;
  let outstanding = 0;
  // The real broker gets the requests one at a time in the order they arrived, as one connection would carry them.
  let turn = Promise.resolve();
  const front: Front = {
    fake,
    answers: [],
    maxOutstanding: 0,
    stalled: false,
    hold(count, fail, waitMs = 2_000) {
      toHold = count;
      failFirst = fail;
      holdMs = waitMs;
    },
  };
  fake.on(22, forward);
  fake.on(0, async (request) => {
    if (front.stalled) return { kind: 'stall' };
    outstanding++;
    front.maxOutstanding = Math.max(front.maxOutstanding, outstanding);
    const myTurn = turn;
    let done!: () => void;
    turn = new Promise<void>((resolve) => (done = resolve));
    try {
      let fail: number | undefined;
      if (toHold > 0) {
        const first = held.length === 0;
        if (first) fail = failFirst;
        toHold--;
        if (toHold === 0) {
          for (const release of held) release();
          held = [];
        } else await new Promise<void>((resolve) => (held.push(resolve), setTimeout(resolve, holdMs)));
      }
      await myTurn;
      if (fail === undefined) {
        const reply = await forward(request);
        front.answers.push(
          (reply as { body: { responses: Array<{ partitionResponses: Array<{ errorCode: number }> }> } }).body.responses[0]!.partitionResponses[0]!.errorCode,
        );
        return reply;
      }
      front.answers.push(fail);
      const { topicData } = request.body;
      return respond({
        responses: [
          {
            name: topicData[0].name,
            topicId: topicData[0].topicId,
            partitionResponses: [{ index: 0, errorCode: fail, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: 0n }],
          },
        ],
      });
    } finally {
      done();
      outstanding--;
    }
  });
  return front;
}

/** One record per batch: a batch.size that a second 100-byte record does not fit. */
const ONE_PER_BATCH: Partial<ProducerConfig> = { batchSize: 200 };
const value = (name: string) => name.padEnd(100, '.');

async function values(real: TestCluster): Promise<string[]> {
  return (await readTopic(real.bootstrap, TOPIC, 'read_uncommitted')).map((r) => r.value.replace(/\.+$/, ''));
}

describe('producer: several requests in flight per connection (max.in.flight.requests.per.connection)', () => {
  it('keeps several batches of one partition in flight at once, and they land in order', async () => {
    const real = await cluster();
    const front = await frontOf(real);
    const p = producer(front.fake.bootstrap, ONE_PER_BATCH);
    front.hold(3);
    const names = Array.from({ length: 12 }, (_, i) => `r${i}`);
    const offsets = await Promise.all(names.map((n) => p.send({ topic: TOPIC, partition: 0, value: value(n) })));
    expect(front.maxOutstanding).toBeGreaterThanOrEqual(3);
    expect(offsets.map((m) => m.offset)).toEqual(names.map((_, i) => BigInt(i)));
    expect(await values(real)).toEqual(names);
    // Each batch took the next sequence when drained, in the order sent.
    const sequences = front.fake.requests(0).map((r) => batchOf(r).sequence);
    expect(sequences).toEqual(names.map((_, i) => i));
  });

  it('a retriable error on the first of three batches in flight: the records land once and in order', async () => {
    const real = await cluster();
    const front = await frontOf(real);
    const p = producer(front.fake.bootstrap, ONE_PER_BATCH);
    // The broker knows this producer first: a later batch arriving before its predecessor is then out of order there.
    await p.send({ topic: TOPIC, partition: 0, value: value('first') });
    front.hold(3, Errors.NOT_ENOUGH_REPLICAS);
    const names = ['a', 'b', 'c', 'd', 'e'];
    const offsets = await Promise.all(names.map((n) => p.send({ topic: TOPIC, partition: 0, value: value(n) })));
    expect(front.maxOutstanding).toBeGreaterThanOrEqual(3);
    // The made-up error, then the real broker refusing the two batches that came before their turn.
    expect(front.answers.slice(1, 4)).toEqual([Errors.NOT_ENOUGH_REPLICAS, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER]);
    expect(offsets.map((m) => m.offset)).toEqual(names.map((_, i) => BigInt(i + 1)));
    expect(await values(real)).toEqual(['first', ...names]);
  });

  it('a batch failed for good: the later ones go again under a new epoch from sequence 0, without an out-of-order loop', async () => {
    const real = await cluster();
    const front = await frontOf(real);
    const p = producer(front.fake.bootstrap, ONE_PER_BATCH);
    await p.send({ topic: TOPIC, partition: 0, value: value('first') });
    front.hold(3, Errors.INVALID_RECORD);
    const sends = ['a', 'b', 'c', 'd'].map((n) => p.send({ topic: TOPIC, partition: 0, value: value(n) }));
    const results = await Promise.allSettled(sends);
    const first = results[0]!;
    const failure = first.status === 'rejected' ? (first.reason as unknown) : undefined;
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe(Errors.INVALID_RECORD);
    expect(results.slice(1).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(await values(real)).toEqual(['first', 'b', 'c', 'd']);
    // Kafka's idempotent producer bumps its epoch (KIP-360): b, c and d go again as sequences 0, 1, 2 of epoch + 1.
    const produced = front.fake.requests(0).map(batchOf);
    const epoch = produced[0]!.epoch;
    expect(produced.slice(-3)).toEqual([
      { sequence: 0, epoch: epoch + 1, count: 1 },
      { sequence: 1, epoch: epoch + 1, count: 1 },
      { sequence: 2, epoch: epoch + 1, count: 1 },
    ]);
    expect(produced.length).toBeLessThanOrEqual(8);
  });

  it('a batch that expired without an answer leaves its sequence unresolved: the next batch starts a new epoch at sequence 0', async () => {
    const real = await cluster();
    const front = await frontOf(real);
    const p = producer(front.fake.bootstrap, { ...ONE_PER_BATCH, requestTimeoutMs: 150, deliveryTimeoutMs: 500 });
    await p.send({ topic: TOPIC, partition: 0, value: value('first') });
    front.stalled = true;
    const lost = await p.send({ topic: TOPIC, partition: 0, value: value('lost') }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(KafkaTimeoutError);
    front.stalled = false;
    // The broker may or may not have 'lost' (here it does not): sequence 2 would be out of order, and retried until it expired.
    const after = await p.send({ topic: TOPIC, partition: 0, value: value('after') });
    expect(after.offset).toBe(1n);
    const produced = front.fake.requests(0).map(batchOf);
    expect(produced.at(-1)).toEqual({ sequence: 0, epoch: produced[0]!.epoch + 1, count: 1 });
    expect(await values(real)).toEqual(['first', 'after']);
  });

  it('with maxInFlightRequestsPerConnection 1 a partition has one batch in flight at a time, and the records land in order', async () => {
    const real = await cluster();
    const front = await frontOf(real);
    const p = producer(front.fake.bootstrap, { ...ONE_PER_BATCH, maxInFlightRequestsPerConnection: 1 });
    await p.send({ topic: TOPIC, partition: 0, value: value('first') });
    // Two are never out at once: the first is released after a while.
    front.hold(2, Errors.NOT_ENOUGH_REPLICAS, 300);
    const names = ['a', 'b', 'c'];
    await Promise.all(names.map((n) => p.send({ topic: TOPIC, partition: 0, value: value(n) })));
    expect(front.maxOutstanding).toBe(1);
    expect(front.answers.filter((code) => code === Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)).toEqual([]);
    expect(await values(real)).toEqual(['first', ...names]);
  });

  it('many batches over several partitions straight to the broker: each partition has its records once and in order', async () => {
    const real = await cluster();
    const p = producer(real.bootstrap, { batchSize: 2_000 });
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < 3_000; i++) sends.push(p.send({ topic: 'many', partition: i % 3, value: `${i % 3}:${i}` }));
    await Promise.all(sends);
    const records = await readTopic(real.bootstrap, 'many', 'read_uncommitted');
    for (let partition = 0; partition < 3; partition++) {
      const got = records.filter((r) => r.value.startsWith(`${partition}:`)).map((r) => Number(r.value.split(':')[1]));
      const expected = Array.from({ length: 1_000 }, (_, k) => k * 3 + partition);
      expect(got).toEqual(expected);
    }
  });
});

describe('transactions with several batches in flight', () => {
  it('a transaction of many small batches commits every record once, in order per partition', async () => {
    const real = await cluster();
    const p = producer(real.bootstrap, { batchSize: 300, transactionalId: 'in-flight-txn' });
    await p.initTransactions();
    p.beginTransaction();
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < 600; i++) sends.push(p.send({ topic: 'txn-many', partition: i % 3, value: `${i % 3}:${i}` }));
    await p.commitTransaction();
    await Promise.all(sends);
    const committed = await readCommitted(real.bootstrap, 'txn-many');
    for (let partition = 0; partition < 3; partition++) {
      const got = committed.filter((v) => v.startsWith(`${partition}:`)).map((v) => Number(v.split(':')[1]));
      expect(got).toEqual(Array.from({ length: 200 }, (_, k) => k * 3 + partition));
    }
  });
});

describe('producer config: maxInFlightRequestsPerConnection', () => {
  const base = { bootstrapServers: '127.0.0.1:1', metricsRegistry: null, logger: null };

  it('refuses more than 5 with idempotence (by default, explicitly, or by a transactional id), as Kafka does', () => {
    expect(() => new KafkaProducer({ ...base, maxInFlightRequestsPerConnection: 6 })).toThrow(ConfigError);
    expect(() => new KafkaProducer({ ...base, maxInFlightRequestsPerConnection: 6, enableIdempotence: true })).toThrow(/at most 5/);
    expect(() => new KafkaProducer({ ...base, maxInFlightRequestsPerConnection: 6, transactionalId: 'x' })).toThrow(/at most 5/);
  });

  it('refuses a value that is not a positive integer, naming it', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new KafkaProducer({ ...base, maxInFlightRequestsPerConnection: bad })).toThrow(/maxInFlightRequestsPerConnection/);
    }
  });

  it('takes more than 5 without idempotence, and 1 to 5 with it', async () => {
    for (const config of [
      { ...base, maxInFlightRequestsPerConnection: 20, enableIdempotence: false },
      { ...base, maxInFlightRequestsPerConnection: 1 },
      { ...base, maxInFlightRequestsPerConnection: 5, transactionalId: 'x' },
    ]) {
      await new KafkaProducer(config).close(0);
    }
  });
});
