/**
 * The short, fixed-seed version of the randomized soak (`npm run chaos` is the
 * long one): three broker processes, three jobs, input fed during a fault
 * window of kill -9 (nodes and jobs) and cut / black-holed links drawn from
 * the seed; then the independent checker must find nothing lost, nothing
 * duplicated, no output without its ack and no ack without its output.
 */
import { describe, expect, it } from 'vitest';
import { faultSchedule, runSoak } from '../../chaos/soak.js';

describe('randomized soak (fixed seeds)', () => {
  it('the fault schedule is a pure function of the seed', () => {
    const options = { faults: 4, windowMs: 6_000, nodes: 3, jobs: 3 };
    expect(faultSchedule(7, options)).toEqual(faultSchedule(7, options));
    expect(faultSchedule(7, options)).not.toEqual(faultSchedule(8, options));
    expect(faultSchedule(7, options).every((f) => f.at >= 0 && f.at <= 6_000)).toBe(true);
  });

  it('seeds 101 and 102: zero lost, zero duplicated, every ack with its output', { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    for (const seed of [101, 102]) {
      const result = await runSoak({ seed, records: 240, faults: 4, windowMs: 6_000, drainMs: 40_000, log: (l) => lines.push(l) });
      const why = lines.join('\n');
      expect(result.report.inputs, why).toBeGreaterThan(100); // most of the 240 (feeding is skipped while the nodes it needs are down)
      expect(result.report, why).toMatchObject({ lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0, foreign: 0 });
      expect(result.report.outputs, why).toBe(result.report.inputs - result.report.archived);
      // The faults really happened and hit the workload.
      expect(result.faults).toHaveLength(4);
      expect(result.jobStarts + result.nodeRestarts, why).toBeGreaterThan(3);
    }
    process.stdout.write(lines.filter((l) => l.includes('checker:') || l.startsWith('soak seed')).join('\n') + '\n');
  });

  it(
    'seed 201 with checkpointing jobs, on Transactions V2 with two-phase commit and on the classic protocol: zero lost, zero duplicated',
    { timeout: 120_000 },
    async () => {
      const lines: string[] = [];
      for (const flavour of [
        { transactionVersion: 2, twoPhaseCommit: true },
        { transactionVersion: 1, twoPhaseCommit: false },
      ]) {
        const result = await runSoak({
          seed: 201,
          records: 240,
          faults: 4,
          windowMs: 6_000,
          drainMs: 40_000,
          jobKind: 'checkpoint',
          ...flavour,
          log: (l) => lines.push(l),
        });
        const why = lines.join('\n');
        expect(result.report.inputs, why).toBeGreaterThan(100); // most of the 240 (feeding is skipped while the nodes it needs are down)
        expect(result.report, why).toMatchObject({ lost: 0, duplicated: 0, outputWithoutAck: 0, ackWithoutOutput: 0, pending: 0, foreign: 0 });
        expect(result.report.outputs, why).toBe(result.report.inputs - result.report.archived);
        expect(result.commits, why).toBeGreaterThan(3);
        expect(result.jobStarts + result.nodeRestarts, why).toBeGreaterThan(3);
      }
      process.stdout.write(lines.filter((l) => l.includes('checker:')).join('\n') + '\n');
    },
  );
});
