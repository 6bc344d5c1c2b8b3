import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cImplementation, crc32cJavaScript } from '../../runtime/crc32c.js';

const native = createRequire(import.meta.url)('@node-rs/crc32') as { crc32c(data: Uint8Array): number };

describe('CRC-32C', () => {
  it('uses the native binding when it loads, and says so in one line', () => {
    expect(crc32cImplementation()).toEqual({ kind: 'native', description: 'CRC-32C: native (@node-rs/crc32)' });
  });

  it('the JavaScript fallback gives the published check values', () => {
    expect(crc32cJavaScript(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32cJavaScript(new Uint8Array(0))).toBe(0);
    // RFC 3720 B.4: 32 bytes of zeros, of 0xff, ascending, descending.
    expect(crc32cJavaScript(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32cJavaScript(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32cJavaScript(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32cJavaScript(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
  });

  it('the JavaScript fallback agrees with the native one on any bytes, lengths and view offsets', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.nat(15), (data, pad) => {
        const padded = new Uint8Array(data.length + pad + 3).fill(0x5a);
        padded.set(data, pad);
        const view = padded.subarray(pad, pad + data.length);
        const expected = native.crc32c(Buffer.from(data)) >>> 0;
        expect(crc32cJavaScript(view)).toBe(expected);
        expect(crc32c(view)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
