/**
 * Records archived at the delivery-count limit (KIP-932's poison-record rule,
 * DESIGN §5.2: an abort keeps the delivery count, so a record that fails every
 * time is archived in the end) must be recorded in `__share_group_state` as
 * ARCHIVED, so that the independent checker reports them as `archived`, never
 * as `lost`.
 *
 * Regression of the soak's `lost=8 ack-without-output=8` (seed 5: the ids in
 * state `done-unknown`, `archived=0`): records of one poll failed in
 * transaction after transaction until their delivery count reached the limit
 * and were archived, but the share coordinator's write said only that the
 * start offset had moved past them (an archive by lock expiry at the head of
 * the partition), or nothing at all (an abort at the limit, which the marker
 * settles only through the limit, unknown to any reader of the log).
 * `npm run chaos -- --seed 5 --delivery-count-limit 2` showed it every time.
 */
import { describe, expect, it } from 'vitest';
import { check, type CheckReport } from '../../chaos/checker.js';
import type { ChaosCluster } from '../../chaos/harness.js';
import { WireClient } from '../../chaos/wire.js';
import { cluster, deliveriesOf, eventually, explain, job, seedInput, summaryLine } from './support.js';

const ONE_INPUT_PARTITION = [
  { name: 'in', partitions: 1 },
  { name: 'out', partitions: 1 },
];

/** Waits until every input is settled — output visible, or finished in the share state (archived, or "done" without output, which the caller then sees as lost) — and nothing is pending. */
async function settled(c: ChaosCluster, ms: number): Promise<CheckReport> {
  let last: CheckReport | null = null;
  try {
    return await eventually(
      async () => {
        last = await check({ bootstrap: c.bootstrap, group: 'g', input: 'in', output: 'out' });
        const open = [...last.verdicts.values()].filter((v) => v.outputs === 0 && (v.state === 'available' || v.state === 'pending'));
        return last.stable && last.pending === 0 && open.length === 0 ? last : null;
      },
      ms,
      'every input settled',
      300,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nlast: ${last ? summaryLine(last) : 'none'}`);
  }
}

describe('records archived at the delivery-count limit', () => {
  it('an abort at the limit archives the records, and the log says so: archived, not lost', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION, shareGroup: { deliveryCountLimit: 1 } });
    await seedInput(c.bootstrap, 'in', 20);
    // Transaction 1 stores its acks (TX_PENDING), then aborts: with a limit of 1 its records are archived at once.
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '5', '--abort-txn', '1', '--abort-point', 'after-acks']);
    const aborted = await a.waitFor((e) => e.event === 'aborted' && e.txn === 1, 30_000, 'transaction 1 aborted');
    const failed = aborted.sources as string[];
    expect(failed).toHaveLength(5);
    const report = await settled(c, 40_000);
    for (const id of failed) expect(report.verdicts.get(id), id).toMatchObject({ outputs: 0, state: 'archived' });
    expect(report, explain(report)).toMatchObject({
      inputs: 20,
      outputs: 15,
      archived: 5,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      pending: 0,
    });
    await a.stop();
  });

  it('a lock that expires at the limit archives the records at the head of the partition, and the log says so: archived, not lost', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION, shareGroup: { deliveryCountLimit: 1 } });
    await seedInput(c.bootstrap, 'in', 20);
    // a acquires offsets 0-2 and freezes before its transaction (connection open): their lock expires at the limit.
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, ['--max-poll-records', '3', '--hang-at', 'before-begin', '--hang-after-n-transactions', '0']);
    const hanging = await a.waitFor((e) => e.event === 'hanging', 30_000, 'hanging');
    const frozen = hanging.sources as string[];
    expect(frozen).toEqual(['0:0', '0:1', '0:2']);
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '5']);
    const report = await settled(c, 40_000);
    for (const id of frozen) expect(report.verdicts.get(id), id).toMatchObject({ outputs: 0, state: 'archived' });
    expect(report, explain(report)).toMatchObject({
      inputs: 20,
      outputs: 17,
      archived: 3,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      pending: 0,
    });
    await a.kill9();
    await b.stop();
  });
});

/**
 * A Release acknowledged in a transaction, the group's
 * share.delivery.count.limit lowered from 10 to 2 with IncrementalAlterConfigs
 * while it waits, then the commit. The marker must resolve it with the limit
 * in force then (the records have been delivered twice: archived) and write
 * so to `__share_group_state`: before, the log kept the AVAILABLE of staging
 * time while the node archived the records, and the next write only moved the
 * start offset past them (the checker: lost, also after a restart), or the
 * node still had the limit of its last fetch and delivered them a third time,
 * above the new limit.
 */
describe('the delivery-count limit lowered while a Release waits in a transaction', () => {
  it('COMMIT archives the records at the new limit: reported archived, never lost, never delivered above the limit, also after a broker restart', async () => {
    const c = await cluster({ topics: ONE_INPUT_PARTITION });
    await seedInput(c.bootstrap, 'in', 5);
    // Transactions 1 and 2 give offsets 0-4 back (RELEASE, no output); transaction 2 freezes with its acks pending.
    const a = job(c, { name: 'a', transactionalId: 'tx-a' }, [
      '--max-poll-records',
      '5',
      '--release-txns',
      '2',
      '--hang-at',
      'after-share-acks',
      '--hang-after-n-transactions',
      '1',
      '--transaction-timeout-ms',
      '20000',
    ]);
    const hanging = await a.waitFor((e) => e.event === 'hanging' && e.txn === 2, 30_000, 'transaction 2 frozen with its Release pending');
    const released = hanging.sources as string[];
    expect(released).toEqual(['0:0', '0:1', '0:2', '0:3', '0:4']);
    expect(a.events.find((e) => e.event === 'polled' && e.txn === 2)!.deliveryCounts).toEqual([2, 2, 2, 2, 2]);

    const admin = new WireClient(WireClient.parseBootstrap(c.bootstrap), 'kipgen-chaos-admin');
    try {
      await admin.metadata([]);
      await admin.setGroupConfigs(0, 'g', { 'share.delivery.count.limit': '2' });
    } finally {
      await admin.close();
    }
    await a.resume();
    await a.waitFor((e) => e.event === 'released' && e.txn === 2, 30_000, 'transaction 2 committed');
    await seedInput(c.bootstrap, 'in', 5, 5);

    let report = await settled(c, 40_000);
    for (const id of released) expect(report.verdicts.get(id), id).toMatchObject({ outputs: 0, state: 'archived' });
    expect(report, explain(report)).toMatchObject({
      inputs: 10,
      outputs: 5,
      archived: 5,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      pending: 0,
    });
    await a.stop();

    // A restart replays the log: the records stay archived and a new job never gets them.
    await c.killNode(0);
    await c.startNode(0);
    await seedInput(c.bootstrap, 'in', 5, 10);
    const b = job(c, { name: 'b', transactionalId: 'tx-b' }, ['--max-poll-records', '5']);
    report = await settled(c, 40_000);
    expect(report, explain(report)).toMatchObject({
      inputs: 15,
      outputs: 10,
      archived: 5,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      pending: 0,
    });
    await b.stop();

    // Delivered twice (the new limit), by transactions 1 and 2 of job a, and never again.
    const deliveries = deliveriesOf([a, b], released);
    expect(deliveries.map((d) => [d.job, d.e.txn, d.e.deliveryCounts])).toEqual([
      ['a', 1, [1, 1, 1, 1, 1]],
      ['a', 2, [2, 2, 2, 2, 2]],
    ]);
  });
});
