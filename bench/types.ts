// Shapes shared by the peer adapters, ours.ts and the harness.
import type { FetchWorkload, MetadataWorkload, ProduceWorkload, SmallRequest, SmallRequestsWorkload } from './workloads.js';

export type Lib = 'ours' | 'kafkajs' | 'platformatic';

/** One encoder, its input already prepared (outside the timed loop). */
export interface EncodeCase {
  version: number;
  /** true when the library's encoder returns a Promise (kafkajs): the loop awaits each call. */
  async: boolean;
  encode(): Uint8Array | Promise<Uint8Array>;
  /** What this participant does that the others may not (shown under the table). */
  note?: string;
}

/** One encoder whose output is a list of chunks (zero-copy: the record batches are referenced, not copied). */
export interface ChunksCase {
  version: number;
  async: false;
  encode(): Uint8Array[];
  note?: string;
}

/** One decoder. `normalize` maps its value to the canonical form used by the equal-work check (untimed). */
export interface DecodeCase {
  version: number;
  async: boolean;
  decode(bytes: Buffer): unknown;
  normalize(value: unknown): unknown;
  note?: string;
}

/** A peer library: each entry returns null when the library lacks that API. */
export interface PeerAdapter {
  lib: Exclude<Lib, 'ours'>;
  libVersion: string;
  /** Workload 1, equal work: request body around pre-built RecordBatch bytes (see each adapter for how). */
  producePrebuilt(w: ProduceWorkload): EncodeCase | null;
  /** Workload 1 as a chunk list that references the pre-built batches (what a vectored socket write takes); null when the library cannot. */
  producePrebuiltChunks(w: ProduceWorkload): ChunksCase | null;
  /** Workload 1, the library's own Produce encoder, which builds the record batches from messages. */
  produceFromMessages(w: ProduceWorkload): EncodeCase | null;
  metadataDecode(w: MetadataWorkload): DecodeCase | null;
  metadataEncode(w: MetadataWorkload): EncodeCase | null;
  fetchDecode(w: FetchWorkload): DecodeCase | null;
  /** Workload 4: int32 size + request header + body. */
  smallRequest(w: SmallRequestsWorkload, api: SmallRequest['api']): EncodeCase | null;
  /** Workload 4b: the body alone, as the library's request encoder makes it. */
  smallRequestBody(w: SmallRequestsWorkload, api: SmallRequest['api']): EncodeCase | null;
}
