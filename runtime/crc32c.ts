import { createRequire } from 'node:module';

/**
 * CRC-32C (Castagnoli), the checksum of v2 record batches.
 *
 * The native `@node-rs/crc32` (SSE 4.2 / ARMv8 CRC instructions) is what the
 * codecs use when it loads. Its platform binary is itself an optional
 * dependency, so `npm install --omit=optional` (the lean install that leaves
 * out the compression libraries) also leaves it out; the codecs must still
 * import and work then. In that case the checksum falls back to the
 * table-driven (slicing-by-8) implementation below: same results, slower
 * (`npm run bench:codec -- --filter crc32c` measures both), and
 * `crc32cImplementation()` says which one is in use, so that a broker or a
 * benchmark can print it.
 *
 * The fallback is written here rather than taken from a library: it is on
 * every record batch's path, and the one well-kept pure-JavaScript package
 * (`@aws-crypto/crc32c`) brings AWS SDK type packages into what is meant to be
 * the lean install.
 */

/** Which CRC-32C the codecs use, and why. */
export interface Crc32cImplementation {
  readonly kind: 'native' | 'javascript';
  /** One line for a startup log: what is in use, and for the fallback, why. */
  readonly description: string;
}

type Crc32cFunction = (data: Uint8Array) => number;

const CASTAGNOLI_REFLECTED = 0x82f63b78;

/** 8 tables of 256 entries: table k gives the CRC of a byte followed by k zero bytes. */
function makeSlicingTables(): Uint32Array {
  const tables = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ CASTAGNOLI_REFLECTED : c >>> 1;
    tables[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = tables[n]!;
    for (let k = 1; k < 8; k++) {
      c = tables[c & 0xff]! ^ (c >>> 8);
      tables[k * 256 + n] = c >>> 0;
    }
  }
  return tables;
}

let slicingTables: Uint32Array | undefined;

/** CRC-32C in JavaScript, eight bytes per step (slicing-by-8); unsigned. */
export function crc32cJavaScript(data: Uint8Array): number {
  const t = (slicingTables ??= makeSlicingTables());
  let crc = 0xffffffff;
  let i = 0;
  const length = data.length;
  const whole = length - (length & 7);
  while (i < whole) {
    const a = (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) ^ crc;
    crc =
      t[1792 + (a & 0xff)]! ^
      t[1536 + ((a >>> 8) & 0xff)]! ^
      t[1280 + ((a >>> 16) & 0xff)]! ^
      t[1024 + (a >>> 24)]! ^
      t[768 + data[i + 4]!]! ^
      t[512 + data[i + 5]!]! ^
      t[256 + data[i + 6]!]! ^
      t[data[i + 7]!]!;
    i += 8;
  }
  while (i < length) crc = t[(crc ^ data[i++]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function loadNative(): { fn: Crc32cFunction; implementation: Crc32cImplementation } {
  try {
    // Synchronous on purpose: batches are checksummed synchronously, and the
    // package is CommonJS. A missing platform binary throws here.
    const native = createRequire(import.meta.url)('@node-rs/crc32') as { crc32c(data: Uint8Array, initial?: number): number };
    return {
      fn: (data) => native.crc32c(data) >>> 0,
      implementation: { kind: 'native', description: 'CRC-32C: native (@node-rs/crc32)' },
    };
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return {
      fn: crc32cJavaScript,
      implementation: {
        kind: 'javascript',
        description: `CRC-32C: JavaScript fallback, slower (@node-rs/crc32's native binding did not load: ${why}; install optional dependencies to use it)`,
      },
    };
  }
}

const chosen = loadNative();

/** CRC-32C of `data`, unsigned: native when its binding loads, else the JavaScript fallback. */
export const crc32c: Crc32cFunction = chosen.fn;

/** Which CRC-32C implementation `crc32c` is, with a one-line description. */
export function crc32cImplementation(): Crc32cImplementation {
  return chosen.implementation;
}
