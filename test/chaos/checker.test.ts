/**
 * The checker itself must be able to fail: each violation it reports is
 * planted here on a real broker process (with the client library, which the
 * checker does not use) and must be found, and aborted output must not count.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, ShareAcknowledgements, TransactionalShareAcknowledger, type ShareConsumerRecord } from '../../client/index.js';
import { ROOT } from '../../chaos/harness.js';
import { replayShareState } from '../../chaos/checker.js';
import { encodeSnapshotRecord, encodeUpdateRecord } from '../../coordinator/share/share-state-records.js';
import { ShareSnapshotValue, ShareUpdateValue } from '../../generated/index.js';
import { controlRecordBatch, decodeRecordBatches, encodeRecordBatch } from '../../runtime/record-batch.js';
import { cluster, explain, seedInput, snapshot } from './support.js';

const quiet = { logger: null, metricsRegistry: null } as const;

async function pollN(consumer: KafkaShareConsumer, n: number, ms = 10_000): Promise<ShareConsumerRecord[]> {
  const out: ShareConsumerRecord[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n && Date.now() < deadline) out.push(...(await consumer.poll(200)));
  return out;
}

const valueOf = (r: ShareConsumerRecord) => Buffer.from(r.value!).toString();

describe('the independent checker', () => {
  it('finds planted duplicates, output without ack, ack without output, pending acks and foreign output; ignores aborted output', async () => {
    // The pending ack below is a prepared transaction: two-phase commit on the broker and the acknowledger.
    const c = await cluster({
      topics: [
        { name: 'in', partitions: 1 },
        { name: 'out', partitions: 1 },
      ],
      config: { transactionTwoPhaseCommitEnable: true },
    });
    await seedInput(c.bootstrap, 'in', 10);
    const empty = await snapshot(c);
    expect(empty).toMatchObject({ inputs: 10, outputs: 0, lost: 10, duplicated: 0, pending: 0 });

    const consumer = new KafkaShareConsumer({
      bootstrapServers: c.bootstrap,
      groupId: 'g',
      acknowledgementMode: 'transactional',
      fetchMaxWaitMs: 100,
      maxPollRecords: 10,
      logger: null,
    });
    const producer = new KafkaProducer({ bootstrapServers: c.bootstrap, transactionalId: 'plant', lingerMs: 1, transactionTimeoutMs: 30_000, ...quiet });
    const acker = new TransactionalShareAcknowledger({
      bootstrapServers: c.bootstrap,
      transactionalId: 'plant-acks',
      transactionTwoPhaseCommitEnable: true,
      ...quiet,
    });
    try {
      consumer.subscribe(['in']);
      await producer.initTransactions();
      await acker.initTransactions();
      const records = await pollN(consumer, 10);
      expect(records).toHaveLength(10);
      const [r0, r1, r2, r3, r4, r5, ...rest] = records;
      const out = (r: ShareConsumerRecord, value = `${valueOf(r)}:done`) => ({ topic: 'out', value, headers: { source: `${r.partition}:${r.offset}` } });

      // r0: correct (output + ack in one transaction).
      producer.beginTransaction();
      await producer.send(out(r0!));
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords([r0!], 'accept'), consumer.groupMetadata());
      await producer.commitTransaction();
      // r1: output committed twice, ack once → duplicated.
      producer.beginTransaction();
      await producer.send(out(r1!));
      await producer.send(out(r1!));
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords([r1!], 'accept'), consumer.groupMetadata());
      await producer.commitTransaction();
      // r2: output committed without its ack → output-without-ack.
      producer.beginTransaction();
      await producer.send(out(r2!));
      await producer.commitTransaction();
      // r3: ack committed without output → ack-without-output.
      await acker.commitAcknowledgements(ShareAcknowledgements.fromRecords([r3!], 'accept'), consumer.groupMetadata());
      // r4: output and ack aborted → not visible, not acknowledged (lost until processed again).
      producer.beginTransaction();
      await producer.send(out(r4!));
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords([r4!], 'accept'), consumer.groupMetadata());
      await producer.abortTransaction();
      // r5: rejected in a committed transaction → archived, not lost.
      await acker.commitAcknowledgements(ShareAcknowledgements.fromRecords([r5!], 'reject'), consumer.groupMetadata());
      // rest[0]: an ack prepared and left open → pending.
      await acker.prepareAcknowledgements(ShareAcknowledgements.fromRecords([rest[0]!], 'accept'), consumer.groupMetadata());
      // A foreign output: a value no input has.
      producer.beginTransaction();
      await producer.send({ topic: 'out', value: 'in-999999:done' });
      await producer.commitTransaction();

      const id = (r: ShareConsumerRecord) => `${r.partition}:${r.offset}`;
      const report = await snapshot(c);
      expect(report.verdicts.get(id(r0!))).toMatchObject({ outputs: 1, state: 'acknowledged' });
      expect(report.verdicts.get(id(r1!))).toMatchObject({ outputs: 2, state: 'acknowledged' });
      expect(report.verdicts.get(id(r2!))).toMatchObject({ outputs: 1, state: 'available' });
      expect(report.verdicts.get(id(r3!))).toMatchObject({ outputs: 0, state: 'acknowledged' });
      expect(report.verdicts.get(id(r4!))).toMatchObject({ outputs: 0, state: 'available' });
      expect(report.verdicts.get(id(r5!))).toMatchObject({ outputs: 0, state: 'archived' });
      expect(report.verdicts.get(id(rest[0]!))).toMatchObject({ outputs: 0, state: 'pending' });
      expect(report, explain(report)).toMatchObject({
        inputs: 10,
        outputs: 5, // r0, r1 twice, r2, foreign; r4's aborted output is not visible
        duplicated: 1,
        outputWithoutAck: 1,
        ackWithoutOutput: 1,
        archived: 1,
        pending: 1,
        foreign: 1,
        lost: 6, // no visible output and not archived: r3 (acknowledged!), r4, and the four never processed
      });

      // The CLI prints the summary line and exits non-zero on a violation.
      // (asynchronously: the fault proxies live in this process)
      const cli = await new Promise<{ stdout: string; stderr: string; status: number | null }>((resolve) => {
        const child = execFile(
          process.execPath,
          [
            '--import',
            'tsx',
            path.join(ROOT, 'chaos/checker.ts'),
            '--bootstrap',
            c.bootstrap,
            '--group',
            'g',
            '--input',
            'in',
            '--output',
            'out',
            '--settle-ms',
            '0',
          ],
          { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
          (_error, stdout, stderr) => resolve({ stdout, stderr, status: child.exitCode }),
        );
      });
      expect(cli.stdout, cli.stderr).toMatch(
        /^checker: inputs=10 outputs=5 lost=6 duplicated=1 output-without-ack=1 ack-without-output=1 archived=1 pending=1 foreign=1/m,
      );
      expect(cli.status).toBe(1);
    } finally {
      await acker.close(1_000).catch(() => {});
      await producer.close(1_000).catch(() => {});
      await consumer.close(1_000).catch(() => {});
    }
  });

  it('replays the share-state log as the coordinator does: snapshots replace, updates merge, start offsets keep terminal states, transactional updates wait for their marker', () => {
    const key = { groupId: 'g', topicId: 'TOPICAAAAAAAAAAAAAAAAA', partition: 0 };
    const other = { groupId: 'other', topicId: 'TOPICAAAAAAAAAAAAAAAAA', partition: 0 };
    const sb = (firstOffset: bigint, lastOffset: bigint, deliveryState: number, deliveryCount = 1) => ({
      firstOffset,
      lastOffset,
      deliveryState,
      deliveryCount,
    });
    const update = (k: typeof key, startOffset: bigint, batches: ReturnType<typeof sb>[]) =>
      encodeUpdateRecord(k, ShareUpdateValue.create({ snapshotEpoch: 0, leaderEpoch: 0, startOffset, stateBatches: batches }));
    const snap = (startOffset: bigint, batches: ReturnType<typeof sb>[]) =>
      encodeSnapshotRecord(key, ShareSnapshotValue.create({ snapshotEpoch: 1, stateEpoch: 0, leaderEpoch: 0, startOffset, stateBatches: batches }));
    const now = BigInt(Date.now());
    let offset = 0n;
    const raw: Uint8Array[] = [];
    const plain = (record: { key: Uint8Array; value: Uint8Array | null }) =>
      raw.push(encodeRecordBatch({ baseOffset: offset++, records: [{ key: record.key, value: record.value, timestamp: now }] }));
    const txn = (pid: bigint, record: { key: Uint8Array; value: Uint8Array | null }) =>
      raw.push(
        encodeRecordBatch({
          baseOffset: offset++,
          isTransactional: true,
          producerId: pid,
          producerEpoch: 0,
          baseSequence: 0,
          records: [{ key: record.key, value: record.value, timestamp: now }],
        }),
      );
    const marker = (pid: bigint, type: 'COMMIT' | 'ABORT') =>
      raw.push(controlRecordBatch({ type, producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, timestamp: now, baseOffset: offset++ }));

    plain(snap(0n, []));
    plain(update(key, -1n, [sb(0n, 1n, 2), sb(2n, 2n, 4)])); // 0-1 acknowledged, 2 archived
    plain(update(other, -1n, [sb(5n, 5n, 2)])); // another group: ignored
    txn(7n, update(key, -1n, [sb(3n, 4n, 2)])); // committed below
    txn(8n, update(key, -1n, [sb(5n, 5n, 2)])); // aborted below
    txn(9n, update(key, -1n, [sb(6n, 6n, 2)])); // never resolved: pending
    marker(7n, 'COMMIT');
    marker(8n, 'ABORT');
    plain(update(key, -1n, [sb(5n, 5n, 0, 2)])); // after the abort: available again, delivery count 2
    plain(snap(4n, [sb(4n, 4n, 2), sb(5n, 5n, 0, 2)])); // start moves past 0..3
    const batches = decodeRecordBatches(Buffer.concat(raw)).batches;
    const states = replayShareState([batches], 'g', key.topicId).get(0)!;
    expect(states.startOffset).toBe(4n);
    expect(states.lastTerminal.get(0n)).toBe(2);
    expect(states.lastTerminal.get(2n)).toBe(4);
    expect(states.lastTerminal.get(3n)).toBe(2);
    expect(states.current.get(4n)).toEqual({ state: 2, count: 1 });
    expect(states.current.get(5n)).toEqual({ state: 0, count: 2 });
    expect([...states.pendingBy.keys()]).toEqual([6n]);
    expect(states.current.has(6n)).toBe(false);
  });
});
