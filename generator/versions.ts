/**
 * A version range as Kafka's schemas write it: "none", "3", "1-4" or "2+".
 * Open-ended ranges run to 32767 (Java's Short.MAX_VALUE), as in Kafka.
 */
export const MAX_VERSION = 0x7fff;

export class Versions {
  static readonly NONE = new Versions(0, -1);
  static readonly ALL = new Versions(0, MAX_VERSION);

  constructor(
    readonly lowest: number,
    readonly highest: number,
  ) {}

  /** Parses a range; throws a RangeError whose message says what is wrong. */
  static parse(text: string): Versions {
    const trimmed = text.trim();
    if (trimmed === 'none') return Versions.NONE;
    if (trimmed.endsWith('+')) return new Versions(parseVersion(trimmed.slice(0, -1), text), MAX_VERSION);
    const dash = trimmed.indexOf('-');
    if (dash >= 0) {
      return new Versions(parseVersion(trimmed.slice(0, dash), text), parseVersion(trimmed.slice(dash + 1), text));
    }
    const single = parseVersion(trimmed, text);
    return new Versions(single, single);
  }

  get empty(): boolean {
    return this.lowest > this.highest;
  }

  get openEnded(): boolean {
    return !this.empty && this.highest === MAX_VERSION;
  }

  contains(version: number): boolean {
    return version >= this.lowest && version <= this.highest;
  }

  /** True when every version of `other` is in this range. */
  covers(other: Versions): boolean {
    return other.empty || (!this.empty && other.lowest >= this.lowest && other.highest <= this.highest);
  }

  intersect(other: Versions): Versions {
    const lowest = Math.max(this.lowest, other.lowest);
    const highest = Math.min(this.highest, other.highest);
    return lowest > highest ? Versions.NONE : new Versions(lowest, highest);
  }

  equals(other: Versions): boolean {
    return (this.empty && other.empty) || (this.lowest === other.lowest && this.highest === other.highest);
  }

  *[Symbol.iterator](): IterableIterator<number> {
    for (let v = this.lowest; v <= this.highest; v++) yield v;
  }

  toString(): string {
    if (this.empty) return 'none';
    if (this.highest === MAX_VERSION) return `${this.lowest}+`;
    if (this.lowest === this.highest) return `${this.lowest}`;
    return `${this.lowest}-${this.highest}`;
  }
}

/**
 * One bound, read as Kafka reads it (Java's Short.parseShort: an optional sign,
 * then decimal digits, within a short), then refused when negative, as Kafka's
 * Versions constructor does.
 */
function parseVersion(part: string, whole: string): number {
  if (!/^[+-]?\d+$/.test(part)) throw new RangeError(`'${whole}' is not a version range (expected none, N, N-M or N+)`);
  const value = Number(part);
  if (value > MAX_VERSION) throw new RangeError(`version ${value} in '${whole}' exceeds ${MAX_VERSION}`);
  if (value < 0) throw new RangeError(`Invalid version range '${whole}': versions cannot be negative`);
  return value;
}
