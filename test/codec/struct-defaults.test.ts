import { describe, expect, it } from 'vitest';
import { FetchResponse } from '../../generated/index.js';
import { createFetchableTopicResponse, createPartitionData } from '../../generated/FetchResponse.js';
import { UnsupportedVersionError } from '../../runtime/index.js';

// A struct-typed field is "default" when every field of the struct has its
// default and it keeps no unknown tagged field (Kafka's non-default check):
// only then is a tagged struct field left out, or a struct field the version
// lacks accepted.
describe('struct fields against their default', () => {
  const response = (partition: Record<string, unknown>) =>
    FetchResponse.create({ responses: [createFetchableTopicResponse({ topic: 't', partitions: [createPartitionData(partition)] })] });
  const partitionOf = (bytes: Uint8Array, version: number) => FetchResponse.decode(bytes, version).responses[0]!.partitions[0]!;
  const epoch = (fields: Record<string, unknown>) => ({ epoch: -1, endOffset: -1n, ...fields });

  it('leaves a default tagged struct out, and writes one that differs in any field or in unknown tagged fields', () => {
    const plain = FetchResponse.encode(response({ divergingEpoch: epoch({}) }), 12);
    expect(partitionOf(plain, 12).divergingEpoch).toStrictEqual(epoch({}));
    for (const divergingEpoch of [epoch({ epoch: 3 }), epoch({ endOffset: 0n }), epoch({ _unknownTaggedFields: [{ tag: 9, data: new Uint8Array([1]) }] })]) {
      const bytes = FetchResponse.encode(response({ divergingEpoch }), 12);
      expect(bytes.length).toBeGreaterThan(plain.length);
      expect(partitionOf(bytes, 12).divergingEpoch).toStrictEqual(divergingEpoch);
    }
  });

  it('refuses a non-default struct field in a version without it, and accepts the default', () => {
    expect(() => FetchResponse.encode(response({ divergingEpoch: epoch({}) }), 11)).not.toThrow();
    expect(() => FetchResponse.encode(response({ divergingEpoch: epoch({ epoch: 3 }) }), 11)).toThrowError(UnsupportedVersionError);
    expect(() => FetchResponse.encode(response({ currentLeader: { leaderId: 2, leaderEpoch: -1 } }), 11)).toThrowError(UnsupportedVersionError);
    expect(() =>
      FetchResponse.encode(response({ snapshotId: { endOffset: -1n, epoch: -1, _unknownTaggedFields: [{ tag: 1, data: new Uint8Array(0) }] } }), 11),
    ).toThrowError(UnsupportedVersionError);
  });

  it('shows a tagged struct in JSON only when it differs from its default', () => {
    expect(FetchResponse.toJson(response({}), 12).responses).toEqual([
      expect.objectContaining({ partitions: [expect.not.objectContaining({ divergingEpoch: expect.anything() })] }),
    ]);
    const json = FetchResponse.toJson(response({ divergingEpoch: epoch({ epoch: 3 }) }), 12) as { responses: { partitions: Record<string, unknown>[] }[] };
    expect(json.responses[0]!.partitions[0]!.divergingEpoch).toEqual({ epoch: 3, endOffset: '-1' });
  });
});
