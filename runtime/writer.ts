import { EncodeError } from './errors.js';
import { isUuidString, writeUuidBytes } from './uuid.js';
import { sizeOfUnsignedVarint } from './sizes.js';
import type { FixedWidthType, FixedWidthValue } from './fixed-width.js';

/**
 * Writes into one allocation whose size the generated size pass computed
 * beforehand (DESIGN.md §3). Range checks guard the values, not the buffer:
 * a size pass that disagrees with the write pass is a generator bug, caught
 * by `finish`.
 */
export class Writer {
  readonly buffer: Buffer;
  private readonly view: DataView;
  pos: number;

  constructor(size: number) {
    const buffer = Buffer.allocUnsafe(size);
    this.buffer = buffer;
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.pos = 0;
  }

  /** Returns the written bytes, checking that the size pass was exact. */
  finish(): Uint8Array {
    if (this.pos !== this.buffer.length) {
      throw new EncodeError(`internal error: size pass computed ${this.buffer.length} bytes but ${this.pos} were written`);
    }
    return this.buffer;
  }

  bool(value: boolean): void {
    this.buffer[this.pos++] = value ? 1 : 0;
  }

  int8(value: number): void {
    if ((value << 24) >> 24 !== value) throw outOfRange('int8', value);
    this.view.setInt8(this.pos, value);
    this.pos += 1;
  }

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
    let v = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
    while (v >= 0x80n) {
      this.buffer[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buffer[this.pos++] = Number(v);
  }

  raw(value: Uint8Array): void {
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
    this.view.setInt16(at, written);
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

function outOfRange(type: string, value: number | bigint): EncodeError {
  return new EncodeError(`${String(value)} is not a valid ${type}`);
}
