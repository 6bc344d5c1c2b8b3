// OUR side of the codec benchmark: the seam between the bench and the generated codecs.
//
// - Codecs: ../generated/index.js (or the module given with --ours), each with
//   encode/decode and, when present, encodeChunks, size/write and create. Our inputs go
//   through codec.create() (all fields present), see full() below.
// - Framing (workload 4): runtime/ encodeFrame, as our client frames requests. For codecs
//   without size()/write() (an older tree given with --ours), frameOurs() below encodes the
//   header and body apart and copies them together instead.
// - Record batches: runtime/record-batch.ts builds and parses them (RECORD_BATCHES).
// All three come from the compiled tree the bench made (our-build.ts), or from this
// checkout's TypeScript with --source.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseRecordBatches, type BenchRecord } from './recordBatch.js';
import type { RecordBatch } from '../runtime/record-batch.js';
import { oursRoot, type OursBuild } from './our-build.js';
import { flatFromBatches } from './normalize.js';
import { REQUEST_FLEXIBLE_FROM } from './reference.js';
import type { ChunksCase, DecodeCase, EncodeCase } from './types.js';
import type { FetchWorkload, MetadataWorkload, ProduceWorkload, SmallRequest, SmallRequestsWorkload, TxnShareAckWorkload } from './workloads.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** What the bench needs from a generated codec (a subset of runtime/codec.ts MessageCodec). */
export interface OursCodec {
  encode(message: any, version: number): Uint8Array;
  /** Zero-copy encode (runtime writeChunks); absent in codecs from before it. */
  encodeChunks?(message: any, version: number): Uint8Array[];
  decode(bytes: Uint8Array, version: number): any;
  /** A message with every field at its default, overridden by `fields` (top level). */
  create?(fields?: any): any;
  size?(message: any, version: number): number;
  write?(writer: any, message: any, version: number): void;
  /** ApiMessageCodec: RequestHeader version for an API version. */
  headerVersion?(version: number): number;
  flexibleVersions?: { lowest: number; highest: number } | null | string;
}

export const OUR_CODEC_NAMES = [
  'ProduceRequest',
  'MetadataResponse',
  'FetchResponse',
  'FindCoordinatorRequest',
  'EndTxnRequest',
  'InitProducerIdRequest',
  'TxnShareAcknowledgeRequest',
  'RequestHeader',
] as const;
export type OurCodecName = (typeof OUR_CODEC_NAMES)[number];
export type OursRegistry = Record<OurCodecName, OursCodec>;

/**
 * Record-batch build/parse used by "ours" rows that need them: runtime/record-batch.ts.
 * The parse skips the CRC check, as the peers do not verify it on fetch (equal work);
 * its records come back in the bench's batch shape (deltas, header byte keys) for normalizing.
 */
type RecordBatchModule = typeof import('../runtime/record-batch.js');

export const RECORD_BATCH_LABELS = { build: 'runtime encodeRecordBatch', parse: 'runtime decodeRecordBatches' };

/** The record-batch build and parse of one build of ours (the current tree's, or the baseline's). */
const recordBatchesOf = (rb: RecordBatchModule) => ({
  buildLabel: RECORD_BATCH_LABELS.build,
  parseLabel: RECORD_BATCH_LABELS.parse,
  build: (records: BenchRecord[]): Uint8Array =>
    rb.encodeRecordBatch({
      // The peers write 0 in these three fields where Kafka's own producer (and the
      // runtime's defaults) write -1: set them so that all sides produce the same bytes.
      partitionLeaderEpoch: 0,
      producerEpoch: 0,
      baseSequence: 0,
      records: records.map((r) => ({ key: r.key, value: r.value, timestamp: r.timestamp, headers: r.headers.map(([key, value]) => ({ key, value })) })),
    }),
  parse: (records: Uint8Array): unknown[] => rb.decodeRecordBatches(records, { checkCrc: false }).batches,
  /** Turns runtime batches into the shape flatFromBatches reads. */
  toBenchShape: (batches: RecordBatch[]): unknown[] =>
    batches.map((b) => ({
      baseOffset: b.baseOffset,
      baseTimestamp: b.baseTimestamp,
      records: b.records.map((r) => ({
        offsetDelta: Number(r.offset - b.baseOffset),
        timestampDelta: Number(r.timestamp - b.baseTimestamp),
        key: r.key,
        value: r.value,
        headers: r.headers.map((h) => [Buffer.from(h.key, 'utf8'), h.value]),
      })),
    })),
});

export type LoadResult =
  { ok: true; registry: OursRegistry; encodeFrame: null | ((...a: any[]) => Uint8Array); recordBatches: RecordBatchModule } | { ok: false; reason: string };

/**
 * Import generated/index.js of `build` (the current tree's or the baseline's; see
 * our-build.ts), or `override`, a module path or URL given with --ours. A missing module is
 * "not there yet"; any other failure is reported as is.
 */
export async function loadOurs(override?: string, build: OursBuild = 'current'): Promise<LoadResult> {
  const root = oursRoot(build).url;
  let mod: any;
  try {
    // A computed specifier, so that typecheck does not need generated/ to exist.
    mod = await import(override ? (override.startsWith('file:') ? override : pathToFileURL(resolve(override)).href) : new URL('generated/index.js', root).href);
  } catch (e: any) {
    const missing = !override && e?.code === 'ERR_MODULE_NOT_FOUND' && /generated[\\/]index/.test(String(e?.message));
    return { ok: false, reason: missing ? 'generated/index.ts does not exist yet' : `importing ${override ?? 'generated/index.js'} failed: ${e?.stack ?? e}` };
  }
  const pick = (name: string) => mod[name] ?? mod.codecs?.[name] ?? mod.default?.[name];
  const registry: Partial<OursRegistry> = {};
  const absent: string[] = [];
  for (const name of OUR_CODEC_NAMES) {
    const c = pick(name);
    if (c && typeof c.encode === 'function' && typeof c.decode === 'function') registry[name] = c;
    else absent.push(name);
  }
  if (absent.length) return { ok: false, reason: `generated/index.js lacks codecs: ${absent.join(', ')}` };
  const recordBatches: RecordBatchModule = await import(new URL('runtime/record-batch.js', root).href);
  let encodeFrame: any = null;
  try {
    const rt: any = await import(new URL('runtime/index.js', root).href);
    if (typeof rt.encodeFrame === 'function') encodeFrame = rt.encodeFrame;
  } catch {
    /* runtime framing is optional */
  }
  return { ok: true, registry: registry as OursRegistry, encodeFrame, recordBatches };
}

/** RequestHeader version for an API version: the codec's own answer when it has one. */
export function requestHeaderVersion(codec: OursCodec, apiKey: number, version: number): number {
  if (typeof codec.headerVersion === 'function') return codec.headerVersion(version);
  const fv = codec.flexibleVersions;
  if (fv && typeof fv === 'object') return version >= fv.lowest && version <= fv.highest ? 2 : 1;
  return version >= (REQUEST_FLEXIBLE_FROM[apiKey] ?? Infinity) ? 2 : 1;
}

/**
 * Our framing for workload 4: RequestHeader.encode + body encode + int32 size prefix,
 * copied into one output array. (Two intermediate arrays; a generated frameRequest that
 * sizes first and writes once would avoid them.)
 */
export function frameOurs(header: OursCodec, headerMsg: unknown, headerVersion: number, body: OursCodec, bodyMsg: unknown, version: number): Uint8Array {
  const h = header.encode(headerMsg, headerVersion);
  const b = body.encode(bodyMsg, version);
  const size = h.length + b.length;
  const out = new Uint8Array(4 + size);
  out[0] = size >>> 24;
  out[1] = (size >>> 16) & 0xff;
  out[2] = (size >>> 8) & 0xff;
  out[3] = size & 0xff;
  out.set(h, 4);
  out.set(b, 4 + h.length);
  return out;
}

const sync = { async: false } as const;

/**
 * The workloads' message objects carry only the fields of the version they are built
 * for; generated messages carry every field (an absent non-ignorable field reads as
 * `undefined`, which the encoder rightly refuses as "non-default in this version").
 * So our inputs go through the codec's own create(), once, outside the timed loop.
 */
const full = (codec: OursCodec, msg: unknown): any => (typeof codec.create === 'function' ? codec.create(msg as any) : msg);

/** Ours, per workload. Each returns a ready case whose input is prepared outside the timed loop. */
export function oursCases(reg: OursRegistry, encodeFrame: ((...a: any[]) => Uint8Array) | null, recordBatches: RecordBatchModule) {
  const RECORD_BATCHES = recordBatchesOf(recordBatches);
  return {
    producePrebuilt(w: ProduceWorkload, version: number): EncodeCase {
      const msg = full(reg.ProduceRequest, w.message(version));
      return { ...sync, version, encode: () => reg.ProduceRequest.encode(msg, version) };
    },

    /** encodeChunks: the batches referenced, not copied (how our client and broker send). */
    producePrebuiltChunks(w: ProduceWorkload, version: number): ChunksCase | null {
      const codec = reg.ProduceRequest;
      const encodeChunks = codec.encodeChunks;
      if (typeof encodeChunks !== 'function') return null;
      const msg = full(codec, w.message(version));
      return { async: false, version, encode: () => encodeChunks.call(codec, msg, version) };
    },

    /** Build the batches from the messages, then encode: the same work as the peers' own Produce encoders. */
    produceFromMessages(w: ProduceWorkload, version: number): EncodeCase {
      const { acks, timeoutMs, transactionalId, topics } = w;
      return {
        ...sync,
        version,
        encode: () =>
          reg.ProduceRequest.encode(
            {
              transactionalId,
              acks,
              timeoutMs,
              topicData: topics.map((t) => ({
                name: t.name,
                partitionData: t.partitions.map((p) => ({ index: p.index, records: RECORD_BATCHES.build(p.records) })),
              })),
            },
            version,
          ),
        note: `batches built by the ${RECORD_BATCHES.buildLabel}, then ProduceRequest.encode`,
      };
    },

    metadataDecode(_w: MetadataWorkload, version: number): DecodeCase {
      return { ...sync, version, decode: (b) => reg.MetadataResponse.decode(b, version), normalize: (v) => v };
    },

    metadataEncode(w: MetadataWorkload, version: number): EncodeCase {
      const msg = full(reg.MetadataResponse, w.message(version));
      return { ...sync, version, encode: () => reg.MetadataResponse.encode(msg, version) };
    },

    /** FetchResponse.decode alone: records stay zero-copy Uint8Array views (less work than any peer). */
    fetchDecodeRaw(_w: FetchWorkload, version: number): DecodeCase {
      return {
        ...sync,
        version,
        decode: (b) => reg.FetchResponse.decode(b, version),
        normalize: (v: any) => ({
          ...v,
          responses: v.responses.map((t: any) => ({
            ...t,
            partitions: t.partitions.map((p: any) => ({ ...p, records: flatFromBatches(p.records === null ? [] : (parseRecordBatches(p.records) as any)) })),
          })),
        }),
        note: 'records left as raw bytes (views); the peers parse every record',
      };
    },

    /** FetchResponse.decode + parse every partition's record batches: the peers' amount of work. */
    fetchDecodeParsed(_w: FetchWorkload, version: number): DecodeCase {
      return {
        ...sync,
        version,
        decode: (b) => {
          const msg = reg.FetchResponse.decode(b, version);
          const parsed: unknown[][] = [];
          for (const t of msg.responses) for (const p of t.partitions) parsed.push(p.records === null ? [] : RECORD_BATCHES.parse(p.records));
          return { msg, parsed };
        },
        normalize: ({ msg, parsed }: any) => {
          let i = 0;
          return {
            ...msg,
            responses: msg.responses.map((t: any) => ({
              ...t,
              partitions: t.partitions.map((p: any) => ({ ...p, records: flatFromBatches(RECORD_BATCHES.toBenchShape(parsed[i++] as RecordBatch[]) as any) })),
            })),
          };
        },
        note: `FetchResponse.decode, then the ${RECORD_BATCHES.parseLabel} on every partition's records`,
      };
    },

    smallRequest(w: SmallRequestsWorkload, api: SmallRequest['api'], version: number): EncodeCase {
      const req = w.requests[api];
      const codec = reg[api];
      const hv = requestHeaderVersion(codec, req.apiKey, version);
      const header = full(reg.RequestHeader, { requestApiKey: req.apiKey, requestApiVersion: version, correlationId: w.correlationId, clientId: w.clientId });
      const body = full(codec, req.message(version));
      return {
        ...sync,
        version,
        encode: () => frameOurs(reg.RequestHeader, header, hv, codec, body, version),
        note: `bench framing: RequestHeader v${hv}.encode + body encode + int32 size, one extra copy`,
      };
    },

    /** The body alone, with the codec's encode. */
    smallRequestBody(w: SmallRequestsWorkload, api: SmallRequest['api'], version: number): EncodeCase {
      const codec = reg[api];
      const body = full(codec, w.requests[api].message(version));
      return { ...sync, version, encode: () => codec.encode(body, version) };
    },

    /** The same through runtime/framing.ts encodeFrame (size pass, one allocation), when available. */
    smallRequestRuntime(w: SmallRequestsWorkload, api: SmallRequest['api'], version: number): EncodeCase | null {
      const codec = reg[api];
      if (!encodeFrame || typeof codec.size !== 'function' || typeof reg.RequestHeader.size !== 'function') return null;
      const req = w.requests[api];
      const hv = requestHeaderVersion(codec, req.apiKey, version);
      const header = full(reg.RequestHeader, { requestApiKey: req.apiKey, requestApiVersion: version, correlationId: w.correlationId, clientId: w.clientId });
      const body = full(codec, req.message(version));
      return {
        ...sync,
        version,
        encode: () => encodeFrame(reg.RequestHeader, header, hv, codec, body, version),
        note: 'runtime encodeFrame: sizes header + body, writes once',
      };
    },

    txnShareAckEncode(w: TxnShareAckWorkload, version: number): EncodeCase {
      const msg = full(reg.TxnShareAcknowledgeRequest, w.message(version));
      return { ...sync, version, encode: () => reg.TxnShareAcknowledgeRequest.encode(msg, version) };
    },

    txnShareAckDecode(_w: TxnShareAckWorkload, version: number): DecodeCase {
      return { ...sync, version, decode: (b) => reg.TxnShareAcknowledgeRequest.decode(b, version), normalize: (v) => v };
    },
  };
}
