/**
 * The broker's reading of a classic member's subscription bytes
 * (coordinator/group/consumer-protocol.ts), against bytes written by the
 * generated ConsumerProtocolSubscription codec and by hand as a v0 consumer
 * writes them.
 */
import { describe, expect, it } from 'vitest';
import { ConsumerProtocolSubscription } from '../../generated/index.js';
import { subscribedTopics } from '../../coordinator/group/consumer-protocol.js';

const int16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (v: string): number[] => [...int16(Buffer.byteLength(v)), ...Buffer.from(v)];

function encoded(version: number, topics: string[], trailing: number[] = []): Uint8Array {
  const message = ConsumerProtocolSubscription.create({
    topics,
    userData: null,
    ownedPartitions: [{ topic: 'x', partitions: [1] }],
    generationId: 4,
    rackId: 'r',
  });
  return Uint8Array.from([...int16(version), ...ConsumerProtocolSubscription.encode(message, Math.min(version, 3)), ...trailing]);
}

describe('subscribedTopics', () => {
  it('reads the topics of every version, and of a newer one with fields appended, as version 0 whatever the header says', () => {
    for (const version of [0, 1, 2, 3]) expect(subscribedTopics(encoded(version, ['a', 'b']))).toEqual(['a', 'b']);
    expect(subscribedTopics(encoded(7, ['c'], [1, 2, 3]))).toEqual(['c']);
    // Kafka's ClassicGroup.computeSubscribedTopics reads the version and parses version 0 regardless.
    expect(subscribedTopics(Uint8Array.from([...int16(-1), ...int32(1), ...str('n'), ...int32(-1)]))).toEqual(['n']);
    // A v0 subscription as a classic consumer writes it: topics, then null user data.
    expect(subscribedTopics(Uint8Array.from([...int16(0), ...int32(1), ...str('t'), ...int32(-1)]))).toEqual(['t']);
  });

  it('is null for bytes the schema refuses: too short, a negative count, a truncated body', () => {
    expect(subscribedTopics(new Uint8Array(0))).toBeNull();
    expect(subscribedTopics(Uint8Array.from([0]))).toBeNull();
    expect(subscribedTopics(Uint8Array.from([...int16(0), ...int32(-1), ...int32(-1)]))).toBeNull();
    expect(subscribedTopics(Uint8Array.from([...int16(0), ...int32(2), ...str('t')]))).toBeNull();
    // The topics are whole but the user data is cut: Kafka's parse fails (SchemaException), so no topics are known.
    expect(subscribedTopics(Uint8Array.from([...int16(0), ...int32(1), ...str('t'), 0, 0]))).toBeNull();
  });
});
