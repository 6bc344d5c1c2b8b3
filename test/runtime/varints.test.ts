import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, Reader, sizeOfVarlong, Writer } from '../../runtime/index.js';

// The varlong reader decodes up to 7 bytes as a number and falls back to BigInt
// beyond: every 64-bit value, and every boundary between the two paths, must
// read back exactly what the (BigInt-only) writer wrote.
function roundTrip(value: bigint): bigint {
  const writer = new Writer(sizeOfVarlong(value));
  writer.varlong(value);
  const reader = new Reader(writer.finish());
  const back = reader.varlong();
  reader.expectEnd();
  return back;
}

describe('varlong', () => {
  it('round-trips the boundaries of the number and BigInt paths', () => {
    const edges = [0n, 1n, -1n, 63n, -64n, 64n, 2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n, 2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)];
    for (const value of edges) expect(roundTrip(value)).toBe(value);
  });

  it('round-trips random 64-bit values', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => roundTrip(value) === value), { numRuns: 5000, seed: 64 });
  });

  it('rejects a varlong that runs past the end or past 64 bits', () => {
    expect(() => new Reader(new Uint8Array([0x80, 0x80])).varlong()).toThrowError(DecodeError);
    expect(() => new Reader(new Uint8Array(Array(10).fill(0xff).concat([0x01]))).varlong()).toThrowError(DecodeError);
    expect(() => new Reader(new Uint8Array([...Array(9).fill(0xff), 0x7f])).varlong()).toThrowError(/longer than 64 bits/);
  });
});
