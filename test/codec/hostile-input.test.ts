import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messages, MetadataResponse, ProduceRequest, ApiVersionsResponse, TxnShareAcknowledgeRequest } from '../../generated/index.js';
import { DecodeError } from '../../runtime/index.js';
import { fromHex, readVectors } from '../support/vectors.js';

// Decoders are safe on hostile input (docs/DESIGN.md §3): malformed bytes give a
// DecodeError naming the field path, never another exception or a hang.
const vectors = readVectors(fileURLToPath(new URL('../fixtures/vectors/', import.meta.url)));

function decodeOutcome(name: string, bytes: Uint8Array, version: number): 'ok' | 'DecodeError' {
  try {
    messages[name]!.decode(bytes, version);
    return 'ok';
  } catch (error) {
    if (error instanceof DecodeError) return 'DecodeError';
    throw new Error(`${name} v${version} threw ${(error as Error).name}: ${(error as Error).message}`);
  }
}

describe('hostile input', () => {
  it('every truncation of every vector is a DecodeError', () => {
    let tried = 0;
    for (const [name, lines] of vectors) {
      for (const v of lines) {
        const bytes = fromHex(v.hex);
        for (let cut = 0; cut < bytes.length; cut++) {
          tried++;
          expect(decodeOutcome(name, bytes.subarray(0, cut), v.version), `${name} v${v.version} cut at ${cut}`).toBe('DecodeError');
        }
      }
    }
    expect(tried).toBeGreaterThan(10_000);
  });

  it('bit flips and random bytes decode or fail with DecodeError only', () => {
    const entries = [...vectors.entries()].flatMap(([name, lines]) => lines.map((v) => ({ name, v })));
    fc.assert(
      fc.property(fc.constantFrom(...entries), fc.nat(), fc.integer({ min: 0, max: 7 }), ({ name, v }, at, bit) => {
        const bytes = fromHex(v.hex);
        if (bytes.length === 0) return;
        bytes[at % bytes.length]! ^= 1 << bit;
        decodeOutcome(name, bytes, v.version);
      }),
      { numRuns: 3000, seed: 42 },
    );
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(messages)), fc.uint8Array({ maxLength: 64 }), (name, bytes) => {
        const codec = messages[name]!;
        decodeOutcome(name, bytes, codec.validVersions.highest);
      }),
      { numRuns: 3000, seed: 7 },
    );
  });

  it('an array claiming 2^31 - 1 elements fails before allocating, naming the field', () => {
    // ProduceRequest v3: transactionalId null, acks, timeout, then the topicData array length.
    const bytes = fromHex('ffff' + 'ffff' + '00007530' + '7fffffff');
    const before = process.memoryUsage().heapUsed;
    expect(() => ProduceRequest.decode(bytes, 3)).toThrowError(DecodeError);
    expect(() => ProduceRequest.decode(bytes, 3)).toThrowError(/^ProduceRequest\.topicData: array claims 2147483647 elements/);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('names nested paths: TxnShareAcknowledgeRequest.topics[0].partitions[0].acknowledgementBatches[1].lastOffset', () => {
    const message = TxnShareAcknowledgeRequest.create({
      groupId: 'g',
      transactionalId: 't',
      topics: [
        {
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [
            {
              partition: 0,
              acknowledgementBatches: [
                { firstOffset: 0n, lastOffset: 1n, acknowledgeType: 1 },
                { firstOffset: 2n, lastOffset: 3n, acknowledgeType: 1 },
              ],
            },
          ],
        },
      ],
    });
    const bytes = TxnShareAcknowledgeRequest.encode(message, 1);
    // Cut inside the second batch's lastOffset: 8 + 1 (type) + 1 + 1 + 1 trailing tag sections = 12 bytes from the end.
    const cut = bytes.subarray(0, bytes.length - 12);
    expect(() => TxnShareAcknowledgeRequest.decode(cut, 1)).toThrowError(
      /^TxnShareAcknowledgeRequest\.topics\[0\]\.partitions\[0\]\.acknowledgementBatches\[1\]\.lastOffset: needs 8 bytes/,
    );
  });

  it('unknown tagged fields survive decode and encode', () => {
    const message = ApiVersionsResponse.create({
      _unknownTaggedFields: [
        { tag: 7, data: new Uint8Array([1, 2, 3]) },
        { tag: 40, data: new Uint8Array([9]) },
      ],
    });
    const bytes = ApiVersionsResponse.encode(message, 3);
    const decoded = ApiVersionsResponse.decode(bytes, 3);
    expect(decoded._unknownTaggedFields?.map((f) => [f.tag, [...f.data]])).toEqual([
      [7, [1, 2, 3]],
      [40, [9]],
    ]);
    expect(ApiVersionsResponse.encode(decoded, 3)).toEqual(bytes);
  });

  it('an implausible count says the bytes may be of another version; a count just past the end does not', () => {
    const response = MetadataResponse.create({
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092 }],
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }],
    });
    // v9 is flexible (compact lengths), v8 classic (int32): one read as the other misreads every count.
    expect(() => MetadataResponse.decode(MetadataResponse.encode(response, 9), 8)).toThrowError(
      /^MetadataResponse\.brokers: array claims \d+ elements but only \d+ bytes are left \(a count this large suggests the bytes are not a MetadataResponse v8: another version, or another message\)$/,
    );
    // Two brokers claimed, one there: a message cut short, not another version.
    const bytes = Buffer.from(MetadataResponse.encode(response, 8));
    bytes.writeInt32BE(40, 4);
    let error: DecodeError | undefined;
    try {
      MetadataResponse.decode(bytes.subarray(0, 30), 8);
    } catch (e) {
      error = e as DecodeError;
    }
    expect(error).toBeInstanceOf(DecodeError);
    expect(error!.message).toMatch(/^MetadataResponse\.brokers: array claims 40 elements but only \d+ bytes are left$/);
  });
});
