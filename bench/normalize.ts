// Equal-work checks: byte comparison for encoders, canonical-value comparison for decoders.
import type { FlatRecord } from './recordBatch.js';
import { toHex } from './wire.js';

/** First differing byte, or null when identical. */
export function bytesDiff(want: Uint8Array, got: Uint8Array): string | null {
  const n = Math.min(want.length, got.length);
  for (let i = 0; i < n; i++) {
    if (want[i] !== got[i]) {
      const from = Math.max(0, i - 8);
      return `byte ${i} of ${want.length}: want …${toHex(want.subarray(from, i + 8))}…, got …${toHex(got.subarray(from, i + 8))}…`;
    }
  }
  if (want.length !== got.length) return `length: want ${want.length}, got ${got.length}`;
  return null;
}

/**
 * Compare `got` against `want`, looking only at the keys present in `want` (so extra
 * fields, e.g. defaults of other versions or kept unknown tagged fields, are ignored).
 * Uint8Array compares by content; bigint by value. Returns the path of the first
 * difference, or null.
 */
export function valueDiff(want: unknown, got: unknown, path = '$'): string | null {
  if (want instanceof Uint8Array) {
    if (!(got instanceof Uint8Array)) return `${path}: want bytes, got ${describe(got)}`;
    return bytesDiff(want, got) && `${path}: ${bytesDiff(want, got)}`;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path}: want array, got ${describe(got)}`;
    if (want.length !== got.length) return `${path}: want ${want.length} elements, got ${got.length}`;
    for (let i = 0; i < want.length; i++) {
      const d = valueDiff(want[i], got[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return `${path}: want object, got ${describe(got)}`;
    for (const k of Object.keys(want)) {
      const d = valueDiff((want as Record<string, unknown>)[k], (got as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  if (typeof want === 'bigint' && typeof got === 'bigint') return want === got ? null : `${path}: want ${want}, got ${got}`;
  if (Object.is(want, got)) return null;
  return `${path}: want ${describe(want)}, got ${describe(got)}`;
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `bytes(${v.length})`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (Array.isArray(v)) return `array(${v.length})`;
  if (v === undefined) return 'undefined (missing)';
  return typeof v === 'object' && v !== null ? 'object' : String(v);
}

const hex = (b: Uint8Array | null | undefined): string | null => (b == null ? null : toHex(b));

/** kafkajs Fetch v4+ `messages` → canonical records. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a peer library's untyped output, read field by field
export function flatFromKafkajs(messages: Array<Record<string, any>>): FlatRecord[] {
  return messages.map((m) => ({
    offset: BigInt(m.offset),
    timestamp: BigInt(m.timestamp),
    key: hex(m.key),
    value: hex(m.value),
    // kafkajs folds headers into an object (wire order kept for distinct, non-numeric keys)
    headers: Object.entries(m.headers as Record<string, Buffer>).map(([k, v]) => [k, hex(v)] as [string, string | null]),
  }));
}

/** @platformatic/kafka readRecordsBatches() output, or bench parseRecordBatches() output → canonical records. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a peer library's untyped output, read field by field
export function flatFromBatches(batches: Array<Record<string, any>> | null): FlatRecord[] {
  const out: FlatRecord[] = [];
  for (const b of batches ?? []) {
    const base = BigInt(b.firstOffset ?? b.baseOffset);
    const ts = BigInt(b.firstTimestamp ?? b.baseTimestamp);
    for (const r of b.records) {
      out.push({
        offset: base + BigInt(r.offsetDelta),
        timestamp: ts + BigInt(r.timestampDelta),
        key: hex(r.key),
        value: hex(r.value),
        headers: (r.headers as Array<[Uint8Array, Uint8Array | null]>).map(([k, v]) => [Buffer.from(k).toString('utf8'), hex(v)]),
      });
    }
  }
  return out;
}
