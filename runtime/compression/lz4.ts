import { DecodeError } from '../errors.js';
import { loadOptionalPackage, asBuffer } from './optional-package.js';

/**
 * LZ4 as Kafka uses it in v2 batches: one standard LZ4 frame (magic
 * 0x184D2204), independent blocks (Kafka's Java reader refuses dependent
 * ones), 64 KiB blocks when Kafka writes it. Kafka's historical quirk, a
 * frame-descriptor checksum computed over the magic too, concerns only
 * magic 0 message sets, which this runtime does not read; v2 batches carry a
 * correct checksum, and the library verifies it.
 *
 * The frame is walked here before it is inflated: its block sizes bound the
 * output, so a bomb is refused without inflating it, and a truncated frame is
 * reported with where it breaks. A compressed block inflates to at most the
 * frame's block maximum size, and to at most 255 times its own size (LZ4's
 * block format: a sequence is a token, literals copied one for one, a 2-byte
 * offset and a match of 4 + 15 bytes plus 255 per extra length byte, so no
 * byte yields more than 255); a declared content size must be one the blocks
 * can produce and within the limit.
 *
 * What the library allocates: lz4_flex's frame decoder sizes its working
 * buffer from the frame's block maximum size (at most 4 MiB, the format's
 * largest), native memory freed when the call returns, never from a declared
 * content size. Kafka's reader likewise allocates one buffer of the frame's
 * block maximum size (clients/src/main/java/org/apache/kafka/common/compress/
 * Lz4BlockInputStream.java). That bounded cost is accepted
 * rather than refusing frames with large blocks, which other producers write.
 *
 * Library: lz4-napi (lz4_flex, safe Rust, prebuilt binaries shipped in npm
 * packages); lz4js matched its speed in our measurements but checks neither
 * the descriptor checksum nor block bounds.
 */
interface Lz4Napi {
  compressFrameSync(data: Buffer, options?: { contentChecksum?: boolean; blockChecksums?: boolean }): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}

const PACKAGE = 'lz4-napi';
const FRAME_MAGIC = 0x184d2204;
/** The most one byte of a compressed LZ4 block can inflate to (a match length byte of 255). */
const MAX_BLOCK_RATIO = 255;
const BLOCK_MAX_SIZES: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

function library(): Lz4Napi {
  return loadOptionalPackage<Lz4Napi>(PACKAGE, 'lz4');
}

export function lz4Compress(data: Uint8Array): Uint8Array {
  return library().compressFrameSync(asBuffer(data));
}

export function lz4Decompress(data: Uint8Array, maxOutputLength: number): Uint8Array {
  const { frameEnd, bound, contentSize } = walkFrame(data);
  if (contentSize !== null && contentSize > maxOutputLength) {
    throw new DecodeError(`lz4 frame declares ${contentSize} bytes of content, more than the ${maxOutputLength} allowed`);
  }
  if (contentSize !== null && contentSize > bound) {
    throw new DecodeError(`lz4 frame declares ${contentSize} bytes of content, but its blocks inflate to at most ${bound}`);
  }
  if (bound > maxOutputLength) {
    throw new DecodeError(`lz4 records may inflate to ${bound} bytes, more than the ${maxOutputLength} allowed`);
  }
  let out: Buffer;
  try {
    out = library().decompressFrameSync(asBuffer(data.subarray(0, frameEnd)));
  } catch (error) {
    throw new DecodeError(`lz4 frame is corrupt: ${(error as Error).message}`, { cause: error });
  }
  if (out.length > maxOutputLength) throw new DecodeError(`lz4 records inflate to more than ${maxOutputLength} bytes`);
  return out;
}

/**
 * Checks the frame's structure and returns where it ends and the most it can
 * inflate to. Bytes after the frame are ignored, as Kafka's Java reader does.
 */
function walkFrame(data: Uint8Array): { frameEnd: number; bound: number; contentSize: number | null } {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 7) throw new DecodeError(`lz4 frame of ${data.length} bytes is shorter than a frame header`);
  const magic = view.getUint32(0, true);
  if (magic !== FRAME_MAGIC) throw new DecodeError(`lz4 frame has magic 0x${magic.toString(16)}, expected 0x${FRAME_MAGIC.toString(16)}`);
  const flg = data[4]!;
  const bd = data[5]!;
  if (flg >> 6 !== 1) throw new DecodeError(`lz4 frame version ${flg >> 6} is not supported (only 1)`);
  if ((flg & 0x20) === 0) throw new DecodeError('lz4 frame has dependent blocks, which Kafka does not support');
  const blockChecksums = (flg & 0x10) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const blockMaxSize = BLOCK_MAX_SIZES[(bd >> 4) & 0x07];
  if (blockMaxSize === undefined) throw new DecodeError(`lz4 frame has an invalid block maximum size id ${(bd >> 4) & 0x07}`);
  const hasContentSize = (flg & 0x08) !== 0;
  if (hasContentSize && data.length < 14) throw new DecodeError('lz4 frame is cut short in its content size');
  // A uint64; above 2^53 it is past any limit anyway, so a float is exact enough.
  const contentSize = hasContentSize ? view.getUint32(6, true) + view.getUint32(10, true) * 2 ** 32 : null;
  let at = 6 + (hasContentSize ? 8 : 0) + ((flg & 0x01) !== 0 ? 4 : 0) + 1; // content size, dictionary id, header checksum
  let bound = 0;
  for (;;) {
    if (data.length - at < 4) throw new DecodeError(`lz4 frame is cut short at byte ${at} (a block size or the end mark is missing)`);
    const word = view.getUint32(at, true);
    at += 4;
    if (word === 0) break;
    const uncompressed = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > blockMaxSize) throw new DecodeError(`lz4 block at byte ${at - 4} declares ${size} bytes, over the frame's block maximum of ${blockMaxSize}`);
    const end = at + size + (blockChecksums ? 4 : 0);
    if (end > data.length) throw new DecodeError(`lz4 block at byte ${at - 4} runs past the end of the frame`);
    bound += uncompressed ? size : Math.min(blockMaxSize, MAX_BLOCK_RATIO * size);
    at = end;
  }
  if (contentChecksum) {
    if (data.length - at < 4) throw new DecodeError('lz4 frame is cut short in its content checksum');
    at += 4;
  }
  return { frameEnd: at, bound, contentSize };
}
