import { COMPRESSION_TYPES, checkCompressionLevel, compress, decompress, type CompressionType } from './compression/index.js';
import { CompressionUnavailableError, DecodeError, EncodeError, decodeErrorAt } from './errors.js';
import { crc32c } from './crc32c.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';
import { sizeOfVarint, sizeOfVarlong, utf8Length } from './sizes.js';

/**
 * Kafka's RecordBatch format v2 (magic 2), the body of every `records` field
 * since Kafka 0.11, as DefaultRecordBatch, DefaultRecord, ControlRecordType and
 * EndTransactionMarker define it:
 *
 *   baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2)
 *   | crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
 *   | maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32
 *   | recordCount int32 | records (compressed as a whole when attributes say so)
 *
 * batchLength counts the bytes after itself; the CRC-32C covers everything from
 * the attributes to the end, so baseOffset and partitionLeaderEpoch can be
 * rewritten in place (the broker does so on append) without touching it.
 *
 * Each record: length varint | attributes int8 | timestampDelta varlong
 * | offsetDelta varint | key (varint length, -1 null) | value (same)
 * | header count varint | headers (key: varint length + UTF-8, value: varint length, -1 null).
 */

// Field offsets within a batch, as DefaultRecordBatch names them.
const BASE_OFFSET_OFFSET = 0;
const LENGTH_OFFSET = 8;
const PARTITION_LEADER_EPOCH_OFFSET = 12;
const MAGIC_OFFSET = 16;
const CRC_OFFSET = 17;
const ATTRIBUTES_OFFSET = 21;
const MAX_TIMESTAMP_OFFSET = 35;

/** baseOffset + batchLength: the bytes before what batchLength counts. */
export const LOG_OVERHEAD = 12;
/** Size of a batch header, i.e. of a batch without records. */
export const RECORD_BATCH_OVERHEAD = 61;
/** The smallest batchLength a v2 batch can declare. */
const MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;
/**
 * The smallest encoded record: length, attributes, timestampDelta, offsetDelta,
 * key length, value length and header count take at least one byte each.
 */
const MIN_RECORD_SIZE = 7;

export const MAGIC_V2 = 2;
/** Kafka's RecordBatch.NO_TIMESTAMP, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_PARTITION_LEADER_EPOCH. */
export const NO_TIMESTAMP = -1n;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

const COMPRESSION_CODEC_MASK = 0x07;
const TIMESTAMP_TYPE_MASK = 0x08;
const TRANSACTIONAL_FLAG_MASK = 0x10;
const CONTROL_FLAG_MASK = 0x20;
const DELETE_HORIZON_FLAG_MASK = 0x40;

export type { CompressionType } from './compression/index.js';

export type TimestampType = 'CreateTime' | 'LogAppendTime';

/** Default cap on what a compressed batch may inflate to, whatever its codec; see DecodeRecordsOptions. */
export const DEFAULT_MAX_UNCOMPRESSED_BYTES = 64 * 1024 * 1024;

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

/** A decoded record, with its offset and timestamp made absolute. */
export interface KafkaRecord {
  offset: bigint;
  /** baseTimestamp + timestampDelta, or the batch's maxTimestamp in a LogAppendTime batch (as Kafka reports it). */
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

/** What readBatchHeader returns: every header field, decoded, plus values derived from them. */
export interface RecordBatchHeader {
  baseOffset: bigint;
  /** Bytes after the batchLength field. */
  batchLength: number;
  /** The whole batch: batchLength + LOG_OVERHEAD. */
  sizeInBytes: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** The CRC-32C the batch declares (unsigned). */
  crc: number;
  /** The raw attributes; the fields below decode its bits. */
  attributes: number;
  compression: CompressionType;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  /** When set, baseTimestamp holds the delete horizon (KIP-534). */
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  /** baseOffset + lastOffsetDelta. */
  lastOffset: bigint;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /** baseSequence + lastOffsetDelta, wrapping past int32 max as Kafka does; -1 without a sequence. */
  lastSequence: number;
  /** The record count the batch declares. */
  recordCount: number;
}

export interface RecordBatch extends RecordBatchHeader {
  records: KafkaRecord[];
}

/**
 * A record to encode. Defaults: offset = the previous record's + 1 (baseOffset for
 * the first), timestamp = the batch's baseTimestamp, key/value null, no headers.
 */
export interface RecordInput {
  offset?: bigint;
  timestamp?: bigint;
  key?: Uint8Array | null;
  value?: Uint8Array | null;
  headers?: readonly RecordHeader[];
}

/**
 * A batch to encode. A decoded RecordBatch is a valid input. It re-encodes to
 * the same bytes when those bytes are what this encoder writes; a batch that
 * decodes is not always so, and then:
 * - refused (EncodeError naming the record), as Kafka's MemoryRecordsBuilder
 *   refuses them: offsets that do not increase (duplicate or falling offset
 *   deltas), timestamps below -1;
 * - rewritten: a CreateTime batch's maxTimestamp is computed from its records;
 *   a LogAppendTime batch's records decode to the batch's append time; record
 *   attributes are written 0, varints in their shortest form, unknown batch
 *   attribute bits dropped; header keys that were not valid UTF-8 decoded with
 *   U+FFFD and are written so; a compressed section is compressed again (the
 *   same bytes when this runtime's codec library wrote it at the same level,
 *   not in general when another producer did).
 * Batches encodeRecordBatch wrote itself always round-trip.
 */
export interface RecordBatchInput {
  /** Default 0. */
  baseOffset?: bigint;
  /** Default -1 (none). */
  partitionLeaderEpoch?: number;
  /** 'none' (default), 'gzip', 'snappy', 'lz4' or 'zstd'. */
  compression?: CompressionType;
  /** The codec's level where Kafka has one (gzip 1-9, zstd -131072..22); default the codec's own. */
  compressionLevel?: number;
  /** Default CreateTime. */
  timestampType?: TimestampType;
  isTransactional?: boolean;
  isControl?: boolean;
  /** When set, baseTimestamp (which must then be given) is the delete horizon. */
  hasDeleteHorizon?: boolean;
  /**
   * Default: the last record's offset delta (0 without records). A larger value
   * is kept, as in a compacted batch whose last records were removed.
   */
  lastOffsetDelta?: number;
  /** Default: the first record's timestamp, or -1 without records or timestamps. */
  baseTimestamp?: bigint;
  /**
   * Computed from the records in a CreateTime batch (given values are ignored
   * unless the batch is empty); required in a LogAppendTime batch, where it is
   * the append time.
   */
  maxTimestamp?: bigint;
  /** Default -1 (none). */
  producerId?: bigint;
  /** Default -1 (none). */
  producerEpoch?: number;
  /** Default -1 (none). */
  baseSequence?: number;
  records?: readonly RecordInput[];
}

export interface DecodeRecordsOptions {
  /** Verify each batch's CRC-32C (default true). */
  checkCrc?: boolean;
  /**
   * Largest size a compressed batch's records may inflate to (default 64 MiB),
   * for every codec. A batch over it is refused rather than decompressed
   * (compression bombs): snappy, lz4 and zstd data is walked first and its
   * declared sizes bound the output; zlib stops gzip at the limit.
   */
  maxUncompressedBytes?: number;
  /**
   * What a batch cut short at the end means. `'skip'` (the default): it is
   * reported as `partialTailBytes`, as a Fetch response may end that way.
   * `'error'`: a DecodeError, for records that must be whole batches — a
   * Produce request's (Kafka's ProduceRequest.validateRecords finds no batch
   * in them and the broker refuses the partition).
   */
  partialTail?: 'skip' | 'error';
}

/** A whole records field: its complete batches and the bytes of a trailing partial batch, if any. */
export interface DecodedRecords {
  batches: RecordBatch[];
  /**
   * Bytes at the end that do not form a whole batch. Fetch responses may end
   * with a batch cut short by the broker's size limit; it is skipped, not an error.
   */
  partialTailBytes: number;
}

// ---------------------------------------------------------------------------
// Encoding

/**
 * Encodes one batch. Computes batchLength, lastOffsetDelta, maxTimestamp and
 * the CRC; an uncompressed batch is written in one size pass and one allocation.
 * Throws EncodeError for values the format cannot carry.
 */
export function encodeRecordBatch(input: RecordBatchInput): Uint8Array {
  const records = input.records ?? [];
  const count = records.length;
  const baseOffset = input.baseOffset ?? 0n;
  const compression = input.compression ?? 'none';
  const timestampType = input.timestampType ?? 'CreateTime';
  const hasDeleteHorizon = input.hasDeleteHorizon ?? false;
  const compressionId = COMPRESSION_TYPES.indexOf(compression);
  if (compressionId < 0) throw new EncodeError(`unknown compression ${String(compression)}`);
  checkCompressionLevel(compression, input.compressionLevel);
  if (BigInt.asIntN(64, baseOffset) !== baseOffset) throw new EncodeError(`baseOffset ${baseOffset} is not an int64`);
  if (hasDeleteHorizon && input.baseTimestamp === undefined) {
    throw new EncodeError('a batch with a delete horizon needs baseTimestamp (the horizon)');
  }
  const baseTimestamp = input.baseTimestamp ?? (count > 0 ? records[0]!.timestamp : undefined) ?? NO_TIMESTAMP;
  checkInt64(baseTimestamp, 'baseTimestamp');

  // Size pass, keeping what the write pass needs so that nothing is computed twice.
  const offsetDeltas = new Int32Array(count);
  const bodySizes = new Int32Array(count);
  // Timestamp deltas inside int32 (nearly all: 24 days) are kept and written as
  // numbers; a wider one goes to wideTimestampDeltas and is written as a varlong.
  const timestampDeltas = new Int32Array(count);
  let wideTimestampDeltas: Map<number, bigint> | null = null;
  const headerKeyLengths: number[] = [];
  let recordsSize = 0;
  let maxTimestamp = NO_TIMESTAMP;
  let previousOffset = baseOffset - 1n;
  for (let i = 0; i < count; i++) {
    const record = records[i]!;
    const offset = record.offset ?? previousOffset + 1n;
    if (offset <= previousOffset) {
      throw new EncodeError(
        i === 0
          ? `records[0]: offset ${offset} is below the batch's baseOffset ${baseOffset}`
          : `records[${i}]: offset ${offset} does not follow ${previousOffset} (offsets must increase)`,
      );
    }
    const offsetDelta = offset - baseOffset;
    if (offsetDelta > 0x7fffffffn) throw new EncodeError(`records[${i}]: offset delta ${offsetDelta} exceeds int32`);
    previousOffset = offset;
    const timestamp = record.timestamp ?? baseTimestamp;
    if (timestamp < 0n && timestamp !== NO_TIMESTAMP) {
      throw new EncodeError(`records[${i}]: invalid negative timestamp ${timestamp}`);
    }
    checkInt64(timestamp, `records[${i}].timestamp`);
    const timestampDelta = timestamp - baseTimestamp;
    if (BigInt.asIntN(64, timestampDelta) !== timestampDelta) {
      throw new EncodeError(`records[${i}]: timestamp delta ${timestampDelta} exceeds int64`);
    }
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;

    const key = record.key ?? null;
    const value = record.value ?? null;
    let timestampDeltaSize: number;
    if (timestampDelta >= -0x80000000n && timestampDelta <= 0x7fffffffn) {
      timestampDeltas[i] = Number(timestampDelta);
      timestampDeltaSize = sizeOfVarint(timestampDeltas[i]!);
    } else {
      (wideTimestampDeltas ??= new Map()).set(i, timestampDelta);
      timestampDeltaSize = sizeOfVarlong(timestampDelta);
    }
    let bodySize = 1 + timestampDeltaSize + sizeOfVarint(Number(offsetDelta)) + sizeOfNullableVarintBytes(key) + sizeOfNullableVarintBytes(value);
    const headers = record.headers;
    const headerCount = headers === undefined ? 0 : headers.length;
    bodySize += sizeOfVarint(headerCount);
    for (let j = 0; j < headerCount; j++) {
      const header = headers![j]!;
      if (typeof header.key !== 'string') throw new EncodeError(`records[${i}].headers[${j}]: header key must be a string`);
      const keyLength = utf8Length(header.key);
      headerKeyLengths.push(keyLength);
      bodySize += sizeOfVarint(keyLength) + keyLength + sizeOfNullableVarintBytes(header.value ?? null);
    }
    if (bodySize > 0x7fffffff) throw new EncodeError(`records[${i}]: record of ${bodySize} bytes is too large`);
    offsetDeltas[i] = Number(offsetDelta);
    bodySizes[i] = bodySize;
    recordsSize += sizeOfVarint(bodySize) + bodySize;
  }

  let lastOffsetDelta = count > 0 ? offsetDeltas[count - 1]! : 0;
  if (input.lastOffsetDelta !== undefined) {
    if (!Number.isInteger(input.lastOffsetDelta) || input.lastOffsetDelta < lastOffsetDelta || input.lastOffsetDelta > 0x7fffffff) {
      throw new EncodeError(`lastOffsetDelta ${input.lastOffsetDelta} is invalid: the records need at least ${lastOffsetDelta}`);
    }
    lastOffsetDelta = input.lastOffsetDelta;
  }

  if (timestampType === 'LogAppendTime') {
    if (input.maxTimestamp === undefined) throw new EncodeError('a LogAppendTime batch needs maxTimestamp (the append time)');
    maxTimestamp = input.maxTimestamp;
  } else if (timestampType === 'CreateTime') {
    if (count === 0) maxTimestamp = input.maxTimestamp ?? baseTimestamp;
  } else {
    throw new EncodeError(`unknown timestamp type ${String(timestampType)}`);
  }
  checkInt64(maxTimestamp, 'maxTimestamp');

  const attributes =
    compressionId |
    (timestampType === 'LogAppendTime' ? TIMESTAMP_TYPE_MASK : 0) |
    (input.isTransactional ? TRANSACTIONAL_FLAG_MASK : 0) |
    (input.isControl ? CONTROL_FLAG_MASK : 0) |
    (hasDeleteHorizon ? DELETE_HORIZON_FLAG_MASK : 0);

  const sized: SizedRecords = { records, bodySizes, timestampDeltas, wideTimestampDeltas, offsetDeltas, headerKeyLengths };

  let body: Uint8Array | null = null;
  let bodySize = recordsSize;
  if (compression !== 'none') {
    const plain = new Writer(recordsSize);
    writeRecords(plain, sized);
    body = compress(compression, plain.finish(), input.compressionLevel);
    bodySize = body.length;
  }
  const size = RECORD_BATCH_OVERHEAD + bodySize;
  if (size - LOG_OVERHEAD > 0x7fffffff) throw new EncodeError(`batch of ${size} bytes exceeds the int32 batchLength`);

  const writer = new Writer(size);
  const out = writer.buffer;
  writer.int64(baseOffset);
  writer.int32(size - LOG_OVERHEAD);
  writer.int32(input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH);
  writer.int8(MAGIC_V2);
  writer.uint32(0); // CRC, filled in below
  writer.int16(attributes);
  writer.int32(lastOffsetDelta);
  writer.int64(baseTimestamp);
  writer.int64(maxTimestamp);
  writer.int64(input.producerId ?? NO_PRODUCER_ID);
  writer.int16(input.producerEpoch ?? NO_PRODUCER_EPOCH);
  writer.int32(input.baseSequence ?? NO_SEQUENCE);
  writer.int32(count);
  if (body === null) writeRecords(writer, sized);
  else writer.raw(body);
  writer.finish();
  out.writeUInt32BE(crc32c(out.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  return out;
}

/** The records of a batch with what its size pass worked out, for the write pass. */
interface SizedRecords {
  records: readonly RecordInput[];
  bodySizes: Int32Array;
  timestampDeltas: Int32Array;
  wideTimestampDeltas: Map<number, bigint> | null;
  offsetDeltas: Int32Array;
  headerKeyLengths: number[];
}

// A module-level function rather than a closure made per batch in
// encodeRecordBatch: the closure showed in profiles of Produce requests built
// from messages (about 5% with its name wrapper when run through tsx).
function writeRecords(writer: Writer, sized: SizedRecords): void {
  const { records, bodySizes, timestampDeltas, wideTimestampDeltas, offsetDeltas, headerKeyLengths } = sized;
  let h = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    writer.varint(bodySizes[i]!);
    writer.int8(0); // record attributes: unused
    const wide = wideTimestampDeltas?.get(i);
    if (wide === undefined) writer.varint(timestampDeltas[i]!);
    else writer.varlong(wide);
    writer.varint(offsetDeltas[i]!);
    writeNullableVarintBytes(writer, record.key ?? null);
    writeNullableVarintBytes(writer, record.value ?? null);
    const headers = record.headers;
    const headerCount = headers === undefined ? 0 : headers.length;
    writer.varint(headerCount);
    for (let j = 0; j < headerCount; j++) {
      const header = headers![j]!;
      writer.varint(headerKeyLengths[h++]!);
      writer.utf8(header.key);
      writeNullableVarintBytes(writer, header.value ?? null);
    }
  }
}

function checkInt64(value: bigint, what: string): void {
  if (typeof value !== 'bigint' || BigInt.asIntN(64, value) !== value) {
    throw new EncodeError(`${what} ${String(value)} is not an int64`);
  }
}

function sizeOfNullableVarintBytes(value: Uint8Array | null): number {
  return value === null ? 1 : sizeOfVarint(value.length) + value.length;
}

function writeNullableVarintBytes(writer: Writer, value: Uint8Array | null): void {
  if (value === null) {
    writer.varint(-1);
  } else {
    writer.varint(value.length);
    writer.raw(value);
  }
}

// ---------------------------------------------------------------------------
// Header access and in-place rewrites

/**
 * Reads the 61-byte header of the batch at `at`, without its records. Needs
 * only the header bytes: it checks neither that the rest of the batch is
 * present nor its CRC (see verifyCrc). Throws DecodeError for a header too
 * short, a magic other than 2, an impossible batchLength or an unknown codec.
 */
export function readBatchHeader(bytes: Uint8Array, at = 0): RecordBatchHeader {
  return readBatchHeaderWith(bytes, at, undefined);
}

/** readBatchHeader, with a DataView of `bytes` to share when the caller reads many batches of one buffer. */
function readBatchHeaderWith(bytes: Uint8Array, at: number, view: DataView | undefined): RecordBatchHeader {
  checkPosition(bytes, at);
  const left = bytes.length - at;
  if (left < RECORD_BATCH_OVERHEAD) {
    throw new DecodeError(`record batch header needs ${RECORD_BATCH_OVERHEAD} bytes at offset ${at}, only ${left} left`);
  }
  const reader = new Reader(bytes, at, at + RECORD_BATCH_OVERHEAD, view);
  const baseOffset = reader.int64();
  const batchLength = reader.int32();
  const partitionLeaderEpoch = reader.int32();
  const magic = reader.int8();
  checkMagic(magic, at);
  checkBatchLength(batchLength, at);
  const crc = reader.uint32();
  const attributes = reader.int16();
  const compressionId = attributes & COMPRESSION_CODEC_MASK;
  const compression = COMPRESSION_TYPES[compressionId];
  if (compression === undefined) throw new DecodeError(`unknown compression type id ${compressionId} in batch at offset ${at}`);
  const lastOffsetDelta = reader.int32();
  const baseTimestamp = reader.int64();
  const maxTimestamp = reader.int64();
  const producerId = reader.int64();
  const producerEpoch = reader.int16();
  const baseSequence = reader.int32();
  const recordCount = reader.int32();
  return {
    baseOffset,
    batchLength,
    sizeInBytes: batchLength + LOG_OVERHEAD,
    partitionLeaderEpoch,
    magic,
    crc,
    attributes,
    compression,
    timestampType: (attributes & TIMESTAMP_TYPE_MASK) !== 0 ? 'LogAppendTime' : 'CreateTime',
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl: (attributes & CONTROL_FLAG_MASK) !== 0,
    hasDeleteHorizon: (attributes & DELETE_HORIZON_FLAG_MASK) !== 0,
    lastOffsetDelta,
    lastOffset: BigInt.asIntN(64, baseOffset + BigInt(lastOffsetDelta)),
    baseTimestamp,
    maxTimestamp,
    producerId,
    producerEpoch,
    baseSequence,
    lastSequence: incrementSequence(baseSequence, lastOffsetDelta),
    recordCount,
  };
}

/** Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from int32 max to 0. */
function incrementSequence(sequence: number, increment: number): number {
  if (sequence === NO_SEQUENCE) return NO_SEQUENCE;
  if (sequence > 0x7fffffff - increment) return increment - (0x7fffffff - sequence) - 1;
  return sequence + increment;
}

/**
 * True when the CRC-32C the batch at `at` declares matches its bytes. Throws
 * DecodeError when the header is malformed or the batch runs past `bytes`.
 * A caller that has read the header already passes it.
 */
export function verifyCrc(bytes: Uint8Array, at = 0, header: RecordBatchHeader = readBatchHeader(bytes, at)): boolean {
  const end = batchEnd(bytes, at, header.sizeInBytes);
  return crc32c(bytes.subarray(at + ATTRIBUTES_OFFSET, end)) === header.crc;
}

/**
 * Rewrites the baseOffset (and, when given, the partitionLeaderEpoch) of the
 * encoded batch at `at`, in place, as the broker does when it assigns offsets
 * on append. The CRC does not cover these fields, so it stays valid.
 */
export function setBatchBaseOffset(bytes: Uint8Array, at: number, baseOffset: bigint, partitionLeaderEpoch?: number): void {
  const view = headerView(bytes, at);
  checkInt64(baseOffset, 'baseOffset');
  if (partitionLeaderEpoch !== undefined && (partitionLeaderEpoch | 0) !== partitionLeaderEpoch) {
    throw new EncodeError(`partitionLeaderEpoch ${partitionLeaderEpoch} is not an int32`);
  }
  view.setBigInt64(BASE_OFFSET_OFFSET, baseOffset);
  if (partitionLeaderEpoch !== undefined) view.setInt32(PARTITION_LEADER_EPOCH_OFFSET, partitionLeaderEpoch);
}

/**
 * Sets the timestamp type and maxTimestamp of the batch at `at` in place and
 * recomputes its CRC when they change (Kafka's setMaxTimestamp: the broker stamps
 * LogAppendTime batches this way). The whole batch must be in `bytes`.
 */
export function setBatchMaxTimestamp(bytes: Uint8Array, at: number, timestampType: TimestampType, maxTimestamp: bigint): void {
  const header = readBatchHeader(bytes, at);
  const end = batchEnd(bytes, at, header.sizeInBytes);
  checkInt64(maxTimestamp, 'maxTimestamp');
  if (timestampType !== 'CreateTime' && timestampType !== 'LogAppendTime') {
    throw new EncodeError(`unknown timestamp type ${String(timestampType)}`);
  }
  if (header.timestampType === timestampType && header.maxTimestamp === maxTimestamp) return;
  const view = headerView(bytes, at);
  const attributes = timestampType === 'LogAppendTime' ? header.attributes | TIMESTAMP_TYPE_MASK : header.attributes & ~TIMESTAMP_TYPE_MASK;
  view.setInt16(ATTRIBUTES_OFFSET, attributes);
  view.setBigInt64(MAX_TIMESTAMP_OFFSET, maxTimestamp);
  view.setUint32(CRC_OFFSET, crc32c(bytes.subarray(at + ATTRIBUTES_OFFSET, end)));
}

function headerView(bytes: Uint8Array, at: number): DataView {
  checkPosition(bytes, at);
  if (bytes.length - at < RECORD_BATCH_OVERHEAD) {
    throw new DecodeError(`record batch header needs ${RECORD_BATCH_OVERHEAD} bytes at offset ${at}, only ${bytes.length - at} left`);
  }
  checkMagic((bytes[at + MAGIC_OFFSET]! << 24) >> 24, at);
  return new DataView(bytes.buffer, bytes.byteOffset + at, RECORD_BATCH_OVERHEAD);
}

function checkPosition(bytes: Uint8Array, at: number): void {
  if (!Number.isInteger(at) || at < 0 || at > bytes.length) {
    throw new RangeError(`batch position ${at} is outside the ${bytes.length} bytes given`);
  }
}

function checkMagic(magic: number, at: number): void {
  if (magic !== MAGIC_V2) {
    throw new DecodeError(
      `unsupported magic ${magic} in batch at offset ${at}: only record batch v2 (magic 2) is supported` +
        (magic === 0 || magic === 1 ? ' (this is a legacy message set)' : ''),
    );
  }
}

function partialTailError(bytes: Uint8Array, at: number, index: number): never {
  const left = bytes.length - at;
  const declared = left >= LOG_OVERHEAD ? new DataView(bytes.buffer, bytes.byteOffset + at).getInt32(LENGTH_OFFSET) + LOG_OVERHEAD : undefined;
  const what = declared === undefined ? `${left} byte${left === 1 ? '' : 's'}, too few for a batch header` : `${left} of the ${declared} bytes it declares`;
  throw new DecodeError(
    `batch at offset ${at} is cut short: ${what} (partialTail: 'error' wants whole batches, as in a Produce request; only a Fetch response may end with part of a batch)`,
  )
    .within(`[${index}]`)
    .within('batches');
}

function checkBatchLength(batchLength: number, at: number): void {
  if (batchLength < MIN_BATCH_LENGTH) {
    throw new DecodeError(`batch at offset ${at} declares batchLength ${batchLength}, below the minimum of ${MIN_BATCH_LENGTH}`);
  }
}

function batchEnd(bytes: Uint8Array, at: number, sizeInBytes: number): number {
  if (sizeInBytes > bytes.length - at) {
    throw new DecodeError(`batch at offset ${at} declares ${sizeInBytes} bytes but only ${bytes.length - at} are left`);
  }
  return at + sizeInBytes;
}

// ---------------------------------------------------------------------------
// Decoding

/**
 * Decodes a whole records field: a sequence of batches. A trailing batch cut
 * short is skipped and reported as `partialTailBytes` (or refused, with
 * `partialTail: 'error'`: use it for a Produce request's records). A malformed batch throws
 * DecodeError with a path such as `batches[2].records[5]: ...`.
 * Uncompressed keys, values and header values are zero-copy views of `bytes`.
 */
export function decodeRecordBatches(bytes: Uint8Array, options?: DecodeRecordsOptions): DecodedRecords {
  const batches: RecordBatch[] = [];
  // One DataView for every batch's readers: making two per batch cost 6% of a fetch's decoding.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.length;
  let at = 0;
  while (at < length) {
    const left = length - at;
    if (left < LOG_OVERHEAD) break;
    const index = batches.length;
    let batch: RecordBatch;
    try {
      const batchLength = (bytes[at + LENGTH_OFFSET]! << 24) | (bytes[at + 9]! << 16) | (bytes[at + 10]! << 8) | bytes[at + 11]!;
      checkBatchLength(batchLength, at);
      // Like Kafka's ByteBufferLogInputStream, but refusing a visible bad magic even in a partial batch.
      if (left > MAGIC_OFFSET) checkMagic((bytes[at + MAGIC_OFFSET]! << 24) >> 24, at);
      if (left < batchLength + LOG_OVERHEAD) break;
      batch = decodeBatchAt(bytes, at, options, view);
    } catch (error) {
      // A missing codec library is not malformed input: it keeps its own type.
      if (error instanceof CompressionUnavailableError) throw error;
      throw decodeErrorAt(error, `[${index}]`).within('batches');
    }
    batches.push(batch);
    at += batch.sizeInBytes;
  }
  if (at < length && options?.partialTail === 'error') partialTailError(bytes, at, batches.length);
  return { batches, partialTailBytes: length - at };
}

/**
 * Decodes the one complete batch at `at` (which must lie wholly within `bytes`;
 * bytes after it are not looked at). Checks the magic, the CRC (unless
 * `checkCrc: false`), every length, and that the records fill the batch exactly
 * and number what the header declares.
 */
export function decodeRecordBatch(bytes: Uint8Array, at = 0, options?: DecodeRecordsOptions): RecordBatch {
  return decodeBatchAt(bytes, at, options, undefined);
}

function decodeBatchAt(bytes: Uint8Array, at: number, options: DecodeRecordsOptions | undefined, view: DataView | undefined): RecordBatch {
  const header = readBatchHeaderWith(bytes, at, view);
  const end = batchEnd(bytes, at, header.sizeInBytes);
  if (options?.checkCrc !== false) {
    const actual = crc32c(bytes.subarray(at + ATTRIBUTES_OFFSET, end));
    if (actual !== header.crc) {
      throw new DecodeError(`CRC mismatch in batch at offset ${at}: it declares 0x${hex32(header.crc)} but its bytes give 0x${hex32(actual)}`);
    }
  }
  const count = header.recordCount;
  if (count < 0) throw new DecodeError(`batch at offset ${at} declares an invalid record count ${count}`);

  let reader: Reader;
  const recordsStart = at + RECORD_BATCH_OVERHEAD;
  if (header.compression === 'none') {
    reader = new Reader(bytes, recordsStart, end, view);
  } else {
    const limit = options?.maxUncompressedBytes ?? DEFAULT_MAX_UNCOMPRESSED_BYTES;
    reader = new Reader(decompress(header.compression, bytes.subarray(recordsStart, end), limit));
  }
  // Refuse an impossible count before allocating anything from it.
  if (count > Math.floor(reader.remaining / MIN_RECORD_SIZE)) {
    throw new DecodeError(
      `batch at offset ${at} declares ${count} records but its ${reader.remaining} bytes of records can hold at most ${Math.floor(reader.remaining / MIN_RECORD_SIZE)}`,
    );
  }

  const bases = recordBases(header);
  const records = new Array<KafkaRecord>(count);
  let i = 0;
  try {
    for (; i < count; i++) {
      if (reader.remaining === 0) throw new DecodeError(`batch declares ${count} records but holds only ${i}`);
      records[i] = readRecord(reader, bases);
    }
  } catch (error) {
    throw decodeErrorAt(error, `[${i}]`).within('records');
  }
  if (reader.remaining !== 0) {
    throw new DecodeError(`batch at offset ${at} declares ${count} records but ${reader.remaining} bytes are left after them`);
  }
  const batch = header as RecordBatch;
  batch.records = records;
  return batch;
}

/**
 * What a record's deltas are added to. While the batch's base offset and base
 * timestamp are within ±2^52 (always, short of hostile input), the sums are done
 * on numbers, exactly, and each record makes one BigInt per field instead of
 * four or five; otherwise `safe` is false and the sums are done on BigInts.
 */
interface RecordBases {
  safe: boolean;
  baseOffset: bigint;
  baseTimestamp: bigint;
  baseOffsetNumber: number;
  baseTimestampNumber: number;
  /** The batch's maxTimestamp in a LogAppendTime batch: every record's timestamp. */
  logAppendTime: bigint | null;
}

const SAFE_BASE = 2 ** 52;

function recordBases(header: RecordBatchHeader): RecordBases {
  const baseOffsetNumber = Number(header.baseOffset);
  const baseTimestampNumber = Number(header.baseTimestamp);
  return {
    safe: Math.abs(baseOffsetNumber) < SAFE_BASE && Math.abs(baseTimestampNumber) < SAFE_BASE,
    baseOffset: header.baseOffset,
    baseTimestamp: header.baseTimestamp,
    baseOffsetNumber,
    baseTimestampNumber,
    logAppendTime: header.timestampType === 'LogAppendTime' ? header.maxTimestamp : null,
  };
}

function readRecord(reader: Reader, bases: RecordBases): KafkaRecord {
  const length = reader.varint();
  const start = reader.pos;
  if (length < 0) throw new DecodeError(`record length ${length} is negative`);
  if (length > reader.remaining) {
    throw new DecodeError(`record length ${length} at offset ${start} runs past the end of the records (${reader.remaining} bytes left)`);
  }
  const end = start + length;
  reader.int8(); // attributes: unused, ignored as Kafka does
  // A delta under 2^48 (a timestamp delta of 8,900 years) with a safe base sums exactly as a number.
  const smallTimestampDelta = reader.smallVarlong();
  const timestampDelta = smallTimestampDelta === null ? reader.longVarlong() : null;
  const offsetDelta = reader.varint();
  const key = readNullableVarintBytes(reader, end, 'key');
  const value = readNullableVarintBytes(reader, end, 'value');
  const headerCount = reader.varint();
  if (headerCount < 0) throw new DecodeError(`invalid header count ${headerCount}`);
  // Each header takes at least two bytes (key length and value length).
  if (headerCount * 2 > end - reader.pos) {
    throw new DecodeError(`header count ${headerCount} cannot fit in the ${Math.max(0, end - reader.pos)} bytes left in the record`);
  }
  const headers = new Array<RecordHeader>(headerCount);
  let j = 0;
  try {
    for (; j < headerCount; j++) {
      const keyLength = reader.varint();
      if (keyLength < 0) throw new DecodeError(`header key length ${keyLength} is negative`);
      if (keyLength > end - reader.pos) {
        throw new DecodeError(`header key length ${keyLength} runs past the end of the record (${end - reader.pos} bytes left)`);
      }
      const headerKey = j < RECENT_HEADER_KEY_SLOTS ? reader.recurringUtf8(keyLength, recentHeaderKeys, j) : reader.utf8(keyLength);
      headers[j] = { key: headerKey, value: readNullableVarintBytes(reader, end, 'header value') };
    }
  } catch (error) {
    throw decodeErrorAt(error, `[${j}]`).within('headers');
  }
  if (reader.pos !== end) {
    throw new DecodeError(`record declares ${length} bytes but its fields take ${reader.pos - start}`);
  }
  let offset: bigint;
  let timestamp: bigint;
  if (bases.safe) {
    offset = BigInt(bases.baseOffsetNumber + offsetDelta);
    timestamp =
      bases.logAppendTime ??
      (smallTimestampDelta !== null ? BigInt(bases.baseTimestampNumber + smallTimestampDelta) : BigInt.asIntN(64, bases.baseTimestamp + timestampDelta!));
  } else {
    offset = BigInt.asIntN(64, bases.baseOffset + BigInt(offsetDelta));
    timestamp = bases.logAppendTime ?? BigInt.asIntN(64, bases.baseTimestamp + (timestampDelta ?? BigInt(smallTimestampDelta!)));
  }
  return { offset, timestamp, key, value, headers };
}

// Header keys repeat from record to record (a trace id, a content type), at the same
// position: the key last decoded at header position j is reused when the bytes match.
const RECENT_HEADER_KEY_SLOTS = 8;
const recentHeaderKeys: string[] = [];

function readNullableVarintBytes(reader: Reader, end: number, what: string): Uint8Array | null {
  const length = reader.varint();
  if (length < 0) {
    if (length !== -1) throw new DecodeError(`${what} has invalid length ${length}`);
    return null;
  }
  if (length > end - reader.pos) {
    throw new DecodeError(`${what} length ${length} runs past the end of the record (${Math.max(0, end - reader.pos)} bytes left)`);
  }
  return reader.raw(length);
}

function hex32(value: number): string {
  return value.toString(16).padStart(8, '0');
}

// ---------------------------------------------------------------------------
// Control records (transaction markers)

/** Kafka's ControlRecordType by type id (ABORT 0, COMMIT 1, ...); UNKNOWN for ids this code does not know. */
export type ControlRecordTypeName = 'ABORT' | 'COMMIT' | 'LEADER_CHANGE' | 'SNAPSHOT_HEADER' | 'SNAPSHOT_FOOTER' | 'KRAFT_VERSION' | 'KRAFT_VOTERS' | 'UNKNOWN';

const CONTROL_RECORD_TYPES: readonly ControlRecordTypeName[] = [
  'ABORT',
  'COMMIT',
  'LEADER_CHANGE',
  'SNAPSHOT_HEADER',
  'SNAPSHOT_FOOTER',
  'KRAFT_VERSION',
  'KRAFT_VOTERS',
];

/** An end-transaction marker: the control record that commits or aborts a producer's transaction. */
export interface EndTxnMarker {
  type: 'ABORT' | 'COMMIT';
  typeId: number;
  /** Version of the key schema (0 today; higher versions are read as 0, as Kafka does). */
  keyVersion: number;
  /** Version of the EndTransactionMarker value (0 today; higher versions are read as 0). */
  valueVersion: number;
  coordinatorEpoch: number;
}

/** Any other control record (KRaft's LEADER_CHANGE, snapshots, ...): its value is left undecoded. */
export interface OtherControlRecord {
  type: Exclude<ControlRecordTypeName, 'ABORT' | 'COMMIT'>;
  typeId: number;
  keyVersion: number;
  value: Uint8Array | null;
}

export type ControlRecord = EndTxnMarker | OtherControlRecord;

export interface ControlBatchInput {
  type: 'COMMIT' | 'ABORT';
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp: bigint;
  /** Default 0. */
  baseOffset?: bigint;
  /** Default -1 (none). */
  partitionLeaderEpoch?: number;
}

const CONTROL_KEY_SIZE = 4;
const END_TXN_MARKER_VALUE_SIZE = 6;

/**
 * Encodes the transaction marker batch a transaction coordinator writes
 * (MemoryRecords.withEndTransactionMarker): transactional, control, no base
 * sequence, one record whose key is version 0 + type and whose value is the
 * EndTransactionMarker (version 0 + coordinatorEpoch).
 */
export function controlRecordBatch(input: ControlBatchInput): Uint8Array {
  if (input.type !== 'COMMIT' && input.type !== 'ABORT') {
    throw new EncodeError(`a transaction marker is COMMIT or ABORT, not ${String(input.type)}`);
  }
  if ((input.coordinatorEpoch | 0) !== input.coordinatorEpoch) {
    throw new EncodeError(`coordinatorEpoch ${input.coordinatorEpoch} is not an int32`);
  }
  const key = Buffer.allocUnsafe(CONTROL_KEY_SIZE);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(input.type === 'ABORT' ? 0 : 1, 2);
  const value = Buffer.allocUnsafe(END_TXN_MARKER_VALUE_SIZE);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(input.coordinatorEpoch, 2);
  return encodeRecordBatch({
    baseOffset: input.baseOffset ?? 0n,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    isTransactional: true,
    isControl: true,
    baseTimestamp: input.timestamp,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: NO_SEQUENCE,
    records: [{ timestamp: input.timestamp, key, value }],
  });
}

/**
 * Reads a record of a control batch. COMMIT and ABORT records decode to an
 * EndTxnMarker; other types keep their value raw. Throws DecodeError for a key
 * or marker value too short or with a negative version, as Kafka does.
 */
export function readControlRecord(record: Pick<KafkaRecord, 'key' | 'value'>): ControlRecord {
  const key = record.key;
  if (key === null) throw new DecodeError('control record has a null key');
  if (key.length < CONTROL_KEY_SIZE) {
    throw new DecodeError(`control record key must have at least ${CONTROL_KEY_SIZE} bytes, found ${key.length}`);
  }
  const keyView = new DataView(key.buffer, key.byteOffset, key.byteLength);
  const keyVersion = keyView.getInt16(0);
  if (keyVersion < 0) throw new DecodeError(`invalid control record key version ${keyVersion}`);
  const typeId = keyView.getInt16(2);
  const type = CONTROL_RECORD_TYPES[typeId] ?? 'UNKNOWN';
  if (type !== 'ABORT' && type !== 'COMMIT') return { type, typeId, keyVersion, value: record.value };

  const value = record.value;
  if (value === null) throw new DecodeError(`${type} marker has a null value`);
  if (value.length < END_TXN_MARKER_VALUE_SIZE) {
    throw new DecodeError(`${type} marker value must have at least ${END_TXN_MARKER_VALUE_SIZE} bytes, found ${value.length}`);
  }
  const valueView = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const valueVersion = valueView.getInt16(0);
  if (valueVersion < 0) throw new DecodeError(`invalid end transaction marker version ${valueVersion}`);
  return { type, typeId, keyVersion, valueVersion, coordinatorEpoch: valueView.getInt32(2) };
}
