import { createRequire } from 'node:module';
import { CompressionUnavailableError } from '../errors.js';

/**
 * Loads a codec library on first use. The snappy, lz4 and zstd libraries are
 * optional dependencies: a program that never meets those codecs does not need
 * them installed, and one that does gets an error naming the package to install.
 * They are CommonJS packages with synchronous APIs, so `require` keeps record
 * batch encoding and decoding synchronous.
 */
const requireFromHere = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

export function loadOptionalPackage<T>(packageName: string, codec: string): T {
  const cached = loaded.get(packageName);
  if (cached !== undefined) return cached as T;
  let library: T;
  try {
    library = requireFromHere(packageName) as T;
  } catch (error) {
    // Not installed, or installed without a prebuilt binary for this platform.
    throw new CompressionUnavailableError(codec, packageName, error);
  }
  loaded.set(packageName, library);
  return library;
}

/** A Buffer view of `data` (no copy): what the native codec packages take. */
export function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
