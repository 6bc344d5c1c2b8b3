import * as zlib from 'node:zlib';
import { DecodeError } from '../errors.js';
import { loadOptionalPackage, asBuffer } from './optional-package.js';

/**
 * Zstandard as Kafka uses it: one or more zstd frames (Kafka's Java producer
 * streams through zstd-jni and writes no content size; librdkafka writes it).
 * Node's zlib has zstd from Node 22.15 on and is used where present; on Node 20
 * the library is @toondepauw/node-zstd (libzstd through napi-rs, prebuilt
 * binaries shipped in npm packages, synchronous; twice the compression speed
 * of the WebAssembly builds we measured, whose initialisation is asynchronous).
 *
 * The frames are walked here before they are inflated: block headers bound
 * the output (raw and RLE blocks declare their size, a compressed block
 * inflates to at most min(window size, 128 KiB)), so a bomb is refused without
 * inflating it.
 */
interface NodeZstd {
  Encoder: new (level: number) => { encodeSync(data: Buffer): Buffer };
  Decoder: new () => { decodeSync(data: Buffer): Buffer };
}

type ZlibWithZstd = typeof zlib & {
  zstdCompressSync?: (data: Uint8Array, options?: { params?: Record<number, number> }) => Buffer;
  zstdDecompressSync?: (data: Uint8Array, options?: { maxOutputLength?: number }) => Buffer;
  constants: typeof zlib.constants & { ZSTD_c_compressionLevel?: number };
};
const nodeZlib = zlib as ZlibWithZstd;

const PACKAGE = '@toondepauw/node-zstd';
/** zstd's default level, and Kafka's (compression.zstd.level). */
export const ZSTD_DEFAULT_LEVEL = 3;
const FRAME_MAGIC = 0xfd2fb528;
const BLOCK_SIZE_MAX = 128 * 1024;

const encoders = new Map<number, { encodeSync(data: Buffer): Buffer }>();
let decoder: { decodeSync(data: Buffer): Buffer } | null = null;

function library(): NodeZstd {
  return loadOptionalPackage<NodeZstd>(PACKAGE, 'zstd');
}

export function zstdCompress(data: Uint8Array, level = ZSTD_DEFAULT_LEVEL): Uint8Array {
  if (nodeZlib.zstdCompressSync !== undefined && nodeZlib.constants.ZSTD_c_compressionLevel !== undefined) {
    return nodeZlib.zstdCompressSync(data, { params: { [nodeZlib.constants.ZSTD_c_compressionLevel]: level } });
  }
  let encoder = encoders.get(level);
  if (encoder === undefined) {
    const { Encoder } = library();
    encoder = new Encoder(level);
    encoders.set(level, encoder);
  }
  return encoder.encodeSync(asBuffer(data));
}

export function zstdDecompress(data: Uint8Array, maxOutputLength: number): Uint8Array {
  const bound = outputBound(data, maxOutputLength);
  if (bound > maxOutputLength) {
    throw new DecodeError(`zstd records may inflate to ${bound} bytes, more than the ${maxOutputLength} allowed`);
  }
  let out: Buffer;
  try {
    if (nodeZlib.zstdDecompressSync !== undefined) {
      out = nodeZlib.zstdDecompressSync(data, { maxOutputLength });
    } else {
      decoder ??= new (library().Decoder)();
      out = decoder.decodeSync(asBuffer(data));
    }
  } catch (error) {
    throw new DecodeError(`zstd records are corrupt: ${(error as Error).message}`, { cause: error });
  }
  if (out.length > maxOutputLength) throw new DecodeError(`zstd records inflate to more than ${maxOutputLength} bytes`);
  return out;
}

/**
 * Walks every frame (skippable ones included) and sums what its blocks can
 * inflate to. A frame that declares a content size over the limit is refused
 * here too: decoders size their output from it.
 */
function outputBound(data: Uint8Array, maxOutputLength: number): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  let bound = 0;
  if (data.length === 0) throw new DecodeError('zstd records are empty (no frame)');
  while (at < data.length) {
    if (data.length - at < 4) throw new DecodeError(`zstd data is cut short at byte ${at} (in a frame magic)`);
    const magic = view.getUint32(at, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (data.length - at < 8) throw new DecodeError(`zstd skippable frame at byte ${at} is cut short`);
      const size = view.getUint32(at + 4, true);
      if (size > data.length - at - 8) throw new DecodeError(`zstd skippable frame at byte ${at} runs past the end`);
      at += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new DecodeError(`zstd frame at byte ${at} has magic 0x${magic.toString(16)}, expected 0x${FRAME_MAGIC.toString(16)}`);
    const frameStart = at;
    at += 4;
    if (at >= data.length) throw new DecodeError(`zstd frame at byte ${frameStart} is cut short in its header`);
    const descriptor = data[at++]!;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    if ((descriptor & 0x08) !== 0) throw new DecodeError(`zstd frame at byte ${frameStart} sets a reserved header bit`);
    const hasChecksum = (descriptor & 0x04) !== 0;
    const dictIdSize = [0, 1, 2, 4][descriptor & 0x03]!;
    const fcsSize = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
    let windowSize = Infinity;
    if (!singleSegment) {
      if (at >= data.length) throw new DecodeError(`zstd frame at byte ${frameStart} is cut short in its header`);
      const windowDescriptor = data[at++]!;
      const windowBase = 2 ** (10 + (windowDescriptor >> 3));
      windowSize = windowBase + (windowBase / 8) * (windowDescriptor & 0x07);
    }
    at += dictIdSize;
    if (at + fcsSize > data.length) throw new DecodeError(`zstd frame at byte ${frameStart} is cut short in its header`);
    if (fcsSize > 0) {
      let contentSize = 0;
      for (let i = fcsSize - 1; i >= 0; i--) contentSize = contentSize * 256 + data[at + i]!;
      if (fcsSize === 2) contentSize += 256;
      if (contentSize > maxOutputLength) {
        throw new DecodeError(`zstd frame at byte ${frameStart} declares ${contentSize} bytes of content, more than the ${maxOutputLength} allowed`);
      }
      if (singleSegment) windowSize = contentSize; // the window is the content
    }
    at += fcsSize;
    const blockMax = Math.min(windowSize, BLOCK_SIZE_MAX);
    for (;;) {
      if (data.length - at < 3) throw new DecodeError(`zstd frame at byte ${frameStart} is cut short at byte ${at} (in a block header)`);
      const blockHeader = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16);
      at += 3;
      const last = (blockHeader & 1) !== 0;
      const type = (blockHeader >> 1) & 0x03;
      const size = blockHeader >>> 3;
      if (type === 3) throw new DecodeError(`zstd block at byte ${at - 3} has the reserved block type`);
      if (size > BLOCK_SIZE_MAX) throw new DecodeError(`zstd block at byte ${at - 3} declares ${size} bytes, over the 128 KiB maximum`);
      const stored = type === 1 ? 1 : size; // an RLE block stores one byte and repeats it `size` times
      if (stored > data.length - at) throw new DecodeError(`zstd block at byte ${at - 3} runs past the end of the data`);
      bound += type === 2 ? blockMax : size;
      at += stored;
      if (last) break;
    }
    if (hasChecksum) {
      if (data.length - at < 4) throw new DecodeError(`zstd frame at byte ${frameStart} is cut short in its checksum`);
      at += 4;
    }
  }
  return bound;
}
