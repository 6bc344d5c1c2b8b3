import { DecodeError, EncodeError, decodeErrorAt } from './errors.js';
import type { Reader } from './reader.js';
import type { Writer } from './writer.js';
import { sizeOfArrayLength, sizeOfBytes, sizeOfString } from './sizes.js';

/** Reads one element of an array; `version` is passed through to struct readers. */
export type ElementReader<T> = (reader: Reader, version: number) => T;

/**
 * Reads `length` elements (a length already checked against the bytes left by
 * Reader.arrayLength). A failure inside element `i` gets `[i]` on its path.
 */
export function readArray<T>(reader: Reader, length: number, version: number, readElement: ElementReader<T>): T[] {
  if (length < 0) throw new DecodeError('non-nullable array is null');
  const out = new Array<T>(length);
  let i = 0;
  try {
    for (; i < length; i++) out[i] = readElement(reader, version);
  } catch (error) {
    throw decodeErrorAt(error, `[${i}]`);
  }
  return out;
}

export function readNullableArray<T>(reader: Reader, length: number, version: number, readElement: ElementReader<T>): T[] | null {
  return length < 0 ? null : readArray(reader, length, version, readElement);
}

// Element readers and writers for arrays of strings and bytes; arrays of
// fixed-width primitives use the Reader.int32Array family and Writer.fixedArray instead.

export function readStringElement(reader: Reader): string {
  return reader.string(false);
}
export function readCompactStringElement(reader: Reader): string {
  return reader.string(true);
}
export function readBytesElement(reader: Reader): Uint8Array {
  return reader.bytes(false);
}
export function readCompactBytesElement(reader: Reader): Uint8Array {
  return reader.bytes(true);
}

/** Writes one element of an array. */
export type ElementWriter<T> = (writer: Writer, element: T, version: number) => void;
/** Sizes one element of an array. */
export type ElementSizer<T> = (element: T, version: number) => number;

export function writeArray<T>(writer: Writer, items: readonly T[] | null, version: number, compact: boolean, writeElement: ElementWriter<T>): void {
  if (items === null) {
    writer.arrayLength(-1, compact);
    return;
  }
  writer.arrayLength(items.length, compact);
  for (let i = 0; i < items.length; i++) writeElement(writer, items[i]!, version);
}

export function sizeOfArray<T>(items: readonly T[] | null, version: number, compact: boolean, sizeElement: ElementSizer<T>): number {
  if (!Array.isArray(items)) throw new EncodeError(`non-nullable array is ${String(items)}`);
  let size = sizeOfArrayLength(items.length, compact);
  for (let i = 0; i < items.length; i++) size += sizeElement(items[i]!, version);
  return size;
}

export function sizeOfNullableArray<T>(items: readonly T[] | null, version: number, compact: boolean, sizeElement: ElementSizer<T>): number {
  return items === null ? sizeOfArrayLength(-1, compact) : sizeOfArray(items, version, compact, sizeElement);
}

/** Size of an array of fixed-width elements. */
export function sizeOfFixedArray(items: readonly unknown[] | null, compact: boolean, elementSize: number): number {
  if (!Array.isArray(items)) throw new EncodeError(`non-nullable array is ${String(items)}`);
  return sizeOfArrayLength(items.length, compact) + items.length * elementSize;
}

export function sizeOfNullableFixedArray(items: readonly unknown[] | null, compact: boolean, elementSize: number): number {
  return items === null ? sizeOfArrayLength(-1, compact) : sizeOfFixedArray(items, compact, elementSize);
}

/** Writes a nullable struct: Kafka's int8 presence marker, then the struct. */
export function writeNullableStruct<T>(writer: Writer, value: T | null, version: number, writeStruct: ElementWriter<T>): void {
  writer.structPresent(value !== null);
  if (value !== null) writeStruct(writer, value, version);
}

export const writeStringElement: ElementWriter<string> = (w, v) => w.string(v, false);
export const writeCompactStringElement: ElementWriter<string> = (w, v) => w.string(v, true);
export const writeBytesElement: ElementWriter<Uint8Array> = (w, v) => w.bytes(v, false);
export const writeCompactBytesElement: ElementWriter<Uint8Array> = (w, v) => w.bytes(v, true);
export const sizeOfStringElement: ElementSizer<string> = (v) => sizeOfString(v, false);
export const sizeOfCompactStringElement: ElementSizer<string> = (v) => sizeOfString(v, true);
export const sizeOfBytesElement: ElementSizer<Uint8Array> = (v) => sizeOfBytes(v, false);
export const sizeOfCompactBytesElement: ElementSizer<Uint8Array> = (v) => sizeOfBytes(v, true);

/** A struct in a version where it is not nullable. */
export function requireStruct<T>(value: T | null): T {
  if (value === null || typeof value !== 'object') throw new EncodeError(`non-nullable struct is ${String(value)}`);
  return value;
}
