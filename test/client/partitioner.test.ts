import { describe, expect, it } from 'vitest';
import { DefaultPartitioner, murmur2, partitionForKey, roundRobinPartitioner, toPositive } from '../../client/index.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('murmur2 partitioner', () => {
  it("matches Kafka's Utils.murmur2 (UtilsTest.testMurmur2 vectors)", () => {
    expect(murmur2(bytes('21'))).toBe(-973932308);
    expect(murmur2(bytes('foobar'))).toBe(-790332482);
    expect(murmur2(bytes('a-little-bit-long-string'))).toBe(-985981536);
    expect(murmur2(bytes('a-little-bit-longer-string'))).toBe(-1486304829);
    expect(murmur2(bytes('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(-58897971);
    expect(murmur2(Uint8Array.from([97, 98, 99]))).toBe(479470107);
    expect(murmur2(Uint8Array.from([12, 42, 56, 24, 109, 111]))).toBe(274204207);
  });

  it('picks toPositive(murmur2(key)) % partitions, as the Java producer does', () => {
    expect(toPositive(-973932308)).toBe(1173551340);
    expect(partitionForKey(bytes('21'), 3)).toBe(1173551340 % 3);
    expect(partitionForKey(bytes('foobar'), 7)).toBe(1357151166 % 7);
    const p = new DefaultPartitioner();
    expect(p.partition('t', bytes('foobar'), 7)).toBe(1357151166 % 7);
  });

  it('keeps keyless records on one sticky partition until about batch.size bytes, then moves on', () => {
    const p = new DefaultPartitioner(100);
    const first = p.partition('t', null, 4, 40);
    expect(p.partition('t', null, 4, 40)).toBe(first);
    expect(p.partition('t', null, 4, 40)).toBe(first);
    const second = p.partition('t', null, 4, 40);
    expect(second).toBe((first + 1) % 4);
    p.onBatchClosed('t', second);
    expect(p.partition('t', null, 4, 1)).toBe((first + 2) % 4);
  });

  it('round-robin partitioner cycles', () => {
    const rr = roundRobinPartitioner();
    expect([0, 1, 2, 3, 4].map(() => rr('t', null, 3))).toEqual([0, 1, 2, 0, 1]);
  });
});
