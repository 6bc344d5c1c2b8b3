import { describe, expect, it } from 'vitest';
import { createMetadataResponse, MetadataResponse } from '../../generated/index.js';
import { DecodeError, Reader } from '../../runtime/index.js';

// Generated readers read a struct's fixed-width fields and non-nullable arrays of
// fixed-width values with a local position (docs/GENERATOR.md, "Local-position
// segments"). These inputs break such a segment in each way the Reader checks, in
// the classic form (MetadataResponse v6, v7 for leaderEpoch) and the compact one (v12),
// and expect what the Reader would say, at the field's path.

const ISR = [21, 22];

function response(version: number): Uint8Array {
  const m = createMetadataResponse({
    brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
    topics: [
      {
        errorCode: 0,
        name: 't',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        isInternal: false,
        topicAuthorizedOperations: -2147483648,
        partitions: [{ errorCode: 0, partitionIndex: 7, leaderId: 11, leaderEpoch: 5, replicaNodes: [11, 12, 13], isrNodes: ISR, offlineReplicas: [31] }],
      },
    ],
  });
  return MetadataResponse.encode(m, version);
}

/** Where the isrNodes length prefix starts: found by its elements, which follow it. */
function isrPrefixAt(bytes: Uint8Array, prefixBytes: number): number {
  const elements = Buffer.from([0, 0, 0, 21, 0, 0, 0, 22]);
  const at = Buffer.from(bytes).indexOf(elements);
  expect(at).toBeGreaterThan(prefixBytes);
  return at - prefixBytes;
}

function withClassicIsrLength(length: number): Uint8Array {
  const bytes = Uint8Array.from(response(6));
  new DataView(bytes.buffer).setInt32(isrPrefixAt(bytes, 4), length);
  return bytes;
}

function failure(decode: () => unknown): DecodeError {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(DecodeError);
    return error as DecodeError;
  }
  throw new Error('decoded without an error');
}

describe('local-position reads in generated readers', () => {
  it('decode what the Reader decoded, in both forms', () => {
    for (const version of [6, 7, 12]) {
      const decoded = MetadataResponse.decode(response(version), version);
      expect(decoded.topics[0]!.partitions[0]).toMatchObject({ partitionIndex: 7, leaderId: 11, replicaNodes: [11, 12, 13], isrNodes: ISR, offlineReplicas: [31] });
      expect(decoded.topics[0]!.partitions[0]!.leaderEpoch).toBe(version >= 7 ? 5 : -1);
    }
  });

  it.each([
    [-2, 'array has invalid length -2'],
    [-1, 'non-nullable array is null'],
    [1000, 'needs 4000 bytes at offset'],
  ])('a classic isrNodes length of %i fails as the Reader fails: %s', (length, reason) => {
    const error = failure(() => MetadataResponse.decode(withClassicIsrLength(length), 6));
    expect(error.path).toBe('MetadataResponse.topics[0].partitions[0].isrNodes');
    expect(error.reason).toContain(reason);
    // The Reader's own array method on the same bytes says the same.
    const bytes = withClassicIsrLength(length);
    const direct = failure(() => new Reader(bytes, isrPrefixAt(bytes, 4)).int32Array(false));
    expect(error.reason).toBe(direct.reason);
  });

  it('a compact isrNodes length: too long, and null', () => {
    const bytes = Uint8Array.from(response(12));
    const at = isrPrefixAt(bytes, 1);
    expect(bytes[at]).toBe(ISR.length + 1);
    bytes[at] = 100;
    let error = failure(() => MetadataResponse.decode(bytes, 12));
    expect(error.path).toBe('MetadataResponse.topics[0].partitions[0].isrNodes');
    expect(error.reason).toBe(`needs 396 bytes at offset ${at + 1}, only ${bytes.length - at - 1} left`);
    bytes[at] = 0;
    error = failure(() => MetadataResponse.decode(bytes, 12));
    expect(error.reason).toBe('non-nullable array is null');
  });

  it('a compact array long enough for a two-byte length, and one at the very end of the input', () => {
    const long = Array.from({ length: 200 }, (_, i) => i);
    const m = MetadataResponse.decode(response(12), 12);
    m.topics[0]!.partitions[0]!.isrNodes = long;
    const bytes = MetadataResponse.encode(m, 12);
    expect(MetadataResponse.decode(bytes, 12).topics[0]!.partitions[0]!.isrNodes).toEqual(long);
    // Cut right before isrNodes' length: the varint runs past the end.
    const cut = Buffer.from(bytes).indexOf(Buffer.from([0x80 | 201 % 128, 1, 0, 0, 0, 0, 0, 0, 0, 1]));
    expect(cut).toBeGreaterThan(0);
    const error = failure(() => MetadataResponse.decode(bytes.subarray(0, cut), 12));
    expect(error.path).toBe('MetadataResponse.topics[0].partitions[0].isrNodes');
    expect(error.reason).toMatch(/^varint runs past the end/);
  });

  it('a compact length written in more bytes than it needs moves the position by the bytes read', () => {
    // Kafka's varint reader accepts 0x83 0x00 for 3; so must a reader that keeps its own position.
    const bytes = response(12);
    const at = isrPrefixAt(bytes, 1);
    const padded = Buffer.concat([bytes.subarray(0, at), Buffer.from([0x80 | (ISR.length + 1), 0x00]), bytes.subarray(at + 1)]);
    expect(MetadataResponse.decode(padded, 12)).toEqual(MetadataResponse.decode(bytes, 12));
  });

  it('every truncation inside a partition names the field it cuts, in the run and after it', () => {
    for (const version of [6, 7, 12]) {
      const bytes = response(version);
      const prefixBytes = version >= 9 ? 1 : 4;
      const isr = isrPrefixAt(bytes, prefixBytes);
      // The run (errorCode, partitionIndex, leaderId) ends 10 bytes after the partition's start.
      const replicaLength = prefixBytes + 12;
      const partitionStart = isr - replicaLength - (version >= 7 ? 4 : 0) - 10;
      const expected: [number, string][] = [
        [partitionStart + 1, 'errorCode'],
        [partitionStart + 5, 'partitionIndex'],
        [partitionStart + 9, 'leaderId'],
        ...(version >= 7 ? ([[partitionStart + 12, 'leaderEpoch']] as [number, string][]) : []),
        [isr - 2, 'replicaNodes'],
        [isr + prefixBytes + 5, 'isrNodes'],
        [isr + prefixBytes + 8 + prefixBytes + 2, 'offlineReplicas'],
      ];
      for (const [cut, field] of expected) {
        const error = failure(() => MetadataResponse.decode(bytes.subarray(0, cut), version));
        expect(error.path, `v${version} cut at ${cut}`).toBe(`MetadataResponse.topics[0].partitions[0].${field}`);
        expect(error.reason).toMatch(/^needs \d+ bytes? at offset \d+, only \d+ left$|^varint runs past the end/);
      }
    }
  });
});
