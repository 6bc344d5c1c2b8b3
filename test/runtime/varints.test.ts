import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, Reader, sizeOfUnsignedVarint, sizeOfVarlong, Writer } from '../../runtime/index.js';

// The varlong reader decodes up to 7 bytes as a number and falls back to BigInt
// beyond: every 64-bit value, and every boundary between the two paths, must
// read back exactly what the (BigInt-only) writer wrote.
function encodeVarlong(value: bigint): Uint8Array {
  const writer = new Writer(sizeOfVarlong(value));
  writer.varlong(value);
  return writer.finish();
}

function roundTrip(value: bigint): bigint {
  const reader = new Reader(encodeVarlong(value));
  const back = reader.varlong();
  reader.expectEnd();
  return back;
}

describe('varlong', () => {
  it('round-trips the boundaries of the number and BigInt paths', () => {
    const edges = [
      0n,
      1n,
      -1n,
      63n,
      -64n,
      64n,
      2n ** 48n - 1n,
      -(2n ** 48n),
      2n ** 48n,
      -(2n ** 48n) - 1n,
      2n ** 53n,
      -(2n ** 53n),
      2n ** 63n - 1n,
      -(2n ** 63n),
    ];
    for (const value of edges) expect(roundTrip(value)).toBe(value);
  });

  it('round-trips random 64-bit values', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => roundTrip(value) === value),
      { numRuns: 5000, seed: 64 },
    );
  });

  it("writes the ZigZag-64 bytes on both sides of the writer's int32 fast path", () => {
    // The reference: Kafka's ByteUtils.writeVarlong, in BigInt only.
    const reference = (value: bigint): string => {
      let v = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
      const out: number[] = [];
      while (v >= 0x80n) {
        out.push(Number(v & 0x7fn) | 0x80);
        v >>= 7n;
      }
      out.push(Number(v));
      return Buffer.from(out).toString('hex');
    };
    const written = (value: bigint): string => Buffer.from(encodeVarlong(value)).toString('hex');
    const int32 = 2n ** 31n;
    for (const value of [0n, -1n, int32 - 1n, int32, -int32, -int32 - 1n, 2n ** 32n, -(2n ** 32n), 2n ** 63n - 1n, -(2n ** 63n)]) {
      expect(written(value), String(value)).toBe(reference(value));
    }
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: -int32 - 2n, max: int32 + 1n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
        (value) => written(value) === reference(value),
      ),
      { numRuns: 5000, seed: 32 },
    );
  });

  it('rejects a varlong that runs past the end or past 64 bits', () => {
    expect(() => new Reader(new Uint8Array([0x80, 0x80])).varlong()).toThrowError(DecodeError);
    expect(() => new Reader(new Uint8Array(Array(10).fill(0xff).concat([0x01]))).varlong()).toThrowError(DecodeError);
    expect(() => new Reader(new Uint8Array([...Array(9).fill(0xff), 0x7f])).varlong()).toThrowError(/longer than 64 bits/);
  });
});

describe('unsigned varint', () => {
  // Values below 16384 take a one- or two-byte fast path; the rest the general loop.
  const roundTripUnsigned = (value: number): number => {
    const writer = new Writer(sizeOfUnsignedVarint(value));
    writer.unsignedVarint(value);
    const reader = new Reader(writer.finish());
    const back = reader.unsignedVarint();
    reader.expectEnd();
    return back;
  };

  it('round-trips the boundaries of the one-, two- and many-byte paths', () => {
    for (const value of [0, 1, 127, 128, 255, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 31, 2 ** 32 - 1]) expect(roundTripUnsigned(value)).toBe(value);
  });

  it('round-trips random 32-bit values, also when they end the input', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 32 - 1 }), (value) => roundTripUnsigned(value) === value),
      { numRuns: 5000, seed: 32 },
    );
  });

  it('refuses a varint cut short at every length, and one longer than 32 bits', () => {
    for (const cut of [[0x80], [0xff, 0x80], [0x80, 0x80, 0x80], [0xff, 0xff, 0xff, 0xff]]) {
      expect(() => new Reader(new Uint8Array(cut)).unsignedVarint()).toThrowError(/runs past the end/);
    }
    expect(() => new Reader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x1f])).unsignedVarint()).toThrowError(/longer than 32 bits/);
  });

  it('reads a two-byte varint that starts one byte before a bounded end as cut short', () => {
    // The reader may be bounded inside a larger buffer: the fast path must respect `end`, not the buffer's length.
    expect(() => new Reader(new Uint8Array([0x00, 0x80, 0x01]), 1, 2).unsignedVarint()).toThrowError(/runs past the end/);
    expect(new Reader(new Uint8Array([0x00, 0x80, 0x01]), 1, 3).unsignedVarint()).toBe(128);
  });
});

describe('smallVarlong', () => {
  it('gives a number below 2^48 and null (consuming nothing) beyond', () => {
    expect(new Reader(encodeVarlong(2n ** 48n - 1n)).smallVarlong()).toBe(2 ** 48 - 1);
    expect(new Reader(encodeVarlong(-(2n ** 48n))).smallVarlong()).toBe(-(2 ** 48));
    const big = new Reader(encodeVarlong(2n ** 48n));
    expect(big.smallVarlong()).toBeNull();
    expect(big.pos).toBe(0);
    expect(big.varlong()).toBe(2n ** 48n);
  });
});

describe('raw bytes', () => {
  it('are plain Uint8Array views of the input, also when the input is a Node Buffer', () => {
    const input = Buffer.from('..hello..');
    const view = new Reader(input, 2).raw(5);
    expect(Object.getPrototypeOf(view)).toBe(Uint8Array.prototype);
    expect(view.buffer).toBe(input.buffer);
    expect(view.byteOffset).toBe(input.byteOffset + 2);
    expect(Buffer.from(view).toString()).toBe('hello');
  });
});
