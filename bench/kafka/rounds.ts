/**
 * The order bench:kafka runs its participants in: untimed warm-up rounds first
 * (the first round was cold for everyone: every first-round ratio was the
 * lowest), then the timed rounds, each round rotating the order by one so that
 * no participant always runs first or right after the same peer.
 */

export interface Slot {
  /** Timed rounds count from 0; warm-up rounds are negative (-warmupRounds … -1). */
  round: number;
  warmup: boolean;
  /** Index into the participants. */
  participant: number;
}

/** Every run in order: `warmupRounds` untimed rounds, then `rounds` timed ones, each with every participant once. */
export function schedule(participants: number, rounds: number, warmupRounds: number): Slot[] {
  for (const [name, value] of [
    ['participants', participants],
    ['rounds', rounds],
    ['warmupRounds', warmupRounds],
  ] as const) {
    if (!Number.isInteger(value) || value < 0) throw new Error(`schedule: ${name} must be an integer ≥ 0, got ${value}`);
  }
  const slots: Slot[] = [];
  for (let round = 0 - warmupRounds; round < rounds; round++) {
    // (0 - n, not -n: no warm-up must start at round 0, not -0.)
    for (let i = 0; i < participants; i++) {
      // A warm-up round rotates like any other, so each participant has run once before the first timed round.
      const shift = (((i + round) % participants) + participants) % participants;
      slots.push({ round, warmup: round < 0, participant: shift });
    }
  }
  return slots;
}

/** A name part for a round, for group and transactional ids: 0, 1, … for timed rounds, w1, w2, … for warm-up rounds. */
export const roundTag = (round: number): string => (round < 0 ? `w${-round}` : String(round));

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Parses a bench option that must be an integer ≥ `min`; `fallback` when absent.
 * Throws naming the option and the value otherwise (a typo must not run a default-sized bench).
 */
export function integerOption(argv: readonly string[], name: string, fallback: number, min: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const raw = argv[i + 1];
  const value = raw === undefined || raw.startsWith('--') ? Number.NaN : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${raw === undefined ? 'nothing' : `'${raw}'`}`);
  return value;
}
