import { DecodeError, implausibleCount } from './errors.js';
import { uuidToString } from './uuid.js';
import type { RawTaggedField } from './tagged-fields.js';
import { decodeUtf8Lenient } from './utf8.js';

// Node's Buffer method, which takes any Uint8Array as `this`: it copies the bytes
// into a one-byte string with no decoding. Used for ASCII input only.
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice(this: Uint8Array, start: number, end: number): string }).latin1Slice;

/** Above these, a count or a read size taken from the wire is flagged as implausible (errors.ts). */
const LARGE_COUNT = 0xffff;
const LARGE_READ = 1 << 20;

/**
 * A bounds-checked cursor over a byte array. Every read checks the bytes left
 * before touching them, and every length read from the wire is checked against
 * the bytes left before anything is allocated from it (docs/DESIGN.md §3).
 */
export class Reader {
  private readonly buffer: Uint8Array;
  private readonly view: DataView;
  // For views: `new Uint8Array(arrayBuffer, …)` is 2.5× faster than
  // `subarray`, which looks up the species constructor (a Buffer's is slow).
  private readonly arrayBuffer: ArrayBufferLike;
  private readonly byteOffset: number;
  pos: number;
  readonly end: number;
  /**
   * Elements of arrays of structs, strings and bytes that this reader may
   * still create (Infinity: no budget). Bytes left bound a count, but a
   * decoded element costs far more memory than its smallest wire form (an
   * empty struct is one to six bytes and some 200 bytes of objects), so a
   * server that decodes untrusted frames sets a budget per request.
   */
  elementBudget = Infinity;

  /**
   * `view`, when given, must be a DataView of exactly `buffer`: readers of many small
   * windows of one buffer (one per record batch) share it instead of making their own.
   */
  constructor(buffer: Uint8Array, start = 0, end = buffer.length, view?: DataView) {
    this.buffer = buffer;
    this.view = view ?? new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.arrayBuffer = buffer.buffer;
    this.byteOffset = buffer.byteOffset;
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(count: number): number {
    const at = this.pos;
    if (at + count > this.end) this.tooShort(count);
    this.pos = at + count;
    return at;
  }

  // The throw lives apart from need() so that need() stays small enough for
  // the JIT to inline at every read.
  private tooShort(count: number): never {
    const at = this.pos;
    const reason = `needs ${count} byte${count === 1 ? '' : 's'} at offset ${at}, only ${this.end - at} left`;
    // A megabyte or more, asked for by a length read from the wire, is a misread more often than a cut.
    throw count >= LARGE_READ ? implausibleCount(reason) : new DecodeError(reason);
  }

  bool(): boolean {
    return this.buffer[this.need(1)] !== 0;
  }

  int8(): number {
    return this.view.getInt8(this.need(1));
  }

  int16(): number {
    return this.view.getInt16(this.need(2));
  }

  uint16(): number {
    return this.view.getUint16(this.need(2));
  }

  int32(): number {
    return this.view.getInt32(this.need(4));
  }

  uint32(): number {
    return this.view.getUint32(this.need(4));
  }

  int64(): bigint {
    return this.view.getBigInt64(this.need(8));
  }

  float64(): number {
    return this.view.getFloat64(this.need(8));
  }

  uuid(): string {
    return uuidToString(this.buffer, this.need(16));
  }

  unsignedVarint(): number {
    // One and two bytes (values below 16384) cover nearly every length and
    // count on the wire; they take this short path, which the JIT inlines.
    // (It wants two bytes left, so a varint at the very end of the input goes
    // the long way: one per message, not worth more code in a method that is
    // inlined into every generated reader.)
    const bytes = this.buffer;
    const at = this.pos;
    if (at + 1 < this.end) {
      const b0 = bytes[at]!;
      if (b0 < 0x80) {
        this.pos = at + 1;
        return b0;
      }
      const b1 = bytes[at + 1]!;
      if (b1 < 0x80) {
        this.pos = at + 2;
        return (b0 & 0x7f) | (b1 << 7);
      }
    }
    return this.longUnsignedVarint();
  }

  private longUnsignedVarint(): number {
    const bytes = this.buffer;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) throw new DecodeError(`varint runs past the end at offset ${this.pos}`);
      const b = bytes[this.pos++]!;
      if (shift === 28 && b > 0x0f) throw new DecodeError('unsigned varint is longer than 32 bits');
      value |= (b & 0x7f) << shift;
      if (b < 0x80) return value >>> 0;
    }
    throw new DecodeError('unsigned varint is longer than 5 bytes');
  }

  varint(): number {
    const raw = this.unsignedVarint();
    return (raw >>> 1) ^ -(raw & 1);
  }

  varlong(): bigint {
    const small = this.smallVarlong();
    return small === null ? this.longVarlong() : BigInt(small);
  }

  /**
   * A varlong that fits in 7 bytes (|value| < 2^48) as a number; otherwise
   * null, with nothing consumed. Most varlongs (timestamp deltas) are small,
   * and a number spares the per-byte BigInt arithmetic.
   */
  smallVarlong(): number | null {
    const bytes = this.buffer;
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new DecodeError(`varlong runs past the end at offset ${this.pos}`);
      const b = bytes[this.pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
      scale *= 128;
    }
    this.pos = start;
    return null;
  }

  /** A varlong of any width as a BigInt, without trying the number path first (see smallVarlong). */
  longVarlong(): bigint {
    const bytes = this.buffer;
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new DecodeError(`varlong runs past the end at offset ${this.pos}`);
      const b = bytes[this.pos++]!;
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) {
        if (value >> 64n !== 0n) throw new DecodeError('varlong is longer than 64 bits');
        return (value >> 1n) ^ -(value & 1n);
      }
    }
    throw new DecodeError('varlong is longer than 10 bytes');
  }

  /**
   * Claims the bytes of a run of consecutive fixed-width fields with one
   * bounds check, and returns where the run starts; the fields are then read
   * with the `…At` methods. When the bytes are short, the error names the
   * first field that does not fit.
   */
  claim(run: FixedRun): number {
    const at = this.pos;
    if (at + run.size > this.end) runTooShort(run, at, this.end - at);
    this.pos = at + run.size;
    return at;
  }

  // Reads inside a claimed run: no bounds check of their own.
  boolAt(at: number): boolean {
    return this.buffer[at] !== 0;
  }
  int8At(at: number): number {
    return this.view.getInt8(at);
  }
  int16At(at: number): number {
    return this.view.getInt16(at);
  }
  uint16At(at: number): number {
    return this.view.getUint16(at);
  }
  int32At(at: number): number {
    return this.view.getInt32(at);
  }
  uint32At(at: number): number {
    return this.view.getUint32(at);
  }
  int64At(at: number): bigint {
    return this.view.getBigInt64(at);
  }
  float64At(at: number): number {
    return this.view.getFloat64(at);
  }
  uuidAt(at: number): string {
    return uuidToString(this.buffer, at);
  }

  /**
   * Reads `length` raw bytes as a zero-copy view of the input: always a plain
   * Uint8Array (docs/DESIGN.md §2), also when the input is a Node Buffer.
   */
  raw(length: number): Uint8Array {
    if (length < 0) throw new DecodeError(`negative length ${length}`);
    const at = this.need(length);
    return new Uint8Array(this.arrayBuffer, this.byteOffset + at, length);
  }

  /** Reads `length` bytes as UTF-8 (lenient, as Kafka's Utils.utf8: bad sequences become U+FFFD as Java replaces them, ./utf8.ts). */
  utf8(length: number): string {
    const at = this.need(length);
    const bytes = this.buffer;
    const end = at + length;
    let i = at;
    // Short strings dominate Kafka messages (topic names, hosts, ids), and most
    // are ASCII, which is the same text in UTF-8 and in Latin-1. Below 8 bytes,
    // building the string a character at a time is cheapest; from 8 up, Node's
    // Latin-1 slice is (2× at 16 bytes, 3.5× at 200, strings flattened as a
    // user reads them), and it beats TextDecoder at every length.
    if (length < 8) {
      let out = '';
      for (; i < end; i++) {
        const b = bytes[i]!;
        if (b >= 0x80) break;
        out += String.fromCharCode(b);
      }
      if (i === end) return out;
    } else {
      while (i < end && bytes[i]! < 0x80) i++;
      if (i === end) return latin1Slice.call(bytes, at, end);
    }
    return decodeUtf8Lenient(new Uint8Array(this.arrayBuffer, this.byteOffset + at, length));
  }

  /**
   * utf8(length), for strings that repeat from one read to the next (a record header's
   * key): when the bytes spell `recent[slot]`, that string is returned without building a
   * new one; otherwise the bytes are decoded and, if they are ASCII, remembered in the slot.
   * Only ASCII is remembered, so a byte-for-character match is a match of the UTF-8.
   */
  recurringUtf8(length: number, recent: string[], slot: number): string {
    const candidate = recent[slot];
    if (candidate !== undefined && candidate.length === length && length <= this.end - this.pos) {
      const bytes = this.buffer;
      const at = this.pos;
      let i = 0;
      while (i < length && bytes[at + i] === candidate.charCodeAt(i)) i++;
      if (i === length) {
        this.pos = at + length;
        return candidate;
      }
    }
    const start = this.pos;
    const value = this.utf8(length);
    if (value.length === length && isAscii(this.buffer, start, length)) recent[slot] = value;
    return value;
  }

  /** A string: int16 length (classic) or unsigned varint length + 1 (compact), then UTF-8. */
  string(compact: boolean): string {
    const value = this.nullableString(compact);
    if (value === null) throw new DecodeError('non-nullable string is null');
    return value;
  }

  nullableString(compact: boolean): string | null {
    let length: number;
    if (compact) {
      length = this.unsignedVarint() - 1;
      if (length > 0x7fff) throw implausibleCount(`string length ${length} exceeds 32767`);
    } else {
      length = this.int16();
      if (length < -1) throw implausibleCount(`string has invalid length ${length}`);
    }
    return length < 0 ? null : length > LENIENT_SAFE_BYTES ? this.longString(length) : this.utf8(length);
  }

  /**
   * Bad UTF-8 decodes leniently, each bad sequence as U+FFFD (three bytes),
   * so a string of more than a third of the limit could decode into one no
   * message can carry: it is refused now rather than failing to be echoed
   * later. Kafka decodes the same way (Readable.readString) and then cannot
   * serialize the echo ("field is too long to be serialized"), so its broker
   * never answers; refusing here is where we deviate. Out of line: the check
   * is for long strings only, and nullableString stays small enough to inline.
   */
  private longString(length: number): string {
    const value = this.utf8(length);
    checkEncodable(value, length);
    return value;
  }

  /** Bytes: int32 length (classic) or unsigned varint length + 1 (compact); a zero-copy view. */
  bytes(compact: boolean): Uint8Array {
    const value = this.nullableBytes(compact);
    if (value === null) throw new DecodeError('non-nullable bytes are null');
    return value;
  }

  nullableBytes(compact: boolean): Uint8Array | null {
    let length: number;
    if (compact) {
      length = this.unsignedVarint() - 1;
    } else {
      length = this.int32();
      if (length < -1) throw implausibleCount(`bytes have invalid length ${length}`);
    }
    return length < 0 ? null : this.raw(length);
  }

  /** The presence marker of a nullable struct: -1 for null, anything else (Kafka writes 1) for present. */
  structPresent(): boolean {
    return this.int8() >= 0;
  }

  /**
   * An array length as written, int32 (classic) or unsigned varint + 1
   * (compact); -1 for null. Not checked against the bytes left: arrays of
   * fixed-width primitives check all their bytes at once instead.
   */
  private arrayLengthPrefix(compact: boolean): number {
    if (compact) return this.unsignedVarint() - 1;
    const length = this.int32();
    if (length < -1) invalidArrayLength(length);
    return length;
  }

  /**
   * An array length, as arrayLengthPrefix reads it. A count larger than the
   * bytes left cannot be honest, since every element takes at least one byte,
   * so it is refused before anything is allocated.
   */
  arrayLength(compact: boolean): number {
    const length = this.arrayLengthPrefix(compact);
    if (length > this.end - this.pos) {
      const reason = `array claims ${length} elements but only ${this.end - this.pos} bytes are left`;
      // A few more elements than bytes may be a message cut short; tens of thousands are a misread.
      throw length > LARGE_COUNT ? implausibleCount(reason) : new DecodeError(reason);
    }
    // A null array (-1) costs nothing and gives nothing back.
    if (length > 0 && (this.elementBudget -= length) < 0) overElementBudget(length, this.elementBudget + length);
    return length;
  }

  // Arrays of fixed-width primitives: the length, then every element in one
  // loop with no call per element. The whole array is bounds-checked first, so
  // no element can fail. The nullable variants hold the loops and return null
  // for length -1; the others refuse that null. int32Array, the one on the
  // MetadataResponse hot path, is tuned on its own.

  int8Array(compact: boolean): number[] {
    return this.nullableInt8Array(compact) ?? nullArray();
  }

  nullableInt8Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(length);
    const view = this.view;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = view.getInt8(at + i);
    return out;
  }

  boolArray(compact: boolean): boolean[] {
    return this.nullableBoolArray(compact) ?? nullArray();
  }

  nullableBoolArray(compact: boolean): boolean[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(length);
    const bytes = this.buffer;
    const out = new Array<boolean>(length);
    for (let i = 0; i < length; i++) out[i] = bytes[at + i] !== 0;
    return out;
  }

  int16Array(compact: boolean): number[] {
    return this.nullableInt16Array(compact) ?? nullArray();
  }

  nullableInt16Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(2 * length);
    const view = this.view;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = view.getInt16(at + 2 * i);
    return out;
  }

  uint16Array(compact: boolean): number[] {
    return this.nullableUint16Array(compact) ?? nullArray();
  }

  nullableUint16Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(2 * length);
    const view = this.view;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = view.getUint16(at + 2 * i);
    return out;
  }

  // int32Array is called three times per partition in MetadataResponse, and V8
  // inlines a call only while the inlined bytecode stays within its budget (920
  // bytes per optimized function, and it wants 1.2× a candidate's size left).
  // At 262 bytes all three calls inline; the original 298 let two in, and the
  // third call cost 8-9% of a v6 decode. So the compact form is a call of its
  // own, the checks share one branch, and every throw is out of line.
  int32Array(compact: boolean): number[] {
    if (compact) return this.compactInt32Array();
    const view = this.view;
    const end = this.end;
    const at = this.pos + 4;
    const length = at <= end ? view.getInt32(at - 4) : -1;
    if (length < 0 || at + 4 * length > end) this.badInt32Array();
    this.pos = at + 4 * length;
    // Replica lists are mostly 2 or 3 long: an array literal is much cheaper
    // to build than new Array(length). Longer ones go to a loop out of line.
    if (length === 3) return [view.getInt32(at), view.getInt32(at + 4), view.getInt32(at + 8)];
    if (length === 2) return [view.getInt32(at), view.getInt32(at + 4)];
    return length === 0 ? [] : int32Elements(view, at, length);
  }

  /** Throws for the classic int32 array at the position: too short, or null. */
  private badInt32Array(): never {
    const at = this.pos;
    if (at + 4 > this.end) this.tooShort(4);
    this.badFixedArray(at + 4, this.view.getInt32(at), 4);
  }

  // Its list literals repeat int32Array's rather than share a builder: a shared
  // builder is one more function to inline per call, which measured over budget.
  private compactInt32Array(): number[] {
    const length = this.unsignedVarint() - 1;
    const at = this.pos;
    const view = this.view;
    if (length < 0 || at + 4 * length > this.end) this.badFixedArray(at, length, 4);
    this.pos = at + 4 * length;
    if (length === 3) return [view.getInt32(at), view.getInt32(at + 4), view.getInt32(at + 8)];
    if (length === 2) return [view.getInt32(at), view.getInt32(at + 4)];
    return length === 0 ? [] : int32Elements(view, at, length);
  }

  private badFixedArray(at: number, length: number, width: number): never {
    if (length < 0) refuseArrayLength(length);
    this.pos = at;
    this.tooShort(width * length);
  }

  nullableInt32Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(4 * length);
    return int32Elements(this.view, at, length);
  }

  uint32Array(compact: boolean): number[] {
    return this.nullableUint32Array(compact) ?? nullArray();
  }

  nullableUint32Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(4 * length);
    const view = this.view;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = view.getUint32(at + 4 * i);
    return out;
  }

  int64Array(compact: boolean): bigint[] {
    return this.nullableInt64Array(compact) ?? nullArray();
  }

  nullableInt64Array(compact: boolean): bigint[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(8 * length);
    const view = this.view;
    const out = new Array<bigint>(length);
    for (let i = 0; i < length; i++) out[i] = view.getBigInt64(at + 8 * i);
    return out;
  }

  float64Array(compact: boolean): number[] {
    return this.nullableFloat64Array(compact) ?? nullArray();
  }

  nullableFloat64Array(compact: boolean): number[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(8 * length);
    const view = this.view;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = view.getFloat64(at + 8 * i);
    return out;
  }

  uuidArray(compact: boolean): string[] {
    return this.nullableUuidArray(compact) ?? nullArray();
  }

  nullableUuidArray(compact: boolean): string[] | null {
    const length = this.arrayLengthPrefix(compact);
    if (length < 0) return null;
    const at = this.need(16 * length);
    const bytes = this.buffer;
    const out = new Array<string>(length);
    for (let i = 0; i < length; i++) out[i] = uuidToString(bytes, at + 16 * i);
    return out;
  }

  /** The byte count of a tagged field, checked against the bytes left. */
  taggedFieldSize(): number {
    const size = this.unsignedVarint();
    if (size > this.end - this.pos) {
      throw new DecodeError(`tagged field claims ${size} bytes but only ${this.end - this.pos} are left`);
    }
    return size;
  }

  /** Reads a whole tagged-field section of a struct with no known tags. */
  unknownTaggedFields(): RawTaggedField[] | undefined {
    const count = this.unsignedVarint();
    let fields: RawTaggedField[] | undefined;
    for (let i = 0; i < count; i++) {
      const tag = this.unsignedVarint();
      fields = this.unknownTaggedField(fields, tag, this.taggedFieldSize());
    }
    return fields;
  }

  /** Reads an unknown tagged field's body and appends it to `into` (created on first use). */
  unknownTaggedField(into: RawTaggedField[] | undefined, tag: number, size: number): RawTaggedField[] {
    const list = into ?? [];
    list.push({ tag, data: this.raw(size) });
    return list;
  }

  /** Fails unless a known tagged field consumed exactly the bytes its header declared. */
  endTaggedField(tag: number, start: number, size: number): void {
    if (this.pos - start !== size) {
      throw new DecodeError(`tagged field ${tag} declares ${size} bytes but its value takes ${this.pos - start}`);
    }
  }

  /** Fails unless the whole input was consumed: trailing bytes mean a version mismatch or corruption. */
  expectEnd(): void {
    if (this.pos !== this.end) {
      throw new DecodeError(`${this.end - this.pos} unread bytes after the message`);
    }
  }
}

/** Consecutive fixed-width fields of a struct: their names and where each ends, from the run's start. */
export interface FixedRun {
  readonly size: number;
  readonly fields: readonly (readonly [name: string, end: number])[];
}

/** Describes a run from its fields' names and widths, in wire order. */
export function fixedRun(...fields: [name: string, width: number][]): FixedRun {
  let end = 0;
  const ends = fields.map(([name, width]) => [name, (end += width)] as const);
  return { size: end, fields: ends };
}

// Cold paths and the long-array loop, kept out of the Reader methods so that
// the hot ones stay small enough for the JIT to inline (int32Array in particular).

/** Throws for the first field of a claimed run that does not fit in `left` bytes. */
function runTooShort(run: FixedRun, at: number, left: number): never {
  let start = 0;
  for (const [name, end] of run.fields) {
    if (end > left) {
      throw new DecodeError(`needs ${end - start} byte${end - start === 1 ? '' : 's'} at offset ${at + start}, only ${left - start} left`).within(name);
    }
    start = end;
  }
  throw new DecodeError(`needs ${run.size} bytes at offset ${at}, only ${left} left`);
}

/** The most UTF-8 bytes a string field carries, classic or compact (Kafka's generated code checks 0x7fff for both). */
const MAX_STRING_BYTES = 0x7fff;
/** Strings up to this long fit MAX_STRING_BYTES however many U+FFFD they decode with. */
const LENIENT_SAFE_BYTES = Math.floor(MAX_STRING_BYTES / 3);

function checkEncodable(value: string, length: number): void {
  const encoded = Buffer.byteLength(value, 'utf8');
  if (encoded > MAX_STRING_BYTES) {
    throw new DecodeError(
      `string of ${length} bytes is not valid UTF-8, and with U+FFFD for each bad sequence it would take ${encoded} bytes, more than a string can carry (${MAX_STRING_BYTES})`,
    );
  }
}

function overElementBudget(length: number, left: number): never {
  throw new DecodeError(`array claims ${length} elements, more than the ${left} this message may still create (its element budget)`);
}

function invalidArrayLength(length: number): never {
  throw implausibleCount(`array has invalid length ${length}`);
}

/** Throws for a negative length where a non-nullable array was expected. */
function refuseArrayLength(length: number): never {
  if (length < -1) invalidArrayLength(length);
  nullArray();
}

function nullArray(): never {
  throw new DecodeError('non-nullable array is null');
}

function isAscii(bytes: Uint8Array, at: number, length: number): boolean {
  for (let i = at; i < at + length; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

function int32Elements(view: DataView, at: number, length: number): number[] {
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) out[i] = view.getInt32(at + 4 * i);
  return out;
}
