import { describe, expect, it } from 'vitest';
import { LogRead } from '../../coordinator/share/log-window.js';
import { controlRecordBatch, decodeRecordBatches, encodeRecordBatch } from '../../runtime/index.js';

const value = (s: string) => new TextEncoder().encode(s);

function data(baseOffset: bigint, count: number, producerId = -1n): Uint8Array {
  return encodeRecordBatch({
    baseOffset,
    isTransactional: producerId >= 0n,
    producerId,
    producerEpoch: producerId >= 0n ? 0 : -1,
    records: Array.from({ length: count }, (_, i) => ({ value: value(`v${baseOffset + BigInt(i)}`) })),
  });
}

function marker(baseOffset: bigint, producerId: bigint, commit: boolean): Uint8Array {
  return controlRecordBatch({
    type: commit ? 'COMMIT' : 'ABORT',
    producerId,
    producerEpoch: 0,
    coordinatorEpoch: 0,
    timestamp: 0n,
    baseOffset,
  });
}

function read(parts: Uint8Array[], lastStableOffset: bigint, abortedTransactions: { producerId: bigint; firstOffset: bigint }[] = []) {
  return { records: Buffer.concat(parts), highWatermark: lastStableOffset, lastStableOffset, logStartOffset: 0n, abortedTransactions };
}

const acquirable = (log: LogRead, from: bigint, to: bigint) => {
  const out: bigint[] = [];
  for (let o = from; o < to; o++) if (log.window.isAcquirable(o)) out.push(o);
  return out;
};

describe('LogRead: what a read_committed read makes acquirable', () => {
  it('skips control records and the aborted transaction, keeps committed and plain data', () => {
    const log = LogRead.index(
      read([data(0n, 2), data(2n, 2, 7n), data(4n, 1, 8n), marker(5n, 7n, false), marker(6n, 8n, true), data(7n, 1, 7n), marker(8n, 7n, true)], 9n, [
        { producerId: 7n, firstOffset: 2n },
      ]),
      0n,
    );
    expect(log.window.endOffset).toBe(9n);
    // pid 7's first transaction (2-3) aborted; its next one (7) committed after the ABORT marker.
    expect(acquirable(log, 0n, 9n)).toEqual([0n, 1n, 4n, 7n]);
  });

  it('does not go past the last stable offset, and clips to where the fetch started', () => {
    const log = LogRead.index(read([data(0n, 3), data(3n, 2)], 3n), 1n);
    expect(log.window.startOffset).toBe(1n);
    expect(log.window.endOffset).toBe(3n);
  });

  it('treats offsets removed by compaction as holes', () => {
    const compacted = encodeRecordBatch({
      baseOffset: 10n,
      records: [
        { offset: 10n, value: value('a') },
        { offset: 13n, value: value('b') },
      ],
    });
    const log = LogRead.index(read([compacted], 14n), 10n);
    expect(acquirable(log, 10n, 14n)).toEqual([10n, 13n]);
  });

  it('returns only the batches holding acquired offsets', () => {
    const log = LogRead.index(read([data(0n, 2), data(2n, 2), data(4n, 2)], 6n), 0n);
    const records = log.recordsFor([{ firstOffset: 3n, lastOffset: 4n, deliveryCount: 1 }])!;
    expect(decodeRecordBatches(records).batches.map((b) => b.baseOffset)).toEqual([2n, 4n]);
    expect(log.recordsFor([])).toBeNull();
  });
});
