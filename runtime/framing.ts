import { explainEncodeFailure } from './encode-diagnosis.js';
import { EncodeError } from './errors.js';
import type { MessageCodec } from './codec.js';
import { Writer, writeChunks } from './writer.js';

/**
 * Kafka frames every request and response with a big-endian int32 size. These
 * helpers build a frame from a header and a body in a single allocation, and
 * split a byte stream back into frames.
 */

/** Encodes `int32 size | header | body` in one allocation. */
export function encodeFrame<H, B>(
  headerCodec: MessageCodec<H>,
  header: H,
  headerVersion: number,
  bodyCodec: MessageCodec<B>,
  body: B,
  bodyVersion: number,
): Uint8Array {
  const size = headerCodec.size(header, headerVersion) + bodyCodec.size(body, bodyVersion);
  const writer = Writer.forSize(4 + size);
  try {
    writeFrame(writer, size, headerCodec, header, headerVersion, bodyCodec, body, bodyVersion);
  } catch (error) {
    // A field a JavaScript caller left out or mistyped: say which (encode-diagnosis.ts). Explained around the
    // whole write pass, never inside it, so that writeChunks's own recovery from overflowing its scratch buffer
    // (a RangeError it catches and retries) never reaches the diagnosis.
    throw explainEncodeFailure(error, bodyCodec.name, bodyCodec, body, bodyVersion);
  }
  return writer.finish();
}

function writeFrame<H, B>(
  writer: Writer,
  size: number,
  headerCodec: MessageCodec<H>,
  header: H,
  headerVersion: number,
  bodyCodec: MessageCodec<B>,
  body: B,
  bodyVersion: number,
): void {
  writer.int32(size);
  headerCodec.write(writer, header, headerVersion);
  bodyCodec.write(writer, body, bodyVersion);
}

/**
 * `encodeFrame` as zero-copy chunks (see `writeChunks`): the frame's large byte
 * values are referenced, not copied. Write the chunks in order, corked, so
 * they leave in one vectored write.
 */
export function encodeFrameChunks<H, B>(
  headerCodec: MessageCodec<H>,
  header: H,
  headerVersion: number,
  bodyCodec: MessageCodec<B>,
  body: B,
  bodyVersion: number,
): Uint8Array[] {
  const size = headerCodec.size(header, headerVersion) + bodyCodec.size(body, bodyVersion);
  try {
    return writeChunks(4 + size, (writer) => writeFrame(writer, size, headerCodec, header, headerVersion, bodyCodec, body, bodyVersion));
  } catch (error) {
    throw explainEncodeFailure(error, bodyCodec.name, bodyCodec, body, bodyVersion); // as in encodeFrame
  }
}

/** Thrown by FrameReader for a frame the peer should never have sent; the connection is beyond repair. */
export class FrameError extends Error {
  override name = 'FrameError';
  constructor(
    message: string,
    /** Complete frames that arrived before the bad one (in the same push): a server may still answer them. */
    readonly frames: Uint8Array[] = [],
  ) {
    super(message);
  }
}

/** Chunks smaller than this that arrive behind others are copied into a shared tail buffer. */
const COALESCE_BELOW = 4096;
/** A tail buffer is sized to the bytes pending (at least MIN_TAIL, at most MAX_TAIL), so it costs at most about twice them. */
const MIN_TAIL = 256;
const MAX_TAIL = 64 * 1024;

/**
 * Reassembles size-prefixed frames from socket chunks. A frame that announces
 * more than `maxFrameBytes` is refused as soon as its size prefix arrives, before
 * any of it is buffered (docs/DESIGN.md §3).
 *
 * Chunks are kept as zero-copy views, except small ones arriving behind
 * others: those are copied into a tail buffer, so that a peer sending a frame
 * in tiny segments (one byte per read) costs its bytes, not a Buffer object
 * and a backing store per segment (~100× the data otherwise).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = -1;
  private tail: Buffer | null = null;
  private tailUsed = 0;

  /** May be changed between pushes (a broker accepts only small frames before authentication). */
  constructor(public maxFrameBytes: number) {
    if (!Number.isInteger(maxFrameBytes) || maxFrameBytes <= 0) {
      throw new EncodeError(`maxFrameBytes must be a positive integer, got ${maxFrameBytes}`);
    }
  }

  /** Bytes received but not yet returned as a frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Adds a chunk and returns every frame it completes (without size prefixes). */
  push(chunk: Uint8Array): Uint8Array[] {
    this.append(chunk);
    const frames: Uint8Array[] = [];
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < 4) break;
        const size = this.take(4).readInt32BE(0);
        if (size < 0) throw new FrameError(`frame announces a negative size ${size}`, frames);
        if (size > this.maxFrameBytes) {
          throw new FrameError(`frame of ${size} bytes exceeds the maximum of ${this.maxFrameBytes}`, frames);
        }
        this.expected = size;
      }
      if (this.buffered < this.expected) break;
      frames.push(this.take(this.expected));
      this.expected = -1;
    }
    return frames;
  }

  private append(chunk: Uint8Array): void {
    const n = chunk.byteLength;
    if (n === 0) return;
    this.buffered += n;
    const last = this.chunks[this.chunks.length - 1];
    if (n >= COALESCE_BELOW || last === undefined) {
      this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, n));
      return;
    }
    let tail = this.tail;
    if (tail === null || tail.length - this.tailUsed < n) {
      tail = this.tail = Buffer.allocUnsafeSlow(Math.min(MAX_TAIL, Math.max(MIN_TAIL, n, this.buffered)));
      this.tailUsed = 0;
    }
    const start = this.tailUsed;
    tail.set(chunk, start);
    this.tailUsed += n;
    // Bytes after tailUsed are never handed out, so frames already returned as views of the tail stay intact.
    if (last.buffer === tail.buffer && last.byteOffset + last.length === tail.byteOffset + start) {
      this.chunks[this.chunks.length - 1] = tail.subarray(last.byteOffset - tail.byteOffset, start + n);
    } else {
      this.chunks.push(tail.subarray(start, start + n));
    }
  }

  private take(count: number): Buffer {
    // A zero-size frame may follow a size prefix that ended its chunk: chunks is empty then.
    if (count === 0) return Buffer.alloc(0);
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= count) {
      out = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      out = Buffer.allocUnsafe(count);
      let filled = 0;
      while (filled < count) {
        const chunk = this.chunks[0]!;
        const n = Math.min(chunk.length, count - filled);
        chunk.copy(out, filled, 0, n);
        filled += n;
        if (n === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(n);
      }
    }
    this.buffered -= count;
    return out;
  }
}
