// @platformatic/kafka 2.12.1 adapter. Everything used here is a public export of the
// package entry: per-version API modules (`produceV11`, `metadataV12`, `fetchV17`,
// `findCoordinatorV6`, `endTxnV4`, `initProducerIdV5`, …) and `Reader`/`Writer`.
//
// How platformatic encodes/decodes (read from node_modules/@platformatic/kafka/dist/):
// - apis/<group>/<api>-vN.js exports `createRequest(...args)` → Writer holding the BODY
//   only (a list of Buffers; `.buffer` concatenates), and
//   `parseResponse(correlationId, apiKey, apiVersion, reader)` → plain object, reading
//   the body after the response header. parseResponse checks error codes inline and
//   throws ResponseError if any is non-zero (the workloads have none).
// - The request header and int32 size are written inline in Connection.send
//   (network/connection.js): Writer.appendInt16(apiKey).appendInt16(apiVersion)
//   .appendInt32(correlationId).appendString(clientId, false) [+ appendTaggedFields() for
//   header v2], appendFrom(payload).prependLength(), then `.buffer`. There is no exported
//   function for it, so smallRequest() replays those statements.
// - No response encoders at all.
import * as platformatic from '@platformatic/kafka';
import { Reader, Writer, endTxnV4, fetchV17, findCoordinatorV6, initProducerIdV5, metadataV12, produceV11 } from '@platformatic/kafka';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ChunksCase, DecodeCase, EncodeCase, PeerAdapter } from '../types.js';
import type { ProduceWorkload, SmallRequest, SmallRequestsWorkload } from '../workloads.js';
import { flatFromBatches } from '../normalize.js';
import { hexUuidToKafka } from '../wire.js';
import { PEER_VERSIONS, assertVersions } from './versions.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
// package.json is not in the package's "exports"; read it next to the resolved entry (dist/index.js).
const entry = createRequire(import.meta.url).resolve('@platformatic/kafka');
const libVersion: string = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version;

export const PLATFORMATIC_VERSIONS = PEER_VERSIONS.platformatic;
{
  // the highest vN export of each API module family
  const highest = (prefix: string): number =>
    Math.max(
      ...Object.keys(platformatic)
        .filter((k) => new RegExp(`^${prefix}V\\d+$`).test(k))
        .map((k) => Number(k.slice(prefix.length + 1))),
    );
  assertVersions('platformatic', {
    libVersion,
    Produce: highest('produce'),
    Metadata: highest('metadata'),
    Fetch: highest('fetch'),
    FindCoordinator: highest('findCoordinator'),
    EndTxn: highest('endTxn'),
    InitProducerId: highest('initProducerId'),
  });
}

// Connection.send's framing, statement for statement (flexible = the api's
// hasRequestHeaderTaggedFields flag, which createAPI() keeps private).
function frame(apiKey: number, apiVersion: number, correlationId: number, clientId: string, flexibleHeader: boolean, payload: any): Buffer {
  const writer = Writer.create();
  writer.appendInt16(apiKey).appendInt16(apiVersion).appendInt32(correlationId).appendString(clientId, false);
  if (flexibleHeader) writer.appendTaggedFields();
  writer.appendFrom(payload).prependLength();
  return writer.buffer;
}

const normalizeMetadataV12 = (d: any) => ({
  throttleTimeMs: d.throttleTimeMs,
  brokers: d.brokers.map((b: any) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
  clusterId: d.clusterId,
  controllerId: d.controllerId,
  topics: d.topics.map((t: any) => ({
    errorCode: t.errorCode,
    name: t.name,
    topicId: hexUuidToKafka(t.topicId), // platformatic gives hyphenated hex
    isInternal: t.isInternal,
    partitions: t.partitions,
    topicAuthorizedOperations: t.topicAuthorizedOperations,
  })),
});

const normalizeFetchV17 = (d: any) => ({
  throttleTimeMs: d.throttleTimeMs,
  errorCode: d.errorCode,
  sessionId: d.sessionId,
  responses: d.responses.map((t: any) => ({
    topicId: hexUuidToKafka(t.topicId),
    partitions: t.partitions.map((p: any) => ({
      partitionIndex: p.partitionIndex,
      errorCode: p.errorCode,
      highWatermark: p.highWatermark,
      lastStableOffset: p.lastStableOffset,
      logStartOffset: p.logStartOffset,
      abortedTransactions: p.abortedTransactions,
      preferredReadReplica: p.preferredReadReplica,
      records: flatFromBatches(p.records),
    })),
  })),
});

/**
 * The body of produce-v11 createRequestAsync(), which takes per-partition record
 * batches as Writers (normally made by createRecordsBatchAsync). Here each Writer wraps
 * a pre-built batch; the statements are platformatic's, on its Writer. Returns the
 * request's Writer, whose `.buffer` concatenates and whose `.buffers` does not.
 */
function produceV11Replica(w: ProduceWorkload): () => InstanceType<typeof Writer> {
  const topics = w.topics.map((t) => ({
    topic: t.name,
    partitions: t.partitions.map((p) => ({ partition: p.index, records: Writer.create().append(Buffer.from(p.batch)) })),
  }));
  const acks = w.acks;
  const timeout = w.timeoutMs;
  const transactionalId = undefined;
  return () =>
    Writer.create()
      .appendString(transactionalId)
      .appendInt16(acks)
      .appendInt32(timeout)
      .appendArray(topics, (w: any, { topic, partitions }: any) => {
        w.appendString(topic).appendArray(partitions, (w: any, { partition, records }: any) => {
          w.appendInt32(partition)
            .appendUnsignedVarInt(records.length + 1)
            .appendFrom(records);
        });
      })
      .appendTaggedFields();
}

export const platformaticPeer: PeerAdapter = {
  lib: 'platformatic',
  libVersion,

  producePrebuilt(w): EncodeCase {
    const request = produceV11Replica(w);
    return {
      version: PLATFORMATIC_VERSIONS.Produce,
      async: false,
      encode: () => request().buffer,
      note: 'platformatic has no raw-batch entry point either: bench replica of produce-v11 createRequestAsync (its Writer) fed Writers wrapping the pre-built batches',
    };
  },

  producePrebuiltChunks(w): ChunksCase {
    const request = produceV11Replica(w);
    return {
      version: PLATFORMATIC_VERSIONS.Produce,
      async: false,
      encode: () => request().buffers,
      note: "the same replica, ending at its Writer's chunk list (`.buffers`, the batches not copied) instead of `.buffer` (one Buffer.concat)",
    };
  },

  produceFromMessages(w): EncodeCase {
    // platformatic's producer passes a flat list of messages; createRequest groups them by
    // topic and partition and builds one RecordBatch per partition (createRecordsBatch).
    const messages = w.topics.flatMap((t) =>
      t.partitions.flatMap((p) =>
        p.records.map((r) => ({
          topic: t.name,
          partition: p.index,
          key: r.key && Buffer.from(r.key),
          value: r.value && Buffer.from(r.value),
          headers: new Map(r.headers.map(([k, v]) => [Buffer.from(k), v && Buffer.from(v)])),
          timestamp: r.timestamp,
        })),
      ),
    );
    return {
      version: PLATFORMATIC_VERSIONS.Produce,
      async: false,
      encode: () => (produceV11.createRequest as any)(w.acks, w.timeoutMs, messages, {}).buffer,
      note: 'platformatic groups the flat message list and builds every RecordBatch v2 (records, varints, CRC-32C) inside createRequest',
    };
  },

  metadataDecode(): DecodeCase {
    const v = PLATFORMATIC_VERSIONS.Metadata;
    return {
      version: v,
      async: false,
      decode: (bytes) => (metadataV12.parseResponse as any)(0, 3, v, Reader.from(bytes)),
      normalize: normalizeMetadataV12,
    };
  },

  metadataEncode: () => null, // no response encoders

  fetchDecode(): DecodeCase {
    const v = PLATFORMATIC_VERSIONS.Fetch;
    return {
      version: v,
      async: false,
      decode: (bytes) => (fetchV17.parseResponse as any)(0, 1, v, Reader.from(bytes)),
      normalize: normalizeFetchV17,
      note: 'platformatic parses every record batch into batch + record objects (bigint deltas, key/value/header views)',
    };
  },

  smallRequest(w, api): EncodeCase {
    const { clientId, correlationId } = w;
    const { apiKey, version, body } = platformaticSmallRequest(w, api);
    // All three versions used here are flexible, so platformatic sends RequestHeader v2.
    return {
      version,
      async: false,
      encode: () => frame(apiKey, version, correlationId, clientId, true, body()),
      note: 'header + size: replay of Connection.send (not exported)',
    };
  },

  smallRequestBody(w, api): EncodeCase {
    const { version, body } = platformaticSmallRequest(w, api);
    return { version, async: false, encode: () => body().buffer, note: "the API's createRequest: its Writer's buffer" };
  },
};

/** The API key, version and body maker (the API's createRequest) of a small request. */
function platformaticSmallRequest(w: SmallRequestsWorkload, api: SmallRequest['api']): { apiKey: number; version: number; body: () => any } {
  let version: number;
  let apiKey: number;
  let body: () => any;
  switch (api) {
    case 'FindCoordinatorRequest':
      [apiKey, version] = [10, PLATFORMATIC_VERSIONS.FindCoordinator];
      body = () => (findCoordinatorV6.createRequest as any)(1, [w.transactionalId]);
      break;
    case 'EndTxnRequest':
      [apiKey, version] = [26, PLATFORMATIC_VERSIONS.EndTxn];
      body = () => (endTxnV4.createRequest as any)(w.transactionalId, w.producerId, w.producerEpoch, true);
      break;
    case 'InitProducerIdRequest':
      [apiKey, version] = [22, PLATFORMATIC_VERSIONS.InitProducerId];
      body = () => (initProducerIdV5.createRequest as any)(w.transactionalId, 60_000);
      break;
  }
  return { apiKey, version, body };
}
