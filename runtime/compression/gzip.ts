import { gunzipSync, gzipSync } from 'node:zlib';
import { DecodeError } from '../errors.js';

/** gzip through Node's zlib, which bounds the output itself. Kafka's default level is zlib's (6). */
export function gzipCompress(data: Uint8Array, level?: number): Uint8Array {
  return gzipSync(data, level === undefined ? undefined : { level });
}

export function gzipDecompress(data: Uint8Array, maxOutputLength: number): Uint8Array {
  try {
    return gunzipSync(data, { maxOutputLength });
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new DecodeError(`gzip records inflate to more than ${maxOutputLength} bytes`);
    }
    throw new DecodeError(`gzip records are corrupt: ${(error as Error).message}`, { cause: error });
  }
}
