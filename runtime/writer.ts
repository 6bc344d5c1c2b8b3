import { EncodeError } from './errors.js';
import { isUuidString, writeUuidBytes } from './uuid.js';
import { sizeOfUnsignedVarint } from './sizes.js';
import type { FixedWidthType, FixedWidthValue } from './fixed-width.js';

/**
 * Byte values at least this long are referenced, not copied, by a zero-copy
 * writer (`writeChunks`). Below it a copy costs less than the extra chunk:
 * one more object here and one more iovec in the socket's writev.
 */
export const ZERO_COPY_MIN_BYTES = 1024;

/**
 * Where a zero-copy writer writes, and its lists of referenced values: reused
 * from encode to encode, so they are allocated once. The lists are emptied
 * after each encode, so that no caller's bytes stay reachable from here.
 */
interface Scratch {
  readonly buffer: Buffer;
  readonly view: DataView;
  /** The values kept by reference, and the cursor position each belongs at; `count` of them are in use. */
  readonly references: Uint8Array[];
  readonly referenceAt: number[];
  count: number;
}

const NO_BYTES = new Uint8Array(0);

/**
 * Writes into one allocation whose size the generated size pass computed
 * beforehand (docs/DESIGN.md §3). Range checks guard the values, not the buffer:
 * a size pass that disagrees with the write pass is a generator bug, caught
 * by `finish`.
 *
 * A zero-copy writer (made by `writeChunks`) writes into a reused scratch
 * buffer and keeps large byte values (record batches above all) by
 * reference; the result is a list of chunks instead of one buffer. Both kinds
 * are one class, so that a message's call sites see one class as long as its
 * outputs are 256 bytes or more; smaller outputs get a SmallWriter (see
 * `Writer.forSize`), and call sites that serve both sizes see two.
 */
export class Writer {
  readonly buffer: Buffer;
  /** Null in a SmallWriter, which stores by hand (every method that uses it is overridden there). */
  protected readonly view: DataView;
  pos: number;
  /** The byte count the size pass promised. */
  private readonly expected: number;
  /** Zero-copy mode only: where the referenced values are listed. */
  private readonly scratch: Scratch | null;
  private referencedBytes: number;

  /** `storesByHand`: a SmallWriter, whose overrides need no DataView. */
  constructor(size: number, scratch?: Scratch, storesByHand = false) {
    if (scratch === undefined) {
      const buffer = Buffer.allocUnsafe(size);
      this.buffer = buffer;
      this.view = storesByHand ? (null as unknown as DataView) : new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } else {
      this.buffer = scratch.buffer;
      this.view = scratch.view;
    }
    this.pos = 0;
    this.expected = size;
    this.scratch = scratch ?? null;
    this.referencedBytes = 0;
  }

  /**
   * A writer for a plain (one-buffer) encode of `size` bytes. A DataView
   * stores faster than bytes by hand, but making one costs as much as writing
   * a small request body (FindCoordinator, EndTxn, a request header): small
   * messages get a SmallWriter, which stores by hand. The generated code's
   * call sites for a given message see one class or the other, rarely both.
   */
  static forSize(size: number): Writer {
    return size < SMALL_MAX_BYTES ? new SmallWriter(size) : new Writer(size);
  }

  /** Bytes written so far, counting referenced values. */
  get writtenBytes(): number {
    return this.pos + this.referencedBytes;
  }

  /** Returns the written bytes, checking that the size pass was exact. */
  finish(): Uint8Array {
    if (this.scratch !== null) throw new EncodeError('internal error: a zero-copy writer ends with finishChunks()');
    if (this.pos !== this.expected) {
      throw new EncodeError(`internal error: size pass computed ${this.expected} bytes but ${this.pos} were written`);
    }
    return this.buffer;
  }

  /**
   * Zero-copy mode: copies what was written out of the scratch buffer (one
   * allocation) and returns it cut around the referenced values, in wire order.
   */
  finishChunks(): Uint8Array[] {
    const scratch = this.scratch;
    if (scratch === null) throw new EncodeError('internal error: only a zero-copy writer ends with finishChunks()');
    const { references, referenceAt, count } = scratch;
    const copied = this.pos;
    if (this.writtenBytes !== this.expected) {
      throw new EncodeError(`internal error: size pass computed ${this.expected} bytes but ${this.writtenBytes} were written`);
    }
    const head = Buffer.allocUnsafe(copied);
    this.buffer.copy(head, 0, 0, copied);
    // Views made with `new Uint8Array(arrayBuffer, …)`: Buffer#subarray costs several times more.
    const arrayBuffer = head.buffer;
    const base = head.byteOffset;
    const chunks = new Array<Uint8Array>(2 * count + 1);
    let n = 0;
    let from = 0;
    for (let i = 0; i < count; i++) {
      const at = referenceAt[i]!;
      if (at > from) chunks[n++] = new Uint8Array(arrayBuffer, base + from, at - from);
      chunks[n++] = references[i]!;
      from = at;
    }
    if (copied > from) chunks[n++] = new Uint8Array(arrayBuffer, base + from, copied - from);
    chunks.length = n;
    return chunks;
  }

  bool(value: boolean): void {
    this.buffer[this.pos++] = value ? 1 : 0;
  }

  int8(value: number): void {
    if ((value << 24) >> 24 !== value) throw outOfRange('int8', value);
    this.buffer[this.pos++] = value;
  }

  // SmallWriter overrides the six methods below with stores by hand; here a
  // DataView stores. Each method stores itself rather than through a shared
  // store helper: a helper is one more function for V8 to inline at every
  // field write, out of the same budget as the generated code's own calls.
  int16(value: number): void {
    if ((value << 16) >> 16 !== value) throw outOfRange('int16', value);
    this.view.setInt16(this.pos, value);
    this.pos += 2;
  }

  uint16(value: number): void {
    if ((value & 0xffff) !== value) throw outOfRange('uint16', value);
    this.view.setUint16(this.pos, value);
    this.pos += 2;
  }

  int32(value: number): void {
    if ((value | 0) !== value) throw outOfRange('int32', value);
    this.view.setInt32(this.pos, value);
    this.pos += 4;
  }

  uint32(value: number): void {
    if (value >>> 0 !== value) throw outOfRange('uint32', value);
    this.view.setUint32(this.pos, value);
    this.pos += 4;
  }

  int64(value: bigint): void {
    if (BigInt.asIntN(64, value) !== value) throw outOfRange('int64', value);
    this.view.setBigInt64(this.pos, value);
    this.pos += 8;
  }

  float64(value: number): void {
    this.view.setFloat64(this.pos, value);
    this.pos += 8;
  }

  uuid(value: string): void {
    if (!isUuidString(value)) throw new EncodeError(`not a Kafka uuid (22 base64url characters): ${JSON.stringify(value)}`);
    writeUuidBytes(value, this.buffer, this.pos);
    this.pos += 16;
  }

  unsignedVarint(value: number): void {
    const bytes = this.buffer;
    let v = value >>> 0;
    while (v >= 0x80) {
      bytes[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    bytes[this.pos++] = v;
  }

  varint(value: number): void {
    this.unsignedVarint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  varlong(value: bigint): void {
    // Inside int32, ZigZag-64 gives the same number as ZigZag-32, so the same
    // bytes; record timestamp deltas almost always fit, and skip BigInt math.
    if (value >= -0x80000000n && value <= 0x7fffffffn) {
      this.varint(Number(value));
      return;
    }
    let v = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
    while (v >= 0x80n) {
      this.buffer[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buffer[this.pos++] = Number(v);
  }

  raw(value: Uint8Array): void {
    const scratch = this.scratch;
    if (scratch !== null && value.length >= ZERO_COPY_MIN_BYTES) {
      const n = scratch.count;
      scratch.references[n] = value;
      scratch.referenceAt[n] = this.pos;
      scratch.count = n + 1;
      this.referencedBytes += value.length;
      return;
    }
    this.buffer.set(value, this.pos);
    this.pos += value.length;
  }

  /** Writes `value` as UTF-8 at the cursor, with no length, and returns the byte count. */
  utf8(value: string): number {
    const written = this.utf8At(value, this.pos);
    this.pos += written;
    return written;
  }

  /**
   * Writes UTF-8 at `at` and returns the byte count. ASCII is copied by hand:
   * for the short names that fill Kafka messages that beats a native call.
   */
  private utf8At(value: string, at: number): number {
    const length = value.length;
    if (length < 32) {
      const bytes = this.buffer;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 0x80) break;
        bytes[at + i] = code;
      }
      if (i === length) return length;
    }
    return this.buffer.write(value, at, 'utf8');
  }

  /** A string, classic (int16 length) or compact (unsigned varint length + 1). */
  string(value: string | null, compact: boolean): void {
    if (typeof value !== 'string') throw new EncodeError(`non-nullable string is ${String(value)}`);
    if (compact) this.compactString(value);
    else this.classicString(value);
  }

  nullableString(value: string | null, compact: boolean): void {
    if (value === null) {
      if (compact) this.unsignedVarint(0);
      else this.int16(-1);
    } else {
      this.string(value, compact);
    }
  }

  /** int16 length then UTF-8; the length is back-filled once the bytes are written. */
  private classicString(value: string): void {
    const at = this.pos;
    const written = this.utf8At(value, at + 2);
    if (written > 0x7fff) throw new EncodeError(`string of ${written} bytes exceeds the int16 length limit`);
    this.buffer[at] = written >>> 8;
    this.buffer[at + 1] = written;
    this.pos = at + 2 + written;
  }

  /**
   * Unsigned-varint (length + 1) then UTF-8, in one scan of the string: the
   * bytes go after a prefix as wide as the shortest the string can need (its
   * UTF-8 length is at least its UTF-16 length), and the prefix is back-filled.
   * Only when the UTF-8 length needs a wider prefix are the bytes moved up.
   */
  private compactString(value: string): void {
    const at = this.pos;
    const guess = sizeOfUnsignedVarint(value.length + 1);
    const written = this.utf8At(value, at + guess);
    if (written > 0x7fff) throw new EncodeError(`string of ${written} bytes exceeds the 32767-byte limit`);
    const width = sizeOfUnsignedVarint(written + 1);
    if (width !== guess) this.buffer.copyWithin(at + width, at + guess, at + guess + written);
    this.unsignedVarint(written + 1);
    this.pos = at + width + written;
  }

  bytes(value: Uint8Array | null, compact: boolean): void {
    if (!(value instanceof Uint8Array)) throw new EncodeError(`non-nullable bytes are ${String(value)}`);
    if (compact) this.unsignedVarint(value.length + 1);
    else this.int32(value.length);
    this.raw(value);
  }

  nullableBytes(value: Uint8Array | null, compact: boolean): void {
    if (value === null) {
      if (compact) this.unsignedVarint(0);
      else this.int32(-1);
    } else {
      this.bytes(value, compact);
    }
  }

  /**
   * An array of fixed-width primitives: its length, then each element, in one
   * loop. Each element still goes through its range check.
   */
  fixedArray<K extends FixedWidthType>(items: readonly FixedWidthValue[K][] | null, compact: boolean, type: K): void {
    if (items === null) {
      this.arrayLength(-1, compact);
      return;
    }
    this.arrayLength(items.length, compact);
    const n = items.length;
    switch (type) {
      case 'int8':
        for (let i = 0; i < n; i++) this.int8(items[i] as number);
        break;
      case 'bool':
        for (let i = 0; i < n; i++) this.bool(items[i] as boolean);
        break;
      case 'int16':
        for (let i = 0; i < n; i++) this.int16(items[i] as number);
        break;
      case 'uint16':
        for (let i = 0; i < n; i++) this.uint16(items[i] as number);
        break;
      case 'int32':
        for (let i = 0; i < n; i++) this.int32(items[i] as number);
        break;
      case 'uint32':
        for (let i = 0; i < n; i++) this.uint32(items[i] as number);
        break;
      case 'int64':
        for (let i = 0; i < n; i++) this.int64(items[i] as bigint);
        break;
      case 'float64':
        for (let i = 0; i < n; i++) this.float64(items[i] as number);
        break;
      case 'uuid':
        for (let i = 0; i < n; i++) this.uuid(items[i] as string);
        break;
    }
  }

  /** An array length; -1 writes null. */
  arrayLength(length: number, compact: boolean): void {
    if (compact) this.unsignedVarint(length + 1);
    else this.int32(length);
  }

  /** The presence marker of a nullable struct. */
  structPresent(present: boolean): void {
    this.int8(present ? 1 : -1);
  }
}

/** Plain writers of outputs below this size store by hand (see `Writer.forSize`). */
const SMALL_MAX_BYTES = 256;

/** Where int64 and float64 are laid out by one shared DataView, then copied to the cursor. */
const EIGHT_BYTES = new Uint8Array(8);
const EIGHT_BYTES_VIEW = new DataView(EIGHT_BYTES.buffer);

/** A Writer of a small output: big-endian stores by hand, no DataView. */
class SmallWriter extends Writer {
  constructor(size: number) {
    super(size, undefined, true);
  }

  // The same range checks as Writer's, then big-endian stores by hand.
  override int16(value: number): void {
    if ((value << 16) >> 16 !== value) throw outOfRange('int16', value);
    this.store16(value);
  }

  override uint16(value: number): void {
    if ((value & 0xffff) !== value) throw outOfRange('uint16', value);
    this.store16(value);
  }

  override int32(value: number): void {
    if ((value | 0) !== value) throw outOfRange('int32', value);
    this.store32(value);
  }

  override uint32(value: number): void {
    if (value >>> 0 !== value) throw outOfRange('uint32', value);
    this.store32(value);
  }

  override int64(value: bigint): void {
    if (BigInt.asIntN(64, value) !== value) throw outOfRange('int64', value);
    EIGHT_BYTES_VIEW.setBigInt64(0, value);
    this.copyEightBytes();
  }

  override float64(value: number): void {
    EIGHT_BYTES_VIEW.setFloat64(0, value);
    this.copyEightBytes();
  }

  // A typed-array store keeps the low 8 bits of what it is given.
  private store16(value: number): void {
    const bytes = this.buffer;
    const at = this.pos;
    bytes[at] = value >>> 8;
    bytes[at + 1] = value;
    this.pos = at + 2;
  }

  private store32(value: number): void {
    const bytes = this.buffer;
    const at = this.pos;
    bytes[at] = value >>> 24;
    bytes[at + 1] = value >>> 16;
    bytes[at + 2] = value >>> 8;
    bytes[at + 3] = value;
    this.pos = at + 4;
  }

  /** Copies EIGHT_BYTES, where the shared DataView laid out an int64 or float64, to the cursor. */
  private copyEightBytes(): void {
    const bytes = this.buffer;
    const at = this.pos;
    for (let i = 0; i < 8; i++) bytes[at + i] = EIGHT_BYTES[i]!;
    this.pos = at + 8;
  }
}

function outOfRange(type: string, value: number | bigint): EncodeError {
  return new EncodeError(`${String(value)} is not a valid ${type}`);
}

/**
 * The scratch buffer is kept up to this size. A message whose copied part
 * (everything but the referenced values) is larger gets a one-off buffer.
 * 1 MiB is Kafka's default max.request.size.
 */
const SCRATCH_RETAIN_MAX = 1 << 20;
const SCRATCH_MIN = 16 * 1024;
let scratch: Scratch | null = null;
let scratchInUse = false;

function makeScratch(size: number): Scratch {
  const buffer = Buffer.allocUnsafeSlow(size);
  return { buffer, view: new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), references: [], referenceAt: [], count: 0 };
}

/** Drops the references (the lists keep their length, so the next encode does not grow them again). */
function empty(scratch: Scratch): void {
  scratch.references.fill(NO_BYTES, 0, scratch.count);
  scratch.count = 0;
}

/**
 * Zero-copy encoding: runs `write` (a size-`size` write pass, as generated
 * codecs' `write`) on a zero-copy writer and returns the bytes as chunks whose
 * concatenation is exactly what a plain writer would have produced. Byte
 * values of ZERO_COPY_MIN_BYTES or more are not copied: the chunks include
 * them by reference, so they must not change until the chunks have been
 * sent. Everything else is copied into one fresh allocation.
 *
 * Why: a 250 KB ProduceRequest copied into a fresh buffer per request costs
 * a copy and, above all, V8 garbage collections driven by the external
 * memory (see README, "Codec speed"). Kafka's Java client likewise sends
 * record batches without copying them.
 *
 * docs/DESIGN.md §3 asks an encode to write into one allocation. `encode` still
 * does; here everything but the referenced values is copied into one
 * allocation, and the output is a list rather than one buffer.
 */
export function writeChunks(size: number, write: (writer: Writer) => void): Uint8Array[] {
  if (size < ZERO_COPY_MIN_BYTES || scratchInUse) {
    // Too small to hold a value worth referencing: one plain allocation, no copy
    // out of the scratch. Or re-entered from inside a write pass (a getter
    // encoding another message): no scratch to share.
    const writer = Writer.forSize(size);
    write(writer);
    return [writer.finish()];
  }
  scratchInUse = true;
  try {
    if (scratch === null || (scratch.buffer.length < size && scratch.buffer.length < SCRATCH_RETAIN_MAX)) {
      const grown = Math.min(SCRATCH_RETAIN_MAX, Math.max(SCRATCH_MIN, 2 ** Math.ceil(Math.log2(size))));
      scratch = makeScratch(grown);
    }
    const capacity = scratch.buffer.length;
    if (capacity >= size) {
      const writer = new Writer(size, scratch);
      write(writer);
      return writer.finishChunks();
    }
    // Larger than the retained scratch: most of such a message is usually
    // referenced bytes, so try the scratch first. Writes past its end throw
    // a RangeError or are dropped (typed arrays ignore them), which the
    // cursor shows; then the pass runs again on a buffer that cannot overflow.
    // A string cut short at the end shows as fewer bytes written than promised.
    const attempt = new Writer(size, scratch);
    try {
      write(attempt);
      if (attempt.pos <= capacity && attempt.writtenBytes === size) return attempt.finishChunks();
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
    const writer = new Writer(size, makeScratch(size));
    write(writer);
    return writer.finishChunks();
  } finally {
    // The scratch is always left empty, so a pass starts with empty lists.
    if (scratch !== null) empty(scratch);
    scratchInUse = false;
  }
}
