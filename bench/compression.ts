// Workload 6: compressing and decompressing the records section of a record batch (what a
// producer compresses and a consumer inflates), 1 MiB of records, per codec. Ours is the
// runtime's compression module (runtime/compression/); the peer is @platformatic/kafka's
// `compressionsAlgorithms` (gzip and zstd through node:zlib, snappy and lz4 through
// @platformatic/wasm-utils, WebAssembly). Both sides get the same bytes; MB/s counts the
// uncompressed MiB for both operations.
import { oursRoot } from './our-build.js';
import { buildRecordBatch, type BenchRecord } from './recordBatch.js';
import { prng } from './wire.js';

export const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
export type Codec = (typeof CODECS)[number];

export interface Codecs {
  compress(data: Uint8Array): Uint8Array;
  decompress(data: Uint8Array): Uint8Array;
}

export interface CompressionWorkload {
  /** The records section of a v2 batch (the bytes after its 61-byte header), at least 1 MiB. */
  records: Uint8Array;
}

const RECORD_BATCH_OVERHEAD = 61;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/**
 * JSON order events: what topics usually carry, and compressible as such data is (repeated
 * field names, small vocabularies, random ids and amounts). Random bytes would measure only
 * each codec's give-up path.
 */
export function compressionWorkload(): CompressionWorkload {
  const rand = prng(0x5eed0006);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const records: BenchRecord[] = [];
  let size = 0;
  for (let i = 0; size < 1024 * 1024; i++) {
    const value = utf8(
      JSON.stringify({
        orderId: `ord-${Math.floor(rand() * 1e9).toString(36)}`,
        customer: { id: Math.floor(rand() * 50_000), tier: pick(['free', 'pro', 'enterprise']), country: pick(['DE', 'FR', 'US', 'JP', 'BR', 'IN']) },
        items: Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({
          sku: `sku-${Math.floor(rand() * 2000)}`,
          qty: 1 + Math.floor(rand() * 5),
          price: Math.round(rand() * 20_000) / 100,
        })),
        status: pick(['created', 'paid', 'shipped', 'delivered']),
        ts: 1_700_000_000_000 + i * 17,
      }),
    );
    const record: BenchRecord = {
      key: utf8(`customer-${Math.floor(rand() * 50_000)}`),
      value,
      headers: [['source', utf8('checkout')]],
      timestamp: 1_700_000_000_000n + BigInt(i * 17),
    };
    records.push(record);
    size += value.length + 40;
  }
  return { records: buildRecordBatch(records).subarray(RECORD_BATCH_OVERHEAD) };
}

/** The runtime's codecs (needs the optional codec libraries installed). */
export async function oursCodecs(codec: Codec): Promise<Codecs> {
  const runtime: typeof import('../runtime/compression/index.js') = await import(new URL('runtime/compression/index.js', oursRoot().url).href);
  return { compress: (data) => runtime.compress(codec, data), decompress: (data) => runtime.decompress(codec, data, 64 * 1024 * 1024) };
}

/** The library each side uses, for the row labels. */
export const OURS_LIBRARY: Record<Codec, string> = { gzip: 'node:zlib', snappy: 'snappy-wasm', lz4: 'lz4-napi', zstd: '@toondepauw/node-zstd' };
export const PLATFORMATIC_LIBRARY: Record<Codec, string> = {
  gzip: 'node:zlib',
  snappy: '@platformatic/wasm-utils',
  lz4: '@platformatic/wasm-utils',
  zstd: 'node:zlib',
};

/** @platformatic/kafka's codecs, or null when it has none here (its zstd needs node:zlib's, from Node 22.15). */
export async function platformaticCodecs(codec: Codec): Promise<Codecs | null> {
  const { compressionsAlgorithms } = (await import('@platformatic/kafka')) as unknown as {
    compressionsAlgorithms: Record<Codec, { available: boolean; compressSync(data: Buffer): Buffer; decompressSync(data: Buffer): Buffer }>;
  };
  const algorithm = compressionsAlgorithms[codec];
  if (!algorithm.available) return null;
  const asBuffer = (u: Uint8Array) => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  return { compress: (data) => algorithm.compressSync(asBuffer(data)), decompress: (data) => algorithm.decompressSync(asBuffer(data)) };
}
