// Bench-only wire primitives: a small growable big-endian writer, a reader, uuid and
// hex helpers, and CRC-32C. Used to build the reference bytes of every workload and
// to parse record batches for the equal-work checks. Deliberately independent of
// runtime/ and generated/ so that it can judge them (all but the CRC-32C library,
// see crc32c below). Not tuned for speed: nothing
// here is inside a timed loop except where a participant says so explicitly.
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

export class WireWriter {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  int8(v: number): this {
    this.ensure(1);
    this.view.setInt8(this.pos, v);
    this.pos += 1;
    return this;
  }
  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }
  int16(v: number): this {
    this.ensure(2);
    this.view.setInt16(this.pos, v);
    this.pos += 2;
    return this;
  }
  uint16(v: number): this {
    this.ensure(2);
    this.view.setUint16(this.pos, v);
    this.pos += 2;
    return this;
  }
  int32(v: number): this {
    this.ensure(4);
    this.view.setInt32(this.pos, v);
    this.pos += 4;
    return this;
  }
  uint32(v: number): this {
    this.ensure(4);
    this.view.setUint32(this.pos, v);
    this.pos += 4;
    return this;
  }
  int64(v: bigint): this {
    this.ensure(8);
    this.view.setBigInt64(this.pos, v);
    this.pos += 8;
    return this;
  }
  float64(v: number): this {
    this.ensure(8);
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
    return this;
  }
  uvarint(v: number): this {
    // unsigned 32-bit varint
    v = v >>> 0;
    while (v >= 0x80) {
      this.int8Raw((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    return this.int8Raw(v);
  }
  varint(v: number): this {
    return this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }
  varlong(v: bigint): this {
    let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    while (z >= 0x80n) {
      this.int8Raw(Number(z & 0x7fn) | 0x80);
      z >>= 7n;
    }
    return this.int8Raw(Number(z));
  }
  private int8Raw(b: number): this {
    this.ensure(1);
    this.buf[this.pos++] = b;
    return this;
  }
  raw(bytes: Uint8Array): this {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
    return this;
  }
  /** Kafka string: int16 length (or compact uvarint length+1); null → -1 / 0. */
  string(v: string | null, compact: boolean): this {
    if (v === null) return compact ? this.uvarint(0) : this.int16(-1);
    const b = utf8(v);
    if (compact) this.uvarint(b.length + 1);
    else this.int16(b.length);
    return this.raw(b);
  }
  /** Kafka bytes / records: int32 length (or compact uvarint length+1); null → -1 / 0. */
  bytes(v: Uint8Array | null, compact: boolean): this {
    if (v === null) return compact ? this.uvarint(0) : this.int32(-1);
    if (compact) this.uvarint(v.length + 1);
    else this.int32(v.length);
    return this.raw(v);
  }
  arrayLength(n: number | null, compact: boolean): this {
    if (n === null) return compact ? this.uvarint(0) : this.int32(-1);
    return compact ? this.uvarint(n + 1) : this.int32(n);
  }
  uuid(v: string): this {
    return this.raw(uuidToBytes(v));
  }
  /** Tagged-field section: list of [tag, already-encoded value]. */
  tags(fields: Array<[number, Uint8Array]> = []): this {
    this.uvarint(fields.length);
    for (const [tag, value] of fields) {
      this.uvarint(tag).uvarint(value.length).raw(value);
    }
    return this;
  }
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

export class WireReader {
  private view: DataView;
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
  }
  get remaining(): number {
    return this.end - this.pos;
  }
  private need(n: number): void {
    if (this.pos + n > this.end) throw new RangeError(`read past end: need ${n} at ${this.pos}, end ${this.end}`);
  }
  int8(): number {
    this.need(1);
    return this.view.getInt8(this.pos++);
  }
  int16(): number {
    this.need(2);
    const v = this.view.getInt16(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos);
    this.pos += 4;
    return v;
  }
  uint32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }
  int64(): bigint {
    this.need(8);
    const v = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }
  uvarint(): number {
    let v = 0;
    let shift = 0;
    for (;;) {
      this.need(1);
      const b = this.buf[this.pos++]!;
      v |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v >>> 0;
      shift += 7;
      if (shift > 28) throw new RangeError('varint too long');
    }
  }
  varint(): number {
    const z = this.uvarint();
    return (z >>> 1) ^ -(z & 1);
  }
  varlong(): bigint {
    let z = 0n;
    let shift = 0n;
    for (;;) {
      this.need(1);
      const b = this.buf[this.pos++]!;
      z |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 63n) throw new RangeError('varlong too long');
    }
    return (z >> 1n) ^ -(z & 1n);
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const fromUtf8 = (b: Uint8Array): string => decoder.decode(b);

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Kafka Uuid.toString(): base64url of the 16 bytes, no padding (22 chars). */
export function uuidToBytes(v: string): Uint8Array {
  const b = Buffer.from(v, 'base64url');
  if (b.length !== 16 || v.length !== 22) throw new RangeError(`bad uuid ${JSON.stringify(v)}`);
  return new Uint8Array(b);
}
export function bytesToUuid(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64url');
}
/** '0123abcd-....' (hyphenated or not) → Kafka base64url form. */
export function hexUuidToKafka(hex: string): string {
  return Buffer.from(hex.replaceAll('-', ''), 'hex').toString('base64url');
}
export function kafkaUuidToHex(v: string): string {
  const h = Buffer.from(v, 'base64url').toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * CRC-32C (Castagnoli) of data[start, end), unsigned, by the maintained @node-rs/crc32: the library
 * runtime/ uses too. What checks our batches' CRCs independently is the "from messages" rows, whose
 * bytes must equal those of kafkajs (its own CRC-32C in JavaScript) and platformatic.
 */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return nativeCrc32c(data.subarray(start, end)) >>> 0;
}

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export function randomBytes(rand: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}
/** Printable ASCII payload (keeps hexdumps readable; content does not matter to the codecs). */
export function randomAscii(rand: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = 0x21 + Math.floor(rand() * 94);
  return b;
}
export function randomUuid(rand: () => number): string {
  const b = randomBytes(rand, 16);
  b[6] = (b[6]! & 0x0f) | 0x40; // v4-looking, never the zero uuid
  b[8] = (b[8]! & 0x3f) | 0x80;
  return bytesToUuid(b);
}

export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
