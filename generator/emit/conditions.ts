import { Versions } from '../versions.js';

/**
 * Version conditions in generated code, simplified against the versions a
 * function can be called with (like Kafka's VersionConditional): a field
 * present in every version of its struct needs no test at all.
 */
export type Condition = 'true' | 'false' | string;

export function versionCondition(versions: Versions, within: Versions): Condition {
  const overlap = versions.intersect(within);
  if (overlap.empty) return 'false';
  if (overlap.equals(within)) return 'true';
  const needLow = overlap.lowest > within.lowest;
  const needHigh = overlap.highest < within.highest;
  if (needLow && needHigh) {
    return overlap.lowest === overlap.highest ? `version === ${overlap.lowest}` : `version >= ${overlap.lowest} && version <= ${overlap.highest}`;
  }
  return needLow ? `version >= ${overlap.lowest}` : `version <= ${overlap.highest}`;
}

/** `a && b` for conditions, folding constants. */
export function and(a: Condition, b: Condition): Condition {
  if (a === 'false' || b === 'false') return 'false';
  if (a === 'true') return b;
  if (b === 'true') return a;
  return `${wrap(a)} && ${wrap(b)}`;
}

export function not(a: Condition): Condition {
  if (a === 'true') return 'false';
  if (a === 'false') return 'true';
  return `!(${a})`;
}

/** `cond ? a : b`, folding constants. */
export function choose(cond: Condition, whenTrue: string, whenFalse: string): string {
  if (cond === 'true') return whenTrue;
  if (cond === 'false') return whenFalse;
  return `${wrap(cond)} ? ${whenTrue} : ${whenFalse}`;
}

function wrap(c: string): string {
  return /\|\||\?/.test(c) ? `(${c})` : c;
}

/** The versions in which a field is a regular (not tagged) field. */
export function regularVersions(versions: Versions, tagged: Versions): Versions {
  if (tagged.empty) return versions;
  return versions.intersect(new Versions(0, tagged.lowest - 1));
}
