import { Versions } from '../versions.js';

/**
 * Conditions of generated code, as data: built already simplified against the
 * versions a function can be called with (like Kafka's VersionConditional, a
 * field present in every version of its struct needs no test at all), and
 * turned into TypeScript in one place, printCondition.
 */
export type Condition =
  | { readonly kind: 'always' }
  | { readonly kind: 'never' }
  /** `version` against the bounds the enclosing range does not already give; at least one is set. */
  | { readonly kind: 'versions'; readonly lowest: number | undefined; readonly highest: number | undefined }
  /** The function's `flexible` local: the message's flexible versions, tested once per call. */
  | { readonly kind: 'flexible' }
  /** A test that is not about the version (a value against its default, a tag number): code, parenthesized as needed. */
  | { readonly kind: 'test'; readonly code: string }
  | { readonly kind: 'and'; readonly parts: readonly Condition[] }
  | { readonly kind: 'or'; readonly parts: readonly Condition[] }
  | { readonly kind: 'not'; readonly of: Condition };

export const ALWAYS: Condition = { kind: 'always' };
export const NEVER: Condition = { kind: 'never' };
export const FLEXIBLE: Condition = { kind: 'flexible' };

export const isAlways = (c: Condition): boolean => c.kind === 'always';
export const isNever = (c: Condition): boolean => c.kind === 'never';
/** Neither always nor never: code must test it when it runs. */
export const isDynamic = (c: Condition): boolean => c.kind !== 'always' && c.kind !== 'never';

export function test(code: string): Condition {
  return { kind: 'test', code };
}

/** Whether `version` is in `versions`, for code that only runs in `within`. */
export function versionCondition(versions: Versions, within: Versions): Condition {
  const overlap = versions.intersect(within);
  if (overlap.empty) return NEVER;
  if (overlap.equals(within)) return ALWAYS;
  return {
    kind: 'versions',
    lowest: overlap.lowest > within.lowest ? overlap.lowest : undefined,
    highest: overlap.highest < within.highest ? overlap.highest : undefined,
  };
}

/** `a && b`, folding constants. */
export function and(a: Condition, b: Condition): Condition {
  if (isNever(a) || isNever(b)) return NEVER;
  if (isAlways(a)) return b;
  if (isAlways(b)) return a;
  return { kind: 'and', parts: [a, b] };
}

/** `a || b`, folding constants. */
export function or(a: Condition, b: Condition): Condition {
  if (isAlways(a) || isAlways(b)) return ALWAYS;
  if (isNever(a)) return b;
  if (isNever(b)) return a;
  return { kind: 'or', parts: [a, b] };
}

export function not(a: Condition): Condition {
  if (isAlways(a)) return NEVER;
  if (isNever(a)) return ALWAYS;
  // Versions are integers: `!(version >= 3)` is `version <= 2`.
  if (a.kind === 'versions' && a.highest === undefined) return { kind: 'versions', lowest: undefined, highest: a.lowest! - 1 };
  if (a.kind === 'versions' && a.lowest === undefined) return { kind: 'versions', lowest: a.highest! + 1, highest: undefined };
  return { kind: 'not', of: a };
}

/** Whether printing `c` refers to the function's `flexible` local. */
export function mentionsFlexible(c: Condition): boolean {
  switch (c.kind) {
    case 'flexible':
      return true;
    case 'and':
    case 'or':
      return c.parts.some(mentionsFlexible);
    case 'not':
      return mentionsFlexible(c.of);
    default:
      return false;
  }
}

/** The TypeScript of a condition: the one place conditions become text. */
export function printCondition(c: Condition): string {
  switch (c.kind) {
    case 'always':
      return 'true';
    case 'never':
      return 'false';
    case 'flexible':
      return 'flexible';
    case 'test':
      return c.code;
    case 'versions':
      if (c.lowest !== undefined && c.highest !== undefined) {
        return c.lowest === c.highest ? `version === ${c.lowest}` : `version >= ${c.lowest} && version <= ${c.highest}`;
      }
      return c.lowest !== undefined ? `version >= ${c.lowest}` : `version <= ${c.highest}`;
    case 'and':
      return c.parts.map((p) => (p.kind === 'or' ? `(${printCondition(p)})` : printCondition(p))).join(' && ');
    case 'or':
      // Later parts are parenthesized so that a default test reads as one unit.
      return c.parts.map((p, i) => (i === 0 ? printCondition(p) : `(${printCondition(p)})`)).join(' || ');
    case 'not':
      return `!(${printCondition(c.of)})`;
  }
}

/**
 * `cond ? a : b`, with only the branch that can run built: the branches are
 * thunks, so that a runtime name in the discarded one is never registered as an import.
 */
export function choose(cond: Condition, whenTrue: () => string, whenFalse: () => string): string {
  if (isAlways(cond)) return whenTrue();
  if (isNever(cond)) return whenFalse();
  const text = printCondition(cond);
  return `${cond.kind === 'or' ? `(${text})` : text} ? ${whenTrue()} : ${whenFalse()}`;
}
