/**
 * The snappy, lz4 and zstd codecs beside gzip: round trips through
 * encodeRecordBatch/decodeRecordBatch, the wire forms Kafka expects (xerial
 * snappy framing, independent-block LZ4 frames), data written by other
 * implementations (raw snappy as librdkafka writes it, LZ4 frames by lz4js,
 * zstd frames without a content size as zstd-jni streams them), levels, the
 * inflation bound for every codec, and corrupt payloads (DecodeError only).
 */
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPRESSION_TYPES,
  CompressionUnavailableError,
  DecodeError,
  EncodeError,
  RECORD_BATCH_OVERHEAD,
  compress,
  crc32c,
  decodeRecordBatch,
  decodeRecordBatches,
  decompress,
  encodeRecordBatch,
  isXerialFramed,
  type CompressionType,
  type RecordInput,
} from '../../runtime/index.js';
import { loadOptionalPackage } from '../../runtime/compression/optional-package.js';

const require = createRequire(import.meta.url);
const lz4js = require('lz4js') as { compress(data: Uint8Array): Uint8Array };
// An implementation independent of the runtime's (snappy-wasm), for raw blocks as librdkafka writes them.
const snappyjs = require('snappyjs') as { compress(data: Uint8Array): Uint8Array };

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : Buffer.from(bytes).toString());

const CODECS = COMPRESSION_TYPES.filter((c): c is Exclude<CompressionType, 'none'> => c !== 'none');

function records(count: number, valueSize = 200): RecordInput[] {
  return Array.from({ length: count }, (_, i) => ({
    timestamp: 1_700_000_000_000n + BigInt(i),
    key: Buffer.from(`key-${i}`),
    value: Buffer.from(`{"n":${i},"pad":"${'abcdefghij'.repeat(valueSize / 10)}"}`),
    headers: [{ key: 'h', value: Buffer.from(String(i)) }],
  }));
}

/** A batch whose records section is `body`, declared as `codec`, with a valid CRC. */
function batchWithBody(codec: CompressionType, body: Uint8Array, count: number): Buffer {
  const template = Buffer.from(encodeRecordBatch({ records: [{ value: Buffer.from('x') }] })).subarray(0, RECORD_BATCH_OVERHEAD);
  const out = Buffer.concat([template, body]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(COMPRESSION_TYPES.indexOf(codec), 21);
  out.writeInt32BE(count - 1, 23); // lastOffsetDelta
  out.writeInt32BE(count, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

function plainRecords(input: RecordInput[]): Buffer {
  return Buffer.from(encodeRecordBatch({ records: input })).subarray(RECORD_BATCH_OVERHEAD);
}

function expectDecodeError(fn: () => unknown, pattern: RegExp): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a DecodeError').toBeInstanceOf(DecodeError);
  expect((thrown as Error).message).toMatch(pattern);
}

describe('every codec round-trips record batches', () => {
  for (const codec of CODECS) {
    it(`${codec}: records, keys, headers and offsets come back; the batch is smaller than uncompressed`, () => {
      const input = records(300);
      const plain = encodeRecordBatch({ baseOffset: 10n, records: input });
      const bytes = encodeRecordBatch({ baseOffset: 10n, compression: codec, producerId: 7n, producerEpoch: 1, baseSequence: 5, records: input });
      const batch = decodeRecordBatch(bytes);
      expect(batch.compression).toBe(codec);
      expect(batch.recordCount).toBe(300);
      expect(batch.records.map((r) => [r.offset, r.timestamp, text(r.key), text(r.value), text(r.headers[0]!.value)])).toEqual(
        input.map((r, i) => [10n + BigInt(i), r.timestamp, r.key!.toString(), r.value!.toString(), String(i)]),
      );
      expect(bytes.length).toBeLessThan(plain.length / 2);
      // Re-encoding the decoded batch gives the same bytes (the codecs are deterministic).
      expect(Buffer.from(encodeRecordBatch(batch)).equals(Buffer.from(bytes))).toBe(true);
    });
  }

  it('an empty records section compresses and decodes for every codec', () => {
    for (const codec of CODECS) {
      const batch = decodeRecordBatch(encodeRecordBatch({ compression: codec, records: [] }));
      expect([batch.compression, batch.records]).toEqual([codec, []]);
    }
  });
});

describe('wire forms', () => {
  it('snappy is written xerial-framed as Kafka’s Java producer does: magic, version 1, compatible 1, 32 KiB chunks', () => {
    const body = plainRecords(records(400)); // > 64 KiB: three chunks
    expect(body.length).toBeGreaterThan(64 * 1024);
    const framed = Buffer.from(compress('snappy', body));
    expect(isXerialFramed(framed)).toBe(true);
    expect([...framed.subarray(0, 8)]).toEqual([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
    expect([framed.readInt32BE(8), framed.readInt32BE(12)]).toEqual([1, 1]);
    let at = 16;
    let chunks = 0;
    while (at < framed.length) {
      at += 4 + framed.readInt32BE(at);
      chunks++;
    }
    expect([at, chunks]).toEqual([framed.length, Math.ceil(body.length / 32768)]);
  });

  it('raw snappy (librdkafka’s form, written here by snappyjs directly) decodes', () => {
    const input = records(50);
    const batch = decodeRecordBatch(batchWithBody('snappy', snappyjs.compress(plainRecords(input)), 50));
    expect(batch.records.map((r) => text(r.key))).toEqual(input.map((r) => r.key!.toString()));
  });

  it('lz4 is one LZ4 frame with independent blocks and version 1 (Kafka’s Java reader refuses dependent blocks)', () => {
    const frame = Buffer.from(compress('lz4', plainRecords(records(100))));
    expect(frame.readUInt32LE(0)).toBe(0x184d2204);
    const flg = frame[4]!;
    expect(flg >> 6).toBe(1);
    expect(flg & 0x20).toBe(0x20);
  });

  it('an LZ4 frame that declares dependent blocks (lz4js writes one) is refused, as Kafka’s Java reader refuses it', () => {
    const frame = lz4js.compress(plainRecords(records(120)));
    expect(frame[4]! & 0x20).toBe(0);
    expectDecodeError(() => decodeRecordBatch(batchWithBody('lz4', frame, 120)), /lz4 frame has dependent blocks, which Kafka does not support/);
  });

  it('a zstd frame without a content size, in raw and RLE blocks (as a streaming compressor may write), decodes', () => {
    const body = plainRecords(records(3));
    // Frame header: magic, descriptor 0 (no content size, not single segment, no checksum), window 1 MiB.
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (20 - 10) << 3]);
    const rawBlock = Buffer.alloc(3);
    rawBlock.writeUIntLE((body.length << 3) | (0 << 1) | 0, 0, 3);
    // An RLE block of 0 bytes' length is legal but pointless; use a real one after a second frame instead.
    const frame1 = Buffer.concat([header, rawBlock, body, Buffer.from([0x01, 0x00, 0x00])]); // last: empty raw block
    const decoded = decodeRecordBatch(batchWithBody('zstd', frame1, 3));
    expect(decoded.records.map((r) => text(r.key))).toEqual(['key-0', 'key-1', 'key-2']);

    const rle = Buffer.alloc(3);
    rle.writeUIntLE((1000 << 3) | (1 << 1) | 1, 0, 3);
    const rleFrame = Buffer.concat([header, rle, Buffer.from([0x61])]);
    expect(Buffer.from(decompress('zstd', Buffer.concat([rleFrame, rleFrame]), 10_000)).toString()).toBe('a'.repeat(2000));
    expectDecodeError(() => decompress('zstd', Buffer.concat([rleFrame, rleFrame]), 1999), /may inflate to 2000 bytes, more than the 1999 allowed/);
  });
});

describe('levels', () => {
  it('gzip and zstd take Kafka’s levels and they change the output; others refuse a level', () => {
    const body = plainRecords(records(200));
    expect(compress('gzip', body, 1).length).toBeGreaterThan(compress('gzip', body, 9).length);
    expect(Buffer.from(compress('zstd', body, 1)).equals(Buffer.from(compress('zstd', body, 19)))).toBe(false);
    expect(Buffer.from(compress('zstd', body)).equals(Buffer.from(compress('zstd', body, 3)))).toBe(true);
    const batch = encodeRecordBatch({ compression: 'zstd', compressionLevel: 19, records: records(5) });
    expect(decodeRecordBatch(batch).records).toHaveLength(5);
    expect(() => compress('gzip', body, 10)).toThrow(new EncodeError('compression gzip level must be an integer in [1, 9], got 10'));
    expect(() => compress('gzip', body, -1)).not.toThrow();
    expect(() => compress('zstd', body, 23)).toThrow(/compression zstd level must be an integer in \[-131072, 22\], got 23/);
    expect(() => encodeRecordBatch({ compression: 'lz4', compressionLevel: 9 })).toThrow(new EncodeError('compression lz4 takes no level (got 9)'));
    expect(() => encodeRecordBatch({ compression: 'snappy', compressionLevel: 1 })).toThrow(/snappy takes no level/);
  });
});

describe('the inflation bound applies to every codec', () => {
  // 1 MiB of zeros compresses to a few KiB with every codec.
  const bomb = [{ value: new Uint8Array(1024 * 1024) }];
  for (const codec of CODECS) {
    it(`${codec}: a batch that would inflate past maxUncompressedBytes is refused with DecodeError`, () => {
      const bytes = encodeRecordBatch({ compression: codec, records: bomb });
      expect(bytes.length).toBeLessThan(64 * 1024);
      expect(decodeRecordBatch(bytes).records[0]!.value!.length).toBe(1024 * 1024);
      expectDecodeError(
        () => decodeRecordBatch(bytes, 0, { maxUncompressedBytes: 512 * 1024 }),
        /inflate to (more than 524288|\d+ bytes, more than the 524288 allowed)/,
      );
      expectDecodeError(() => decodeRecordBatches(bytes, { maxUncompressedBytes: 512 * 1024 }), /^batches\[0\]: .*inflate/);
    });
  }

  it('a zstd frame declaring a content size over the limit is refused before a decoder sizes its output from it', () => {
    const frame = (contentSize: bigint) => {
      const fcs = Buffer.alloc(8);
      fcs.writeBigUInt64LE(contentSize);
      const block = Buffer.alloc(3);
      block.writeUIntLE((5 << 3) | 1, 0, 3); // last, raw, 5 bytes
      return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0]), fcs, block, Buffer.from('hello')]);
    };
    expectDecodeError(() => decompress('zstd', frame(1n << 40n), 1 << 20), /declares 1099511627776 bytes of content, more than the 1048576 allowed/);
    expectDecodeError(() => decompress('zstd', frame(1000n), 1 << 20), /zstd records are corrupt/);
    expect(Buffer.from(decompress('zstd', frame(5n), 1 << 20)).toString()).toBe('hello');
  });

  it('the bound is the exact size for snappy, and within one block of it for lz4 and zstd', () => {
    const body = plainRecords(records(500));
    expect(decompress('snappy', compress('snappy', body), body.length).length).toBe(body.length);
    expectDecodeError(() => decompress('snappy', compress('snappy', body), body.length - 1), /inflate to more than/);
    // The frame's block maximum size (BD bits 4-6: 4 → 64 KiB ... 7 → 4 MiB) is the slack.
    const lz4Frame = compress('lz4', body);
    const blockMax = 2 ** (8 + 2 * ((lz4Frame[5]! >> 4) & 7));
    expect(decompress('lz4', lz4Frame, body.length + blockMax).length).toBe(body.length);
    expect(decompress('zstd', compress('zstd', body), body.length + 128 * 1024).length).toBe(body.length);
  });
});

describe('corrupt payloads give DecodeError, never another error', () => {
  it('garbage in a batch declared as each codec', () => {
    for (const codec of CODECS) {
      expectDecodeError(() => decodeRecordBatch(batchWithBody(codec, Buffer.from('definitely not compressed data'), 1)), new RegExp(codec));
    }
  });

  it('truncated frames say where they break', () => {
    const body = plainRecords(records(50));
    expectDecodeError(() => decompress('lz4', compress('lz4', body).subarray(0, 40), 1 << 20), /lz4 (block at byte \d+ runs past the end|frame is cut short)/);
    expectDecodeError(() => decompress('zstd', compress('zstd', body).subarray(0, 40), 1 << 20), /zstd block at byte \d+ runs past the end/);
    const xerial = compress('snappy', body);
    expectDecodeError(
      () => decompress('snappy', xerial.subarray(0, xerial.length - 5), 1 << 20),
      /snappy \(xerial\) chunk at byte 16 declares \d+ bytes but only \d+ are left/,
    );
  });

  it('a valid frame of records whose count is off fails as a records error', () => {
    const input = records(4);
    for (const codec of CODECS) {
      const body = compress(codec, plainRecords(input));
      expectDecodeError(() => decodeRecordBatch(batchWithBody(codec, body, 3)), /declares 3 records but \d+ bytes are left after them/);
    }
  });

  it('random corruption and truncation of every codec’s payload: decodes or throws DecodeError', () => {
    const input = records(20, 40);
    const bodies = Object.fromEntries(CODECS.map((c) => [c, Buffer.from(compress(c, plainRecords(input)))]));
    fc.assert(
      fc.property(
        fc.constantFrom(...CODECS),
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.nat(), { nil: undefined }),
        (codec, flips, cut) => {
          const body = Buffer.from(bodies[codec]!);
          for (const { at, byte } of flips) body[at % body.length] = byte;
          const payload = cut === undefined ? body : body.subarray(0, cut % body.length);
          try {
            decodeRecordBatch(batchWithBody(codec, payload, 20), 0, { maxUncompressedBytes: 1 << 20 });
          } catch (error) {
            if (!(error instanceof DecodeError)) throw error;
          }
        },
      ),
      { numRuns: 400, seed: 19 },
    );
    // The libraries are still sound after all that (snappy-wasm's WebAssembly instance included).
    for (const codec of CODECS) expect(decodeRecordBatch(batchWithBody(codec, bodies[codec]!, 20)).records).toHaveLength(20);
  });
});

describe('optional codec libraries', () => {
  it('a missing package gives CompressionUnavailableError naming it, not a DecodeError', () => {
    let thrown: unknown;
    try {
      loadOptionalPackage('kipgen-no-such-codec-package', 'brotli');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CompressionUnavailableError);
    expect(thrown).not.toBeInstanceOf(DecodeError);
    expect((thrown as Error).message).toMatch(
      /^compression brotli needs the npm package kipgen-no-such-codec-package, which could not be loaded \(install it: npm install kipgen-no-such-codec-package\)/,
    );
  });

  it('gzip needs no optional package (zlib)', () => {
    expect(decodeRecordBatch(batchWithBody('gzip', gzipSync(plainRecords(records(2))), 2)).records).toHaveLength(2);
  });
});
