/**
 * KIP-1289 §8's chaos tests, on multi-node clusters of real broker processes:
 * a partition leader failing during PREPARE, the transaction coordinator
 * crashing before and after PREPARE, consumer crashes mid-transaction, a
 * network partition between the transaction coordinator and the
 * share-partition leader (through the fault proxies), and several consumers of
 * one group transacting concurrently. Every test ends with the independent
 * checker: nothing lost, nothing duplicated, no output without its ack.
 */
import { describe, expect, it } from 'vitest';
import { CHAOS_BROKER, coordinatorNode, type ChaosCluster } from '../../chaos/harness.js';
import { awaitApplied, awaitComplete, cluster, deliveriesOf, eventually, explain, job, LOCK_MS, seedInput, sleep, snapshot } from './support.js';

const TOPICS_ON_NODE_0 = [
  { name: 'in', partitions: 1 },
  { name: 'out', partitions: 1 },
];

/** A transactional id whose coordinator is `node`, and a group coordinated by `groupNode`. */
function ids(c: ChaosCluster, node: number, groupNode = node): { txId: string; group: string } {
  const candidates = Array.from({ length: 40 }, (_, i) => `tx-${i}`);
  return {
    txId: candidates.find((id) => c.transactionCoordinatorOf(id) === node)!,
    group: Array.from({ length: 40 }, (_, i) => `g${i}`).find((g) => coordinatorNode(g, CHAOS_BROKER.consumerOffsetsPartitions, c.nodes.length) === groupNode)!,
  };
}

describe('KIP-1289 §8 chaos tests', () => {
  it('a partition leader dies during PREPARE (marker appended, not applied, not acknowledged): on restart the commit is applied exactly once', async () => {
    // Node 0 leads input, output and the share state, and crashes at its first marker append; node 1 is the transaction coordinator.
    const c = await cluster({ nodes: 2, topics: TOPICS_ON_NODE_0, faults: { 0: 'crash-after-marker-append' } });
    const { txId, group } = ids(c, 1);
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: txId, group }, ['--max-poll-records', '5', '--max-block-ms', '20000']);
    expect((await c.nodes[0]!.process!.exited).signal).toBe('SIGKILL');
    expect(c.nodes[0]!.process!.stderr()).toContain('crashing at crash-after-marker-append');
    const first = a.events.find((e) => e.event === 'polled' && e.txn === 1)!;
    const inDoubt = first.sources as string[];
    await sleep(500);
    await c.startNode(0);
    // The coordinator's marker resend (and the node's own recovery) complete the commit: visible once, acknowledged, never redelivered.
    await awaitApplied(c, group, inDoubt, 20_000, 'the in-doubt transaction to be applied');
    const report = await awaitComplete(c, 40_000, { group });
    expect(deliveriesOf([a], inDoubt)).toHaveLength(1);
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('the transaction coordinator is killed before PREPARE (transaction open, acks pending): after its restart the transaction either commits or is aborted — never half', async () => {
    const c = await cluster({ nodes: 2, topics: TOPICS_ON_NODE_0 });
    const { txId, group } = ids(c, 1, 0);
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: txId, group }, [
      '--max-poll-records',
      '5',
      '--hang-at',
      'after-share-acks',
      '--hang-after-n-transactions',
      '1',
      '--max-block-ms',
      '15000',
    ]);
    const hanging = await a.waitFor((e) => e.event === 'hanging', 30_000, 'hanging');
    const open = hanging.sources as string[];
    await c.killNode(1);
    const down = await snapshot(c, group);
    for (const id of open) expect(down.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    await c.startNode(1);
    await a.resume();
    const outcome = await a.waitFor(
      (e) => (e.event === 'committed' || e.event === 'aborted' || e.event === 'fenced') && e.txn === hanging.txn,
      30_000,
      'the open transaction to end',
    );
    let restarted = null;
    if (outcome.event === 'fenced') {
      // The coordinator aborted it (timeout while it was down): a new instance takes over.
      restarted = job(c, { name: 'a2', transactionalId: txId, group }, ['--max-poll-records', '5']);
    }
    const report = await awaitComplete(c, 40_000, { group });
    for (const id of open) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    if (outcome.event === 'committed') expect(deliveriesOf([a], open)).toHaveLength(1);
    else expect(deliveriesOf([a, ...(restarted ? [restarted] : [])], open).length).toBeGreaterThan(1);
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await Promise.all([a.stop(), restarted?.stop()]);
  });

  it('the transaction coordinator crashes after PREPARE_ABORT (explicit abort after acks): records stay pinned while it is down, come back once it completes the abort', async () => {
    const c = await cluster({ nodes: 2, topics: TOPICS_ON_NODE_0, faults: { 1: 'crash-after-prepare-abort' } });
    const { txId, group } = ids(c, 1, 0);
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: txId, group }, [
      '--max-poll-records',
      '5',
      '--abort-txn',
      '1',
      '--abort-point',
      'after-acks',
      '--max-block-ms',
      '20000',
    ]);
    expect((await c.nodes[1]!.process!.exited).signal).toBe('SIGKILL');
    const first = a.events.find((e) => e.event === 'polled' && e.txn === 1)!;
    const aborting = first.sources as string[];
    await sleep(LOCK_MS + 500);
    const down = await snapshot(c, group);
    for (const id of aborting) expect(down.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    expect(deliveriesOf([a], aborting)).toHaveLength(1);
    await c.startNode(1);
    await eventually(async () => deliveriesOf([a], aborting).length > 1, 20_000, 'redelivery after the abort completed');
    const report = await awaitComplete(c, 40_000, { group });
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('the transaction coordinator crashes after every marker was acknowledged but before COMPLETE_COMMIT: the resent markers change nothing', async () => {
    const c = await cluster({ nodes: 2, topics: TOPICS_ON_NODE_0, faults: { 1: 'crash-before-complete' } });
    const { txId, group } = ids(c, 1, 0);
    await seedInput(c.bootstrap, 'in', 20);
    const a = job(c, { name: 'a', transactionalId: txId, group }, ['--max-poll-records', '5', '--max-block-ms', '20000']);
    expect((await c.nodes[1]!.process!.exited).signal).toBe('SIGKILL');
    const first = a.events.find((e) => e.event === 'polled' && e.txn === 1)!;
    const done = first.sources as string[];
    // The markers were written: output visible and acks applied even with the coordinator down.
    const down = await snapshot(c, group);
    for (const id of done) expect(down.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    await c.startNode(1);
    const report = await awaitComplete(c, 40_000, { group });
    for (const id of done) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    expect(deliveriesOf([a], done)).toHaveLength(1);
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('consumers crash mid-transaction, again and again (kill -9 from outside at arbitrary moments, restart with the same transactional.id)', async () => {
    const c = await cluster({
      nodes: 1,
      topics: [
        { name: 'in', partitions: 2 },
        { name: 'out', partitions: 2 },
      ],
    });
    await seedInput(c.bootstrap, 'in', 120);
    let current = job(c, { name: 'a0', transactionalId: 'tx-crashy' }, ['--max-poll-records', '4', '--txn-pause-ms', '30']);
    const all = [current];
    for (let i = 1; i <= 3; i++) {
      await current.waitFor((e) => e.event === 'begin' && (e.txn as number) >= 3, 30_000, 'a few transactions');
      await sleep(37 * i);
      await current.kill9();
      current = job(c, { name: `a${i}`, transactionalId: 'tx-crashy' }, ['--max-poll-records', '4']);
      all.push(current);
    }
    const report = await awaitComplete(c, 60_000);
    expect(all.slice(0, 3).every((j) => j.child.signalCode === 'SIGKILL')).toBe(true);
    expect(report, explain(report)).toMatchObject({ inputs: 120, outputs: 120, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
    await current.stop();
  });

  it('a network partition between the transaction coordinator and the share-partition leader, healed later: the prepared commit waits (nothing visible, nothing redelivered) and completes once', async () => {
    const c = await cluster({ nodes: 2, topics: TOPICS_ON_NODE_0 });
    const { txId, group } = ids(c, 1, 0);
    await seedInput(c.bootstrap, 'in', 20);
    // The job is frozen inside its transaction while the test sets the fault up: the transaction timeout must leave room
    // for that on a loaded machine, or the coordinator aborts the transaction before the job's EndTxn arrives (a
    // different test: then nothing is prepared).
    const txnTimeoutMs = 6_000;
    const a = job(c, { name: 'a', transactionalId: txId, group }, [
      '--max-poll-records',
      '5',
      '--hang-at',
      'after-share-acks',
      '--hang-after-n-transactions',
      '1',
      '--max-block-ms',
      '20000',
      '--transaction-timeout-ms',
      String(txnTimeoutMs),
    ]);
    const hanging = await a.waitFor((e) => e.event === 'hanging', 30_000, 'hanging');
    const begun = a.events.find((e) => e.event === 'begin' && e.txn === hanging.txn)!;
    const inFlight = hanging.sources as string[];
    // Black-hole the link between node 1 (coordinator) and node 0 (share state, data), then let the job commit.
    c.partition(0, 1, 'stall');
    await a.resume();
    // EndTxn succeeded: PREPARE_COMMIT is durable on node 1, and its markers cannot reach node 0.
    const outcome = await a.waitFor(
      (e) => ['committed', 'aborted', 'failed', 'fenced'].includes(e.event) && e.txn === hanging.txn,
      20_000,
      'the commit of the frozen transaction',
    );
    expect(outcome.event, JSON.stringify(outcome)).toBe('committed');
    // Past the transaction timeout (a prepared transaction is never aborted by it) and the record lock (pending records are pinned).
    await sleep(Math.max(LOCK_MS, begun.at + txnTimeoutMs + 1_000 - Date.now()));
    const during = await snapshot(c, group);
    for (const id of inFlight) expect(during.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    expect(deliveriesOf([a], inFlight)).toHaveLength(1);
    expect(c.nodes[0]!.proxy.stats.held).toBeGreaterThan(0);
    c.healAll();
    await awaitApplied(c, group, inFlight, 30_000, 'the commit to complete after the heal');
    const report = await awaitComplete(c, 40_000, { group });
    expect(deliveriesOf([a], inFlight)).toHaveLength(1);
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 20, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0 });
    await a.stop();
  });

  it('three consumers of one group transact concurrently on a three-node cluster', async () => {
    const c = await cluster({
      nodes: 3,
      topics: [
        { name: 'in', partitions: 3 },
        { name: 'out', partitions: 3 },
      ],
    });
    await seedInput(c.bootstrap, 'in', 240);
    const jobs = [0, 1, 2].map((i) => job(c, { name: `j${i}`, transactionalId: `tx-j${i}` }, ['--max-poll-records', '5', '--txn-pause-ms', '20']));
    const report = await awaitComplete(c, 60_000);
    const committedBy = jobs.map((j) => j.events.filter((e) => e.event === 'committed').length);
    expect(committedBy.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    expect(report, explain(report)).toMatchObject({ inputs: 240, outputs: 240, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, archived: 0 });
    await Promise.all(jobs.map((j) => j.stop()));
  });
});
