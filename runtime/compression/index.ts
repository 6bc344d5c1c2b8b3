/**
 * The compression codecs of Kafka's record batches (attributes bits 0-2):
 * compress a batch's records section, and decompress it with a bound on the
 * output. Decompression throws DecodeError for corrupt data or for data that
 * would inflate past `maxOutputLength`, and CompressionUnavailableError when
 * the codec's optional library is not installed.
 */
import { EncodeError } from '../errors.js';
import { gzipCompress, gzipDecompress } from './gzip.js';
import { lz4Compress, lz4Decompress } from './lz4.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { zstdCompress, zstdDecompress } from './zstd.js';

export { isXerialFramed } from './snappy.js';

/** Compression codecs by attribute id (Kafka's CompressionType). */
export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const COMPRESSION_TYPES: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/**
 * The levels Kafka accepts (compression.gzip.level, compression.zstd.level,
 * KIP-390). lz4 has none here: the library has one speed (Kafka's lz4 levels
 * select LZ4 HC, which changes only the size, not the format); snappy has none
 * in Kafka either.
 */
export const COMPRESSION_LEVELS: Partial<Record<CompressionType, { min: number; max: number; default: number }>> = {
  gzip: { min: 1, max: 9, default: 6 },
  zstd: { min: -131072, max: 22, default: 3 },
};

/** Throws EncodeError when `level` is not one Kafka accepts for `type`. */
export function checkCompressionLevel(type: CompressionType, level: number | undefined): void {
  if (level === undefined) return;
  const range = COMPRESSION_LEVELS[type];
  if (range === undefined) throw new EncodeError(`compression ${type} takes no level (got ${level})`);
  // gzip also takes -1, zlib's and Kafka's "default level".
  if (type === 'gzip' && level === -1) return;
  if (!Number.isInteger(level) || level < range.min || level > range.max) {
    throw new EncodeError(`compression ${type} level must be an integer in [${range.min}, ${range.max}], got ${level}`);
  }
}

export function compress(type: CompressionType, data: Uint8Array, level?: number): Uint8Array {
  checkCompressionLevel(type, level);
  switch (type) {
    case 'none':
      return data;
    case 'gzip':
      return gzipCompress(data, level);
    case 'snappy':
      return snappyCompress(data);
    case 'lz4':
      return lz4Compress(data);
    case 'zstd':
      return zstdCompress(data, level);
    default:
      throw new EncodeError(`unknown compression ${String(type)}`);
  }
}

export function decompress(type: Exclude<CompressionType, 'none'>, data: Uint8Array, maxOutputLength: number): Uint8Array {
  switch (type) {
    case 'gzip':
      return gzipDecompress(data, maxOutputLength);
    case 'snappy':
      return snappyDecompress(data, maxOutputLength);
    case 'lz4':
      return lz4Decompress(data, maxOutputLength);
    case 'zstd':
      return zstdDecompress(data, maxOutputLength);
  }
}
