// Bench reference encoders: hand-written, version-aware, from the Kafka schemas in
// ../shared/kafka-schemas and ../shared/kip-1289. They produce the "expected bytes" of
// each workload (the byte-for-byte bar for every encoder, ours and the peers') and the
// response bytes that the decoders read (neither peer has response encoders).
//
// Input objects use the generated code's message shape (lowerCamelCase schema names,
// int64 as bigint, uuid as 22-char base64url, bytes/records as Uint8Array). They also
// accept the conformance-vector JSON form (int64 as decimal string, bytes/records as
// base64 strings, absent tagged fields), which bench/reference-selfcheck.ts uses to
// verify these encoders against Kafka's own vectors.
//
// Not timed, not tuned. Only the fields and versions of the benchmarked messages.
import { WireWriter, concat } from './wire.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const i64 = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(v as string | number));
const bin = (v: unknown): Uint8Array | null =>
  v === null || v === undefined ? null : v instanceof Uint8Array ? v : new Uint8Array(Buffer.from(v as string, 'base64'));

function sub(fn: (w: WireWriter) => void): Uint8Array {
  const w = new WireWriter(64);
  fn(w);
  return w.finish();
}

function int32Array(w: WireWriter, a: number[], flex: boolean): void {
  w.arrayLength(a.length, flex);
  for (const x of a) w.int32(x);
}

// ---------------------------------------------------------------- ProduceRequest (0), v3-13, flexible 9+
export function encodeProduceRequest(m: Any, v: number): Uint8Array {
  const flex = v >= 9;
  const w = new WireWriter(4096);
  w.string(m.transactionalId ?? null, flex)
    .int16(m.acks)
    .int32(m.timeoutMs);
  w.arrayLength(m.topicData.length, flex);
  for (const t of m.topicData) {
    if (v <= 12) w.string(t.name, flex);
    else w.uuid(t.topicId);
    w.arrayLength(t.partitionData.length, flex);
    for (const p of t.partitionData) {
      w.int32(p.index).bytes(bin(p.records), flex);
      if (flex) w.tags();
    }
    if (flex) w.tags();
  }
  if (flex) w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- MetadataResponse (3), v0-13, flexible 9+
export function encodeMetadataResponse(m: Any, v: number): Uint8Array {
  const flex = v >= 9;
  const w = new WireWriter(64 * 1024);
  if (v >= 3) w.int32(m.throttleTimeMs);
  w.arrayLength(m.brokers.length, flex);
  for (const b of m.brokers) {
    w.int32(b.nodeId).string(b.host, flex).int32(b.port);
    if (v >= 1) w.string(b.rack ?? null, flex);
    if (flex) w.tags();
  }
  if (v >= 2) w.string(m.clusterId ?? null, flex);
  if (v >= 1) w.int32(m.controllerId);
  w.arrayLength(m.topics.length, flex);
  for (const t of m.topics) {
    w.int16(t.errorCode).string(t.name, flex);
    if (v >= 10) w.uuid(t.topicId);
    if (v >= 1) w.bool(t.isInternal);
    w.arrayLength(t.partitions.length, flex);
    for (const p of t.partitions) {
      w.int16(p.errorCode).int32(p.partitionIndex).int32(p.leaderId);
      if (v >= 7) w.int32(p.leaderEpoch);
      int32Array(w, p.replicaNodes, flex);
      int32Array(w, p.isrNodes, flex);
      if (v >= 5) int32Array(w, p.offlineReplicas, flex);
      if (flex) w.tags();
    }
    if (v >= 8) w.int32(t.topicAuthorizedOperations);
    if (flex) w.tags();
  }
  if (v >= 8 && v <= 10) w.int32(m.clusterAuthorizedOperations);
  if (v >= 13) w.int16(m.errorCode);
  if (flex) w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- FetchResponse (1), v4-18, flexible 12+
export function encodeFetchResponse(m: Any, v: number): Uint8Array {
  const flex = v >= 12;
  const w = new WireWriter(1 << 21);
  if (v >= 1) w.int32(m.throttleTimeMs);
  if (v >= 7) w.int16(m.errorCode).int32(m.sessionId);
  w.arrayLength(m.responses.length, flex);
  for (const t of m.responses) {
    if (v <= 12) w.string(t.topic, flex);
    else w.uuid(t.topicId);
    w.arrayLength(t.partitions.length, flex);
    for (const p of t.partitions) {
      w.int32(p.partitionIndex).int16(p.errorCode).int64(i64(p.highWatermark));
      if (v >= 4) w.int64(i64(p.lastStableOffset ?? -1n));
      if (v >= 5) w.int64(i64(p.logStartOffset ?? -1n));
      if (v >= 4) {
        const at = p.abortedTransactions;
        w.arrayLength(at === null ? null : at.length, flex);
        if (at !== null) {
          for (const a of at) {
            w.int64(i64(a.producerId)).int64(i64(a.firstOffset));
            if (flex) w.tags();
          }
        }
      }
      if (v >= 11) w.int32(p.preferredReadReplica ?? -1);
      w.bytes(bin(p.records), flex);
      if (flex) {
        const tags: Array<[number, Uint8Array]> = [];
        const de = p.divergingEpoch;
        if (de && (de.epoch !== -1 || i64(de.endOffset) !== -1n)) tags.push([0, sub((s) => s.int32(de.epoch).int64(i64(de.endOffset)).tags())]);
        const cl = p.currentLeader;
        if (cl && (cl.leaderId !== -1 || cl.leaderEpoch !== -1)) tags.push([1, sub((s) => s.int32(cl.leaderId).int32(cl.leaderEpoch).tags())]);
        const si = p.snapshotId;
        if (si && (i64(si.endOffset) !== -1n || si.epoch !== -1)) tags.push([2, sub((s) => s.int64(i64(si.endOffset)).int32(si.epoch).tags())]);
        w.tags(tags);
      }
    }
    if (flex) w.tags();
  }
  if (flex) {
    const tags: Array<[number, Uint8Array]> = [];
    const ne = v >= 16 ? m.nodeEndpoints : undefined;
    if (ne && ne.length > 0) {
      tags.push([
        0,
        sub((s) => {
          s.arrayLength(ne.length, true);
          for (const e of ne)
            s.int32(e.nodeId)
              .string(e.host, true)
              .int32(e.port)
              .string(e.rack ?? null, true)
              .tags();
        }),
      ]);
    }
    w.tags(tags);
  }
  return w.finish();
}

// ---------------------------------------------------------------- FindCoordinatorRequest (10), v0-6, flexible 3+
export function encodeFindCoordinatorRequest(m: Any, v: number): Uint8Array {
  const flex = v >= 3;
  const w = new WireWriter(64);
  if (v <= 3) w.string(m.key, flex);
  if (v >= 1) w.int8(m.keyType);
  if (v >= 4) {
    w.arrayLength(m.coordinatorKeys.length, flex);
    for (const k of m.coordinatorKeys) w.string(k, flex);
  }
  if (flex) w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- EndTxnRequest (26), v0-5, flexible 3+
export function encodeEndTxnRequest(m: Any, v: number): Uint8Array {
  const flex = v >= 3;
  const w = new WireWriter(64);
  w.string(m.transactionalId, flex).int64(i64(m.producerId)).int16(m.producerEpoch).bool(m.committed);
  if (flex) w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- InitProducerIdRequest (22), v0-6, flexible 2+
export function encodeInitProducerIdRequest(m: Any, v: number): Uint8Array {
  const flex = v >= 2;
  const w = new WireWriter(64);
  w.string(m.transactionalId ?? null, flex).int32(m.transactionTimeoutMs);
  if (v >= 3) w.int64(i64(m.producerId ?? -1n)).int16(m.producerEpoch ?? -1);
  if (v >= 6) w.bool(m.enable2Pc ?? false).bool(m.keepPreparedTxn ?? false);
  if (flex) w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- TxnShareAcknowledgeRequest (96, KIP-1289), v0-1, flexible 0+
export function encodeTxnShareAcknowledgeRequest(m: Any, v: number): Uint8Array {
  const w = new WireWriter(32 * 1024);
  w.string(m.groupId, true).string(m.transactionalId, true).int64(i64(m.producerId)).int16(m.producerEpoch);
  if (v >= 1) w.string(m.memberId ?? '', true).int32(m.generationId ?? -1);
  w.arrayLength(m.topics.length, true);
  for (const t of m.topics) {
    w.uuid(t.topicId);
    w.arrayLength(t.partitions.length, true);
    for (const p of t.partitions) {
      w.int32(p.partition);
      w.arrayLength(p.acknowledgementBatches.length, true);
      for (const b of p.acknowledgementBatches) {
        w.int64(i64(b.firstOffset)).int64(i64(b.lastOffset)).int8(b.acknowledgeType).tags();
      }
      w.tags();
    }
    w.tags();
  }
  w.tags();
  return w.finish();
}

// ---------------------------------------------------------------- RequestHeader v1-2 (v2 flexible; ClientId never compact)
export function encodeRequestHeader(m: Any, v: number): Uint8Array {
  const w = new WireWriter(64);
  w.int16(m.requestApiKey).int16(m.requestApiVersion).int32(m.correlationId);
  if (v >= 1) w.string(m.clientId ?? null, false);
  if (v >= 2) w.tags();
  return w.finish();
}

/** Flexible-version thresholds of the request APIs of workload 4 (from the schemas). */
export const REQUEST_FLEXIBLE_FROM: Record<number, number> = {
  0: 9, // Produce
  10: 3, // FindCoordinator
  22: 2, // InitProducerId
  26: 3, // EndTxn
  96: 0, // TxnShareAcknowledge
};

/** int32 size + RequestHeader (v2 if the API version is flexible, else v1) + body. */
export function frameRequest(apiKey: number, apiVersion: number, correlationId: number, clientId: string | null, body: Uint8Array): Uint8Array {
  const headerVersion = apiVersion >= (REQUEST_FLEXIBLE_FROM[apiKey] ?? Infinity) ? 2 : 1;
  const header = encodeRequestHeader({ requestApiKey: apiKey, requestApiVersion: apiVersion, correlationId, clientId }, headerVersion);
  const size = new WireWriter(4).int32(header.length + body.length).finish();
  return concat([size, header, body]);
}
