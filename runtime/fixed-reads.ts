import { DecodeError } from './errors.js';
import type { FixedRun, Reader } from './reader.js';
import { uuidToString } from './uuid.js';

// Reads of fixed-width values at a given position, and their errors. The Reader
// uses them, and so do generated readers where they keep a local position instead
// of going through the Reader: consecutive fixed-width fields and arrays of
// fixed-width values (docs/GENERATOR.md, "Local-position segments"). Such a
// reader's own bytecode holds the bounds checks and the loads, and V8 has only
// these small functions to inline, not a Reader method per read out of its
// inlining budget. The checks and the error messages are the Reader's.

/** Throws the Reader's error for `count` bytes wanted at `at` of input that ends at `end`. */
export function tooShortAt(at: number, count: number, end: number): never {
  throw new DecodeError(`needs ${count} byte${count === 1 ? '' : 's'} at offset ${at}, only ${end - at} left`);
}

/**
 * The element count of a classic (int32-length) array of `width`-byte values whose
 * length starts at `at`: not null, not negative, its elements within `end`. The
 * elements start at `at + 4`.
 */
export function classicFixedCount(view: DataView, at: number, end: number, width: number): number {
  if (at + 4 > end) tooShortAt(at, 4, end);
  const count = view.getInt32(at);
  if (count < 0 || at + 4 + width * count > end) badFixedCount(count, at + 4, width, end);
  return count;
}

/**
 * The same for a compact (unsigned varint length + 1) array; the elements start at
 * `r.pos` afterwards. A length below 127 takes one byte and is read here; a longer
 * varint (or one written in more bytes than it needs, which Kafka accepts) goes to
 * the Reader, a call V8 leaves out of line as long as no array is that long.
 */
export function compactFixedCount(r: Reader, at: number, width: number): number {
  const end = r.end;
  let count: number;
  let elements: number;
  const first = at < end ? r.buffer[at]! : 0x80;
  if (first < 0x80) {
    count = first - 1;
    elements = at + 1;
  } else {
    r.pos = at;
    count = r.unsignedVarint() - 1;
    elements = r.pos;
  }
  if (count < 0 || elements + width * count > end) badFixedCount(count, elements, width, end);
  r.pos = elements;
  return count;
}

function badFixedCount(count: number, at: number, width: number, end: number): never {
  if (count < 0) refuseArrayLength(count);
  tooShortAt(at, width * count, end);
}

/** Throws for the first field of a run of fixed-width fields at `at` that does not fit in `left` bytes. */
export function runTooShort(run: FixedRun, at: number, left: number): never {
  let start = 0;
  for (const [name, end] of run.fields) {
    if (end > left) {
      throw new DecodeError(`needs ${end - start} byte${end - start === 1 ? '' : 's'} at offset ${at + start}, only ${left - start} left`).within(name);
    }
    start = end;
  }
  throw new DecodeError(`needs ${run.size} bytes at offset ${at}, only ${left} left`);
}

export function invalidArrayLength(length: number): never {
  throw new DecodeError(`array has invalid length ${length}`);
}

/** Throws for a negative length where a non-nullable array was expected. */
function refuseArrayLength(length: number): never {
  if (length < -1) invalidArrayLength(length);
  nullArray();
}

export function nullArray(): never {
  throw new DecodeError('non-nullable array is null');
}

// The elements of a fixed-width array, already bounds-checked. Replica lists
// (MetadataResponse, three per partition) are mostly 2 or 3 long, and an array
// literal is much cheaper to build than `new Array(length)`.

export function int32List(view: DataView, at: number, count: number): number[] {
  if (count === 3) return [view.getInt32(at), view.getInt32(at + 4), view.getInt32(at + 8)];
  if (count === 2) return [view.getInt32(at), view.getInt32(at + 4)];
  return count === 0 ? [] : int32Elements(view, at, count);
}

/** The loop of int32List, out of line so that int32List stays small enough to inline three times. */
function int32Elements(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt32(at + 4 * i);
  return out;
}

export function int8List(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt8(at + i);
  return out;
}

export function int16List(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(at + 2 * i);
  return out;
}

export function uint16List(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getUint16(at + 2 * i);
  return out;
}

export function uint32List(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getUint32(at + 4 * i);
  return out;
}

export function int64List(view: DataView, at: number, count: number): bigint[] {
  const out = new Array<bigint>(count);
  for (let i = 0; i < count; i++) out[i] = view.getBigInt64(at + 8 * i);
  return out;
}

export function float64List(view: DataView, at: number, count: number): number[] {
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = view.getFloat64(at + 8 * i);
  return out;
}

export function boolList(bytes: Uint8Array, at: number, count: number): boolean[] {
  const out = new Array<boolean>(count);
  for (let i = 0; i < count; i++) out[i] = bytes[at + i] !== 0;
  return out;
}

export function uuidList(bytes: Uint8Array, at: number, count: number): string[] {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = uuidToString(bytes, at + 16 * i);
  return out;
}
