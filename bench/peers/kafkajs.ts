// kafkajs 2.2.4 adapter. kafkajs is CommonJS and exports no protocol API from its
// package entry, so the adapter requires its internal modules under src/protocol/
// (package.json has no "exports" map, so deep requires are allowed).
//
// How kafkajs encodes/decodes (read from node_modules/kafkajs/src/protocol/):
// - requests/<api>/index.js: `protocol({ version })(args)` → `{ request, response }`.
//   `request.encode()` is async and resolves to an Encoder holding the BODY only (no
//   header, no size); `.buffer` is a Buffer view of it.
// - request.js: `await Request({ correlationId, clientId, request })` → Encoder with
//   int32 size + RequestHeader v1 (apiKey, apiVersion, correlationId, int16 clientId) +
//   body. kafkajs never writes header v2: it supports no flexible version of any API.
// - requests/<api>/vN/response.js: `decode(buffer)` is async, reads the body after the
//   response header (kafkajs strips size and correlation id first), returns a plain
//   object; `parse(data)` is a separate error check (not timed here, as the others do
//   no error check or do it inline).
// - No response encoders at all.
import { createRequire } from 'node:module';
import type { DecodeCase, EncodeCase, PeerAdapter } from '../types.js';
import { flatFromKafkajs } from '../normalize.js';
import { PEER_VERSIONS, assertVersions } from './versions.js';
import type { ProduceWorkload, SmallRequest, SmallRequestsWorkload } from '../workloads.js';

const require = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any */
const Encoder: any = require('kafkajs/src/protocol/encoder');
const Long: any = require('kafkajs/src/utils/long');
const encodeRequestFrame: (a: { correlationId: number; clientId: string; request: any }) => Promise<any> = require('kafkajs/src/protocol/request');
const produce: any = require('kafkajs/src/protocol/requests/produce');
const findCoordinator: any = require('kafkajs/src/protocol/requests/findCoordinator');
const endTxn: any = require('kafkajs/src/protocol/requests/endTxn');
const initProducerId: any = require('kafkajs/src/protocol/requests/initProducerId');
const metadataV6Response: any = require('kafkajs/src/protocol/requests/metadata/v6/response');
const fetchV11Response: any = require('kafkajs/src/protocol/requests/fetch/v11/response');
const libVersion: string = require('kafkajs/package.json').version;

const maxVersion = (mod: { versions: string[] }): number => Math.max(...mod.versions.map(Number));
const hasVersion = (dir: string, v: number): boolean => {
  try {
    require.resolve(`kafkajs/src/protocol/requests/${dir}/v${v}/response`);
    return true;
  } catch {
    return false;
  }
};
const highest = (dir: string): number => {
  let v = 0;
  while (hasVersion(dir, v + 1)) v++;
  return v;
};
export const KAFKAJS_VERSIONS = PEER_VERSIONS.kafkajs;
assertVersions('kafkajs', {
  libVersion,
  Produce: maxVersion(produce),
  Metadata: highest('metadata'),
  Fetch: highest('fetch'),
  FindCoordinator: maxVersion(findCoordinator),
  EndTxn: maxVersion(endTxn),
  InitProducerId: maxVersion(initProducerId),
});

/** kafkajs `topicData` with messages: what its producer passes to Produce. */
function kafkajsTopicData(w: ProduceWorkload) {
  return w.topics.map((t) => ({
    topic: t.name,
    partitions: t.partitions.map((p) => ({
      partition: p.index,
      messages: p.records.map((r) => ({
        key: r.key && Buffer.from(r.key),
        value: r.value && Buffer.from(r.value),
        headers: Object.fromEntries(r.headers.map(([k, v]) => [k, v && Buffer.from(v)])),
        timestamp: Number(r.timestamp),
      })),
    })),
  }));
}

// Replica of requests/produce/v3/request.js (which v4-v7 reuse with another apiVersion)
// with the RecordBatch construction removed: kafkajs has no way to take pre-built batch
// bytes, so this is kafkajs's own framing code, statement for statement, using kafkajs's
// Encoder, with `writeBuffer(batch)` where the original has `writeEncoder(recordBatch)`
// (both end in writeBufferInternal). The async/await structure is kept as in kafkajs.
function kafkajsProduceFramingReplica({ acks, timeout, topicData }: { acks: number; timeout: number; topicData: any[] }) {
  const transactionalId = null;
  const producerId = Long.fromInt(-1);
  const producerEpoch = 0;
  const encodePartition = async ({ partition, batch }: { partition: number; batch: Buffer }) =>
    new Encoder().writeInt32(partition).writeInt32(batch.length).writeBuffer(batch);
  const encodeTopic = async ({ topic, partitions, transactionalId, producerId, producerEpoch }: any) => {
    const encodedPartitions = [];
    for (const data of partitions) {
      encodedPartitions.push(await encodePartition({ ...data, transactionalId, producerId, producerEpoch }));
    }
    return new Encoder().writeString(topic).writeArray(encodedPartitions);
  };
  return async () => {
    const encodedTopicData = [];
    for (const data of topicData) {
      encodedTopicData.push(await encodeTopic({ ...data, transactionalId, producerId, producerEpoch }));
    }
    return new Encoder().writeString(transactionalId).writeInt16(acks).writeInt32(timeout).writeArray(encodedTopicData);
  };
}

const normalizeMetadataV6 = (d: any) => ({
  throttleTimeMs: d.clientSideThrottleTime, // v6 decode moves the broker's throttle here
  brokers: d.brokers.map((b: any) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
  clusterId: d.clusterId,
  controllerId: d.controllerId,
  topics: d.topicMetadata.map((t: any) => ({
    errorCode: t.topicErrorCode,
    name: t.topic,
    isInternal: t.isInternal,
    partitions: t.partitionMetadata.map((p: any) => ({
      errorCode: p.partitionErrorCode,
      partitionIndex: p.partitionId,
      leaderId: p.leader,
      replicaNodes: p.replicas,
      isrNodes: p.isr,
      offlineReplicas: p.offlineReplicas,
    })),
  })),
});

const normalizeFetchV11 = (d: any) => ({
  throttleTimeMs: d.clientSideThrottleTime,
  errorCode: d.errorCode,
  sessionId: d.sessionId,
  responses: d.responses.map((t: any) => ({
    topic: t.topicName,
    partitions: t.partitions.map((p: any) => ({
      partitionIndex: p.partition,
      errorCode: p.errorCode,
      highWatermark: BigInt(p.highWatermark),
      lastStableOffset: BigInt(p.lastStableOffset),
      logStartOffset: BigInt(p.lastStartOffset), // sic: kafkajs's field name
      abortedTransactions: p.abortedTransactions.map((a: any) => ({ producerId: BigInt(a.producerId), firstOffset: BigInt(a.firstOffset) })),
      preferredReadReplica: p.preferredReadReplica,
      records: flatFromKafkajs(p.messages),
    })),
  })),
});

export const kafkajsPeer: PeerAdapter = {
  lib: 'kafkajs',
  libVersion,

  producePrebuilt(w): EncodeCase {
    const topicData = w.topics.map((t) => ({
      topic: t.name,
      partitions: t.partitions.map((p) => ({ partition: p.index, batch: Buffer.from(p.batch) })),
    }));
    const encode = kafkajsProduceFramingReplica({ acks: w.acks, timeout: w.timeoutMs, topicData });
    return {
      version: KAFKAJS_VERSIONS.Produce,
      async: true,
      encode: async () => (await encode()).buffer,
      note: 'kafkajs cannot take pre-built batches: bench replica of its produce/v3 request encoder (its Encoder, its async structure) minus RecordBatch construction',
    };
  },

  // kafkajs's Encoder is one growing Buffer: it has no chunk list to end at.
  producePrebuiltChunks: () => null,

  produceFromMessages(w): EncodeCase {
    const { request } = produce.protocol({ version: KAFKAJS_VERSIONS.Produce })({
      acks: w.acks,
      timeout: w.timeoutMs,
      compression: 0,
      topicData: kafkajsTopicData(w),
    });
    return {
      version: request.apiVersion,
      async: true,
      encode: async () => (await request.encode()).buffer,
      note: 'kafkajs builds every RecordBatch v2 (records, varints, CRC-32C) from message objects inside Produce encode',
    };
  },

  metadataDecode(): DecodeCase {
    return {
      version: KAFKAJS_VERSIONS.Metadata,
      async: true,
      decode: (bytes) => metadataV6Response.decode(bytes),
      normalize: normalizeMetadataV6,
    };
  },

  metadataEncode: () => null, // kafkajs has no response encoders

  fetchDecode(): DecodeCase {
    return {
      version: KAFKAJS_VERSIONS.Fetch,
      async: true,
      decode: (bytes) => fetchV11Response.decode(bytes),
      normalize: normalizeFetchV11,
      note: 'kafkajs decodes every record into a message object (offset/timestamp as strings via Long, headers folded into an object, batchContext per record)',
    };
  },

  smallRequest(w, api): EncodeCase {
    const request = kafkajsSmallRequest(w, api);
    const frame = { correlationId: w.correlationId, clientId: w.clientId, request };
    return {
      version: request.apiVersion,
      async: true,
      encode: async () => (await encodeRequestFrame(frame)).buffer,
    };
  },

  smallRequestBody(w, api): EncodeCase {
    const request = kafkajsSmallRequest(w, api);
    return {
      version: request.apiVersion,
      async: true,
      encode: async () => (await request.encode()).buffer,
      note: "the request's own encode(): its Encoder's buffer",
    };
  },
};

/** kafkajs's request object (apiKey, apiVersion, encode) of a small request. */
function kafkajsSmallRequest(w: SmallRequestsWorkload, api: SmallRequest['api']): any {
  let request: any;
  switch (api) {
    case 'FindCoordinatorRequest':
      request = findCoordinator.protocol({ version: KAFKAJS_VERSIONS.FindCoordinator })({
        groupId: w.transactionalId, // kafkajs names the key groupId whatever its type
        coordinatorType: 1, // TRANSACTION
      }).request;
      break;
    case 'EndTxnRequest':
      request = endTxn.protocol({ version: KAFKAJS_VERSIONS.EndTxn })({
        transactionalId: w.transactionalId,
        producerId: w.producerId, // kafkajs's Long.fromValue accepts bigint
        producerEpoch: w.producerEpoch,
        transactionResult: true,
      }).request;
      break;
    case 'InitProducerIdRequest':
      request = initProducerId.protocol({ version: KAFKAJS_VERSIONS.InitProducerId })({
        transactionalId: w.transactionalId,
        transactionTimeout: 60_000,
      }).request;
      break;
  }
  return request;
}
