/**
 * One partition of the producer: its queue of batches waiting to be sent
 * (Kafka's per-TopicPartition deque in RecordAccumulator) and, for an
 * idempotent producer, its sequence state (Kafka's
 * producer/internals/TxnPartitionEntry.java): the next sequence, the last
 * acknowledged one, and the batches drained but not yet settled, sorted by
 * sequence. Up to max.in.flight.requests.per.connection batches of one
 * partition may be in requests at once; the sequences keep them in order at
 * the broker, and a retry is put back among the waiting batches in sequence
 * order, so records keep their order per partition under retries.
 */
import { ProducerBatch } from './producer-batch.js';

/** Sequence numbers wrap at int32's end, as Kafka's DefaultRecordBatch.incrementSequence. */
const SEQUENCE_MODULUS = 2 ** 31;

export class PartitionQueue {
  /** `topic:partition`. */
  readonly key: string;
  /** Waiting to be sent, oldest first: new batches, and drained ones put back for a retry, in sequence order. */
  batches: ProducerBatch[] = [];
  /**
   * Drained and not yet settled (success or failure for good), sorted by
   * sequence (Kafka's TxnPartitionEntry.inflightBatchesBySequence): a batch
   * put back for a retry stays here. Idempotent producers only.
   */
  readonly inFlight: ProducerBatch[] = [];
  /** Batches of this partition in requests without an answer yet. */
  sending = 0;
  /** The partition waits until then (epoch ms): no leader was known. */
  retryAt = 0;
  /** The base sequence of the partition's next new batch. */
  nextSequence = 0;
  /** The sequence of the last record of the last acknowledged batch; -1 for none. */
  lastAckedSequence = -1;
  /** The offset of the last record of the last acknowledged batch; -1 for none. */
  lastAckedOffset = -1n;
  /** The producer id and epoch the partition's sequences belong to (-1: none yet). */
  producerId = -1n;
  producerEpoch = -1;
  /**
   * The next sequence the broker should expect once the in-flight batches
   * settle, when a batch with a sequence expired before an answer (Kafka's
   * partitionsWithUnresolvedSequences); null when nothing is unresolved.
   */
  unresolvedNext: number | null = null;

  constructor(
    readonly topic: string,
    readonly topicId: string,
    readonly partition: number,
  ) {
    this.key = `${topic}:${partition}`;
  }

  /** The sequence of the first unsettled batch, -1 for none (Kafka's TransactionManager.firstInFlightSequence). */
  get firstInFlightSequence(): number {
    return this.inFlight.length > 0 ? this.inFlight[0]!.baseSequence : -1;
  }

  /** Whether the sequences belong to another producer id or epoch than the producer's now (Kafka's hasStaleProducerIdAndEpoch). */
  isStale(producerId: bigint, producerEpoch: number): boolean {
    return this.producerId !== producerId || this.producerEpoch !== producerEpoch;
  }

  /**
   * Gives a drained batch the partition's next sequences (Kafka's
   * drainBatchesForOneNode: maybeUpdateProducerIdAndEpoch, setProducerState,
   * incrementSequenceNumber, addInFlightBatch). A new producer id or epoch
   * starts the sequences at 0 once nothing of the old one is in flight (the
   * drain holds the partition until then).
   */
  assignSequence(batch: ProducerBatch, producerId: bigint, producerEpoch: number): void {
    if (this.isStale(producerId, producerEpoch) && this.inFlight.length === 0) this.startSequencesAtBeginning(producerId, producerEpoch);
    batch.setProducerState(producerId, producerEpoch, this.nextSequence);
    this.nextSequence = (this.nextSequence + batch.records.length) % SEQUENCE_MODULUS;
    this.addInFlight(batch);
  }

  addInFlight(batch: ProducerBatch): void {
    let i = this.inFlight.length;
    while (i > 0 && this.inFlight[i - 1]!.baseSequence > batch.baseSequence) i--;
    this.inFlight.splice(i, 0, batch);
  }

  removeInFlight(batch: ProducerBatch): void {
    const i = this.inFlight.indexOf(batch);
    if (i >= 0) this.inFlight.splice(i, 1);
  }

  /** Kafka's isNextSequence: `sequence` directly follows the last acknowledged one. */
  isNextSequence(sequence: number): boolean {
    return sequence - this.lastAckedSequence === 1;
  }

  /** A batch was acknowledged (Kafka's handleCompletedBatch: maybeUpdateLastAckedSequence, updateLastAckedOffset). */
  acknowledged(batch: ProducerBatch, baseOffset: bigint, transactional: boolean): void {
    this.removeInFlight(batch);
    if (batch.lastSequence > this.lastAckedSequence) this.lastAckedSequence = batch.lastSequence;
    if (baseOffset < 0n) return;
    const lastOffset = baseOffset + BigInt(batch.records.length) - 1n;
    // Kafka's TxnPartitionMap.updateLastAckedOffset: a transactional producer takes the latest, an idempotent one the highest.
    if (transactional || lastOffset > this.lastAckedOffset) this.lastAckedOffset = lastOffset;
  }

  /**
   * Renumbers the unsettled batches from 0 under `producerId` / `producerEpoch`
   * (Kafka's TxnPartitionEntry.startSequencesAtBeginning): after an epoch bump,
   * or when the broker lost the producer's state with the head of the log.
   */
  startSequencesAtBeginning(producerId: bigint, producerEpoch: number): void {
    let sequence = 0;
    for (const batch of this.inFlight) {
      batch.setProducerState(producerId, producerEpoch, sequence);
      sequence += batch.records.length;
    }
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.nextSequence = sequence;
    this.lastAckedSequence = -1;
    this.unresolvedNext = null;
  }

  /**
   * A batch with a sequence failed for good and is not in the log: every
   * later unsettled batch moves down by its record count, so that they close
   * the gap instead of meeting OUT_OF_ORDER_SEQUENCE_NUMBER for ever (Kafka's
   * TxnPartitionEntry.adjustSequencesDueToFailedBatch).
   */
  adjustSequencesDueToFailedBatch(failed: ProducerBatch): void {
    const count = failed.records.length;
    if (this.nextSequence - count < 0) return;
    this.nextSequence -= count;
    for (const batch of this.inFlight) {
      if (batch.baseSequence < failed.baseSequence) continue;
      batch.setProducerState(batch.producerId, batch.producerEpoch, batch.baseSequence - count);
    }
  }

  /** Forgets the partition's sequence state (Kafka's resetSequenceForPartition): the next new batch starts at 0. */
  resetSequences(): void {
    this.nextSequence = 0;
    this.lastAckedSequence = -1;
    this.lastAckedOffset = -1n;
    this.producerId = -1n;
    this.producerEpoch = -1;
    this.unresolvedNext = null;
  }

  /**
   * Puts a batch back for a retry (Kafka's RecordAccumulator.reenqueue and
   * insertInSequenceOrder): before the first waiting batch with a higher
   * sequence, or with none (never drained), so that the waiting batches stay
   * in sequence order. Without sequences it goes first.
   */
  reenqueue(batch: ProducerBatch): void {
    let i = 0;
    if (batch.hasSequence) {
      while (i < this.batches.length && this.batches[i]!.hasSequence && this.batches[i]!.baseSequence < batch.baseSequence) i++;
    }
    this.batches.splice(i, 0, batch);
  }
}
