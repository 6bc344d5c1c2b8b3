import { describe, expect, it } from 'vitest';
import { ShareAcknowledgements, ShareGroupMetadata } from '../../client/index.js';

const rec = (topic: string, partition: number, offset: number) => ({
  topic,
  partition,
  offset: BigInt(offset),
  topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
});

describe('ShareAcknowledgements', () => {
  it('merges consecutive offsets of one type per topic-partition into batches', () => {
    const records = [0, 1, 2, 3, 7, 8, 10].map((o) => rec('in', 0, o)).concat([5, 6].map((o) => rec('in', 1, o)));
    const acks = ShareAcknowledgements.fromRecords(records, 'accept');
    expect(acks.partitions().map((p) => [p.topic, p.partition, p.batches])).toEqual([
      [
        'in',
        0,
        [
          { firstOffset: 0n, lastOffset: 3n, acknowledgeType: 'accept' },
          { firstOffset: 7n, lastOffset: 8n, acknowledgeType: 'accept' },
          { firstOffset: 10n, lastOffset: 10n, acknowledgeType: 'accept' },
        ],
      ],
      ['in', 1, [{ firstOffset: 5n, lastOffset: 6n, acknowledgeType: 'accept' }]],
    ]);
    expect(acks.recordCount).toBe(9);
  });

  it('splits batches where the type changes and sorts unsorted input', () => {
    const acks = new ShareAcknowledgements()
      .add(rec('t', 0, 4), 'accept')
      .add(rec('t', 0, 2), 'accept')
      .add(rec('t', 0, 3), 'accept')
      .add(rec('t', 0, 5), 'reject')
      .add(rec('t', 0, 6), 'reject')
      .add(rec('t', 0, 7), 'release');
    expect(acks.batches('t', 0)).toEqual([
      { firstOffset: 2n, lastOffset: 4n, acknowledgeType: 'accept' },
      { firstOffset: 5n, lastOffset: 6n, acknowledgeType: 'reject' },
      { firstOffset: 7n, lastOffset: 7n, acknowledgeType: 'release' },
    ]);
  });

  it('a record added again takes its new type, splitting a batch', () => {
    const acks = ShareAcknowledgements.fromRecords(
      [0, 1, 2, 3, 4].map((o) => rec('t', 0, o)),
      'accept',
    );
    acks.add(rec('t', 0, 2), 'release');
    expect(acks.batches('t', 0)).toEqual([
      { firstOffset: 0n, lastOffset: 1n, acknowledgeType: 'accept' },
      { firstOffset: 2n, lastOffset: 2n, acknowledgeType: 'release' },
      { firstOffset: 3n, lastOffset: 4n, acknowledgeType: 'accept' },
    ]);
    acks.add(rec('t', 0, 2), 'accept');
    expect(acks.batches('t', 0)).toEqual([{ firstOffset: 0n, lastOffset: 4n, acknowledgeType: 'accept' }]);
  });

  it('addRange and merge combine ranges; topics sort by name then partition', () => {
    const a = new ShareAcknowledgements().addRange('b', 1, 10n, 19n, 'accept').addRange('a', 2, 0n, 0n, 'reject');
    const b = new ShareAcknowledgements().addRange('b', 1, 20n, 29n, 'accept').addRange('a', 0, 5n, 6n, 'release');
    a.merge(b);
    expect(a.partitions().map((p) => `${p.topic}-${p.partition}`)).toEqual(['a-0', 'a-2', 'b-1']);
    expect(a.batches('b', 1)).toEqual([{ firstOffset: 10n, lastOffset: 29n, acknowledgeType: 'accept' }]);
    expect(a.toString()).toBe('a-0: 5-6:release; a-2: 0-0:reject; b-1: 10-29:accept');
  });

  it('refuses bad ranges and types', () => {
    expect(() => new ShareAcknowledgements().addRange('t', 0, 5n, 4n, 'accept')).toThrow(/invalid acknowledgement range/);
    expect(() => new ShareAcknowledgements().add(rec('t', 0, 1), 'gap' as never)).toThrow(/'accept', 'release' or 'reject'/);
    expect(new ShareAcknowledgements().isEmpty).toBe(true);
  });
});

describe('ShareGroupMetadata', () => {
  it('holds group id, member id and generation', () => {
    const m = new ShareGroupMetadata('g', 'member-1', 3);
    expect([m.groupId, m.memberId, m.generationId]).toEqual(['g', 'member-1', 3]);
    expect(new ShareGroupMetadata('g').generationId).toBe(-1);
    expect(() => new ShareGroupMetadata('')).toThrow(/groupId/);
  });
});
