/**
 * A compressed batch must not make the decoder allocate
 * what its payload declares. Snappy's length varint and xerial chunks, and an
 * LZ4 frame's content size, are checked against what the bytes can inflate to
 * before anything is allocated (snappy-wasm's WebAssembly memory, once grown,
 * never shrinks).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  COMPRESSION_TYPES,
  DecodeError,
  RECORD_BATCH_OVERHEAD,
  crc32c,
  decodeRecordBatch,
  decompress,
  encodeRecordBatch,
  compress,
  type CompressionType,
} from '../../runtime/index.js';
import { loadOptionalPackage } from '../../runtime/compression/optional-package.js';

const wasmMemory = (): number => loadOptionalPackage<{ __wasm: { memory: { buffer: ArrayBuffer } } }>('snappy-wasm', 'snappy').__wasm.memory.buffer.byteLength;

/** A batch whose records section is `body`, declared as `codec`, with a valid CRC. */
function batchWithBody(codec: CompressionType, body: Uint8Array, count: number): Buffer {
  const template = Buffer.from(encodeRecordBatch({ records: [{ value: Buffer.from('x') }] })).subarray(0, RECORD_BATCH_OVERHEAD);
  const out = Buffer.concat([template, body]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(COMPRESSION_TYPES.indexOf(codec), 21);
  out.writeInt32BE(count - 1, 23);
  out.writeInt32BE(count, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function decodeError(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DecodeError) return error;
    throw error;
  }
  throw new Error('expected a DecodeError');
}

const SIXTY_MIB = 60 * 1024 * 1024;

describe('snappy: a declared length beyond what the input can produce is refused before allocating', () => {
  it('a 67-byte raw snappy batch declaring 60 MiB fails naming the length, and WebAssembly memory does not grow', () => {
    // Decode a real block first, so that the instance exists before memory is measured.
    expect(decompress('snappy', compress('snappy', Buffer.from('warm up')), 100).length).toBe(7);
    const batch = batchWithBody('snappy', Buffer.concat([varint(SIXTY_MIB), Buffer.from([0x00, 0x41])]), 1);
    expect(batch.length).toBe(67);
    const before = wasmMemory();
    const error = decodeError(() => decodeRecordBatch(batch));
    expect(wasmMemory() - before).toBeLessThan(1024 * 1024);
    expect(error.message).toMatch(/snappy block declares an uncompressed length of 62914560 bytes, but its 2 bytes of snappy elements inflate to at most 42/);
  });

  it('a xerial batch whose chunks declare 60 MiB in all fails at its first chunk, before the output is allocated', () => {
    const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
    const chunk = (declared: number): Buffer => {
      const body = Buffer.concat([varint(declared), Buffer.from([0x00, 0x41])]);
      const size = Buffer.alloc(4);
      size.writeInt32BE(body.length);
      return Buffer.concat([size, body]);
    };
    const chunks = Array.from({ length: 20 }, () => chunk(SIXTY_MIB / 20));
    const batch = batchWithBody('snappy', Buffer.concat([header, ...chunks]), 1);
    expect(batch.length).toBeLessThan(300);
    const before = wasmMemory();
    const error = decodeError(() => decodeRecordBatch(batch));
    expect(error.message).toMatch(
      /snappy \(xerial\) chunk at byte 16 declares an uncompressed length of 3145728 bytes, but its 2 bytes of snappy elements inflate to at most 42/,
    );
    expect(wasmMemory() - before).toBeLessThan(1024 * 1024);
  });

  it('the bound is snappy’s real one: a block of 3-byte copies of 64 bytes (the best ratio) still decodes', () => {
    // A 1-byte literal, then copies with a 2-byte offset of 1 and length 64 (tag ((64 - 1) << 2) | 2).
    const copies = 3000;
    const length = 1 + 64 * copies;
    const elements = Buffer.concat([Buffer.from([0x00, 0x61]), ...Array.from({ length: copies }, () => Buffer.from([(63 << 2) | 2, 0x01, 0x00]))]);
    const block = Buffer.concat([varint(length), elements]);
    expect(length).toBeLessThanOrEqual(Math.floor((elements.length * 64) / 3));
    const out = decompress('snappy', block, 1 << 20);
    expect([out.length, Buffer.from(out).every((b) => b === 0x61)]).toEqual([length, true]);
    // One byte more than the block can produce is refused before inflating.
    const lie = Buffer.concat([varint(Math.floor((elements.length * 64) / 3) + 1), elements]);
    expect(decodeError(() => decompress('snappy', lie, 1 << 20)).message).toMatch(/inflate to at most/);
  });
});

describe('lz4: a declared content size is checked before the library sees it', () => {
  /** A frame with independent blocks, 64 KiB block maximum, the given content size, and `blocks` after the header. */
  function frame(contentSize: bigint, blocks: Buffer): Buffer {
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x60 | 0x08; // version 1, independent blocks, content size present
    descriptor[1] = 0x40; // 64 KiB blocks
    descriptor.writeBigUInt64LE(contentSize, 2);
    // The header checksum is not reached: the walk refuses the frame first.
    return Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18]), descriptor, Buffer.from([0]), blocks]);
  }
  const oneStoredBlock = Buffer.concat([Buffer.from([5, 0, 0, 0x80]), Buffer.from('hello'), Buffer.alloc(4)]);

  it('a content size over the limit is refused, naming it', () => {
    const error = decodeError(() => decodeRecordBatch(batchWithBody('lz4', frame(1n << 33n, oneStoredBlock), 1)));
    expect(error.message).toMatch(/lz4 frame declares 8589934592 bytes of content, more than the 67108864 allowed/);
  });

  it('a content size its blocks cannot produce is refused, naming both', () => {
    const error = decodeError(() => decompress('lz4', frame(1000n, oneStoredBlock), 1 << 20));
    expect(error.message).toMatch(/lz4 frame declares 1000 bytes of content, but its blocks inflate to at most 5/);
  });

  it('a compressed block counts 255 times its size, not the whole block maximum: small blocks of a 4 MiB-block frame decode', () => {
    // 40 independent blocks declaring 4 MiB blocks: the old bound (40 × 4 MiB) refused the frame under a 64 MiB limit.
    const body = Buffer.from('kafka record bytes '.repeat(20));
    const real = Buffer.from(compress('lz4', body));
    const blockAt = 7;
    const blockSize = real.readUInt32LE(blockAt) & 0x7fffffff;
    const block = real.subarray(blockAt, blockAt + 4 + blockSize);
    const blocks = Buffer.concat([...Array.from({ length: 40 }, () => block), Buffer.alloc(4)]);
    // Re-use the real frame's descriptor with BD set to 4 MiB: the header checksum must follow (xxHash32 of FLG and BD).
    const xxh = createRequire(import.meta.url)('lz4js/xxh32.js') as { hash(seed: number, data: Uint8Array, at: number, n: number): number };
    const descriptor = Buffer.from([real[4]! & ~0x04 & ~0x08, 0x70]);
    const checksum = (xxh.hash(0, descriptor, 0, 2) >>> 8) & 0xff;
    const big = Buffer.concat([real.subarray(0, 4), descriptor, Buffer.from([checksum]), blocks]);
    const out = decompress('lz4', big, 64 * 1024 * 1024);
    expect(out.length).toBe(40 * body.length);
  });
});
