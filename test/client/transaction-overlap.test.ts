/**
 * The order of one KIP-1289 commit's RPCs as a real kipgen broker gets them: a tap
 * between the clients and the broker records each request and its answer in the order it saw them, and holds back the answers to
 * Produce (a slow acks=all), as a broker answers one connection's requests in
 * order. AddShareAcksToTxn and TxnShareAcknowledge are in flight while the
 * batches drain; TxnShareAcknowledge only after AddShareAcksToTxn is
 * answered, EndTxn only after every batch and TxnShareAcknowledge; a failed
 * AddShareAcksToTxn lets neither TxnShareAcknowledge nor EndTxn(commit) go.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, ProducerFencedError, ShareAcknowledgements, type ShareConsumerRecord } from '../../client/index.js';
import { startBroker } from '../../coordinator/broker.js';
import { freePorts } from '../../chaos/harness.js';
import { readCommitted } from './support/brokers.js';
import { RpcTap, type TappedRpc } from './support/rpc-tap.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

const quiet = { logger: null, metricsRegistry: null } as const;
const PRODUCE_HELD_MS = 300;

/** A broker reached only through the tap: it advertises the tap's address, so every connection goes through it. */
async function tappedBroker(): Promise<{ tap: RpcTap; bootstrap: string }> {
  const [brokerPort] = await freePorts(1);
  const tap = await RpcTap.start(brokerPort!);
  cleanups.push(() => tap.close());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-txn-overlap-'));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const broker = await startBroker(
    {
      nodeId: 0,
      host: '127.0.0.1',
      port: brokerPort!,
      cluster: [{ nodeId: 0, host: '127.0.0.1', port: tap.port }],
      dataDir,
      transactionAbortCheckIntervalMs: 100,
      markerRetryBackoffMs: 20,
      topics: [
        { name: 'in', partitions: 1 },
        { name: 'out', partitions: 1 },
      ],
      shareGroup: { isolationLevel: 'read_committed', autoOffsetReset: 'earliest', heartbeatIntervalMs: 100 },
    },
    { log: () => {} },
  );
  cleanups.push(() => broker.close());
  const bootstrap = `127.0.0.1:${tap.port}`;
  const seeder = new KafkaProducer({ bootstrapServers: bootstrap, lingerMs: 1, ...quiet });
  await Promise.all(Array.from({ length: 5 }, (_, i) => seeder.send({ topic: 'in', value: `v${i}` })));
  await seeder.close();
  return { tap, bootstrap };
}

function consumer(bootstrap: string, maxPollRecords?: number): KafkaShareConsumer {
  const s = new KafkaShareConsumer({
    bootstrapServers: bootstrap,
    groupId: 'g',
    acknowledgementMode: 'transactional',
    fetchMaxWaitMs: 50,
    logger: null,
    ...(maxPollRecords === undefined ? {} : { maxPollRecords }),
  });
  cleanups.push(() => s.close(1_000));
  s.subscribe(['in']);
  return s;
}

/** A long linger: without the acks' flush the batches would wait for the commit. */
async function producer(bootstrap: string, transactionalId: string, maxBlockMs = 5_000): Promise<KafkaProducer> {
  const p = new KafkaProducer({ bootstrapServers: bootstrap, transactionalId, lingerMs: 1_000, maxBlockMs, retryBackoffMs: 20, ...quiet });
  cleanups.push(() => p.close(1_000));
  await p.initTransactions();
  return p;
}

async function pollSome(s: KafkaShareConsumer): Promise<ShareConsumerRecord[]> {
  for (let i = 0; i < 50; i++) {
    const records = await s.poll(200);
    if (records.length > 0) return records;
  }
  throw new Error('no records polled');
}

/** The one RPC of `api` the producer `client` sent. */
function one(rpcs: TappedRpc[], api: string, client: string): TappedRpc {
  const found = rpcs.filter((r) => r.api === api && r.client === client);
  expect(found, `${api} of ${client}`).toHaveLength(1);
  return found[0]!;
}

/**
 * A consume-transform-produce commit with the Produce answers held back; the
 * producer's RPCs of that transaction. `produceFirst`: the batches are on the
 * wire before the acks are sent (else they are queued, lingering, as in the
 * usual loop: sends, sendShareAcksToTransaction, commitTransaction).
 */
async function commitOnce(produceFirst: boolean): Promise<{ rpcs: TappedRpc[]; client: string }> {
  const { tap, bootstrap } = await tappedBroker();
  const s = consumer(bootstrap);
  const p = await producer(bootstrap, 'overlap-tx');
  const records = await pollSome(s);
  tap.holdAnswers(['Produce'], PRODUCE_HELD_MS);
  const from = tap.rpcs.length;
  p.beginTransaction();
  const sends = records.map((r) => p.send({ topic: 'out', value: r.value }));
  if (produceFirst) {
    const produced = tap.whenRequested('Produce');
    void p.flush();
    await produced;
  }
  await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata());
  await p.commitTransaction();
  await Promise.all(sends);
  expect(await readCommitted(bootstrap, 'out')).toHaveLength(records.length);
  return { rpcs: tap.rpcs.slice(from), client: p.clientId };
}

describe('one commit overlaps its RPCs in the order KIP-1289 needs', () => {
  it('AddShareAcksToTxn is sent, and answered, before the answer to a Produce already in flight', async () => {
    const { rpcs, client } = await commitOnce(true);
    const add = one(rpcs, 'AddShareAcksToTxn', client);
    const produce = one(rpcs, 'Produce', client);
    expect(produce.sentAt).toBeLessThan(add.sentAt);
    // Not queued behind the Produce at the broker, which answers a connection's requests in order: its own connection.
    expect(add.answeredAt).toBeLessThan(produce.answeredAt);
    expect(add.connection).not.toBe(produce.connection);
  });

  it('the queued batches go out with the acks: TxnShareAcknowledge is in flight before the last batch is acknowledged, and only after AddShareAcksToTxn is answered', async () => {
    const { rpcs, client } = await commitOnce(false);
    const add = one(rpcs, 'AddShareAcksToTxn', client);
    const ack = one(rpcs, 'TxnShareAcknowledge', client);
    const produce = one(rpcs, 'Produce', client);
    expect(ack.sentAt).toBeGreaterThan(add.answeredAt);
    expect(produce.sentAt).toBeLessThan(ack.answeredAt);
    expect(ack.sentAt).toBeLessThan(produce.answeredAt);
    expect(ack.answeredAt).toBeLessThan(produce.answeredAt);
  });

  it('EndTxn is sent only after every batch and TxnShareAcknowledge are answered', async () => {
    for (const produceFirst of [true, false]) {
      const { rpcs, client } = await commitOnce(produceFirst);
      const end = one(rpcs, 'EndTxn', client);
      expect(end.sentAt).toBeGreaterThan(one(rpcs, 'Produce', client).answeredAt);
      expect(end.sentAt).toBeGreaterThan(one(rpcs, 'TxnShareAcknowledge', client).answeredAt);
    }
  });
});

describe('the share consumer fetches the next batch while the commit is in flight', () => {
  it('the prefetched records are not acknowledged in the committing transaction: the next poll hands them out, first delivery, into the next one', async () => {
    const { tap, bootstrap } = await tappedBroker();
    const s = consumer(bootstrap, 3);
    const p = await producer(bootstrap, 'prefetch-tx');
    const first = await pollSome(s);
    expect(first.map((r) => r.offset)).toEqual([0n, 1n, 2n]);
    const from = tap.rpcs.length;
    p.beginTransaction();
    const sends = first.map((r) => p.send({ topic: 'out', value: r.value }));
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(first, 'accept'), s.groupMetadata());
    await p.commitTransaction();
    await Promise.all(sends);
    const during = tap.rpcs.slice(from);
    const end = one(during, 'EndTxn', p.clientId);
    expect(during.filter((r) => r.api === 'ShareFetch' && r.sentAt < end.answeredAt).length).toBeGreaterThan(0);

    const second = await pollSome(s);
    expect(second.map((r) => r.offset)).toEqual([3n, 4n]);
    expect(second.map((r) => r.deliveryCount)).toEqual([1, 1]);
    p.beginTransaction();
    const more = second.map((r) => p.send({ topic: 'out', value: r.value }));
    await p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(second, 'accept'), s.groupMetadata());
    await p.commitTransaction();
    await Promise.all(more);
    expect((await readCommitted(bootstrap, 'out')).sort()).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  });
});

describe('a failed AddShareAcksToTxn lets neither TxnShareAcknowledge nor EndTxn(commit) go', () => {
  it('an AddShareAcksToTxn that cannot succeed makes the transaction abortable; only the abort ends it, and its output is not committed', async () => {
    const { tap, bootstrap } = await tappedBroker();
    const s = consumer(bootstrap);
    const p = await producer(bootstrap, 'failing-tx', 1_000);
    const records = await pollSome(s);
    tap.holdAnswers(['Produce'], PRODUCE_HELD_MS);
    const from = tap.rpcs.length;
    p.beginTransaction();
    const sends = records.map((r) => p.send({ topic: 'out', value: r.value }).catch((e: unknown) => e));
    // A partition 'in' does not have: the coordinator answers UNKNOWN_TOPIC_OR_PARTITION until the deadline.
    const acks = ShareAcknowledgements.fromRecords(records, 'accept').add({ ...records[0]!, partition: 7 }, 'accept');
    await expect(p.sendShareAcksToTransaction(acks, s.groupMetadata())).rejects.toThrow(/UNKNOWN_TOPIC_OR_PARTITION/);
    await expect(p.commitTransaction()).rejects.toThrow(/UNKNOWN_TOPIC_OR_PARTITION/);
    await Promise.all(sends);
    const beforeAbort = tap.rpcs.slice(from).filter((r) => r.client === p.clientId);
    expect(beforeAbort.filter((r) => r.api === 'AddShareAcksToTxn').length).toBeGreaterThan(0);
    expect(beforeAbort.filter((r) => r.api === 'TxnShareAcknowledge' || r.api === 'EndTxn')).toEqual([]);
    await p.abortTransaction();
    const all = tap.rpcs.slice(from).filter((r) => r.client === p.clientId);
    expect(all.filter((r) => r.api === 'TxnShareAcknowledge')).toEqual([]);
    expect(all.filter((r) => r.api === 'EndTxn')).toHaveLength(1);
    expect(await readCommitted(bootstrap, 'out')).toEqual([]);
  });

  it('a fenced producer sends no TxnShareAcknowledge and no EndTxn', async () => {
    const { tap, bootstrap } = await tappedBroker();
    const s = consumer(bootstrap);
    const p = await producer(bootstrap, 'fenced-tx');
    const records = await pollSome(s);
    const from = tap.rpcs.length;
    p.beginTransaction();
    const sends = records.map((r) => p.send({ topic: 'out', value: r.value }).catch((e: unknown) => e));
    await producer(bootstrap, 'fenced-tx');
    await expect(p.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), s.groupMetadata())).rejects.toBeInstanceOf(
      ProducerFencedError,
    );
    await expect(p.commitTransaction()).rejects.toBeInstanceOf(ProducerFencedError);
    await Promise.all(sends);
    const mine = tap.rpcs.slice(from).filter((r) => r.client === p.clientId);
    expect(mine.filter((r) => r.api === 'TxnShareAcknowledge' || r.api === 'EndTxn')).toEqual([]);
    expect(await readCommitted(bootstrap, 'out')).toEqual([]);
  });
});
