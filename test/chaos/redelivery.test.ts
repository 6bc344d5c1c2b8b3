/**
 * A record that comes back to a checkpointing job (chaos/
 * checkpoint-job.ts, real processes behind the fault proxy) inside the
 * transaction that already holds an earlier delivery of it — its member
 * timed out by a stalled link, or its lock run out between two polls of one
 * checkpoint. The independent checker must find every input output once.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, spawnManaged, type ChaosCluster, type ManagedProcess } from '../../chaos/harness.js';
import { KafkaShareConsumer } from '../../client/index.js';
import { awaitComplete, cluster, eventually, explain, seedInput, sleep } from './support.js';

const TOPICS = [
  { name: 'in', partitions: 1 },
  { name: 'out', partitions: 1 },
];

const dirs: string[] = [];
const jobs: ManagedProcess[] = [];
afterEach(async () => {
  await Promise.all(jobs.splice(0).map((j) => j.kill9()));
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function checkpointJob(c: ChaosCluster, name: string, extra: string[]): ManagedProcess {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-ckpt-'));
  dirs.push(dir);
  const j = spawnManaged(
    name,
    [
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
      `sink-${name}`,
      '--checkpoint-file',
      path.join(dir, 'checkpoint.json'),
      '--client-id',
      name,
      '--max-runtime-ms',
      '90000',
      ...extra,
    ],
    {},
    process.env.KIPGEN_CHAOS_ECHO === '1',
  );
  jobs.push(j);
  return j;
}

describe('a record back inside the transaction that holds it', () => {
  it('a member timed out mid-transaction by a stalled link: the checkpoint aborts (CommitFailedError) and every record is output once (2PC)', async () => {
    // A lock far longer than a checkpoint: the records come back only because the group removed the member.
    const c = await cluster({ topics: TOPICS, shareGroup: { recordLockDurationMs: 20_000 }, config: { transactionTwoPhaseCommitEnable: true } });
    await seedInput(c.bootstrap, 'in', 16);
    const j = checkpointJob(c, 'ckpt-stalled', ['--max-poll-records', '4', '--polls-per-checkpoint', '2', '--poll-gap-ms', '6000', '--two-phase-commit']);
    // A checkpoint completes (the consumer now knows its producer); the next one polls, its transaction open.
    await j.waitFor((e) => e.event === 'checkpoint-complete', 40_000, 'a checkpoint complete');
    const completedBefore = j.events.length;
    await j.waitFor((e) => e.event === 'polled' && j.events.indexOf(e as never) >= completedBefore, 20_000, 'the next checkpoint polled');
    // Black-hole the job's traffic (its heartbeats) until the share coordinator times the member out.
    const broker = c.nodes[0]!.process!;
    const timeouts = () => broker.stderr().match(/share group g: member \S+ timed out after/g)?.length ?? 0;
    const before = timeouts();
    const stalledAt = j.events.length;
    c.nodes[0]!.proxy.addRule({ id: 'stall-job', mode: 'stall', clientId: 'ckpt-stalled' });
    await eventually(async () => timeouts() > before, 10_000, 'the member timed out');
    c.nodes[0]!.proxy.removeRule('stall-job');
    // The rejoined consumer gets the records back in the same open transaction: it withholds them, and the
    // transaction cannot carry their acks. Before the fix this checkpoint committed them twice. (On a loaded
    // machine a member may also time out on its own, before the stall: the same path.)
    const aborted = await j.waitFor((e) => e.event === 'aborted' && j.events.indexOf(e as never) >= stalledAt, 20_000, 'the checkpoint aborted');
    expect(aborted.error).toMatch(/^CommitFailedError: .*lost this member \(UNKNOWN_MEMBER_ID/);
    const held = aborted.sources as string[];
    const report = await awaitComplete(c, 40_000);
    expect(report, explain(report)).toMatchObject({ inputs: 16, outputs: 16, lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0 });
    // No completed checkpoint lists a record twice, and the held records were completed after the abort.
    const completed = j.events.filter((e) => e.event === 'checkpoint-complete').flatMap((e) => e.sources as string[]);
    expect(new Set(completed).size).toBe(completed.length);
    for (const id of held) expect(completed).toContain(id);
    await j.stop();
  });

  it('a lock that runs out between two polls of one checkpoint (800 ms lock, 1200 ms apart): every record is output once', async () => {
    // The reported case: a checkpoint's second poll gets the first poll's records back. The lock is long enough for
    // the acks to follow that poll on a loaded machine (a lock that runs out before the acks too makes the
    // checkpoint abort, correctly, at the cost of deliveries).
    const c = await cluster({ topics: TOPICS, shareGroup: { recordLockDurationMs: 800 } });
    await seedInput(c.bootstrap, 'in', 4);
    const j = checkpointJob(c, 'ckpt-lock', ['--max-poll-records', '8', '--polls-per-checkpoint', '2', '--poll-gap-ms', '1200']);
    const report = await awaitComplete(c, 60_000);
    // Before the fix: each checkpoint output its records twice, with one ack, every run.
    expect(report, explain(report)).toMatchObject({
      inputs: 4,
      outputs: 4,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      pending: 0,
      archived: 0,
    });
    const completed = j.events.filter((e) => e.event === 'checkpoint-complete').flatMap((e) => e.sources as string[]);
    expect(completed.sort()).toEqual(['0:0', '0:1', '0:2', '0:3']);
    // The attempt that completed got each record once, though its second poll acquired them again (withheld).
    const end = j.events.findIndex((e) => e.event === 'checkpoint-complete');
    let start = end - 1;
    while (start >= 0 && j.events[start]!.event !== 'aborted') start--;
    const attempt = j.events.slice(start + 1, end).filter((e) => e.event === 'polled');
    expect(attempt.flatMap((e) => e.sources as string[]).sort()).toEqual(['0:0', '0:1', '0:2', '0:3']);
    await j.stop();
  });

  it('a member idle longer than the session timeout right after joining keeps its membership (heartbeats at the group interval from the join on)', async () => {
    // The share coordinator's member timeouts of the checkpoint soak: the consumer waited its default 5 s interval
    // once after the join, past the 2.5 s session timeout, and the member was timed out while holding records.
    const c = await cluster({ topics: TOPICS, shareGroup: { recordLockDurationMs: 60_000 } });
    await seedInput(c.bootstrap, 'in', 8);
    const warnings: string[] = [];
    const s = new KafkaShareConsumer({
      bootstrapServers: c.bootstrap,
      groupId: 'g',
      acknowledgementMode: 'transactional',
      maxPollRecords: 4,
      fetchMaxWaitMs: 200,
      logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    });
    try {
      s.subscribe(['in']);
      let first: unknown[] = [];
      for (let i = 0; i < 50 && first.length === 0; i++) first = await s.poll(200);
      expect(first).toHaveLength(4);
      const epoch = s.groupMetadata().generationId;
      await sleep(4_000);
      expect(await s.poll(500)).toHaveLength(4); // the other four: the first four are still ours
      expect(warnings.filter((w) => /rejoining/.test(w))).toEqual([]);
      expect(s.groupMetadata().generationId).toBe(epoch);
      expect(c.nodes[0]!.process!.stderr()).not.toMatch(/timed out after/);
    } finally {
      await s.close(1_000);
    }
  });
});
