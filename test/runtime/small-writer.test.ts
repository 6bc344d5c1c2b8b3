/**
 * Writer.forSize gives outputs under 256 bytes a writer that stores by hand
 * instead of through a DataView (runtime/writer.ts). Both must put the same
 * bytes on the wire and refuse the same values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Writer } from '../../runtime/writer.js';
import { EncodeError } from '../../runtime/errors.js';

type Op =
  { kind: 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'float64'; value: number } | { kind: 'int64'; value: bigint } | { kind: 'string'; value: string };

const WIDTH = { int8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, float64: 8 } as const;

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.integer({ min: -128, max: 127 }).map((value) => ({ kind: 'int8' as const, value })),
  fc.integer({ min: -32768, max: 32767 }).map((value) => ({ kind: 'int16' as const, value })),
  fc.integer({ min: 0, max: 65535 }).map((value) => ({ kind: 'uint16' as const, value })),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((value) => ({ kind: 'int32' as const, value })),
  fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((value) => ({ kind: 'uint32' as const, value })),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({ kind: 'int64' as const, value })),
  fc.double().map((value) => ({ kind: 'float64' as const, value })),
  fc.string({ maxLength: 12 }).map((value) => ({ kind: 'string' as const, value })),
);

const sizeOf = (o: Op): number => (o.kind === 'string' ? 2 + Buffer.byteLength(o.value) : WIDTH[o.kind]);

function apply(w: Writer, o: Op): void {
  if (o.kind === 'int64') w.int64(o.value);
  else if (o.kind === 'string') w.string(o.value, false);
  else w[o.kind](o.value);
}

/** The same ops through a writer with a DataView, padded past the small-writer limit. */
function throughDataView(ops: Op[], size: number): Uint8Array {
  const w = new Writer(size + 256);
  for (const o of ops) apply(w, o);
  return w.buffer.subarray(0, size);
}

describe('small outputs are stored by hand', () => {
  it('Writer.forSize of a small output writes exactly what the DataView writer writes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), (ops) => {
        const size = ops.reduce((n, o) => n + sizeOf(o), 0);
        const small = Writer.forSize(size);
        for (const o of ops) apply(small, o);
        expect(Buffer.from(small.finish())).toEqual(Buffer.from(throughDataView(ops, size)));
      }),
    );
  });

  it('refuses out-of-range values as the DataView writer does', () => {
    const cases: Array<[keyof typeof WIDTH, number | bigint]> = [
      ['int8', 128],
      ['int16', -32769],
      ['uint16', 65536],
      ['int32', 2 ** 31],
      ['uint32', -1],
      ['int64', 2n ** 63n],
    ];
    for (const [kind, value] of cases) {
      for (const w of [Writer.forSize(8), new Writer(512)]) {
        expect(() => (kind === 'int64' ? w.int64(value as bigint) : w[kind](value as number)), `${kind} ${value}`).toThrow(EncodeError);
      }
    }
  });

  it('a size pass that promised too little is caught at finish, as before', () => {
    const w = Writer.forSize(2);
    w.int32(7);
    expect(() => w.finish()).toThrow(/size pass computed 2 bytes but 4 were written/);
  });
});
