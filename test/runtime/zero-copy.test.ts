import { describe, expect, it } from 'vitest';
import { FetchResponse, MetadataResponse, ProduceRequest, RequestHeader } from '../../generated/index.js';
import { createFetchableTopicResponse, createPartitionData } from '../../generated/FetchResponse.js';
import { createMetadataResponseBroker, createMetadataResponsePartition, createMetadataResponseTopic } from '../../generated/MetadataResponse.js';
import { createPartitionProduceData, createTopicProduceData } from '../../generated/ProduceRequest.js';
import { EncodeError, ZERO_COPY_MIN_BYTES, encodeFrame, encodeFrameChunks, encodeRecordBatch } from '../../runtime/index.js';
import { toHex } from '../support/vectors.js';

// encodeChunks / encodeFrameChunks must give exactly encode's bytes, reference
// the large byte values they were given (never copy them), copy everything
// else out of the reused scratch buffer, and leave that buffer ready for the
// next call whatever happens in this one.

const joined = (chunks: Uint8Array[]): string => toHex(Buffer.concat(chunks));

function batchOf(valueBytes: number, records = 1): Uint8Array {
  return encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: records }, (_, i) => ({ key: null, value: new Uint8Array(valueBytes).fill(i + 1), timestamp: 1_700_000_000_000n })),
  });
}

function produceRequest(batches: Uint8Array[], topics = 1) {
  return ProduceRequest.create({
    transactionalId: 'txn-zero-copy',
    acks: -1,
    timeoutMs: 30_000,
    topicData: Array.from({ length: topics }, (_, t) =>
      createTopicProduceData({
        name: `topic-${t}`,
        topicId: `AAAAAAAAAAAAAAAAAAAAA${'ABCDEFGH'[t % 8]}`,
        partitionData: batches.map((records, index) => createPartitionProduceData({ index, records })),
      }),
    ),
  });
}

describe('encodeChunks', () => {
  // Every conformance vector is also checked through encodeChunks, by checkVector (test/support/vectors.ts).

  it('references record batches of ZERO_COPY_MIN_BYTES or more and copies smaller ones', () => {
    const large = batchOf(ZERO_COPY_MIN_BYTES);
    const small = batchOf(100);
    expect(large.length).toBeGreaterThanOrEqual(ZERO_COPY_MIN_BYTES);
    expect(small.length).toBeLessThan(ZERO_COPY_MIN_BYTES);
    for (const version of [3, 8, 9, 11, 13]) {
      const request = produceRequest([large, small, large]);
      const chunks = ProduceRequest.encodeChunks(request, version);
      expect(joined(chunks)).toBe(toHex(ProduceRequest.encode(request, version)));
      // header+prefix, large, prefix+small+prefix, large, then (flexible versions) the tagged-field counts
      expect(chunks.filter((c) => c === large)).toHaveLength(2);
      expect(chunks).not.toContain(small);
      expect(chunks).toHaveLength(version >= 9 ? 5 : 4);
    }
  });

  it('returns chunks that later calls do not overwrite (the scratch buffer is copied out)', () => {
    const first = produceRequest([batchOf(2000), batchOf(10)]);
    const firstChunks = ProduceRequest.encodeChunks(first, 11);
    const firstHex = joined(firstChunks);
    for (let i = 0; i < 20; i++) {
      ProduceRequest.encodeChunks(produceRequest([batchOf(3000, 2), batchOf(50, 3)], 3), 11);
    }
    expect(joined(firstChunks)).toBe(firstHex);
    expect(firstHex).toBe(toHex(ProduceRequest.encode(first, 11)));
  });

  it('handles a message larger than the retained scratch buffer, mostly referenced', () => {
    const huge = batchOf(3 << 20); // a 3 MiB batch: the copied part stays small
    const request = produceRequest([huge, batchOf(10)]);
    const chunks = ProduceRequest.encodeChunks(request, 11);
    expect(chunks).toContain(huge);
    expect(joined(chunks)).toBe(toHex(ProduceRequest.encode(request, 11)));
  });

  it('handles a message whose copied part is larger than the retained scratch buffer', () => {
    // 4 topics × 2,000 partitions of ~200-byte batches: ~1.6 MB copied, over the 1 MiB scratch.
    const smallBatches = Array.from({ length: 2000 }, (_, i) => batchOf(100 + (i % 50)));
    const request = produceRequest(smallBatches, 4);
    const plain = ProduceRequest.encode(request, 9);
    expect(plain.length).toBeGreaterThan(1 << 20);
    const chunks = ProduceRequest.encodeChunks(request, 9);
    expect(joined(chunks)).toBe(toHex(plain));
    // and the scratch buffer still works afterwards
    const after = produceRequest([batchOf(5000)]);
    expect(joined(ProduceRequest.encodeChunks(after, 9))).toBe(toHex(ProduceRequest.encode(after, 9)));
  });

  it('handles a large response with no byte fields at all (MetadataResponse, 30,000 partitions)', () => {
    const response = MetadataResponse.create({
      brokers: [createMetadataResponseBroker({ nodeId: 1, host: 'broker-1', port: 9092 })],
      topics: Array.from({ length: 30 }, (_, t) =>
        createMetadataResponseTopic({
          name: `t${t}`,
          partitions: Array.from({ length: 1000 }, (_, p) =>
            createMetadataResponsePartition({ partitionIndex: p, leaderId: 1, replicaNodes: [1, 2, 3], isrNodes: [1, 2, 3] }),
          ),
        }),
      ),
    });
    const plain = MetadataResponse.encode(response, 12);
    expect(plain.length).toBeGreaterThan(1 << 20);
    const chunks = MetadataResponse.encodeChunks(response, 12);
    expect(chunks).toHaveLength(1);
    expect(joined(chunks)).toBe(toHex(plain));
  });

  it('reports an invalid field as EncodeError in the large path too, and recovers', () => {
    const smallBatches = Array.from({ length: 2000 }, () => batchOf(100));
    const bad = produceRequest(smallBatches, 4); // ~1.5 MB, all copied
    bad.topicData[3]!.partitionData[1999]!.index = 2 ** 31; // not an int32, past the scratch buffer's end
    expect(() => ProduceRequest.encodeChunks(bad, 9)).toThrow(EncodeError);
    const badSmall = produceRequest([batchOf(2000)]);
    badSmall.timeoutMs = 1.5;
    expect(() => ProduceRequest.encodeChunks(badSmall, 9)).toThrow(/ProduceRequest\.timeoutMs: expected an int32 \(-2147483648 to 2147483647\), got 1\.5/);
    const good = produceRequest([batchOf(2000)]);
    expect(joined(ProduceRequest.encodeChunks(good, 9))).toBe(toHex(ProduceRequest.encode(good, 9)));
  });

  it('works when a field getter encodes another message in the middle of a write pass', () => {
    const inner = produceRequest([batchOf(1500)]);
    let innerChunks: Uint8Array[] = [];
    const outer = produceRequest([batchOf(1500)]);
    const transactionalId = outer.transactionalId;
    Object.defineProperty(outer, 'transactionalId', {
      get() {
        innerChunks = ProduceRequest.encodeChunks(inner, 11);
        return transactionalId;
      },
    });
    const chunks = ProduceRequest.encodeChunks(outer, 11);
    expect(joined(chunks)).toBe(toHex(ProduceRequest.encode(produceRequest([batchOf(1500)]), 11)));
    expect(joined(innerChunks)).toBe(toHex(ProduceRequest.encode(inner, 11)));
  });

  it('references FetchResponse records too', () => {
    const records = batchOf(4000, 3);
    const response = FetchResponse.create({
      responses: [
        createFetchableTopicResponse({
          topic: 'orders',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [createPartitionData({ partitionIndex: 0, highWatermark: 3n, records })],
        }),
      ],
    });
    for (const version of [4, 11, 12, 16]) {
      const chunks = FetchResponse.encodeChunks(response, version);
      expect(chunks).toContain(records);
      expect(joined(chunks)).toBe(toHex(FetchResponse.encode(response, version)));
    }
  });
});

describe('encodeFrameChunks', () => {
  it('gives encodeFrame bytes, with the record batches referenced', () => {
    const batch = batchOf(8000);
    const request = produceRequest([batch, batchOf(20)]);
    for (const version of [7, 11]) {
      const header = RequestHeader.create({ requestApiKey: 0, requestApiVersion: version, correlationId: 42, clientId: 'zero-copy' });
      const headerVersion = ProduceRequest.headerVersion(version);
      const frame = encodeFrame(RequestHeader, header, headerVersion, ProduceRequest, request, version);
      const chunks = encodeFrameChunks(RequestHeader, header, headerVersion, ProduceRequest, request, version);
      expect(chunks).toContain(batch);
      expect(joined(chunks)).toBe(toHex(frame));
    }
  });

  it('frames a body whose copied part overflows the scratch buffer, from a JavaScript caller that leaves out fields its version does not carry', () => {
    // writeChunks recovers from the overflow by catching a RangeError and writing again: the
    // encode-failure diagnosis must not see that RangeError (it once did, and refused a valid body).
    const request = produceRequest(
      Array.from({ length: 2000 }, (_, i) => batchOf(100 + (i % 50))),
      4,
    );
    for (const topic of request.topicData) delete (topic as Partial<typeof topic>).topicId; // v9 has no topic ids
    const header = RequestHeader.create({ requestApiKey: 0, requestApiVersion: 9, correlationId: 7, clientId: 'zero-copy' });
    const frame = encodeFrame(RequestHeader, header, 2, ProduceRequest, request, 9);
    expect(frame.length).toBeGreaterThan(1 << 20);
    expect(joined(encodeFrameChunks(RequestHeader, header, 2, ProduceRequest, request, 9))).toBe(toHex(frame));
  });
});
