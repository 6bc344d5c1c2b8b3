import { EncodeError } from './errors.js';

/** Sizes of variable-length encodings, used by the generated size pass. */

export function sizeOfUnsignedVarint(value: number): number {
  // Values are uint32 at most; the comparisons are cheaper than Math.clz32 arithmetic.
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  return 5;
}

export function sizeOfVarint(value: number): number {
  return sizeOfUnsignedVarint(((value << 1) ^ (value >> 31)) >>> 0);
}

export function sizeOfVarlong(value: bigint): number {
  // Inside int32 ZigZag-64 equals ZigZag-32 (see Writer.varlong): no BigInt math.
  if (value >= -0x80000000n && value <= 0x7fffffffn) return sizeOfVarint(Number(value));
  let zigzag = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  let size = 1;
  while (zigzag >= 0x80n) {
    zigzag >>= 7n;
    size++;
  }
  return size;
}

/** UTF-8 byte length of a JavaScript string (surrogate pairs count 4 bytes; a lone surrogate 3, as U+FFFD). */
export function utf8Length(value: string): number {
  const length = value.length;
  let bytes = length;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
      continue;
    }
    // 3 bytes for one UTF-16 unit; a surrogate pair is 2 units and 4 bytes.
    bytes += 2;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return bytes;
}

/**
 * Size of a string, classic (int16 length) or compact (unsigned varint length + 1).
 * Throws EncodeError for null: callers use it for versions where the field is not nullable.
 */
export function sizeOfString(value: string | null, compact: boolean): number {
  if (typeof value !== 'string') throw new EncodeError(`non-nullable string is ${String(value)}`);
  const bytes = utf8Length(value);
  return (compact ? sizeOfUnsignedVarint(bytes + 1) : 2) + bytes;
}

export function sizeOfNullableString(value: string | null, compact: boolean): number {
  if (value === null) return compact ? 1 : 2;
  return sizeOfString(value, compact);
}

export function sizeOfBytes(value: Uint8Array | null, compact: boolean): number {
  if (!(value instanceof Uint8Array)) throw new EncodeError(`non-nullable bytes are ${String(value)}`);
  return (compact ? sizeOfUnsignedVarint(value.length + 1) : 4) + value.length;
}

export function sizeOfNullableBytes(value: Uint8Array | null, compact: boolean): number {
  if (value === null) return compact ? 1 : 4;
  return sizeOfBytes(value, compact);
}

/** Size of an array's length prefix; `length` -1 is null. */
export function sizeOfArrayLength(length: number, compact: boolean): number {
  return compact ? sizeOfUnsignedVarint(length + 1) : 4;
}

/** The value of an empty bytes field. Shared: a zero-length array cannot be changed. */
export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);
