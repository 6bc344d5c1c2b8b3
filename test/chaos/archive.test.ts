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
import { cluster, eventually, explain, job, seedInput, summaryLine } from './support.js';

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
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 15, archived: 5, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
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
    expect(report, explain(report)).toMatchObject({ inputs: 20, outputs: 17, archived: 3, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
    await a.kill9();
    await b.stop();
  });
});
