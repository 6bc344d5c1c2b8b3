/**
 * Crash safety: the broker runs as a child process and is killed with
 * SIGKILL at each step of a transaction (by the test, or by itself at an
 * exact point via KIPGEN_FAULT), then restarted on the same data directory.
 * The outcome must be what KIP-1289's guarantee matrix says.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../coordinator/errors.js';
import { dumpLog } from '../../coordinator/tools/dump-log.js';
import { createTxnOffsetCommitRequestPartition } from '../../generated/TxnOffsetCommitRequest.js';
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
  tempDir,
  type BrokerProcess,
} from './support/broker-harness.js';

const running: BrokerProcess[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((b) => b.kill9()));
});

async function start(dataDir: string, env: Record<string, string> = {}): Promise<{ broker: BrokerProcess; client: TestClient }> {
  const broker = await spawnBroker({ dataDir, port: 0, topics: [{ name: 'out', partitions: 2 }] }, env);
  running.push(broker);
  const client = await TestClient.connect(broker.port);
  clients.push(client);
  return { broker, client };
}

describe('kill -9 during a transaction', () => {
  it('mid-transaction (after AddPartitions + Produce): after restart the transaction times out and aborts; output never visible', async () => {
    const dir = tempDir();
    const first = await start(dir);
    const { producerId, producerEpoch } = await initProducer(first.client, 'tx-mid', 1500);
    expect(await addPartitions(first.client, 'tx-mid', producerId, producerEpoch, 'out', [0])).toEqual([0]);
    expect(
      (await produce(first.client, 'out', 0, batch({ values: ['o1', 'o2'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-mid'))
        .errorCode,
    ).toBe(0);
    await first.broker.kill9();

    const second = await start(dir);
    const before = await fetchAll(second.client, 'out', 0, 'read_committed');
    expect(before.records).toEqual([]);
    expect(before.lastStableOffset).toBe(0n); // the recovered open transaction pins the LSO
    await eventually(
      async () => {
        const f = await fetchAll(second.client, 'out', 0, 'read_committed');
        return f.lastStableOffset === f.highWatermark;
      },
      8000,
      'timeout abort after restart',
    );
    const after = await fetchAll(second.client, 'out', 0, 'read_committed');
    expect(after.records).toEqual([]);
    expect(after.abortedTransactions).toEqual([{ producerId, firstOffset: 0n }]);
    expect(await endTxn(second.client, 'tx-mid', producerId, producerEpoch, true)).toBe(ErrorCode.PRODUCER_FENCED);
    expect(second.broker.stderr()).toMatch(/timed out after 1500 ms/);
  });

  it('after PREPARE_COMMIT (KIPGEN_FAULT=crash-after-prepare-commit): restart resumes the markers; output and offsets become visible', async () => {
    const dir = tempDir();
    const first = await start(dir, { KIPGEN_FAULT: 'crash-after-prepare-commit' });
    const c = first.client;
    const { producerId, producerEpoch } = await initProducer(c, 'tx-prep', 30_000);
    await addPartitions(c, 'tx-prep', producerId, producerEpoch, 'out', [0, 1]);
    expect((await c.call(25, { transactionalId: 'tx-prep', producerId, producerEpoch, groupId: 'g' }, 3)).errorCode).toBe(0);
    await produce(c, 'out', 0, batch({ values: ['p0'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-prep');
    await produce(c, 'out', 1, batch({ values: ['p1'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-prep');
    const commit = await c.call(
      28,
      {
        transactionalId: 'tx-prep',
        groupId: 'g',
        producerId,
        producerEpoch,
        topics: [{ name: 'out', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 42n })] }],
      },
      3,
    );
    expect(commit.topics[0].partitions[0].errorCode).toBe(0);
    // The coordinator dies after fsyncing PREPARE_COMMIT, before answering.
    await expect(endTxn(c, 'tx-prep', producerId, producerEpoch, true)).rejects.toThrow(/closed/);
    expect((await first.broker.exited).signal).toBe('SIGKILL');
    expect(first.broker.stderr()).toMatch(/crashing at crash-after-prepare-commit/);
    const txnLog = dumpLog(path.join(dir));
    expect(txnLog).toMatch(/transactionalId: tx-prep .* state: PREPARE_COMMIT/);
    expect(txnLog).not.toMatch(/endTxnMarker: COMMIT/);

    const second = await start(dir);
    expect(second.broker.stderr()).toMatch(/resuming markers for tx-prep \(PREPARE_COMMIT\)/);
    await eventually(async () => (await fetchAll(second.client, 'out', 1, 'read_committed')).records.length === 1, 8000, 'commit visible');
    expect((await fetchAll(second.client, 'out', 0, 'read_committed')).records.map((r) => r.value)).toEqual(['p0']);
    const offsetOf = async () =>
      (await second.client.call(9, { groupId: 'g', topics: [{ name: 'out', partitionIndexes: [0] }], requireStable: true }, 7)).topics[0].partitions[0];
    await eventually(async () => (await offsetOf()).committedOffset === 42n, 5000, 'committed offset');
    expect(await offsetOf()).toMatchObject({ errorCode: 0, committedOffset: 42n });
    // The client's retry of EndTxn(commit) at the same epoch succeeds (DESIGN §5.6).
    await eventually(async () => (await endTxn(second.client, 'tx-prep', producerId, producerEpoch, true)) === 0, 5000, 'EndTxn retry');
    const dump = dumpLog(dir);
    expect(dump).toMatch(/state: COMPLETE_COMMIT/);
    expect(dump).toMatch(/endTxnMarker: COMMIT/);
    expect(dump).toMatch(/offsetCommit: group g out-0 offset 42/);
  });

  it('after every marker but before COMPLETE_COMMIT (crash-before-complete): markers are resent, records appear exactly once', async () => {
    const dir = tempDir();
    const first = await start(dir, { KIPGEN_FAULT: 'crash-before-complete' });
    const { producerId, producerEpoch } = await initProducer(first.client, 'tx-late', 30_000);
    await addPartitions(first.client, 'tx-late', producerId, producerEpoch, 'out', [1]);
    await produce(first.client, 'out', 1, batch({ values: ['once'], producerId, producerEpoch, baseSequence: 0, transactional: true }), 'tx-late');
    expect(await endTxn(first.client, 'tx-late', producerId, producerEpoch, true)).toBe(0);
    expect((await first.broker.exited).signal).toBe('SIGKILL');

    const second = await start(dir);
    await eventually(async () => (await endTxn(second.client, 'tx-late', producerId, producerEpoch, true)) === 0, 8000, 'COMPLETE_COMMIT');
    const fetched = await fetchAll(second.client, 'out', 1, 'read_committed');
    expect(fetched.records.map((r) => r.value)).toEqual(['once']);
    expect(fetched.lastStableOffset).toBe(fetched.highWatermark);
  });
});

describe('log recovery', () => {
  it('truncates a torn tail and a corrupt last batch at the last good batch; committed data survives', async () => {
    const dir = tempDir();
    const first = await start(dir);
    for (let i = 0; i < 3; i++) expect((await produce(first.client, 'out', 0, batch({ values: [`r${i}`] }))).errorCode).toBe(0);
    await first.broker.kill9();
    const segment = path.join(dir, 'out-0', '00000000000000000000.log');
    const good = fs.statSync(segment).size;
    // A torn write: the first 30 bytes of another batch.
    fs.appendFileSync(segment, batch({ values: ['torn'] }).subarray(0, 30));

    const second = await start(dir);
    expect(second.broker.stderr()).toMatch(/out-0: recovery truncated 00000000000000000000\.log at byte \d+, dropping 30 bytes \(torn batch/);
    expect(fs.statSync(segment).size).toBe(good);
    expect((await fetchAll(second.client, 'out', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['r0', 'r1', 'r2']);
    expect((await produce(second.client, 'out', 0, batch({ values: ['r3'] }))).baseOffset).toBe(3n);
    await second.broker.kill9();

    // Flip a byte inside the last batch: its CRC no longer matches.
    const bytes = fs.readFileSync(segment);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x55;
    fs.writeFileSync(segment, bytes);
    const third = await start(dir);
    expect(third.broker.stderr()).toMatch(/dropping \d+ bytes \(CRC mismatch in the batch at offset 3\)/);
    expect((await fetchAll(third.client, 'out', 0, 'read_uncommitted')).records.map((r) => r.value)).toEqual(['r0', 'r1', 'r2']);
  });

  it('keeps topic ids across restarts and rolls segments by size', async () => {
    const dir = tempDir();
    const broker = await spawnBroker({ dataDir: dir, port: 0, topics: [{ name: 'out', partitions: 2 }], segmentBytes: 1024 });
    running.push(broker);
    const c = await TestClient.connect(broker.port);
    clients.push(c);
    const id = (await c.call(3, { topics: [{ name: 'out', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }, 12)).topics[0].topicId;
    for (let i = 0; i < 20; i++) await produce(c, 'out', 1, batch({ values: ['x'.repeat(200)] }));
    expect(fs.readdirSync(path.join(dir, 'out-1')).filter((f) => f.endsWith('.log')).length).toBeGreaterThan(2);
    await broker.kill9();
    const again = await start(dir);
    const id2 = (await again.client.call(3, { topics: [{ name: 'out', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }, 12)).topics[0].topicId;
    expect(id2).toBe(id);
    expect((await fetchAll(again.client, 'out', 1, 'read_uncommitted')).highWatermark).toBe(20n);
  });
});
