// Deterministic inputs of the codec benchmark (fixed seeds). Every message object is in
// the generated code's shape (lowerCamelCase schema field names, int64 bigint, uuid
// 22-char base64url, bytes/records Uint8Array) and carries exactly the fields of the
// version it is built for. Peer adapters translate these objects into their own input
// shapes outside the timed loops.
import { buildRecordBatch, type BenchRecord, type FlatRecord } from './recordBatch.js';
import * as ref from './reference.js';
import { prng, randomAscii, randomUuid, toHex } from './wire.js';

const BASE_TS = 1_767_225_600_000n; // 2026-01-01T00:00:00Z
export const CLIENT_ID = 'kipgen-bench-client';
export const CORRELATION_ID = 1_000_003;

function makeRecords(rand: () => number, n: number, keyLen: number, valueLen: number, ts0: bigint): BenchRecord[] {
  const out: BenchRecord[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      key: randomAscii(rand, keyLen),
      value: randomAscii(rand, valueLen),
      headers: [['trace-id', randomAscii(rand, 16)]],
      timestamp: ts0 + BigInt(i * 3 + Math.floor(rand() * 3)), // non-decreasing
    });
  }
  return out;
}

// ============================================================== W1 ProduceRequest
export interface ProducePartition {
  index: number;
  records: BenchRecord[]; // the messages (for peers that build batches themselves)
  batch: Uint8Array; // the pre-built RecordBatch v2 of those messages
}
export interface ProduceWorkload {
  acks: number;
  timeoutMs: number;
  transactionalId: null;
  topics: Array<{ name: string; topicId: string; partitions: ProducePartition[] }>;
  /** Our message object for a version (3-12: topic names). */
  message(version: number): unknown;
  /** Expected body bytes (no header, no size prefix) at a version. */
  expected(version: number): Uint8Array;
  recordsPerBatch: number;
  batchBytes: number;
}

export interface ProduceShape {
  seed: number;
  topics: number;
  partitions: number;
  /** Records per batch (one batch per partition): 16 B key, one 16 B header. */
  records: number;
  valueBytes: number;
}

/** 4 topics × 25 partitions, each a batch of 10 records with 200 B values (~2.6 KB a batch). */
export const PRODUCE_BATCHES: ProduceShape = { seed: 0x5eed0001, topics: 4, partitions: 25, records: 10, valueBytes: 200 };
/**
 * 10 topics × 10 partitions of 10 records with 100 B values (~1.5 KB a batch): structure (topic
 * names, partition headers, length prefixes, tagged-field sections) weighs more against the
 * record bytes, so this is where the flexible form's overhead shows.
 */
export const PRODUCE_SMALL_BATCHES: ProduceShape = { seed: 0x5eed0011, topics: 10, partitions: 10, records: 10, valueBytes: 100 };

export function produceWorkload(shape: ProduceShape = PRODUCE_BATCHES): ProduceWorkload {
  const rand = prng(shape.seed);
  const { topics: TOPICS, partitions: PARTITIONS, records: RECORDS } = shape;
  let batchBytes = 0;
  const topics = Array.from({ length: TOPICS }, (_, t) => ({
    name: `bench.orders.v1.t${t}`,
    topicId: randomUuid(rand),
    partitions: Array.from({ length: PARTITIONS }, (_, p): ProducePartition => {
      const records = makeRecords(rand, RECORDS, 16, shape.valueBytes, BASE_TS + BigInt(t * 1000 + p * 37));
      const batch = buildRecordBatch(records);
      batchBytes += batch.length;
      return { index: p, records, batch };
    }),
  }));
  const message = (version: number) => ({
    transactionalId: null,
    acks: -1,
    timeoutMs: 30_000,
    topicData: topics.map((t) =>
      version >= 13
        ? { topicId: t.topicId, partitionData: t.partitions.map((p) => ({ index: p.index, records: p.batch })) }
        : { name: t.name, partitionData: t.partitions.map((p) => ({ index: p.index, records: p.batch })) },
    ),
  });
  const cache = new Map<number, Uint8Array>();
  return {
    acks: -1,
    timeoutMs: 30_000,
    transactionalId: null,
    topics,
    message,
    expected: (v) => {
      if (!cache.has(v)) cache.set(v, ref.encodeProduceRequest(message(v), v));
      return cache.get(v)!;
    },
    recordsPerBatch: RECORDS,
    batchBytes,
  };
}

// ============================================================== W2 MetadataResponse
export interface MetadataWorkload {
  message(version: number): Record<string, unknown>;
  bytes(version: number): Uint8Array;
  partitions: number;
}

export function metadataWorkload(): MetadataWorkload {
  const rand = prng(0x5eed0002);
  const BROKERS = 6;
  const TOPICS = 10;
  const PARTITIONS = 100; // 10 x 100 = 1,000 partitions
  const RF = 3;
  const brokers = Array.from({ length: BROKERS }, (_, b) => ({
    nodeId: b + 1,
    host: `broker-${b + 1}.kafka.bench.internal`,
    port: 9092,
    rack: `rack-${'abc'[b % 3]}`,
  }));
  const topics = Array.from({ length: TOPICS }, (_, t) => ({
    name: `bench.metadata.topic-${String(t).padStart(3, '0')}`,
    topicId: randomUuid(rand),
    partitions: Array.from({ length: PARTITIONS }, (_, p) => {
      const first = (t + p) % BROKERS;
      const replicas = Array.from({ length: RF }, (_, r) => ((first + r) % BROKERS) + 1);
      // every 7th partition has a lagging follower out of the ISR
      const isr = p % 7 === 3 ? replicas.slice(0, RF - 1) : replicas.slice();
      return {
        errorCode: 0,
        partitionIndex: p,
        leaderId: replicas[0]!,
        leaderEpoch: Math.floor(rand() * 50),
        replicaNodes: replicas,
        isrNodes: isr,
        offlineReplicas: [] as number[],
      };
    }),
  }));
  const message = (v: number): Record<string, unknown> => {
    const m: Record<string, unknown> = {};
    if (v >= 3) m.throttleTimeMs = 0;
    m.brokers = brokers.map((b) => (v >= 1 ? { ...b } : { nodeId: b.nodeId, host: b.host, port: b.port }));
    if (v >= 2) m.clusterId = 'kB7xQm2nTzW9vC4pL1sYhA';
    if (v >= 1) m.controllerId = 1;
    m.topics = topics.map((t) => {
      const o: Record<string, unknown> = { errorCode: 0, name: t.name };
      if (v >= 10) o.topicId = t.topicId;
      if (v >= 1) o.isInternal = false;
      o.partitions = t.partitions.map((p) => {
        const q: Record<string, unknown> = { errorCode: p.errorCode, partitionIndex: p.partitionIndex, leaderId: p.leaderId };
        if (v >= 7) q.leaderEpoch = p.leaderEpoch;
        q.replicaNodes = p.replicaNodes;
        q.isrNodes = p.isrNodes;
        if (v >= 5) q.offlineReplicas = p.offlineReplicas;
        return q;
      });
      if (v >= 8) o.topicAuthorizedOperations = -2147483648;
      return o;
    });
    if (v >= 8 && v <= 10) m.clusterAuthorizedOperations = -2147483648;
    if (v >= 13) m.errorCode = 0;
    return m;
  };
  const cache = new Map<number, Uint8Array>();
  return {
    message,
    bytes: (v) => {
      if (!cache.has(v)) cache.set(v, ref.encodeMetadataResponse(message(v), v));
      return cache.get(v)!;
    },
    partitions: TOPICS * PARTITIONS,
  };
}

// ============================================================== W3 FetchResponse
export interface FetchWorkload {
  message(version: number): Record<string, unknown>;
  bytes(version: number): Uint8Array;
  /** Canonical decoded form at a version: records as FlatRecord[] (derived from the model, not parsed). */
  canonical(version: number): Record<string, unknown>;
  recordBytes: number;
  recordCount: number;
  batchCount: number;
}

export function fetchWorkload(): FetchWorkload {
  const rand = prng(0x5eed0003);
  const TOPICS = 2;
  const PARTITIONS = 4; // 8 partitions x 128 KiB of record batches = 1 MiB of records
  const PER_PARTITION = 128 * 1024;
  const RECORDS_PER_BATCH = 16;
  let recordBytes = 0;
  let recordCount = 0;
  let batchCount = 0;
  const topics = Array.from({ length: TOPICS }, (_, t) => ({
    name: `bench.fetch.topic-${t}`,
    topicId: randomUuid(rand),
    partitions: Array.from({ length: PARTITIONS }, (_, p) => {
      const batches: Uint8Array[] = [];
      const flat: FlatRecord[] = [];
      let size = 0;
      let offset = 1_000_000n * BigInt(p + 1);
      const logStart = offset;
      let ts = BASE_TS + BigInt(t * 100_000 + p * 10_000);
      while (size < PER_PARTITION) {
        const records = makeRecords(rand, RECORDS_PER_BATCH, 16, 457, ts);
        const batch = buildRecordBatch(records, {
          baseOffset: offset,
          partitionLeaderEpoch: 5,
          producerId: 7_000_000n + BigInt(t * 10 + p),
          producerEpoch: 0,
          baseSequence: Number(offset - logStart),
        });
        // keep the total at exactly PER_PARTITION or a little under the next batch
        if (size + batch.length > PER_PARTITION && size > 0) break;
        records.forEach((r, i) =>
          flat.push({
            offset: offset + BigInt(i),
            timestamp: r.timestamp,
            key: r.key && toHex(r.key),
            value: r.value && toHex(r.value),
            headers: r.headers.map(([k, v]) => [k, v && toHex(v)]),
          }),
        );
        batches.push(batch);
        size += batch.length;
        offset += BigInt(records.length);
        ts = records[records.length - 1]!.timestamp + 1n;
        batchCount++;
      }
      const records = new Uint8Array(size);
      let o = 0;
      for (const b of batches) {
        records.set(b, o);
        o += b.length;
      }
      recordBytes += size;
      recordCount += flat.length;
      return {
        partitionIndex: p,
        errorCode: 0,
        highWatermark: offset,
        lastStableOffset: offset,
        logStartOffset: logStart,
        abortedTransactions: [] as Array<{ producerId: bigint; firstOffset: bigint }>,
        preferredReadReplica: -1,
        records,
        flat,
      };
    }),
  }));
  const build = (v: number, canonical: boolean): Record<string, unknown> => {
    const m: Record<string, unknown> = {};
    if (v >= 1) m.throttleTimeMs = 0;
    if (v >= 7) {
      m.errorCode = 0;
      m.sessionId = 424242;
    }
    m.responses = topics.map((t) => ({
      ...(v <= 12 ? { topic: t.name } : { topicId: t.topicId }),
      partitions: t.partitions.map((p) => {
        const q: Record<string, unknown> = {
          partitionIndex: p.partitionIndex,
          errorCode: p.errorCode,
          highWatermark: p.highWatermark,
        };
        if (v >= 4) q.lastStableOffset = p.lastStableOffset;
        if (v >= 5) q.logStartOffset = p.logStartOffset;
        if (v >= 4) q.abortedTransactions = p.abortedTransactions;
        if (v >= 11) q.preferredReadReplica = p.preferredReadReplica;
        q.records = canonical ? p.flat : p.records;
        return q;
      }),
    }));
    return m;
  };
  const cache = new Map<number, Uint8Array>();
  return {
    message: (v) => build(v, false),
    canonical: (v) => build(v, true),
    bytes: (v) => {
      if (!cache.has(v)) cache.set(v, ref.encodeFetchResponse(build(v, false), v));
      return cache.get(v)!;
    },
    recordBytes,
    recordCount,
    batchCount,
  };
}

// ============================================================== W4 small framed requests
export interface SmallRequest {
  api: 'FindCoordinatorRequest' | 'EndTxnRequest' | 'InitProducerIdRequest';
  apiKey: number;
  message(version: number): Record<string, unknown>;
  /** int32 size + RequestHeader (v1/v2) + body. */
  expected(version: number): Uint8Array;
  /** The body alone. */
  expectedBody(version: number): Uint8Array;
}
export interface SmallRequestsWorkload {
  clientId: string;
  correlationId: number;
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  requests: Record<SmallRequest['api'], SmallRequest>;
}

export function smallRequestsWorkload(): SmallRequestsWorkload {
  const transactionalId = 'kipgen-bench-txn-producer-0007';
  const producerId = 4_200_000_001n;
  const producerEpoch = 3;
  const mk = (api: SmallRequest['api'], apiKey: number, message: SmallRequest['message'], body: (m: unknown, v: number) => Uint8Array): SmallRequest => ({
    api,
    apiKey,
    message,
    expected: (v) => ref.frameRequest(apiKey, v, CORRELATION_ID, CLIENT_ID, body(message(v), v)),
    expectedBody: (v) => body(message(v), v),
  });
  return {
    clientId: CLIENT_ID,
    correlationId: CORRELATION_ID,
    transactionalId,
    producerId,
    producerEpoch,
    requests: {
      FindCoordinatorRequest: mk(
        'FindCoordinatorRequest',
        10,
        (v) => {
          const m: Record<string, unknown> = {};
          if (v <= 3) m.key = transactionalId;
          if (v >= 1) m.keyType = 1; // TRANSACTION
          if (v >= 4) m.coordinatorKeys = [transactionalId];
          return m;
        },
        ref.encodeFindCoordinatorRequest,
      ),
      EndTxnRequest: mk('EndTxnRequest', 26, () => ({ transactionalId, producerId, producerEpoch, committed: true }), ref.encodeEndTxnRequest),
      InitProducerIdRequest: mk(
        'InitProducerIdRequest',
        22,
        (v) => {
          const m: Record<string, unknown> = { transactionalId, transactionTimeoutMs: 60_000 };
          if (v >= 3) {
            m.producerId = -1n;
            m.producerEpoch = -1;
          }
          if (v >= 6) {
            m.enable2Pc = false;
            m.keepPreparedTxn = false;
          }
          return m;
        },
        ref.encodeInitProducerIdRequest,
      ),
    },
  };
}

// ============================================================== W5 TxnShareAcknowledgeRequest (KIP-1289)
export interface TxnShareAckWorkload {
  message(version: number): Record<string, unknown>;
  bytes(version: number): Uint8Array;
  batches: number;
}

export function txnShareAckWorkload(): TxnShareAckWorkload {
  const rand = prng(0x5eed0005);
  const TOPICS = 4;
  const PARTITIONS = 10;
  const BATCHES = 25; // 4 x 10 x 25 = 1,000 acknowledgement batches
  const topics = Array.from({ length: TOPICS }, () => ({
    topicId: randomUuid(rand),
    partitions: Array.from({ length: PARTITIONS }, (_, p) => {
      let offset = BigInt(Math.floor(rand() * 1_000_000));
      return {
        partition: p,
        acknowledgementBatches: Array.from({ length: BATCHES }, () => {
          const first = offset;
          const len = 1 + Math.floor(rand() * 20);
          offset += BigInt(len + Math.floor(rand() * 5));
          const x = rand();
          return { firstOffset: first, lastOffset: first + BigInt(len - 1), acknowledgeType: x < 0.8 ? 1 : x < 0.95 ? 2 : 3 };
        }),
      };
    }),
  }));
  const memberId = randomUuid(rand);
  const message = (v: number): Record<string, unknown> => ({
    groupId: 'bench-share-group',
    transactionalId: 'kipgen-bench-txn-producer-0007',
    producerId: 4_200_000_001n,
    producerEpoch: 3,
    ...(v >= 1 ? { memberId, generationId: 17 } : {}),
    topics,
  });
  const cache = new Map<number, Uint8Array>();
  return {
    message,
    bytes: (v) => {
      if (!cache.has(v)) cache.set(v, ref.encodeTxnShareAcknowledgeRequest(message(v), v));
      return cache.get(v)!;
    },
    batches: TOPICS * PARTITIONS * BATCHES,
  };
}
