/**
 * KIP-1289 §6, every corner case, against real processes: broker processes
 * behind fault proxies, the consume-transform-produce job (chaos/ctp-job.ts)
 * killed with SIGKILL (or frozen with SIGSTOP) at the exact point named, and
 * the independent checker (chaos/checker.ts) for what is visible and what is
 * committed. Each test asserts its row of the guarantee matrix: what is
 * visible, what is redelivered and when (at once vs lock expiry vs
 * transaction timeout, DESIGN §5.2), nothing lost, nothing duplicated.
 *
 * Timing constants (support.ts): record lock 1.5 s, transaction timeout 3 s,
 * share session timeout 2.5 s. Lower bounds on redelivery times are exact
 * consequences of the protocol; upper bounds have generous slack.
 */
import { describe, expect, it } from 'vitest';
import { CHAOS_BROKER, coordinatorNode } from '../../chaos/harness.js';
import { WireClient, committedRecords, utf8 } from '../../chaos/wire.js';
import {
  awaitApplied,
  awaitComplete,
  cluster,
  deliveriesOf,
  eventually,
  explain,
  job,
  LOCK_MS,
  seedInput,
  sleep,
  snapshot,
  TXN_TIMEOUT_MS,
} from './support.js';

const ONE_INPUT_PARTITION = [
  { name: 'in', partitions: 1 },
  { name: 'out', partitions: 1 },
];

/** Output records of the job's transaction `txn` in the log, read_uncommitted and read_committed. */
async function outputsOfTxn(bootstrap: string, jobName: string, txn: number, topic = 'out'): Promise<{ uncommitted: number; committed: number }> {
  const client = new WireClient(WireClient.parseBootstrap(bootstrap));
  try {
    const layout = (await client.metadata([topic])).get(topic)!;
    let uncommitted = 0;
    let committed = 0;
    const mine = (headers: { key: string; value: Uint8Array | null }[]) =>
      headers.some((h) => h.key === 'job' && utf8(h.value) === `job-${jobName}`) && headers.some((h) => h.key === 'txn' && utf8(h.value) === String(txn));
    for (let p = 0; p < layout.leaders.length; p++) {
      const all = await client.readPartition(layout, p, 'read_uncommitted');
      for (const b of all.batches) if (!b.isControl) for (const r of b.records) if (mine(r.headers)) uncommitted++;
      const rc = await client.readPartition(layout, p, 'read_committed');
      for (const r of committedRecords(rc.batches, rc.aborted)) if (mine(r.headers)) committed++;
    }
    return { uncommitted, committed };
  } finally {
    await client.close();
  }
}

describe('KIP-1289 §6 corner cases, with real process kills', () => {
  it('case 1: kill -9 before beginTransaction — nothing written; the records come back at once (the dead connection releases them, before their lock would expire); exactly once in the end', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 40);
    // b shares the one input partition with a (more members than partitions), and keeps running — slowly enough
    // (a transaction takes ≥ 250 ms) that a, which starts later, still finds records for its three polls.
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '3', '--txn-pause-ms', '250']);
    await b.waitFor((e) => e.event === 'ready', 20_000, 'ready');
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '5', '--die-at', 'before-begin', '--die-after-n-transactions', '2']);
    const dying = await a.waitFor((e) => e.event === 'dying', 30_000, 'dying');
    expect((await a.exited).signal).toBe('SIGKILL');
    expect(a.events.filter((e) => e.event === 'committed')).toHaveLength(2);
    const polled = a.events.find((e) => e.event === 'polled' && e.txn === dying.txn)!;
    const lostTxn = dying.sources as string[];
    expect(a.events.some((e) => e.event === 'begin' && e.txn === dying.txn)).toBe(false);

    // Right after the kill: a's two transactions are visible with their acks; the third never began.
    const now = await snapshot(c);
    for (const id of lostTxn) expect(now.verdicts.get(id)?.outputs).toBe(0);
    // No ack of a's (it never began): a record is pending only if b already took it over into its own transaction.
    const takenByB = new Set(deliveriesOf([b], lostTxn).flatMap(({ e }) => e.sources as string[]));
    for (const id of lostTxn) if (!takenByB.has(id)) expect(now.verdicts.get(id)?.state).not.toBe('pending');
    expect(now.duplicated + now.outputWithoutAck + now.ackWithoutOutput).toBe(0);

    // b gets the records of the killed poll again, with delivery count 2, before their lock would have expired.
    await eventually(async () => deliveriesOf([b], lostTxn).length > 0, 20_000, 'b to receive the records of the killed poll');
    const first = deliveriesOf([b], lostTxn)[0]!.e;
    expect((first.deliveryCounts as number[])[(first.sources as string[]).indexOf(lostTxn.find((id) => (first.sources as string[]).includes(id))!)]).toBe(2);
    expect(first.at - polled.at).toBeLessThan(LOCK_MS);
    const report = await awaitComplete(c, 40_000);
    expect(report, explain(report)).toMatchObject({ inputs: 40, outputs: 40, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, archived: 0 });
    await b.stop();
  });

  it('case 1 (frozen consumer): a process stopped before beginTransaction keeps its connection; its records come back when the lock expires', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 30);
    // b runs first and shares the one input partition with a (more members than partitions), slowly enough that a still finds records.
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '3', '--txn-pause-ms', '250']);
    await b.waitFor((e) => e.event === 'ready', 20_000, 'ready');
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '3', '--hang-at', 'before-begin', '--hang-after-n-transactions', '0']);
    const hanging = await a.waitFor((e) => e.event === 'hanging', 30_000, 'hanging');
    const polled = a.events.find((e) => e.event === 'polled' && e.txn === hanging.txn)!;
    const frozen = hanging.sources as string[];
    await eventually(async () => deliveriesOf([b], frozen).length > 0, 20_000, 'b to receive the frozen records');
    const redelivered = deliveriesOf([b], frozen)[0]!.e;
    // Not before the acquisition lock expired: a is alive as far as TCP goes.
    expect(redelivered.at - polled.at).toBeGreaterThanOrEqual(LOCK_MS - 150);
    const report = await awaitComplete(c, 40_000);
    expect(report, explain(report)).toMatchObject({ inputs: 30, outputs: 30, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.kill9();
    await b.stop();
  });

  it('case 2: kill -9 after send, before commit — output in the log but never visible, aborted on transaction timeout; records redelivered; exactly once', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 30);
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '5', '--die-at', 'after-send', '--die-after-n-transactions', '1']);
    const dying = await a.waitFor((e) => e.event === 'dying', 30_000, 'dying');
    await a.exited;
    const begin = a.events.find((e) => e.event === 'begin' && e.txn === 2)!;
    const killed = dying.sources as string[];

    // The killed transaction's output is in the log, invisible; its records have no ack at all.
    const written = await outputsOfTxn(c.bootstrap, 'a', 2);
    expect(written).toEqual({ uncommitted: killed.length, committed: 0 });
    const now = await snapshot(c);
    expect(now.stable).toBe(false); // the open transaction holds the last stable offset
    for (const id of killed) expect(now.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'available' });

    // A different instance processes the records; the old transaction ends only by the coordinator's timeout.
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '5']);
    await eventually(async () => (await snapshot(c)).stable, 15_000, 'the killed transaction to be aborted');
    const abortedAfter = Date.now() - begin.at;
    expect(abortedAfter).toBeGreaterThanOrEqual(TXN_TIMEOUT_MS - 300);
    expect(await outputsOfTxn(c.bootstrap, 'a', 2)).toEqual({ uncommitted: killed.length, committed: 0 });
    const report = await awaitComplete(c, 40_000);
    expect(deliveriesOf([b], killed).length).toBeGreaterThan(0);
    expect(report, explain(report)).toMatchObject({ inputs: 30, outputs: 30, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, archived: 0 });
    await b.stop();
  });

  it('case 3: kill -9 after sendShareAcksToTransaction, before commit — acks pending (records pinned, not redelivered) until the timeout aborts both; then redelivered at once', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 30);
    // b (slow enough that a, which starts later, still finds records for its two transactions) shares the partition.
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '3', '--txn-pause-ms', '200']);
    await b.waitFor((e) => e.event === 'ready', 20_000, 'ready');
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '5', '--die-at', 'after-share-acks', '--die-after-n-transactions', '1']);
    const dying = await a.waitFor((e) => e.event === 'dying', 30_000, 'dying');
    await a.exited;
    const killed = dying.sources as string[];
    const begin = a.events.find((e) => e.event === 'begin' && e.txn === dying.txn)!;

    // The acks are pending (TX_PENDING) and the output invisible.
    const now = await snapshot(c);
    for (const id of killed) expect(now.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    expect(await outputsOfTxn(c.bootstrap, 'a', dying.txn as number)).toMatchObject({ committed: 0 });
    expect(now.pending).toBeGreaterThanOrEqual(killed.length); // b's open transaction may hold some too

    // Past the lock duration they are still pinned: b (which shares the partition) does not get them.
    await sleep(LOCK_MS + 300);
    expect(deliveriesOf([b], killed)).toEqual([]);
    const later = await snapshot(c);
    for (const id of killed) expect(later.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });

    // The coordinator aborts on timeout: output aborted, acks discarded, records available at once.
    await eventually(async () => deliveriesOf([b], killed).length > 0, 15_000, 'b to receive the records of the aborted transaction');
    const redelivered = deliveriesOf([b], killed)[0]!.e;
    expect(redelivered.at - begin.at).toBeGreaterThanOrEqual(TXN_TIMEOUT_MS - 300);
    const report = await awaitComplete(c, 40_000);
    expect(await outputsOfTxn(c.bootstrap, 'a', dying.txn as number)).toEqual({ uncommitted: killed.length, committed: 0 });
    expect(report, explain(report)).toMatchObject({ inputs: 30, outputs: 30, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
    await b.stop();
  });

  it("case 4: EndTxn(COMMIT) sent, the transaction coordinator's node dies after PREPARE_COMMIT — nothing visible, nothing redelivered while it is down; on restart the commit completes", async () => {
    // Node 0 leads the data and the share state; node 1 coordinates the transaction and crashes after PREPARE_COMMIT.
    const c = await cluster({ nodes: 2, topics: ONE_INPUT_PARTITION, faults: { 1: 'crash-after-prepare-commit' } });
    const candidates = Array.from({ length: 20 }, (_, i) => `tx-${i}`);
    const txId = candidates.find((id) => c.transactionCoordinatorOf(id) === 1)!;
    // b's transactions and the share group are coordinated by node 0, so that b keeps working while node 1 is down.
    const txB = candidates.find((id) => c.transactionCoordinatorOf(id) === 0)!;
    const group = Array.from({ length: 20 }, (_, i) => `g${i}`).find((g) => coordinatorNode(g, CHAOS_BROKER.consumerOffsetsPartitions, 2) === 0)!;
    await seedInput(c.bootstrap, 'in', 20);
    // b must leave records for a (whose first commit crashes node 1): ≥ 150 ms per transaction of 2.
    const b = job(c, { name: 'b', transactionalId: txB, group }, ['--max-poll-records', '2', '--txn-pause-ms', '150']);
    const a = job(c, { name: 'a', transactionalId: txId, group }, ['--max-poll-records', '5', '--max-block-ms', '20000']);
    const exit = await c.nodes[1]!.process!.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(c.nodes[1]!.process!.stderr()).toContain('KIPGEN_FAULT: crashing at crash-after-prepare-commit');
    const committing = a.events.filter((e) => e.event === 'polled').at(-1)!;
    const prepared = committing.sources as string[];

    // While the coordinator is down: neither the output nor the acks of the prepared transaction are visible,
    // and the records are not redelivered — not after the lock, not after the transaction timeout.
    await sleep(TXN_TIMEOUT_MS + 500);
    const down = await snapshot(c, group);
    for (const id of prepared) expect(down.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    expect(deliveriesOf([a, b], prepared).length).toBe(1); // only a's original delivery

    // Restart the coordinator (no fault): it replays PREPARE_COMMIT and completes the markers.
    await c.startNode(1);
    await awaitApplied(c, group, prepared, 20_000, 'the prepared transaction to complete after the restart');
    const report = await awaitComplete(c, 40_000, { group });
    expect(deliveriesOf([a, b], prepared).length).toBe(1);
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, archived: 0 });
    // The job's EndTxn retry was answered once the coordinator was back (idempotent commit, DESIGN §5.6).
    await a.waitFor((e) => e.event === 'committed' && e.txn === committing.txn, 20_000, 'a to see its commit succeed');
    await Promise.all([a.stop(), b.stop()]);
  });

  it('case 5: a zombie fenced by a new instance with the same transactional.id — its output and acks are discarded, the new instance re-processes; the zombie gets ProducerFencedError', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 30);
    const zombie = job(c, { name: 'zombie', transactionalId: 'tx-shared' }, [
      '--max-poll-records',
      '5',
      '--hang-at',
      'after-share-acks',
      '--hang-after-n-transactions',
      '1',
    ]);
    const hanging = await zombie.waitFor((e) => e.event === 'hanging', 30_000, 'hanging');
    const held = hanging.sources as string[];
    const pinned = await snapshot(c);
    for (const id of held) expect(pinned.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });

    // Instance B with the same transactional id: initTransactions fences the zombie and aborts its transaction.
    const successor = job(c, { name: 'successor', transactionalId: 'tx-shared' }, ['--max-poll-records', '5']);
    await successor.waitFor((e) => e.event === 'ready', 20_000, 'ready');
    await eventually(async () => deliveriesOf([successor], held).length > 0, 15_000, 'the successor to get the zombie records');
    // The abort made them available at once, long before the zombie's transaction timeout.
    const got = deliveriesOf([successor], held)[0]!.e;
    expect(got.at - hanging.at).toBeLessThan(TXN_TIMEOUT_MS + 5_000);

    // The zombie wakes up and tries to commit: fenced.
    await zombie.resume();
    const fenced = await zombie.waitFor((e) => e.event === 'fenced' || (e.event === 'committed' && e.txn === hanging.txn), 20_000, 'the zombie to be fenced');
    expect(fenced.event).toBe('fenced');
    expect((await zombie.exited).code).toBe(3);
    const report = await awaitComplete(c, 40_000);
    expect(await outputsOfTxn(c.bootstrap, 'zombie', hanging.txn as number)).toMatchObject({ committed: 0 });
    for (const id of held) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    expect(report, explain(report)).toMatchObject({ inputs: 30, outputs: 30, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await successor.stop();
  });

  it('case 6a: explicit abortTransaction() after part of the output, before acks — output aborted; records come back when their lock expires', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '6', '--abort-txn', '2', '--abort-point', 'before-acks']);
    const aborted = await a.waitFor((e) => e.event === 'aborted', 30_000, 'aborted');
    const polled = a.events.find((e) => e.event === 'polled' && e.txn === aborted.txn)!;
    const sources = aborted.sources as string[];
    expect(aborted.acksSent).toBe(false);
    await eventually(
      async () => a.events.some((e) => e.event === 'polled' && (e.txn as number) > (aborted.txn as number) && (e.sources as string[]).includes(sources[0]!)),
      15_000,
      'redelivery',
    );
    const again = a.events.find((e) => e.event === 'polled' && (e.txn as number) > (aborted.txn as number) && (e.sources as string[]).includes(sources[0]!))!;
    expect(again.at - polled.at).toBeGreaterThanOrEqual(LOCK_MS - 150);
    expect((again.deliveryCounts as number[])[(again.sources as string[]).indexOf(sources[0]!)]).toBe(2);
    const report = await awaitComplete(c, 30_000);
    expect(await outputsOfTxn(c.bootstrap, 'a', aborted.txn as number)).toEqual({ uncommitted: 3, committed: 0 });
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('case 6b: explicit abortTransaction() after sendShareAcksToTransaction — acks discarded and the records available again at once (DESIGN §5.2)', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '6', '--abort-txn', '2', '--abort-point', 'after-acks']);
    const aborted = await a.waitFor((e) => e.event === 'aborted', 30_000, 'aborted');
    const sources = aborted.sources as string[];
    expect(aborted.acksSent).toBe(true);
    await eventually(
      async () => a.events.some((e) => e.event === 'polled' && (e.sources as string[]).includes(sources[0]!) && (e.txn as number) > (aborted.txn as number)),
      15_000,
      'redelivery',
    );
    const again = a.events.find((e) => e.event === 'polled' && (e.sources as string[]).includes(sources[0]!) && (e.txn as number) > (aborted.txn as number))!;
    expect(again.at - aborted.at).toBeLessThan(LOCK_MS);
    const report = await awaitComplete(c, 30_000);
    expect(await outputsOfTxn(c.bootstrap, 'a', aborted.txn as number)).toEqual({ uncommitted: sources.length, committed: 0 });
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('case 7: produce to one partition fails (its connection is reset by the fault proxy) — the job aborts; output to the other partition stays invisible; all redelivered and processed once after the fault clears', async () => {
    // out-0 on node 0, out-1 on node 1; the proxy of node 1 resets every Produce of the job.
    const c = await cluster({
      nodes: 2,
      topics: [
        { name: 'in', partitions: 1 },
        { name: 'out', partitions: 2 },
      ],
    });
    await seedInput(c.bootstrap, 'in', 20);
    c.nodes[1]!.proxy.addRule({ id: 'produce-to-out-1', mode: 'kill-request', clientId: 'job-a', apiKeys: [0] });
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '10', '--delivery-timeout-ms', '1500']);
    const failed = await a.waitFor((e) => e.event === 'failed', 30_000, 'a failed transaction');
    expect(failed.error).toMatch(/expired|delivery\.timeout|Timeout/i);
    const aborted = await a.waitFor((e) => e.event === 'aborted' && e.txn === failed.txn, 15_000, 'the abort');
    expect(c.nodes[1]!.proxy.stats.resets).toBeGreaterThan(0);
    const partial = await outputsOfTxn(c.bootstrap, 'a', failed.txn as number);
    expect(partial.committed).toBe(0);
    expect(partial.uncommitted).toBeGreaterThan(0); // the records that reached out-0 exist, aborted
    c.nodes[1]!.proxy.removeRule('produce-to-out-1');
    const report = await awaitComplete(c, 40_000);
    for (const id of aborted.sources as string[]) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    expect(await outputsOfTxn(c.bootstrap, 'a', failed.txn as number)).toMatchObject({ committed: 0 });
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });
});
