// Bench reference for Kafka RecordBatch v2 (magic 2, uncompressed): a builder used to
// make the workloads' "pre-built record batches", and a parser used by the equal-work
// checks (and, until runtime/ provides one, as the record parser in the labelled
// "ours + bench record parser" rows; see ours.ts).
import { WireWriter, crc32c, fromUtf8, toHex, utf8 } from './wire.js';

export interface BenchRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** Header keys are strings on the wire (varint length + UTF-8). */
  headers: Array<[string, Uint8Array | null]>;
  timestamp: bigint;
}

export interface BatchOptions {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  attributes?: number;
}

/**
 * Build one uncompressed RecordBatch v2. Defaults match what kafkajs 2.2.4 and
 * @platformatic/kafka 2.12.1 write for a non-idempotent, non-transactional producer:
 * baseOffset 0, partitionLeaderEpoch 0, producerId -1, producerEpoch 0, baseSequence 0,
 * attributes 0, baseTimestamp = first record's timestamp, maxTimestamp = max.
 */
export function buildRecordBatch(records: BenchRecord[], opts: BatchOptions = {}): Uint8Array {
  if (records.length === 0) throw new RangeError('empty batch');
  const first = records[0]!.timestamp;
  let max = first;
  for (const r of records) if (r.timestamp > max) max = r.timestamp;

  const body = new WireWriter(256 + records.length * 64);
  // CRC covers attributes .. end.
  body
    .int16(opts.attributes ?? 0)
    .int32(records.length - 1)
    .int64(first)
    .int64(max)
    .int64(opts.producerId ?? -1n)
    .int16(opts.producerEpoch ?? 0)
    .int32(opts.baseSequence ?? 0)
    .int32(records.length);
  const rec = new WireWriter(256);
  records.forEach((r, i) => {
    rec.pos = 0;
    rec
      .int8(0)
      .varlong(r.timestamp - first)
      .varint(i);
    if (r.key === null) rec.varint(-1);
    else rec.varint(r.key.length).raw(r.key);
    if (r.value === null) rec.varint(-1);
    else rec.varint(r.value.length).raw(r.value);
    rec.varint(r.headers.length);
    for (const [k, v] of r.headers) {
      const kb = utf8(k);
      rec.varint(kb.length).raw(kb);
      if (v === null) rec.varint(-1);
      else rec.varint(v.length).raw(v);
    }
    const recBytes = rec.finish();
    body.varint(recBytes.length).raw(recBytes);
  });
  const bodyBytes = body.finish();

  const out = new WireWriter(bodyBytes.length + 32);
  out
    .int64(opts.baseOffset ?? 0n)
    .int32(4 + 1 + 4 + bodyBytes.length) // batchLength: from partitionLeaderEpoch to end
    .int32(opts.partitionLeaderEpoch ?? 0)
    .int8(2)
    .uint32(crc32c(bodyBytes))
    .raw(bodyBytes);
  return out.finish();
}

/** A record as seen by a consumer: absolute offset and timestamp. Canonical form for checks. */
export interface FlatRecord {
  offset: bigint;
  timestamp: bigint;
  key: string | null; // hex
  value: string | null; // hex
  headers: Array<[string, string | null]>; // [key, value hex]
}

export interface ParsedBatch {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  records: Array<{
    timestampDelta: bigint;
    offsetDelta: number;
    key: Uint8Array | null;
    value: Uint8Array | null;
    headers: Array<[Uint8Array, Uint8Array | null]>;
  }>;
}

/**
 * Parse the uncompressed record batches in a records field (views into `bytes`, no copies).
 * A trailing partial batch is ignored, as Kafka clients do. `checkCrc` verifies CRC-32C.
 * Written lean (one DataView, no per-record reader objects) because it is timed in the
 * "ours + bench record parser" rows until runtime/ has a record-batch parser.
 */
let P = 0; // cursor shared by the helpers below (single-threaded, not re-entrant)
function uvar(b: Uint8Array, end: number): number {
  let v = 0;
  let shift = 0;
  for (;;) {
    if (P >= end) throw new RangeError('varint past end');
    const x = b[P++]!;
    v |= (x & 0x7f) << shift;
    if (x < 0x80) return v >>> 0;
    shift += 7;
    if (shift > 28) throw new RangeError('varint too long');
  }
}
function svar(b: Uint8Array, end: number): number {
  const z = uvar(b, end);
  return (z >>> 1) ^ -(z & 1);
}
function svarlong(b: Uint8Array, end: number): bigint {
  // fast path: fits in 28 bits of zigzag
  const start = P;
  let v = 0;
  let shift = 0;
  while (P < end && shift <= 21) {
    const x = b[P++]!;
    v |= (x & 0x7f) << shift;
    if (x < 0x80) return BigInt((v >>> 1) ^ -(v & 1));
    shift += 7;
  }
  P = start;
  let z = 0n;
  let s = 0n;
  for (;;) {
    if (P >= end) throw new RangeError('varlong past end');
    const x = b[P++]!;
    z |= BigInt(x & 0x7f) << s;
    if (x < 0x80) break;
    s += 7n;
    if (s > 63n) throw new RangeError('varlong too long');
  }
  return (z >> 1n) ^ -(z & 1n);
}
function take(b: Uint8Array, len: number, end: number): Uint8Array | null {
  if (len < 0) return null;
  if (P + len > end) throw new RangeError('bytes past end');
  const v = b.subarray(P, P + len);
  P += len;
  return v;
}

export function parseRecordBatches(bytes: Uint8Array, checkCrc = false): ParsedBatch[] {
  const out: ParsedBatch[] = [];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const total = bytes.length;
  while (total - at >= 61) {
    const batchLength = dv.getInt32(at + 8);
    const end = at + 12 + batchLength;
    if (end > total) break; // partial batch at the tail
    const magic = dv.getInt8(at + 16);
    if (magic !== 2) throw new Error(`unsupported magic ${magic}`);
    if (checkCrc && dv.getUint32(at + 17) !== crc32c(bytes, at + 21, end)) throw new Error('CRC-32C mismatch');
    const attributes = dv.getInt16(at + 21);
    if ((attributes & 0x07) !== 0) throw new Error('compressed batches are not used by the bench');
    const batch: ParsedBatch = {
      baseOffset: dv.getBigInt64(at),
      partitionLeaderEpoch: dv.getInt32(at + 12),
      attributes,
      lastOffsetDelta: dv.getInt32(at + 23),
      baseTimestamp: dv.getBigInt64(at + 27),
      maxTimestamp: dv.getBigInt64(at + 35),
      producerId: dv.getBigInt64(at + 43),
      producerEpoch: dv.getInt16(at + 51),
      baseSequence: dv.getInt32(at + 53),
      records: [],
    };
    const count = dv.getInt32(at + 57);
    P = at + 61;
    for (let i = 0; i < count; i++) {
      const len = svar(bytes, end);
      const recEnd = P + len;
      if (recEnd > end) throw new RangeError('record past batch end');
      P++; // record attributes, unused
      const timestampDelta = svarlong(bytes, recEnd);
      const offsetDelta = svar(bytes, recEnd);
      const key = take(bytes, svar(bytes, recEnd), recEnd);
      const value = take(bytes, svar(bytes, recEnd), recEnd);
      const hc = svar(bytes, recEnd);
      const headers: Array<[Uint8Array, Uint8Array | null]> = [];
      for (let h = 0; h < hc; h++) {
        const hk = take(bytes, svar(bytes, recEnd), recEnd) ?? new Uint8Array(0);
        headers.push([hk, take(bytes, svar(bytes, recEnd), recEnd)]);
      }
      if (P !== recEnd) throw new RangeError('record length mismatch');
      batch.records.push({ timestampDelta, offsetDelta, key, value, headers });
    }
    if (P !== end) throw new RangeError('batch length mismatch');
    out.push(batch);
    at = end;
  }
  return out;
}

/** Canonical flat view of the records of a records field (for the equal-work checks). */
export function flattenRecords(bytes: Uint8Array | null): FlatRecord[] {
  if (bytes === null) return [];
  const out: FlatRecord[] = [];
  for (const b of parseRecordBatches(bytes, true)) {
    for (const r of b.records) {
      out.push({
        offset: b.baseOffset + BigInt(r.offsetDelta),
        timestamp: b.baseTimestamp + r.timestampDelta,
        key: r.key === null ? null : toHex(r.key),
        value: r.value === null ? null : toHex(r.value),
        headers: r.headers.map(([k, v]) => [fromUtf8(k), v === null ? null : toHex(v)]),
      });
    }
  }
  return out;
}
