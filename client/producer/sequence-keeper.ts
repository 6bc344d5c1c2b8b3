/**
 * The idempotent producer's rules for sequence numbers across partitions,
 * which Kafka keeps in producer/internals/TransactionManager.java beside the
 * transaction state: when a drained batch must wait
 * (RecordAccumulator.shouldStopDrainBatchesForPartition), when an
 * OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID answer is retried
 * (canRetry), what a batch failed for good does to the later ones
 * (handleFailedBatch), what an expired one leaves unresolved
 * (markSequenceUnresolved, maybeResolveSequences), and the client-side epoch
 * bump of a producer without a transactional id
 * (requestIdempotentEpochBumpForPartition, bumpIdempotentEpochAndResetIdIfNeeded).
 * A transactional producer's epoch is bumped by its TransactionManager
 * (InitProducerId after the abort) instead.
 */
import { ApiError, Errors, KafkaError } from '../errors.js';
import type { PartitionQueue } from './partition-queue.js';
import type { ProducerBatch } from './producer-batch.js';

/** Where the keeper reads and changes the producer's id and epoch. */
export interface ProducerIdentity {
  readonly transactional: boolean;
  producerId(): bigint;
  producerEpoch(): number;
  /** A producer without a transactional id: the next epoch, or false when the id was dropped for a new one. */
  bumpEpoch(): boolean;
  /** A transactional producer: the sequences of a partition could not be resolved; the transaction can only abort. */
  failTransaction(error: Error): void;
}

export class SequenceKeeper {
  private epochBumpRequired = false;
  /** The partitions whose unsettled batches are renumbered from 0 under the bumped epoch. */
  private readonly rewrite = new Set<PartitionQueue>();

  constructor(private readonly identity: ProducerIdentity) {}

  /**
   * Whether the partition's first waiting batch must wait (Kafka's
   * shouldStopDrainBatchesForPartition): a new batch while batches of an
   * older id or epoch are unsettled, or while sequences are unresolved; a
   * retry until it is the partition's first unsettled batch, so that a retry
   * never overtakes an earlier batch and the batches behind it follow it.
   */
  mustWait(queue: PartitionQueue, batch: ProducerBatch): boolean {
    if (!batch.hasSequence) {
      if (queue.inFlight.length > 0 && queue.isStale(this.identity.producerId(), this.identity.producerEpoch())) return true;
      return queue.unresolvedNext !== null;
    }
    const first = queue.firstInFlightSequence;
    return first >= 0 && batch.baseSequence !== first;
  }

  /**
   * Whether an error answer with a sequence-related code is retried (Kafka's
   * TransactionManager.canRetry); undefined for the other codes, which are
   * retried when retriable.
   */
  canRetry(queue: PartitionQueue, batch: ProducerBatch, code: number, logStartOffset: bigint): boolean | undefined {
    const { transactional } = this.identity;
    if (code === Errors.UNKNOWN_PRODUCER_ID) {
      // The broker lost this producer's state. Without the log start offset, ask again until the answer has it.
      if (logStartOffset < 0n) return true;
      // The first of the partition's batches met this and the later ones were renumbered from 0 already.
      if (batch.sequenceReset) return true;
      if (queue.lastAckedOffset < logStartOffset) {
        // Retention removed the head of the log, and the producer state with it: expected, not a loss.
        if (transactional) queue.startSequencesAtBeginning(this.identity.producerId(), this.identity.producerEpoch());
        else this.requestEpochBump(queue);
        return true;
      }
      if (!transactional) {
        this.requestEpochBump(queue);
        return true;
      }
      return false;
    }
    if (code === Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) {
      // Not the batch right after the last acknowledged one: an earlier batch is being retried; this one follows it.
      if (queue.unresolvedNext === null && (batch.sequenceReset || !queue.isNextSequence(batch.baseSequence))) return true;
      if (!transactional) {
        // A real gap (or the batch right after the unresolved ones): a new epoch starts the partition's sequences again.
        if (queue.unresolvedNext === null || batch.baseSequence === queue.unresolvedNext) this.requestEpochBump(queue);
        return true;
      }
      return false;
    }
    return undefined;
  }

  /**
   * The broker answered a batch with an error that is not retried (Kafka's
   * handleFailedBatch with adjustSequenceNumbers): it is not in the log, so
   * the later batches' sequences move down (a transactional producer), or
   * the partition starts again under a new epoch (one without).
   */
  failed(queue: PartitionQueue, batch: ProducerBatch, error: Error): void {
    queue.removeInFlight(batch);
    if (!batch.hasSequence) return;
    const code = error instanceof ApiError ? error.code : undefined;
    if (code === Errors.OUT_OF_ORDER_SEQUENCE_NUMBER && !this.identity.transactional) this.requestEpochBump(queue);
    else if (code === Errors.UNKNOWN_PRODUCER_ID) queue.resetSequences();
    else if (this.identity.transactional) queue.adjustSequencesDueToFailedBatch(batch);
    else this.requestEpochBump(queue);
  }

  /**
   * A batch with a sequence failed without an answer from the broker (it
   * expired, or its connection failed past delivery.timeout.ms): the broker
   * may have it (Kafka's failBatch without adjusting, then markSequenceUnresolved).
   */
  expired(queue: PartitionQueue, batch: ProducerBatch): void {
    queue.removeInFlight(batch);
    if (!batch.hasSequence) return;
    const next = batch.lastSequence + 1;
    queue.unresolvedNext = queue.unresolvedNext === null ? next : Math.max(queue.unresolvedNext, next);
  }

  /**
   * At the start of each sender round (Kafka's maybeResolveSequences): a
   * partition with unresolved sequences and nothing unsettled is resolved
   * when the acknowledgements reached its next sequence; else the producer
   * cannot know what the broker has, and starts a new epoch (or, in a
   * transaction, can only abort). Then the epoch bump, if one was asked for
   * (bumpIdempotentEpochAndResetIdIfNeeded).
   */
  beforeDrain(partitions: Iterable<PartitionQueue>): void {
    for (const queue of partitions) {
      if (queue.unresolvedNext === null || queue.inFlight.length > 0) continue;
      if (!queue.isNextSequence(queue.nextSequence)) {
        if (this.identity.transactional) {
          this.identity.failTransaction(
            new KafkaError(`the producer has no answer for some records sent to ${queue.key} and can no longer retry them; the transaction can only abort`, {
              retriable: false,
            }),
          );
        } else this.requestEpochBump(queue);
      }
      queue.unresolvedNext = null;
    }
    if (!this.epochBumpRequired) return;
    this.epochBumpRequired = false;
    const kept = this.identity.bumpEpoch();
    // A new id (the epochs ran out) resets every partition when it arrives.
    if (kept) for (const queue of this.rewrite) queue.startSequencesAtBeginning(this.identity.producerId(), this.identity.producerEpoch());
    this.rewrite.clear();
  }

  /** Kafka's requestIdempotentEpochBumpForPartition (a producer without a transactional id). */
  private requestEpochBump(queue: PartitionQueue): void {
    this.epochBumpRequired = true;
    this.rewrite.add(queue);
  }
}
