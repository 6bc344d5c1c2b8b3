/**
 * Kafka's flush settings (coordinator/log/flush.ts): by default no write is
 * fsynced and a `kill -9` loses nothing (the page cache survives the process);
 * `log.flush.interval.messages` / topic `flush.messages` fsync from the append,
 * before its reply; `log.flush.interval.ms` / `flush.ms` through the flusher
 * task. The fsyncs are counted in metrics().logFlush (Kafka's
 * LogFlushStats.LogFlushRateAndTimeMs).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { resolveConfig } from '../../coordinator/config.js';
import { flushPolicyOf } from '../../coordinator/log/flush.js';
import { AckType } from '../../coordinator/share/acknowledgements.js';
import {
  TestClient,
  addPartitions,
  batch,
  endTxn,
  eventually,
  fetchAll,
  initProducer,
  produce,
  spawnBroker,
  startTestBroker,
  tempDir,
  type BrokerProcess,
} from './support/broker-harness.js';
import { addShareAcksToTxn, delivered, heartbeat, partitionOf, shareFetch, txnShareAcknowledge } from './share-wire.js';

const brokers: Broker[] = [];
const processes: BrokerProcess[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(brokers.splice(0).map((b) => b.close()));
  await Promise.all(processes.splice(0).map((p) => p.kill9()));
});

async function inProcess(config: Parameters<typeof startTestBroker>[0], lines?: string[]): Promise<{ broker: Broker; client: TestClient }> {
  const broker = await startTestBroker({ dataDir: tempDir('kipgen-flush-'), ...config }, lines);
  brokers.push(broker);
  const client = await TestClient.connect(broker.port);
  clients.push(client);
  return { broker, client };
}

async function createTopic(c: TestClient, name: string, configs: Record<string, string>): Promise<void> {
  const response = await c.call(
    19,
    {
      topics: [{ name, numPartitions: 1, replicationFactor: -1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
      timeoutMs: 5_000,
    },
    7,
  );
  expect(response.topics[0].errorCode).toBe(0);
}

/** The partition logs fsynced so far, from the `log-write` trace lines (traceLogWrites). */
function fsyncedLogs(lines: string[]): string[] {
  return lines
    .filter((l) => l.includes('log-write '))
    .map((l) => JSON.parse(l.slice(l.indexOf('log-write ') + 'log-write '.length)) as { kind: string; log: string })
    .filter((e) => e.kind === 'fsync')
    .map((e) => e.log);
}

describe('flush settings: defaults and validation', () => {
  it("are Kafka's: never by count, never by time, no flusher", () => {
    const config = resolveConfig({});
    expect(config.logFlushIntervalMessages).toBe(Number.MAX_SAFE_INTEGER);
    expect(config.logFlushIntervalMs).toBeNull();
    expect(config.logFlushSchedulerIntervalMs).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses a count below 1 and a negative time, naming the setting', () => {
    expect(() => resolveConfig({ logFlushIntervalMessages: 0 })).toThrow('config: logFlushIntervalMessages must be an integer in [1, 9007199254740991], got 0');
    expect(() => resolveConfig({ logFlushIntervalMs: -1 })).toThrow('config: logFlushIntervalMs must be an integer in [0, 9007199254740991], got -1');
    expect(() => resolveConfig({ logFlushSchedulerIntervalMs: 0 })).toThrow(
      'config: logFlushSchedulerIntervalMs must be an integer in [1, 9007199254740991], got 0',
    );
  });
});

describe('flush.messages: fsync from the append, before the reply', () => {
  it('with the defaults a Produce, a transaction and its markers are answered without any fsync', async () => {
    const { broker, client } = await inProcess({ topics: [{ name: 'events', partitions: 1 }] });
    expect((await produce(client, 'events', 0, batch({ values: ['a'] }))).errorCode).toBe(0);
    const { producerId, producerEpoch } = await initProducer(client, 'tx-default');
    await addPartitions(client, 'tx-default', producerId, producerEpoch, 'events', [0]);
    expect(
      (await produce(client, 'events', 0, batch({ values: ['t'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-default')).errorCode,
    ).toBe(0);
    expect(await endTxn(client, 'tx-default', producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await fetchAll(client, 'events', 0, 'read_committed')).records.length === 2, 5_000, 'the COMMIT marker');
    expect(broker.metrics().logFlush.count).toBe(0);
  });

  it('log.flush.interval.messages=1: the write is fsynced (and counted) before the Produce reply arrives', async () => {
    const { broker, client } = await inProcess({ topics: [{ name: 'events', partitions: 1 }], logFlushIntervalMessages: 1 });
    const before = broker.metrics().logFlush.count;
    expect((await produce(client, 'events', 0, batch({ values: ['a', 'b'] }))).errorCode).toBe(0);
    const after = broker.metrics().logFlush;
    expect(after.count).toBe(before + 1);
    expect(after.totalMs).toBeGreaterThan(0);
  });

  it("log.flush.interval.messages=1 fsyncs the coordinators' writes too: __transaction_state before InitProducerId is answered", async () => {
    const lines: string[] = [];
    await inProcess({ logFlushIntervalMessages: 1, traceLogWrites: true }, lines);
    const client = clients[0]!;
    expect((await initProducer(client, 'tx-sync')).errorCode).toBe(0);
    expect(fsyncedLogs(lines).filter((l) => l.startsWith('__transaction_state-'))).toHaveLength(1);
  });

  it('topic flush.messages overrides the broker: 1 on one topic fsyncs its writes only', async () => {
    const lines: string[] = [];
    const { broker, client } = await inProcess({ traceLogWrites: true }, lines);
    await createTopic(client, 'synced', { 'flush.messages': '1' });
    await createTopic(client, 'cached', {});
    expect((await produce(client, 'cached', 0, batch({ values: ['c'] }))).errorCode).toBe(0);
    expect(broker.metrics().logFlush.count).toBe(0);
    expect((await produce(client, 'synced', 0, batch({ values: ['s'] }))).errorCode).toBe(0);
    expect(broker.metrics().logFlush.count).toBe(1);
    expect(fsyncedLogs(lines)).toEqual(['synced-0']);
  });

  it("counts offsets, as Kafka's unflushedMessages: flush.messages=3 fsyncs at the append that reaches 3 unflushed", async () => {
    const { broker, client } = await inProcess({});
    await createTopic(client, 'three', { 'flush.messages': '3' });
    expect((await produce(client, 'three', 0, batch({ values: ['a', 'b'] }))).errorCode).toBe(0);
    expect(broker.metrics().logFlush.count).toBe(0);
    expect((await produce(client, 'three', 0, batch({ values: ['c'] }))).errorCode).toBe(0);
    expect(broker.metrics().logFlush.count).toBe(1);
    expect((await produce(client, 'three', 0, batch({ values: ['d', 'e'] }))).errorCode).toBe(0);
    expect(broker.metrics().logFlush.count).toBe(1);
  });
});

describe('flush.ms: the flusher task', () => {
  it("a topic's default flush.ms is log.flush.interval.ms, and with that unset log.flush.scheduler.interval.ms (LogConfig)", () => {
    expect(flushPolicyOf({}, { intervalMessages: 7, intervalMs: null, schedulerIntervalMs: 20 })).toEqual({ messages: 7, ms: 20 });
    expect(flushPolicyOf({}, { intervalMessages: 7, intervalMs: 500, schedulerIntervalMs: 20 })).toEqual({ messages: 7, ms: 500 });
    expect(flushPolicyOf({ 'flush.messages': '1', 'flush.ms': '0' }, { intervalMessages: 7, intervalMs: 500, schedulerIntervalMs: 20 })).toEqual({
      messages: 1,
      ms: 0,
    });
  });

  it('log.flush.interval.ms with a scheduler interval: a write left unflushed by the append is fsynced later, without another write', async () => {
    const lines: string[] = [];
    const { broker, client } = await inProcess(
      { topics: [{ name: 'events', partitions: 1 }], logFlushIntervalMs: 50, logFlushSchedulerIntervalMs: 20, traceLogWrites: true },
      lines,
    );
    expect((await produce(client, 'events', 0, batch({ values: ['a'] }))).errorCode).toBe(0);
    await eventually(() => fsyncedLogs(lines).includes('events-0'), 5_000, 'the flusher fsyncs events-0');
    expect(broker.metrics().logFlush.count).toBeGreaterThanOrEqual(1);
    // Once flushed, a log is not flushed again until it has new writes (Kafka's flush: only past the recovery point).
    const flushed = fsyncedLogs(lines).filter((l) => l === 'events-0').length;
    await new Promise((r) => setTimeout(r, 200));
    expect(fsyncedLogs(lines).filter((l) => l === 'events-0').length).toBe(flushed);
  });

  it('topic flush.ms applies to that topic only', async () => {
    const lines: string[] = [];
    const { client } = await inProcess({ logFlushSchedulerIntervalMs: 20, logFlushIntervalMs: 3_600_000, traceLogWrites: true }, lines);
    await createTopic(client, 'timed', { 'flush.ms': '0' });
    await createTopic(client, 'untimed', {});
    expect((await produce(client, 'untimed', 0, batch({ values: ['u'] }))).errorCode).toBe(0);
    expect((await produce(client, 'timed', 0, batch({ values: ['t'] }))).errorCode).toBe(0);
    await eventually(() => fsyncedLogs(lines).includes('timed-0'), 5_000, 'the flusher fsyncs timed-0');
    expect(fsyncedLogs(lines)).not.toContain('untimed-0');
  });
});

describe('kill -9 with the default settings (no fsync)', () => {
  it('keeps the committed records, the transaction state and the share state', async () => {
    const dataDir = tempDir('kipgen-flush-kill-');
    const config = {
      dataDir,
      port: 0,
      topics: [
        { name: 'work', partitions: 1 },
        { name: 'out', partitions: 1 },
      ],
      transactionMaxTimeoutMs: 120_000,
      shareGroup: { recordLockDurationMs: 30_000 },
      traceLogWrites: true,
    };
    let broker = await spawnBroker(config);
    processes.push(broker);
    let c = await TestClient.connect(broker.port);
    clients.push(c);
    const topics = JSON.parse(fs.readFileSync(path.join(dataDir, 'topics.json'), 'utf8')) as { topics: { name: string; topicId: string }[] };
    const topicId = topics.topics.find((t) => t.name === 'work')!.topicId;

    expect((await produce(c, 'work', 0, batch({ values: ['a', 'b', 'c', 'd'] }))).errorCode).toBe(0);
    const joined = await heartbeat(c, 'g-flush', 'm1', 0, ['work']);
    const fetched = await shareFetch(c, { groupId: 'g-flush', memberId: 'm1', epoch: 0, partitions: [{ topicId, partition: 0 }] });
    expect(delivered(partitionOf(fetched, topicId, 0)).map((r) => r.value)).toEqual(['a', 'b', 'c', 'd']);

    // One transaction: output to `out` and the acknowledgement of records 0-1, committed.
    const { producerId, producerEpoch } = await initProducer(c, 'tx-kill', 120_000);
    await addPartitions(c, 'tx-kill', producerId, producerEpoch, 'out', [0]);
    expect((await addShareAcksToTxn(c, 'tx-kill', producerId, producerEpoch, 'g-flush', 'work', [0])).errorCode).toBe(0);
    expect(
      (await produce(c, 'out', 0, batch({ values: ['o0', 'o1'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-kill')).errorCode,
    ).toBe(0);
    const acked = await txnShareAcknowledge(c, {
      groupId: 'g-flush',
      transactionalId: 'tx-kill',
      producerId,
      producerEpoch,
      memberId: 'm1',
      generationId: joined.memberEpoch,
      partitions: [{ topicId, partition: 0, batches: [{ first: 0n, last: 1n, type: AckType.ACCEPT }] }],
    });
    expect(acked.errorCode).toBe(0);
    expect(await endTxn(c, 'tx-kill', producerId, producerEpoch, true)).toBe(0);
    await eventually(async () => (await fetchAll(c, 'out', 0, 'read_committed')).records.length === 2, 5_000, 'the COMMIT marker on out-0');

    // Everything above went to the page cache only: the logs wrote, and never fsynced.
    const written = broker.stderr().split('\n');
    expect(written.some((l) => l.includes('log-write {"kind":"marker"'))).toBe(true);
    expect(fsyncedLogs(written)).toEqual([]);
    await broker.kill9();
    broker = await spawnBroker(config);
    processes.push(broker);
    c = await TestClient.connect(broker.port);
    clients.push(c);

    expect((await fetchAll(c, 'work', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['a', 'b', 'c', 'd']);
    const out = await fetchAll(c, 'out', 0, 'read_committed');
    expect(out.records.map((r) => r.value)).toEqual(['o0', 'o1']);
    expect(out.lastStableOffset).toBe(out.highWatermark);
    // __transaction_state kept the transactional id: the same producer id comes back with a bumped epoch.
    const again = await initProducer(c, 'tx-kill', 120_000);
    expect(again.errorCode).toBe(0);
    expect(again.producerId).toBe(producerId);
    expect(again.producerEpoch).toBeGreaterThan(producerEpoch);
    // __share_group_state kept the committed acknowledgement: records 0-1 are never delivered again;
    // 2-3, acquired by the member that died with the process, are.
    await heartbeat(c, 'g-flush', 'm2', 0, ['work']);
    let offsets: bigint[] = [];
    let epoch = 0;
    await eventually(
      async () => {
        const response = await shareFetch(c, {
          groupId: 'g-flush',
          memberId: 'm2',
          epoch: epoch++,
          partitions: epoch === 1 ? [{ topicId, partition: 0 }] : [],
          maxWaitMs: 200,
        });
        offsets = [...offsets, ...delivered(partitionOf(response, topicId, 0)).map((r) => r.offset)];
        return offsets.length >= 2;
      },
      8_000,
      'redelivery of 2-3',
    );
    expect(offsets).toEqual([2n, 3n]);
  });
});
