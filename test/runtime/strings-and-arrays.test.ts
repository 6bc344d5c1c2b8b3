import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, EncodeError, Reader, sizeOfString, sizeOfUnsignedVarint, utf8Length, Writer } from '../../runtime/index.js';

// Kafka's own encoding of a well-formed string: the length prefix, then its
// UTF-8, which Buffer.from matches. (A lone surrogate is where they part: Java
// writes '?', Buffer.from U+FFFD; see test/kafka/conformance-differences.json.)
function reference(value: string, compact: boolean): Uint8Array {
  const body = Buffer.from(value, 'utf8');
  if (!compact) {
    const prefix = Buffer.alloc(2);
    prefix.writeInt16BE(body.length);
    return Buffer.concat([prefix, body]);
  }
  const prefix: number[] = [];
  let v = body.length + 1;
  while (v >= 0x80) {
    prefix.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  prefix.push(v);
  return Buffer.concat([Buffer.from(prefix), body]);
}

function encode(value: string, compact: boolean): Uint8Array {
  const writer = new Writer(sizeOfString(value, compact));
  writer.string(value, compact);
  return writer.finish();
}

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'Z', '0', '.', '-') },
  { weight: 1, arbitrary: fc.constantFrom('é', 'ß', 'Ж', '中', '€', '\uFEFF', '😀', '\uD800', '\uDFFF', '\uD83D') },
);

describe('strings', () => {
  it('utf8Length agrees with Buffer.byteLength, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(unit, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 300 }), (s) => {
        expect(utf8Length(s)).toBe(Buffer.byteLength(s, 'utf8'));
      }),
      { numRuns: 2000, seed: 8 },
    );
  });

  it('writes exactly Kafka bytes and reads them back, compact and classic, at every length', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 400 }), fc.boolean(), (s, compact) => {
        const bytes = encode(s, compact);
        expect(Buffer.from(bytes).equals(Buffer.from(reference(s, compact)))).toBe(true);
        const reader = new Reader(bytes);
        expect(reader.string(compact)).toBe(Buffer.from(s, 'utf8').toString('utf8'));
        reader.expectEnd();
      }),
      { numRuns: 2000, seed: 16 },
    );
  });

  it('writes a compact string whose UTF-8 length needs a wider prefix than its UTF-16 length', () => {
    // 64 × 'é' is 64 UTF-16 units (a 1-byte prefix would do) but 128 bytes (a 2-byte prefix);
    // likewise across the 2-to-3-byte boundary at 16,383 bytes.
    for (const s of ['é'.repeat(63), 'é'.repeat(64), 'a' + '中'.repeat(42), '中'.repeat(43), 'é'.repeat(8191), 'é'.repeat(8192), '😀'.repeat(4096)]) {
      const bytes = encode(s, true);
      expect(bytes.length).toBe(sizeOfUnsignedVarint(utf8Length(s) + 1) + utf8Length(s));
      expect(Buffer.from(bytes).equals(Buffer.from(reference(s, true)))).toBe(true);
      expect(new Reader(bytes).string(true)).toBe(s);
    }
  });

  it('refuses a string over 32,767 bytes', () => {
    for (const compact of [true, false]) {
      const s = 'é'.repeat(16384);
      const writer = new Writer(sizeOfString(s, compact));
      expect(() => writer.string(s, compact)).toThrowError(EncodeError);
    }
  });

  it('Writer.utf8 writes the bytes with no prefix and returns their count', () => {
    for (const s of ['', 'key', 'ünïcödé', 'x'.repeat(40), '😀\uD800']) {
      const writer = new Writer(utf8Length(s));
      expect(writer.utf8(s)).toBe(utf8Length(s));
      expect(Buffer.from(writer.finish()).equals(Buffer.from(s, 'utf8'))).toBe(true);
    }
  });

  it('reads UTF-8 from a view into a larger buffer, short and long, ASCII and not', () => {
    // Either side of the 8 bytes where utf8 turns from building a string by hand to
    // a Latin-1 slice for ASCII, and non-ASCII at the first and at the last byte.
    const samples = ['abc', 'ab\u00e9', 'abcdefg', 'abcdefgh', 'abcdefg\u00e9', '\u00e9abcdefgh', 'a\u007fb\u0000cdefgh', 'x'.repeat(60), 'é'.repeat(30)];
    for (const s of samples) {
      const body = Buffer.from(s, 'utf8');
      const padded = Buffer.concat([Buffer.from([9, 9, 9]), body, Buffer.from([9])]);
      expect(new Reader(padded.subarray(3, 3 + body.length)).utf8(body.length)).toBe(s);
      // A plain Uint8Array (not a Buffer) over the same bytes, at an offset into its ArrayBuffer.
      const plain = new Uint8Array(padded.buffer, padded.byteOffset + 3, body.length);
      expect(new Reader(plain).utf8(body.length)).toBe(s);
    }
  });

  it('reads invalid UTF-8 as TextDecoder does, short and long, but for encoded surrogates', () => {
    const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    for (const bytes of [
      [0x61, 0xff],
      [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xc3],
      [0xef, 0xbb, 0xbf, 0x61],
      [0xe2, 0x28, 0xa1],
      [0xf0, 0x9f, 0x98, 0x61],
      [0xed, 0x9f, 0xbf, 0xed, 0x95, 0x9c],
    ]) {
      const input = new Uint8Array(bytes);
      expect(new Reader(input).utf8(input.length)).toBe(decoder.decode(input));
    }
  });

  // What Kafka 4.4 reads from these bytes (new String(bytes, UTF_8), seen through its
  // HeartbeatRequestData in test/kafka/conformance.test.ts): Java's decoder replaces an
  // encoded surrogate (ED A0..BF, then a continuation byte if any) by one U+FFFD, where
  // TextDecoder gives one per byte.
  it('reads a UTF-16 surrogate encoded in UTF-8 as one U+FFFD, as Kafka does', () => {
    const z = Array(12).fill(0x7a);
    const cases: [number[], string][] = [
      [[0xed, 0xa0, 0x80], '\uFFFD'],
      [[0xed, 0xbf, 0xbf], '\uFFFD'],
      [[0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80], '\uFFFD\uFFFD'],
      [[0xed, 0xa0, 0x41], '\uFFFDA'],
      [[0x61, 0xed, 0xa0], 'a\uFFFD'],
      [[0xe2, 0x82, 0xed, 0xa0, 0x80, 0xc3, 0xa9], '\uFFFD\uFFFD\u00e9'],
      [[0xed, 0xa0, 0x80, ...z], `\uFFFD${'z'.repeat(12)}`],
    ];
    for (const [bytes, kafka] of cases) {
      const input = new Uint8Array(bytes);
      expect(new Reader(input).utf8(input.length), Buffer.from(bytes).toString('hex')).toBe(kafka);
    }
  });
});

// Arrays of fixed-width primitives: the non-nullable readers refuse the null
// length that the nullable ones return as null, and agree on everything else.
describe('fixed-width arrays', () => {
  type Kind = 'int8' | 'bool' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'float64' | 'uuid';
  const samples: Record<Kind, unknown[]> = {
    int8: [-128, 0, 127],
    bool: [true, false, true],
    int16: [-32768, 1, 32767],
    uint16: [0, 65535],
    int32: [-2147483648, 7, 2147483647, 0, 1],
    uint32: [0, 4294967295],
    int64: [-(2n ** 63n), 0n, 2n ** 63n - 1n],
    float64: [0.5, -1e300, Infinity],
    uuid: ['AAAAAAAAAAAAAAAAAAAAAA', 'kB7xQm2nTzW9vC4pL1sYhA'],
  };
  const width: Record<Kind, number> = { int8: 1, bool: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, float64: 8, uuid: 16 };
  const name = (kind: Kind, nullable: boolean) => (nullable ? `nullable${kind.charAt(0).toUpperCase()}${kind.slice(1)}Array` : `${kind}Array`);
  const read = (reader: Reader, kind: Kind, nullable: boolean, compact: boolean): unknown =>
    (reader as unknown as Record<string, (compact: boolean) => unknown>)[name(kind, nullable)]!.call(reader, compact);

  function encodeArray(kind: Kind, items: unknown[] | null, compact: boolean): Uint8Array {
    const size = (compact ? sizeOfUnsignedVarint(items === null ? 0 : items.length + 1) : 4) + (items?.length ?? 0) * width[kind];
    const writer = new Writer(size);
    writer.fixedArray(items as never, compact, kind);
    return writer.finish();
  }

  for (const kind of Object.keys(samples) as Kind[]) {
    it(`${kind}: reads what Writer.fixedArray wrote; null only where nullable`, () => {
      for (const compact of [false, true]) {
        for (const items of [samples[kind], [], samples[kind].slice(0, 1), samples[kind].slice(0, 2)]) {
          for (const nullable of [false, true]) {
            const reader = new Reader(encodeArray(kind, items, compact));
            expect(read(reader, kind, nullable, compact)).toEqual(items);
            reader.expectEnd();
          }
        }
        const nullBytes = encodeArray(kind, null, compact);
        expect(read(new Reader(nullBytes), kind, true, compact)).toBeNull();
        expect(() => read(new Reader(nullBytes), kind, false, compact)).toThrowError(/non-nullable array is null/);
        const bytes = encodeArray(kind, samples[kind], compact);
        for (const nullable of [false, true]) {
          expect(() => read(new Reader(bytes.subarray(0, bytes.length - 1)), kind, nullable, compact)).toThrowError(DecodeError);
        }
      }
      const invalid = new Uint8Array([0xff, 0xff, 0xff, 0xfe]);
      for (const nullable of [false, true]) {
        expect(() => read(new Reader(invalid), kind, nullable, false)).toThrowError(/invalid length -2/);
      }
    });
  }

  it('int32Array names the bytes it lacked: the length prefix, or the elements', () => {
    expect(() => new Reader(new Uint8Array([0, 0, 0])).int32Array(false)).toThrowError('needs 4 bytes at offset 0, only 3 left');
    const three = new Uint8Array([0, 0, 0, 3, ...Array(11).fill(1)]);
    expect(() => new Reader(three).int32Array(false)).toThrowError('needs 12 bytes at offset 4, only 11 left');
    expect(() => new Reader(new Uint8Array([4, ...Array(11).fill(1)])).int32Array(true)).toThrowError('needs 12 bytes at offset 1, only 11 left');
    const long = new Uint8Array([0, 0, 0, 5, ...Array(20).fill(0), 0, 0, 0, 0, 1, 2, 3, 4]);
    const reader = new Reader(long);
    expect(reader.int32Array(false)).toEqual([0, 0, 0, 0, 0]);
    expect(reader.int32Array(false)).toEqual([]);
    expect(reader.remaining).toBe(4);
  });

  it('arrayLength refuses a count the bytes left cannot hold, and an invalid classic length', () => {
    expect(() => new Reader(new Uint8Array([0, 0, 0, 2, 1])).arrayLength(false)).toThrowError(/claims 2 elements but only 1/);
    expect(() => new Reader(new Uint8Array([3, 1])).arrayLength(true)).toThrowError(/claims 2 elements but only 1/);
    expect(() => new Reader(new Uint8Array([0xff, 0xff, 0xff, 0xfe])).arrayLength(false)).toThrowError(/invalid length -2/);
    expect(new Reader(new Uint8Array([0xff, 0xff, 0xff, 0xff])).arrayLength(false)).toBe(-1);
    expect(new Reader(new Uint8Array([0])).arrayLength(true)).toBe(-1);
  });
});
