/**
 * bench/kafka/rounds.ts, the order bench:kafka runs its participants in:
 * untimed warm-up rounds come first and are marked, every round (warm-up
 * included) holds each participant once, the order rotates by one per round,
 * and with no warm-up the order is the one bench:kafka ran before warm-ups.
 * Its option parser names the option and the value it refuses.
 */
import { describe, expect, it } from 'vitest';
import { integerOption, median, roundTag, schedule } from '../../bench/kafka/rounds.js';

describe('bench:kafka rounds', () => {
  it('runs the warm-up rounds first, marked, then the timed rounds numbered from 0', () => {
    const slots = schedule(3, 2, 1);
    expect(slots.map((s) => [s.round, s.warmup])).toEqual([
      [-1, true],
      [-1, true],
      [-1, true],
      [0, false],
      [0, false],
      [0, false],
      [1, false],
      [1, false],
      [1, false],
    ]);
  });

  it('gives every participant one run per round and rotates the order by one each round', () => {
    const slots = schedule(3, 3, 2);
    const byRound = new Map<number, number[]>();
    for (const s of slots) byRound.set(s.round, [...(byRound.get(s.round) ?? []), s.participant]);
    expect([...byRound.keys()]).toEqual([-2, -1, 0, 1, 2]);
    for (const order of byRound.values()) expect([...order].sort()).toEqual([0, 1, 2]);
    expect(byRound.get(-1)).toEqual([2, 0, 1]);
    expect(byRound.get(0)).toEqual([0, 1, 2]);
    expect(byRound.get(1)).toEqual([1, 2, 0]);
  });

  it('with no warm-up runs what bench:kafka ran before: participant (i + round) mod n, rounds from 0', () => {
    const slots = schedule(4, 3, 0);
    const before: { round: number; participant: number }[] = [];
    for (let round = 0; round < 3; round++) for (let i = 0; i < 4; i++) before.push({ round, participant: (i + round) % 4 });
    expect(slots.map(({ round, participant }) => ({ round, participant }))).toEqual(before);
    expect(slots.some((s) => s.warmup)).toBe(false);
  });

  it('refuses counts that are not whole and non-negative, naming which', () => {
    expect(() => schedule(2, 3, -1)).toThrow(/warmupRounds must be an integer ≥ 0, got -1/);
    expect(() => schedule(2, 1.5, 1)).toThrow(/rounds must be an integer ≥ 0, got 1.5/);
  });

  it('tags warm-up rounds apart from timed ones for group ids', () => {
    expect([-2, -1, 0, 1].map(roundTag)).toEqual(['w2', 'w1', '0', '1']);
  });

  it('takes the median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('parses an integer option, falls back when absent, and names the option and value it refuses', () => {
    expect(integerOption(['--warmup-rounds', '0'], 'warmup-rounds', 1, 0)).toBe(0);
    expect(integerOption(['--rounds', '5'], 'warmup-rounds', 1, 0)).toBe(1);
    expect(() => integerOption(['--warmup-rounds', 'two'], 'warmup-rounds', 1, 0)).toThrow("--warmup-rounds must be an integer ≥ 0, got 'two'");
    expect(() => integerOption(['--rounds', '0'], 'rounds', 3, 1)).toThrow("--rounds must be an integer ≥ 1, got '0'");
    expect(() => integerOption(['--rounds'], 'rounds', 3, 1)).toThrow('--rounds must be an integer ≥ 1, got nothing');
    expect(() => integerOption(['--rounds', '--json'], 'rounds', 3, 1)).toThrow("--rounds must be an integer ≥ 1, got '--json'");
  });
});
