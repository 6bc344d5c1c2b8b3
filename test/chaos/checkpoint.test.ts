/**
 * KIP-1289 §8's Flink-style exactly-once recovery tests, with the
 * checkpointing job runner (chaos/checkpoint-job.ts: prepareCommit →
 * snapshotState → notifyCheckpointComplete, recovery from the last
 * checkpoint file) killed with SIGKILL at each point and restarted on the same
 * checkpoint file and transactional id. The acks of the killed checkpoint are
 * either replayed (redelivered and processed again) or made visible by the
 * recovery commit — never lost, never applied twice.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, spawnManaged, type ManagedProcess } from '../../chaos/harness.js';
import type { ChaosCluster } from '../../chaos/harness.js';
import { awaitComplete, cluster, deliveriesOf, explain, seedInput, snapshot } from './support.js';

const TOPICS = [
  { name: 'in', partitions: 1 },
  { name: 'out', partitions: 1 },
];

function checkpointJob(c: ChaosCluster, name: string, file: string, extra: string[] = []): ManagedProcess {
  return spawnManaged(name, [
    '--import',
    'tsx',
    path.join(ROOT, 'chaos/checkpoint-job.ts'),
    '--bootstrap',
    c.bootstrap,
    '--group',
    'g',
    '--input',
    'in',
    '--output',
    'out',
    '--transactional-id',
    'flink-sink-0',
    '--checkpoint-file',
    file,
    '--client-id',
    `ckpt-${name}`,
    '--max-poll-records',
    '4',
    '--polls-per-checkpoint',
    '2',
    '--max-runtime-ms',
    '60000',
    ...extra,
  ]);
}

const checkpointDirs: string[] = [];
afterEach(() => {
  for (const dir of checkpointDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A checkpoint file in a temp folder that afterEach removes. */
function checkpointFile(): string {
  const checkpointDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-ckpt-'));
  checkpointDirs.push(checkpointDir);
  return path.join(checkpointDir, 'checkpoint.json');
}

type Point = 'after-share-acks' | 'after-prepare' | 'after-snapshot' | 'after-commit';

/**
 * `tv`: the brokers' finalized transaction.version (the client follows it); `twoPhase`: the sink enables KIP-939 2PC
 * (prepareTransaction() needs it, and it needs Transactions V2) and the brokers allow it.
 */
async function scenario(point: Point, tv: number, twoPhase = tv >= 2) {
  const c = await cluster({ topics: TOPICS, config: { transactionVersion: tv, transactionTwoPhaseCommitEnable: twoPhase } });
  await seedInput(c.bootstrap, 'in', 32);
  const file = checkpointFile();
  const flags = twoPhase ? ['--two-phase-commit'] : [];
  const first = checkpointJob(c, 'first', file, ['--die-at', point, '--die-after-n-checkpoints', '1', ...flags]);
  const dying = await first.waitFor((e) => e.event === 'dying', 30_000, 'dying');
  expect((await first.exited).signal).toBe('SIGKILL');
  expect(first.events.filter((e) => e.event === 'checkpoint-complete')).toHaveLength(1);
  const inFlight = dying.sources as string[];
  const afterCrash = await snapshot(c);
  const checkpoint = JSON.parse(fs.readFileSync(file, 'utf8'));
  const second = checkpointJob(c, 'second', file, flags);
  const recovered = await second.waitFor((e) => e.event === 'recovered', 30_000, 'recovery');
  const report = await awaitComplete(c, 40_000);
  await second.stop();
  expect(report, explain(report)).toMatchObject({ inputs: 32, outputs: 32, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
  return { inFlight, afterCrash, checkpoint, recovered, first, second, report, c };
}

for (const tv of [2, 1]) {
  describe(`checkpointing source + sink (KIP-1289 2.2/2.3) on transaction.version ${tv}: kill -9 at each checkpoint step, recover from the checkpoint file`, () => {
    it('killed after sendShareAcksToTransaction, before the snapshot: nothing to recover; the acks are replayed (records redelivered and processed once)', async () => {
      const { inFlight, afterCrash, checkpoint, recovered, second } = await scenario('after-share-acks', tv);
      for (const id of inFlight) expect(afterCrash.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
      expect(checkpoint).toMatchObject({ checkpointId: 1, committed: true });
      expect(recovered.outcome).toBe('nothing');
      // The new producer's initTransactions() fenced and aborted the old transaction: the records came back.
      const replayed = deliveriesOf([second], inFlight);
      expect(replayed.length).toBeGreaterThan(0);
      expect(replayed.some(({ e }) => (e.deliveryCounts as number[]).some((n) => n >= 2))).toBe(true);
    });

    it('killed after prepareTransaction, before the checkpoint completed (no snapshot): recovery restores the older checkpoint; the prepared transaction is aborted and replayed', async () => {
      const { inFlight, afterCrash, checkpoint, recovered, second, report } = await scenario('after-prepare', tv);
      for (const id of inFlight) expect(afterCrash.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
      expect(checkpoint).toMatchObject({ checkpointId: 1, committed: true });
      expect(recovered.outcome).toBe('nothing');
      expect(deliveriesOf([second], inFlight).length).toBeGreaterThan(0);
      for (const id of inFlight) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    });

    it('killed after snapshotState, before notifyCheckpointComplete: the restart commits the prepared transaction from the snapshot; the acks become visible with the output, nothing is redelivered', async () => {
      const { inFlight, afterCrash, checkpoint, recovered, second, report } = await scenario('after-snapshot', tv);
      for (const id of inFlight) expect(afterCrash.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
      expect(checkpoint).toMatchObject({ checkpointId: 2, committed: false, acks: inFlight });
      expect(checkpoint.transaction).toMatchObject({ transactionalId: 'flink-sink-0' });
      expect(recovered).toMatchObject({ outcome: 'committed', checkpointId: 2 });
      expect(deliveriesOf([second], inFlight)).toEqual([]);
      for (const id of inFlight) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
    });

    it('killed after commit, before the checkpoint was marked complete: recovery finds it committed; nothing twice, nothing redelivered', async () => {
      const { inFlight, afterCrash, checkpoint, recovered, second } = await scenario('after-commit', tv);
      for (const id of inFlight) expect(afterCrash.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
      expect(checkpoint).toMatchObject({ checkpointId: 2, committed: false });
      // TV2: EndTxn for the saved epoch finds it committed (the retry rule). TV1: EndTxn's idempotent retry.
      expect(recovered).toMatchObject({ outcome: 'committed', checkpointId: 2 });
      expect(deliveriesOf([second], inFlight)).toEqual([]);
    });
  });
}

describe('two-phase commit: the transaction coordinator is killed while a 2PC transaction is prepared', () => {
  it('the prepared transaction survives the coordinator restart and its timeout, and the recovery commits it exactly once', async () => {
    const c = await cluster({ topics: TOPICS, config: { transactionVersion: 2, transactionAbortCheckIntervalMs: 100, transactionTwoPhaseCommitEnable: true } });
    await seedInput(c.bootstrap, 'in', 32);
    const file = checkpointFile();
    const first = checkpointJob(c, 'first', file, [
      '--die-at',
      'after-snapshot',
      '--die-after-n-checkpoints',
      '1',
      '--two-phase-commit',
      '--transaction-timeout-ms',
      '500',
    ]);
    const dying = await first.waitFor((e) => e.event === 'dying', 30_000, 'dying');
    await first.exited;
    const inFlight = dying.sources as string[];
    await c.killNode(0);
    await c.startNode(0);
    // Four times the transaction timeout, checked every 100 ms: a 2PC transaction is not aborted by it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const meanwhile = await snapshot(c);
    for (const id of inFlight) expect(meanwhile.verdicts.get(id)).toMatchObject({ outputs: 0, state: 'pending' });
    const second = checkpointJob(c, 'second', file, ['--two-phase-commit']);
    const recovered = await second.waitFor((e) => e.event === 'recovered', 30_000, 'recovery');
    expect(recovered).toMatchObject({ outcome: 'committed', checkpointId: 2 });
    const report = await awaitComplete(c, 40_000);
    await second.stop();
    expect(report, explain(report)).toMatchObject({ inputs: 32, outputs: 32, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
    expect(deliveriesOf([second], inFlight)).toEqual([]);
    for (const id of inFlight) expect(report.verdicts.get(id)).toMatchObject({ outputs: 1, state: 'acknowledged' });
  });
});
