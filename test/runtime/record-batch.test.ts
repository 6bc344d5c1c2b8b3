import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DecodeError, EncodeError } from '../../runtime/errors.js';
import { crc32c } from '../../runtime/crc32c.js';
import {
  RECORD_BATCH_OVERHEAD,
  controlRecordBatch,
  decodeRecordBatch,
  decodeRecordBatches,
  encodeRecordBatch,
  readBatchHeader,
  readControlRecord,
  setBatchBaseOffset,
  setBatchMaxTimestamp,
  verifyCrc,
  type KafkaRecord,
  type RecordBatchInput,
  type RecordHeader,
  type RecordInput,
} from '../../runtime/record-batch.js';

// kafkajs is an independent implementation of the v2 format (with its own
// CRC-32C table): we encode the same input with it and compare bytes, and let
// each side decode what the other wrote.
const require = createRequire(import.meta.url);
const { RecordBatch: kafkajsRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (input: any) => Promise<{ buffer: Buffer }>;
};
const kafkajsRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (input: any) => unknown;
const kafkajsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: any) => Promise<any>;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;
const kafkajsCrc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (buffer: Buffer) => number;
const Long = require('kafkajs/src/utils/long') as { fromString(value: string): unknown };

const long = (value: bigint): unknown => Long.fromString(value.toString());
const buf = (text: string): Buffer => Buffer.from(text, 'utf8');
const hex = (bytes: Uint8Array | null | undefined): string | null =>
  bytes == null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** A record as kafkajs takes it: headers as an object whose values may be arrays of values. */
interface KafkajsRecordInput {
  offsetDelta: number;
  timestampDelta: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[]>;
}

interface KafkajsBatchInput {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  gzip: boolean;
  transactional: boolean;
  baseTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  records: KafkajsRecordInput[];
}

/** The header list kafkajs writes for a header object (Object.keys order, arrays flattened). */
function flattenHeaders(headers: Record<string, Buffer | Buffer[]>): RecordHeader[] {
  return Object.keys(headers).flatMap((key) => {
    const value = headers[key]!;
    return Array.isArray(value) ? value.map((v) => ({ key, value: v })) : [{ key, value }];
  });
}

function maxTimestampOf(input: KafkajsBatchInput): bigint {
  let max = -1n;
  for (const r of input.records) if (input.baseTimestamp + r.timestampDelta > max) max = input.baseTimestamp + r.timestampDelta;
  return max;
}

async function encodeWithKafkajs(input: KafkajsBatchInput): Promise<Buffer> {
  const encoded = await kafkajsRecordBatch({
    compression: input.gzip ? 1 : 0,
    firstOffset: long(input.baseOffset),
    firstTimestamp: long(input.baseTimestamp),
    maxTimestamp: long(maxTimestampOf(input)),
    partitionLeaderEpoch: input.partitionLeaderEpoch,
    lastOffsetDelta: input.records[input.records.length - 1]!.offsetDelta,
    transactional: input.transactional,
    producerId: long(input.producerId),
    producerEpoch: input.producerEpoch,
    firstSequence: input.baseSequence,
    records: input.records.map((r) =>
      kafkajsRecord({ offsetDelta: r.offsetDelta, timestampDelta: long(r.timestampDelta), key: r.key, value: r.value, headers: r.headers }),
    ),
  });
  return encoded.buffer;
}

function encodeWithUs(input: KafkajsBatchInput): Uint8Array {
  return encodeRecordBatch({
    baseOffset: input.baseOffset,
    partitionLeaderEpoch: input.partitionLeaderEpoch,
    compression: input.gzip ? 'gzip' : 'none',
    isTransactional: input.transactional,
    baseTimestamp: input.baseTimestamp,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: input.baseSequence,
    records: input.records.map((r) => ({
      offset: input.baseOffset + BigInt(r.offsetDelta),
      timestamp: input.baseTimestamp + r.timestampDelta,
      key: r.key,
      value: r.value,
      headers: flattenHeaders(r.headers),
    })),
  });
}

async function decodeWithKafkajs(bytes: Uint8Array): Promise<any> {
  return kafkajsBatchDecoder(new KafkajsDecoder(Buffer.from(bytes)));
}

/** Rewrites the CRC after a test has deliberately changed a covered field. */
function fixCrc(batch: Buffer, at = 0): void {
  const size = batch.readInt32BE(at + 8) + 12;
  batch.writeUInt32BE(crc32c(batch.subarray(at + 21, at + size)), at + 17);
}

function expectDecodeError(fn: () => unknown, pattern: RegExp): DecodeError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as Error).message).toMatch(pattern);
    return error as DecodeError;
  }
  throw new Error(`expected a DecodeError matching ${pattern}`);
}

const EXAMPLE: KafkajsBatchInput = {
  baseOffset: 1234567890123n,
  partitionLeaderEpoch: 7,
  gzip: false,
  transactional: true,
  baseTimestamp: 1_700_000_000_000n,
  producerId: 4242n,
  producerEpoch: 3,
  baseSequence: 17,
  records: [
    { offsetDelta: 0, timestampDelta: 0n, key: buf('key-0'), value: buf('value-0'), headers: {} },
    { offsetDelta: 1, timestampDelta: 25n, key: null, value: buf('ünïcödé value'), headers: { 'trace-id': buf('abc'), dup: [buf('1'), buf('')] } },
    { offsetDelta: 2, timestampDelta: -3n, key: buf(''), value: null, headers: { clé: buf('v') } },
    { offsetDelta: 3, timestampDelta: 100000n, key: Buffer.alloc(300, 7), value: Buffer.alloc(200, 9), headers: {} },
  ],
};

// ---------------------------------------------------------------------------

describe('crc32c', () => {
  it('matches the published CRC-32C check value', () => {
    expect(crc32c(buf('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    // RFC 3720 B.4 test vector: 32 bytes of zeros.
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
  });

  it('honours the byte offset of a view and agrees with kafkajs on random data', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(20), (data, pad) => {
        const padded = Buffer.alloc(data.length + pad + 5, 0xaa);
        padded.set(data, pad);
        const view = padded.subarray(pad, pad + data.length);
        expect(crc32c(view)).toBe(crc32c(Buffer.from(data)));
        expect(crc32c(view)).toBe(kafkajsCrc32C(Buffer.from(data)) >>> 0);
      }),
      { numRuns: 100 },
    );
  });
});

describe('byte-exactness against kafkajs', () => {
  it('encodes a fixed batch exactly as kafkajs does', async () => {
    const theirs = await encodeWithKafkajs(EXAMPLE);
    const ours = encodeWithUs(EXAMPLE);
    expect(hex(ours)).toBe(hex(theirs));
  });

  it('decodes the batch kafkajs wrote', async () => {
    const theirs = await encodeWithKafkajs(EXAMPLE);
    const { batches, partialTailBytes } = decodeRecordBatches(theirs);
    expect(partialTailBytes).toBe(0);
    expect(batches).toHaveLength(1);
    const batch = batches[0]!;
    expect(batch.baseOffset).toBe(1234567890123n);
    expect(batch.partitionLeaderEpoch).toBe(7);
    expect(batch.isTransactional).toBe(true);
    expect(batch.isControl).toBe(false);
    expect(batch.compression).toBe('none');
    expect(batch.producerId).toBe(4242n);
    expect(batch.producerEpoch).toBe(3);
    expect(batch.baseSequence).toBe(17);
    expect(batch.lastSequence).toBe(20);
    expect(batch.lastOffsetDelta).toBe(3);
    expect(batch.lastOffset).toBe(1234567890126n);
    expect(batch.maxTimestamp).toBe(1_700_000_100_000n);
    expect(batch.sizeInBytes).toBe(theirs.length);
    expect(batch.records.map((r) => r.offset)).toEqual([1234567890123n, 1234567890124n, 1234567890125n, 1234567890126n]);
    expect(batch.records.map((r) => r.timestamp)).toEqual([1_700_000_000_000n, 1_700_000_000_025n, 1_699_999_999_997n, 1_700_000_100_000n]);
    expect(batch.records[1]!.key).toBeNull();
    expect(Buffer.from(batch.records[1]!.value!).toString('utf8')).toBe('ünïcödé value');
    expect(batch.records[1]!.headers.map((h) => [h.key, hex(h.value)])).toEqual([
      ['trace-id', hex(buf('abc'))],
      ['dup', hex(buf('1'))],
      ['dup', ''],
    ]);
    expect(hex(batch.records[2]!.key)).toBe('');
    expect(batch.records[2]!.value).toBeNull();
    expect(batch.records[2]!.headers).toEqual([{ key: 'clé', value: expect.anything() }]);
    expect(verifyCrc(theirs)).toBe(true);
  });

  it('matches a batch laid out by hand from the format description', () => {
    // One record, key "k", value "v", one header ("h" -> "x"), at offset 5, timestamp 1000.
    const record = Buffer.from([
      0x18, // length 12 (zigzag 24)
      0x00, // attributes
      0x00, // timestampDelta 0
      0x00, // offsetDelta 0
      0x02,
      0x6b, // key length 1, "k"
      0x02,
      0x76, // value length 1, "v"
      0x02, // 1 header
      0x02,
      0x68, // header key length 1, "h"
      0x02,
      0x78, // header value length 1, "x"
    ]);
    expect(record[0]).toBe((record.length - 1) * 2);
    const afterCrc = Buffer.concat([
      Buffer.from([0x00, 0x00]), // attributes
      Buffer.from([0x00, 0x00, 0x00, 0x00]), // lastOffsetDelta 0
      Buffer.from('00000000000003e8', 'hex'), // baseTimestamp 1000
      Buffer.from('00000000000003e8', 'hex'), // maxTimestamp 1000
      Buffer.from('ffffffffffffffff', 'hex'), // producerId -1
      Buffer.from('ffff', 'hex'), // producerEpoch -1
      Buffer.from('ffffffff', 'hex'), // baseSequence -1
      Buffer.from('00000001', 'hex'), // one record
      record,
    ]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(kafkajsCrc32C(afterCrc) >>> 0);
    const afterLength = Buffer.concat([Buffer.from('ffffffff', 'hex'), Buffer.from([2]), crc, afterCrc]);
    const length = Buffer.alloc(4);
    length.writeInt32BE(afterLength.length);
    const expected = Buffer.concat([Buffer.from('0000000000000005', 'hex'), length, afterLength]);

    const ours = encodeRecordBatch({
      baseOffset: 5n,
      records: [{ timestamp: 1000n, key: buf('k'), value: buf('v'), headers: [{ key: 'h', value: buf('x') }] }],
    });
    expect(hex(ours)).toBe(hex(expected));
    expect(expected.length).toBe(RECORD_BATCH_OVERHEAD + record.length);
  });

  const kafkajsRecordArb = fc.record({
    // Both sides of the encoder's int32 path for timestamp deltas, and far beyond it.
    timestampDelta: fc.oneof(fc.bigInt({ min: -(2n ** 31n) - 2n, max: 2n ** 31n + 1n }), fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n })),
    gap: fc.integer({ min: 1, max: 100000 }),
    key: fc.option(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      { nil: null },
    ),
    value: fc.option(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      { nil: null },
    ),
    headers: fc.dictionary(
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.oneof(
        fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
        fc.array(
          fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
          { minLength: 1, maxLength: 3 },
        ),
      ),
      { maxKeys: 3 },
    ),
  });
  const kafkajsBatchArb = fc
    .record({
      baseOffset: fc.bigInt({ min: 0n, max: 2n ** 62n }),
      partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
      gzip: fc.boolean(),
      transactional: fc.boolean(),
      baseTimestamp: fc.bigInt({ min: 2n ** 41n, max: 2n ** 50n }),
      producerId: fc.bigInt({ min: -1n, max: 2n ** 63n - 1n }),
      producerEpoch: fc.integer({ min: -1, max: 32767 }),
      baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
      records: fc.array(kafkajsRecordArb, { minLength: 1, maxLength: 6 }),
    })
    .map((b): KafkajsBatchInput => {
      let offsetDelta = -1;
      const records = b.records.map((r, i) => {
        offsetDelta = i === 0 ? 0 : offsetDelta + r.gap;
        return { offsetDelta, timestampDelta: i === 0 ? 0n : r.timestampDelta, key: r.key, value: r.value, headers: r.headers };
      });
      return { ...b, records };
    });

  it('encodes random batches exactly as kafkajs does (none and gzip)', async () => {
    await fc.assert(
      fc.asyncProperty(kafkajsBatchArb, async (input) => {
        expect(hex(encodeWithUs(input))).toBe(hex(await encodeWithKafkajs(input)));
      }),
      { numRuns: 150 },
    );
  });

  it('kafkajs decodes what we encode, and we decode what kafkajs encodes', async () => {
    await fc.assert(
      fc.asyncProperty(kafkajsBatchArb, async (input) => {
        const ours = encodeWithUs(input);
        const decodedByThem = await decodeWithKafkajs(ours);
        expect(decodedByThem.records).toHaveLength(input.records.length);
        expect(decodedByThem.inTransaction).toBe(input.transactional);
        expect(decodedByThem.producerId).toBe(input.producerId.toString());
        input.records.forEach((r, i) => {
          const theirs = decodedByThem.records[i];
          expect(theirs.offset).toBe((input.baseOffset + BigInt(r.offsetDelta)).toString());
          expect(theirs.timestamp).toBe((input.baseTimestamp + r.timestampDelta).toString());
          expect(hex(theirs.key)).toBe(hex(r.key));
          expect(hex(theirs.value)).toBe(hex(r.value));
        });

        const decodedByUs = decodeRecordBatch(await encodeWithKafkajs(input));
        expect(decodedByUs.compression).toBe(input.gzip ? 'gzip' : 'none');
        expect(decodedByUs.records.map((r) => [r.offset, r.timestamp, hex(r.key), hex(r.value)])).toEqual(
          input.records.map((r) => [input.baseOffset + BigInt(r.offsetDelta), input.baseTimestamp + r.timestampDelta, hex(r.key), hex(r.value)]),
        );
        expect(decodedByUs.records.map((r) => r.headers.map((h) => [h.key, hex(h.value)]))).toEqual(
          input.records.map((r) => flattenHeaders(r.headers).map((h) => [h.key, hex(h.value)])),
        );
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------

const bytesArb = fc.uint8Array({ maxLength: 64 });
const headerArb: fc.Arbitrary<RecordHeader> = fc.record({
  key: fc.string({ unit: 'grapheme', maxLength: 12 }),
  value: fc.option(bytesArb, { nil: null }),
});
const timestampArb = fc.oneof(fc.constant(-1n), fc.bigInt({ min: 0n, max: 2n ** 62n }));
const recordArb = fc.record(
  {
    gap: fc.oneof(fc.constant(1n), fc.bigInt({ min: 1n, max: 1_000_000n })),
    timestamp: timestampArb,
    key: fc.option(bytesArb, { nil: null }),
    value: fc.option(bytesArb, { nil: null }),
    headers: fc.array(headerArb, { maxLength: 4 }),
  },
  { requiredKeys: ['gap', 'timestamp'] },
);
const batchInputArb: fc.Arbitrary<RecordBatchInput> = fc
  .record({
    baseOffset: fc.bigInt({ min: 0n, max: 2n ** 62n }),
    partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
    compression: fc.constantFrom('none' as const, 'gzip' as const),
    isTransactional: fc.boolean(),
    producerId: fc.bigInt({ min: -1n, max: 2n ** 63n - 1n }),
    producerEpoch: fc.integer({ min: -1, max: 32767 }),
    baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
    records: fc.array(recordArb, { maxLength: 8 }),
  })
  .map(({ records, ...batch }) => {
    let offset = batch.baseOffset - 1n;
    const withOffsets: RecordInput[] = records.map(({ gap, ...r }) => {
      offset = offset === batch.baseOffset - 1n ? batch.baseOffset : offset + gap;
      return { ...r, offset };
    });
    return { ...batch, records: withOffsets };
  });

function expectRecordsMatch(decoded: KafkaRecord[], input: readonly RecordInput[], baseTimestamp: bigint): void {
  expect(decoded).toHaveLength(input.length);
  decoded.forEach((record, i) => {
    const want = input[i]!;
    expect(record.offset).toBe(want.offset);
    expect(record.timestamp).toBe(want.timestamp ?? baseTimestamp);
    expect(hex(record.key)).toBe(hex(want.key ?? null));
    expect(hex(record.value)).toBe(hex(want.value ?? null));
    expect(record.headers.map((h) => [h.key, hex(h.value)])).toEqual((want.headers ?? []).map((h) => [h.key, hex(h.value)]));
  });
}

describe('round trips', () => {
  it('decodes what it encodes, and re-encodes a decoded batch to the same bytes', () => {
    fc.assert(
      fc.property(batchInputArb, (input) => {
        const bytes = encodeRecordBatch(input);
        const { batches, partialTailBytes } = decodeRecordBatches(bytes);
        expect(partialTailBytes).toBe(0);
        expect(batches).toHaveLength(1);
        const batch = batches[0]!;
        const records = input.records!;
        const baseTimestamp = records[0]?.timestamp ?? -1n;
        expect(batch.baseOffset).toBe(input.baseOffset);
        expect(batch.partitionLeaderEpoch).toBe(input.partitionLeaderEpoch);
        expect(batch.compression).toBe(input.compression);
        expect(batch.isTransactional).toBe(input.isTransactional);
        expect(batch.producerId).toBe(input.producerId);
        expect(batch.producerEpoch).toBe(input.producerEpoch);
        expect(batch.baseSequence).toBe(input.baseSequence);
        expect(batch.recordCount).toBe(records.length);
        expect(batch.baseTimestamp).toBe(baseTimestamp);
        const timestamps = records.map((r) => r.timestamp!);
        expect(batch.maxTimestamp).toBe(timestamps.reduce((a, b) => (b > a ? b : a), records.length ? -1n : baseTimestamp));
        expect(batch.lastOffset).toBe(records.length ? records[records.length - 1]!.offset : input.baseOffset);
        expectRecordsMatch(batch.records, records, baseTimestamp);
        expect(hex(encodeRecordBatch(batch))).toBe(hex(bytes));
        expect(verifyCrc(bytes)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  // The decoder reuses the key string decoded at the same header position when the bytes
  // match: keys that repeat, change by one byte, change length or are not ASCII must each
  // come back as written, within a batch, across batches and across calls.
  it('decodes header keys that repeat, change or are not ASCII at the same position', () => {
    const keyArb = fc.oneof(
      fc.constantFrom('trace-id', 'trace-ie', 'Trace-id', 'trace-xd', 'trace-i', 'é', 'Ã©', '日本', '', 'x'.repeat(60)),
      fc.string({ unit: 'binary', maxLength: 12 }),
    );
    const recordsArb = fc.array(fc.array(keyArb, { maxLength: 10 }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(recordsArb, { minLength: 1, maxLength: 3 }), (batches) => {
        const encoded = batches.map((records) =>
          encodeRecordBatch({ records: records.map((keys) => ({ value: null, headers: keys.map((key) => ({ key, value: null })) })) }),
        );
        const all = Buffer.concat(encoded);
        const keysOf = (decoded: readonly { records: KafkaRecord[] }[]) => decoded.map((b) => b.records.map((r) => r.headers.map((h) => h.key)));
        // Lone surrogates (from the binary unit) are written as U+FFFD, as Kafka's Java encoder does.
        const expected = batches.map((records) => records.map((keys) => keys.map((k) => Buffer.from(k, 'utf8').toString('utf8'))));
        expect(keysOf(decodeRecordBatches(all).batches)).toEqual(expected);
        expect(keysOf(encoded.map((bytes) => decodeRecordBatch(bytes)))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a sequence of batches and reports a partial tail at every cut point', () => {
    fc.assert(
      fc.property(fc.array(batchInputArb, { minLength: 1, maxLength: 3 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (inputs, cut) => {
        const encoded = inputs.map((b) => encodeRecordBatch(b));
        const whole = Buffer.concat(encoded);
        const all = decodeRecordBatches(whole);
        expect(all.batches).toHaveLength(inputs.length);
        expect(all.partialTailBytes).toBe(0);
        all.batches.forEach((b, i) => expectRecordsMatch(b.records, inputs[i]!.records!, inputs[i]!.records![0]?.timestamp ?? -1n));

        // Cut the last batch short (keeping at least its first byte).
        const last = encoded[encoded.length - 1]!;
        const keep = 1 + Math.floor(cut * (last.length - 1));
        const truncated = whole.subarray(0, whole.length - last.length + keep);
        const partial = decodeRecordBatches(truncated);
        expect(partial.batches).toHaveLength(inputs.length - 1);
        expect(partial.partialTailBytes).toBe(keep);
      }),
      { numRuns: 100 },
    );
  });

  it('gives exact offsets and timestamps on both sides of the number fast path (bases of 2^52, deltas of 2^48)', () => {
    // Offsets and timestamps are summed as numbers while the base is within ±2^52 and
    // the timestamp delta within ±2^48, and as BigInts otherwise: every case must agree.
    const bases = [2n ** 48n, 2n ** 52n - 1n, 2n ** 52n, 2n ** 62n, 2n ** 63n - 2n ** 61n];
    const deltas = [0n, 1n, -1n, 2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n, 2n ** 60n];
    const check = (bytes: Uint8Array, baseOffset: bigint, baseTimestamp: bigint) => {
      const batch = decodeRecordBatch(bytes);
      expect(batch.records.map((r) => [r.offset, r.timestamp])).toEqual(deltas.map((delta, i) => [baseOffset + BigInt(i) * 1000n, baseTimestamp + delta]));
    };
    for (const baseOffset of [0n, ...bases]) {
      for (const baseTimestamp of bases) {
        const records = deltas.map((delta, i) => ({ offset: baseOffset + BigInt(i) * 1000n, timestamp: baseTimestamp + delta }));
        const bytes = Buffer.from(encodeRecordBatch({ baseOffset, baseTimestamp, records }));
        check(bytes, baseOffset, baseTimestamp);
        // The encoder refuses negative timestamps, as Kafka does; a decoder still meets them
        // on the wire. Rewrite the base timestamp (and the CRC) to reach negative bases.
        for (const negative of [-baseTimestamp, -(2n ** 52n) + 1n]) {
          bytes.writeBigInt64BE(negative, 27);
          fixCrc(bytes);
          check(bytes, baseOffset, negative);
        }
      }
    }
  });

  it('gives plain Uint8Array views for keys, values and header values, also from a Node Buffer', () => {
    const bytes = Buffer.from(encodeRecordBatch({ records: [{ key: buf('key'), value: buf('value'), headers: [{ key: 'h', value: buf('hv') }] }] }));
    const record = decodeRecordBatch(bytes).records[0]!;
    for (const view of [record.key!, record.value!, record.headers[0]!.value!]) {
      expect(Object.getPrototypeOf(view)).toBe(Uint8Array.prototype);
      expect(view.buffer).toBe(bytes.buffer);
    }
    expect(Buffer.from(record.value!).toString()).toBe('value');
  });

  it('keeps keys and values of an uncompressed batch as views of the input', () => {
    const bytes = encodeRecordBatch({ records: [{ key: buf('key'), value: buf('value'), headers: [{ key: 'h', value: buf('hv') }] }] });
    const record = decodeRecordBatch(bytes).records[0]!;
    expect(record.key!.buffer).toBe(bytes.buffer);
    expect(record.value!.buffer).toBe(bytes.buffer);
    expect(record.headers[0]!.value!.buffer).toBe(bytes.buffer);
  });

  it('round-trips an empty batch that keeps its lastOffsetDelta, as compaction leaves them', () => {
    const bytes = encodeRecordBatch({
      baseOffset: 100n,
      lastOffsetDelta: 9,
      baseTimestamp: 5n,
      maxTimestamp: 8n,
      producerId: 3n,
      producerEpoch: 1,
      baseSequence: 0,
    });
    const batch = decodeRecordBatch(bytes);
    expect(batch.records).toEqual([]);
    expect(batch.lastOffset).toBe(109n);
    expect(batch.lastSequence).toBe(9);
    expect(batch.maxTimestamp).toBe(8n);
    expect(hex(encodeRecordBatch(batch))).toBe(hex(bytes));
  });

  it('round-trips a LogAppendTime batch, whose records report the append time', () => {
    const bytes = encodeRecordBatch({ timestampType: 'LogAppendTime', maxTimestamp: 999n, records: [{ timestamp: 10n }, { timestamp: 20n }] });
    const batch = decodeRecordBatch(bytes);
    expect(batch.timestampType).toBe('LogAppendTime');
    expect(batch.records.map((r) => r.timestamp)).toEqual([999n, 999n]);
    expect(batch.baseTimestamp).toBe(10n);
  });

  it('round-trips the delete-horizon flag', () => {
    const bytes = encodeRecordBatch({ hasDeleteHorizon: true, baseTimestamp: 50n, records: [{ timestamp: 60n }] });
    const batch = decodeRecordBatch(bytes);
    expect(batch.hasDeleteHorizon).toBe(true);
    expect(batch.attributes).toBe(0x40);
    expect(batch.baseTimestamp).toBe(50n);
    expect(batch.records[0]!.timestamp).toBe(60n);
  });
});

// ---------------------------------------------------------------------------

describe('control records', () => {
  for (const type of ['COMMIT', 'ABORT'] as const) {
    it(`writes and reads a ${type} marker`, () => {
      const bytes = controlRecordBatch({
        type,
        producerId: 77n,
        producerEpoch: 4,
        coordinatorEpoch: 12,
        baseOffset: 500n,
        timestamp: 1_650_000_000_000n,
        partitionLeaderEpoch: 2,
      });
      const header = readBatchHeader(bytes);
      expect(header.isControl).toBe(true);
      expect(header.isTransactional).toBe(true);
      expect(header.attributes).toBe(0x30);
      expect(header.baseSequence).toBe(-1);
      expect(header.producerId).toBe(77n);
      expect(header.producerEpoch).toBe(4);
      expect(header.partitionLeaderEpoch).toBe(2);
      expect(header.recordCount).toBe(1);

      const batch = decodeRecordBatch(bytes);
      const record = batch.records[0]!;
      expect(record.offset).toBe(500n);
      expect(record.timestamp).toBe(1_650_000_000_000n);
      // Key: version 0, type (0 ABORT, 1 COMMIT); value: version 0, coordinatorEpoch 12.
      expect(hex(record.key)).toBe(type === 'COMMIT' ? '00000001' : '00000000');
      expect(hex(record.value)).toBe('00000000000c');
      expect(readControlRecord(record)).toEqual({ type, typeId: type === 'COMMIT' ? 1 : 0, keyVersion: 0, valueVersion: 0, coordinatorEpoch: 12 });
      expect(hex(encodeRecordBatch(batch))).toBe(hex(bytes));
    });
  }

  it('reads other control types without decoding their value, and newer versions as version 0', () => {
    expect(readControlRecord({ key: Buffer.from('00000002', 'hex'), value: buf('x') })).toEqual({
      type: 'LEADER_CHANGE',
      typeId: 2,
      keyVersion: 0,
      value: buf('x'),
    });
    expect(readControlRecord({ key: Buffer.from('00000063', 'hex'), value: null })).toMatchObject({ type: 'UNKNOWN', typeId: 99 });
    expect(readControlRecord({ key: Buffer.from('0001000100', 'hex'), value: Buffer.from('0003ffffffff99', 'hex') })).toEqual({
      type: 'COMMIT',
      typeId: 1,
      keyVersion: 1,
      valueVersion: 3,
      coordinatorEpoch: -1,
    });
  });

  it('refuses malformed control records', () => {
    expectDecodeError(() => readControlRecord({ key: null, value: null }), /null key/);
    expectDecodeError(() => readControlRecord({ key: Buffer.from('000001', 'hex'), value: null }), /at least 4 bytes, found 3/);
    expectDecodeError(() => readControlRecord({ key: Buffer.from('ffff0001', 'hex'), value: null }), /key version -1/);
    expectDecodeError(() => readControlRecord({ key: Buffer.from('00000001', 'hex'), value: Buffer.from('00000000', 'hex') }), /at least 6 bytes, found 4/);
    expectDecodeError(() => readControlRecord({ key: Buffer.from('00000000', 'hex'), value: Buffer.from('fffe00000000', 'hex') }), /marker version -2/);
  });
});

// ---------------------------------------------------------------------------

describe('headers and in-place rewrites', () => {
  it('reads the header alone, from a batch at any position', () => {
    const first = encodeRecordBatch({ records: [{}] });
    const second = encodeRecordBatch({ baseOffset: 10n, baseSequence: 2 ** 31 - 2, producerId: 9n, producerEpoch: 1, records: [{}, {}, {}, {}] });
    const both = Buffer.concat([first, second]);
    const header = readBatchHeader(both.subarray(0, first.length + RECORD_BATCH_OVERHEAD), first.length);
    expect(header.baseOffset).toBe(10n);
    expect(header.lastOffset).toBe(13n);
    expect(header.recordCount).toBe(4);
    expect(header.sizeInBytes).toBe(second.length);
    // Sequences wrap past int32 max: MAX-1, MAX, 0, 1.
    expect(header.lastSequence).toBe(1);
  });

  it('rewrites baseOffset and partitionLeaderEpoch in place without invalidating the CRC', () => {
    const bytes = Buffer.concat([encodeRecordBatch({ records: [{}] }), encodeRecordBatch({ records: [{ value: buf('a') }, { value: buf('b') }] })]);
    const second = readBatchHeader(bytes).sizeInBytes;
    setBatchBaseOffset(bytes, second, 1000n, 42);
    expect(verifyCrc(bytes, second)).toBe(true);
    const { batches } = decodeRecordBatches(bytes);
    expect(batches[1]!.baseOffset).toBe(1000n);
    expect(batches[1]!.partitionLeaderEpoch).toBe(42);
    expect(batches[1]!.records.map((r) => r.offset)).toEqual([1000n, 1001n]);
    expect(batches[0]!.baseOffset).toBe(0n);
    expect(() => setBatchBaseOffset(bytes, 0, 2n ** 63n)).toThrow(EncodeError);
    expect(() => setBatchBaseOffset(bytes, 0, 0n, 2 ** 31)).toThrow(EncodeError);
  });

  it('stamps LogAppendTime in place and recomputes the CRC', () => {
    const bytes = Buffer.from(encodeRecordBatch({ records: [{ timestamp: 5n }, { timestamp: 7n }] }));
    setBatchMaxTimestamp(bytes, 0, 'LogAppendTime', 123n);
    expect(verifyCrc(bytes)).toBe(true);
    const batch = decodeRecordBatch(bytes);
    expect(batch.timestampType).toBe('LogAppendTime');
    expect(batch.maxTimestamp).toBe(123n);
    expect(batch.records.map((r) => r.timestamp)).toEqual([123n, 123n]);
  });
});

// ---------------------------------------------------------------------------

describe('corruption and malformed input', () => {
  const sample = (): Buffer =>
    Buffer.from(
      encodeRecordBatch({
        baseOffset: 3n,
        records: [
          { key: buf('a'), value: buf('one'), headers: [{ key: 'h', value: buf('v') }] },
          { key: null, value: buf('two') },
          { key: buf('c'), value: null },
        ],
      }),
    );

  it('detects any flipped bit in the CRC-covered part', () => {
    const original = sample();
    fc.assert(
      fc.property(fc.integer({ min: 17, max: original.length - 1 }), fc.integer({ min: 0, max: 7 }), (position, bit) => {
        const bytes = Buffer.from(original);
        bytes[position]! ^= 1 << bit;
        expect(verifyCrc(bytes)).toBe(false);
        expectDecodeError(() => decodeRecordBatches(bytes), /^batches\[0\]: CRC mismatch in batch at offset 0/);
      }),
      { numRuns: 150 },
    );
  });

  it('names the batch and record of a structural error (CRC valid)', () => {
    const bytes = Buffer.concat([sample(), sample()]);
    const second = readBatchHeader(bytes).sizeInBytes;
    // The second record starts after the first: read its length varint and make its key length -2.
    const firstRecordLength = bytes[second + RECORD_BATCH_OVERHEAD]! >> 1;
    const secondRecord = second + RECORD_BATCH_OVERHEAD + 1 + firstRecordLength;
    // length, attributes, timestampDelta, offsetDelta, then the key length.
    expect(bytes[secondRecord + 4]).toBe(0x01); // null key: zigzag(-1)
    bytes[secondRecord + 4] = 0x03; // zigzag(-2)
    fixCrc(bytes, second);
    const error = expectDecodeError(() => decodeRecordBatches(bytes), /key has invalid length -2/);
    expect(error.path).toBe('batches[1].records[1]');
    expect(error.message).toBe('batches[1].records[1]: key has invalid length -2');
  });

  it('refuses a key that runs past its record', () => {
    const bytes = sample();
    bytes[RECORD_BATCH_OVERHEAD + 4] = 0x7e; // first record's key length: 63
    fixCrc(bytes);
    expectDecodeError(() => decodeRecordBatch(bytes), /^records\[0\]: key length 63 runs past the end of the record/);
  });

  it('refuses a record whose declared length disagrees with its fields', () => {
    const bytes = sample();
    bytes[RECORD_BATCH_OVERHEAD]! += 2; // first record claims one more byte
    fixCrc(bytes);
    expectDecodeError(() => decodeRecordBatch(bytes), /^records\[0\]: /);
  });

  it('refuses a varint longer than 32 bits', () => {
    const bytes = sample();
    bytes.fill(0xff, RECORD_BATCH_OVERHEAD, RECORD_BATCH_OVERHEAD + 5); // record length: five continuation bytes
    fixCrc(bytes);
    expectDecodeError(() => decodeRecordBatch(bytes), /^records\[0\]: .*varint/);
  });

  it('refuses record counts that do not match the records', () => {
    const more = sample();
    more.writeInt32BE(4, 57);
    fixCrc(more);
    expectDecodeError(() => decodeRecordBatch(more), /^records\[3\]: batch declares 4 records but holds only 3/);

    const fewer = sample();
    fewer.writeInt32BE(2, 57);
    fixCrc(fewer);
    expectDecodeError(() => decodeRecordBatch(fewer), /declares 2 records but \d+ bytes are left after them/);
  });

  it('fails fast on a record count of 2^31 or 2^31 - 1, before allocating', () => {
    for (const raw of [0x80000000, 0x7fffffff, 0xffffffff]) {
      const bytes = sample();
      bytes.writeUInt32BE(raw, 57);
      fixCrc(bytes);
      const heapBefore = process.memoryUsage().heapUsed;
      const started = performance.now();
      expectDecodeError(
        () => decodeRecordBatches(bytes),
        raw === 0x7fffffff ? /declares 2147483647 records but its \d+ bytes of records can hold at most \d+/ : /invalid record count -/,
      );
      expect(performance.now() - started).toBeLessThan(50);
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(16 * 1024 * 1024);
    }
  });

  it('refuses a gzip batch whose declared count exceeds its inflated records', () => {
    const bytes = Buffer.from(encodeRecordBatch({ compression: 'gzip', records: [{ value: buf('x') }] }));
    bytes.writeInt32BE(0x7fffffff, 57);
    fixCrc(bytes);
    expectDecodeError(() => decodeRecordBatch(bytes), /declares 2147483647 records/);
  });

  it('treats a truncated batch as a partial tail in a records field, and as an error on its own', () => {
    const whole = sample();
    for (const keep of [1, 11, 12, 16, 17, 60, 61, whole.length - 1]) {
      const cut = whole.subarray(0, keep);
      expect(decodeRecordBatches(cut)).toEqual({ batches: [], partialTailBytes: keep });
      expect(() => decodeRecordBatch(cut)).toThrow(DecodeError);
    }
    expectDecodeError(() => decodeRecordBatch(whole.subarray(0, 70)), /declares \d+ bytes but only 70 are left/);
    expect(decodeRecordBatches(new Uint8Array(0))).toEqual({ batches: [], partialTailBytes: 0 });
  });

  it("with partialTail: 'error' (a Produce request's records), a batch cut short is a DecodeError naming what is missing", () => {
    const whole = sample();
    const two = Buffer.concat([whole, whole]);
    expect(decodeRecordBatches(two, { partialTail: 'error' }).batches).toHaveLength(2);
    expectDecodeError(
      () => decodeRecordBatches(whole.subarray(0, 70), { partialTail: 'error' }),
      new RegExp(
        `^batches\\[0\\]: batch at offset 0 is cut short: 70 of the ${whole.length} bytes it declares \\(partialTail: 'error' wants whole batches, as in a Produce request; only a Fetch response may end with part of a batch\\)$`,
      ),
    );
    expectDecodeError(
      () => decodeRecordBatches(two.subarray(0, whole.length + 5), { partialTail: 'error' }),
      /^batches\[1\]: batch at offset \d+ is cut short: 5 bytes, too few for a batch header/,
    );
    // The default stays Fetch's: skipped and counted.
    expect(decodeRecordBatches(whole.subarray(0, 70)).partialTailBytes).toBe(70);
  });

  it('refuses a batch length below the header size, even in a partial tail', () => {
    const bytes = sample();
    bytes.writeInt32BE(48, 8);
    expectDecodeError(() => decodeRecordBatches(bytes.subarray(0, 20)), /^batches\[0\]: batch at offset 0 declares batchLength 48, below the minimum of 49/);
    bytes.writeInt32BE(-1, 8);
    expectDecodeError(() => decodeRecordBatches(bytes), /batchLength -1/);
  });

  it('refuses magic other than 2', () => {
    for (const magic of [0, 1, 3]) {
      const bytes = sample();
      bytes[16] = magic;
      expectDecodeError(() => decodeRecordBatches(bytes), new RegExp(`unsupported magic ${magic}`));
      expectDecodeError(() => readBatchHeader(bytes), /unsupported magic/);
    }
  });

  it('names every codec in the header and refuses unknown codec ids', () => {
    const names = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
    names.forEach((name, i) => {
      const bytes = sample();
      bytes.writeInt16BE(1 + i, 21);
      fixCrc(bytes);
      expect(readBatchHeader(bytes).compression).toBe(name);
    });
    for (const id of [5, 6, 7]) {
      const bytes = sample();
      bytes.writeInt16BE(id, 21);
      fixCrc(bytes);
      expectDecodeError(() => decodeRecordBatch(bytes), new RegExp(`unknown compression type id ${id}`));
    }
    expect(() => encodeRecordBatch({ compression: 'brotli' as never })).toThrow(new EncodeError('unknown compression brotli'));
  });

  it('refuses gzip data that is corrupt or inflates past the limit', () => {
    const big = encodeRecordBatch({ compression: 'gzip', records: [{ value: new Uint8Array(100_000) }] });
    expect(big.length).toBeLessThan(1000);
    expect(decodeRecordBatch(big).records[0]!.value!.length).toBe(100_000);
    expectDecodeError(() => decodeRecordBatch(big, 0, { maxUncompressedBytes: 10_000 }), /inflate to more than 10000 bytes/);

    const garbage = Buffer.concat([sample().subarray(0, RECORD_BATCH_OVERHEAD), Buffer.from('not gzip at all')]);
    garbage.writeInt32BE(garbage.length - 12, 8);
    garbage.writeInt16BE(1, 21);
    fixCrc(garbage);
    expectDecodeError(() => decodeRecordBatch(garbage), /gzip records are corrupt/);

    // A valid gzip stream of records whose count is off by one.
    const inner = decodeRecordBatch(sample());
    const plain = Buffer.from(encodeRecordBatch({ ...inner, compression: 'none' })).subarray(RECORD_BATCH_OVERHEAD);
    const zipped = Buffer.concat([sample().subarray(0, RECORD_BATCH_OVERHEAD), gzipSync(plain)]);
    zipped.writeInt32BE(zipped.length - 12, 8);
    zipped.writeInt16BE(1, 21);
    fixCrc(zipped);
    expect(decodeRecordBatch(zipped).records.map((r) => hex(r.value))).toEqual(inner.records.map((r) => hex(r.value)));
    zipped.writeInt32BE(2, 57);
    fixCrc(zipped);
    expectDecodeError(() => decodeRecordBatch(zipped), /declares 2 records but \d+ bytes are left/);
  });

  it('can skip the CRC check when asked', () => {
    const bytes = sample();
    // The last byte is the last record's header count; 0xff turns it into a varint that runs past the end.
    bytes[bytes.length - 1] = 0xff;
    expectDecodeError(() => decodeRecordBatch(bytes), /CRC mismatch/);
    expectDecodeError(() => decodeRecordBatch(bytes, 0, { checkCrc: false }), /^records\[2\]: varint runs past the end/);
  });
});

describe('encoder validation', () => {
  it('refuses values the format cannot carry', () => {
    expect(() => encodeRecordBatch({ baseOffset: 10n, records: [{ offset: 9n }] })).toThrow(/below the batch's baseOffset/);
    expect(() => encodeRecordBatch({ records: [{ offset: 5n }, { offset: 5n }] })).toThrow(/offsets must increase/);
    expect(() => encodeRecordBatch({ records: [{ offset: 2n ** 31n }] })).toThrow(/exceeds int32/);
    expect(() => encodeRecordBatch({ records: [{ offset: 3n }], lastOffsetDelta: 2 })).toThrow(/lastOffsetDelta 2 is invalid/);
    expect(() => encodeRecordBatch({ records: [{ timestamp: -5n }] })).toThrow(/invalid negative timestamp -5/);
    expect(() => encodeRecordBatch({ timestampType: 'LogAppendTime' })).toThrow(/needs maxTimestamp/);
    expect(() => encodeRecordBatch({ hasDeleteHorizon: true })).toThrow(/needs baseTimestamp/);
    expect(() => encodeRecordBatch({ producerEpoch: 40000 })).toThrow(EncodeError);
    expect(() => encodeRecordBatch({ records: [{ headers: [{ key: null as unknown as string, value: null }] }] })).toThrow(/header key must be a string/);
  });

  it('fills in offsets and timestamps the input leaves out', () => {
    const batch = decodeRecordBatch(encodeRecordBatch({ baseOffset: 7n, baseTimestamp: 100n, records: [{}, { offset: 10n, timestamp: 150n }, {}] }));
    expect(batch.records.map((r) => [r.offset, r.timestamp])).toEqual([
      [7n, 100n],
      [10n, 150n],
      [11n, 100n],
    ]);
    expect(batch.maxTimestamp).toBe(150n);
    expect(batch.lastOffsetDelta).toBe(4);
    expect(batch.partitionLeaderEpoch).toBe(-1);
    expect(batch.producerId).toBe(-1n);
    expect(batch.producerEpoch).toBe(-1);
    expect(batch.baseSequence).toBe(-1);
  });
});
