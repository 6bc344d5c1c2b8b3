/**
 * The producer's per-partition sequence state (client/producer/partition-queue.ts,
 * Kafka's TxnPartitionEntry and RecordAccumulator.insertInSequenceOrder) on
 * its own: which order retries are put back in, and how the sequences of the
 * batches behind one that failed for good move down.
 */
import { describe, expect, it } from 'vitest';
import { PartitionQueue } from '../../client/producer/partition-queue.js';
import { ProducerBatch } from '../../client/producer/producer-batch.js';

function batchOf(records: number): ProducerBatch {
  const batch = new ProducerBatch(Date.now());
  for (let i = 0; i < records; i++) batch.records.push({ input: { value: null }, resolve: () => {}, reject: () => {} });
  return batch;
}

/** Three batches of 2, 3 and 4 records drained in order: sequences 0, 2 and 5, as if sent. */
function threeInFlight(): { queue: PartitionQueue; batches: ProducerBatch[] } {
  const queue = new PartitionQueue('t', 'id', 0);
  const batches = [batchOf(2), batchOf(3), batchOf(4)];
  for (const batch of batches) {
    queue.assignSequence(batch, 7n, 0);
    batch.encoded = new Uint8Array(1);
  }
  return { queue, batches };
}

describe('PartitionQueue', () => {
  it('gives drained batches the next sequences and keeps them sorted', () => {
    const { queue, batches } = threeInFlight();
    expect(batches.map((b) => b.baseSequence)).toEqual([0, 2, 5]);
    expect(queue.nextSequence).toBe(9);
    expect(queue.firstInFlightSequence).toBe(0);
  });

  it('puts retries back in sequence order, ahead of batches never drained', () => {
    const { queue, batches } = threeInFlight();
    const fresh = batchOf(1);
    queue.batches.push(fresh);
    // Answers come back out of order: the third, then the first, then the second.
    queue.reenqueue(batches[2]!);
    queue.reenqueue(batches[0]!);
    queue.reenqueue(batches[1]!);
    expect(queue.batches).toEqual([batches[0], batches[1], batches[2], fresh]);
  });

  it('a batch failed for good moves the later sequences down by its record count (adjustSequencesDueToFailedBatch)', () => {
    const { queue, batches } = threeInFlight();
    queue.removeInFlight(batches[1]!);
    queue.adjustSequencesDueToFailedBatch(batches[1]!);
    expect(batches[0]!.baseSequence).toBe(0);
    expect(batches[2]!.baseSequence).toBe(2);
    expect(batches[2]!.sequenceReset).toBe(true);
    expect(batches[2]!.encoded).toBeNull();
    expect(queue.nextSequence).toBe(6);
  });

  it('a new epoch renumbers the unsettled batches from 0 (startSequencesAtBeginning)', () => {
    const { queue, batches } = threeInFlight();
    queue.acknowledged(batches[0]!, 100n, false);
    queue.startSequencesAtBeginning(7n, 1);
    expect(batches.slice(1).map((b) => [b.baseSequence, b.producerEpoch])).toEqual([
      [0, 1],
      [3, 1],
    ]);
    expect(queue.nextSequence).toBe(7);
    expect(queue.lastAckedSequence).toBe(-1);
  });
});
