/**
 * One batch of records for one partition (Kafka's producer/internals/ProducerBatch.java):
 * the records' completion callbacks, the size estimate that closes it, and,
 * once drained, its producer state (id, epoch, sequence) and encoded
 * RecordBatch, which a retry sends again unchanged unless the sequences of
 * its partition were rewritten (resetProducerState).
 */
import { RECORD_BATCH_OVERHEAD, type RecordInput } from '../../runtime/record-batch.js';
import type { RecordMetadata } from './config.js';

/**
 * The most a record adds to a batch besides its key, value and headers (Kafka's
 * DefaultRecord.MAX_RECORD_OVERHEAD): the estimate batch.size and
 * max.request.size are checked with, before compression.
 */
export const MAX_RECORD_OVERHEAD = 21;

/** A header's estimated share of a record: two varints plus the key at UTF-8's worst (3 bytes per UTF-16 unit). */
export function headerSizeEstimate(key: string, value: Uint8Array | null): number {
  return 2 + key.length * 3 + (value?.length ?? 0);
}

export interface PendingRecord {
  input: RecordInput;
  resolve: (metadata: RecordMetadata) => void;
  reject: (error: Error) => void;
}

export class ProducerBatch {
  readonly records: PendingRecord[] = [];
  /** The size estimate: the batch header plus each record's estimate. */
  bytes = RECORD_BATCH_OVERHEAD;
  /** -1 until the batch is first drained by an idempotent producer. */
  baseSequence = -1;
  producerId = -1n;
  producerEpoch = -1;
  /** Set when first drained: the batch takes no more records from then on. */
  closed = false;
  /** The bytes sent; null until first drained, and again after resetProducerState until the next send. */
  encoded: Uint8Array | null = null;
  /**
   * Its sequence was rewritten after it was first sent (Kafka's
   * ProducerBatch.sequenceHasBeenReset): an UNKNOWN_PRODUCER_ID or
   * OUT_OF_ORDER_SEQUENCE_NUMBER answer to it is then expected and retried.
   */
  sequenceReset = false;
  attempts = 0;
  /** A retry waits until then (epoch ms): the backoff after a failed attempt. */
  retryAt = 0;
  /** Settles once every record has its answer (flush waits on it). */
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(readonly createdAt: number) {
    this.done = new Promise<void>((resolve) => (this.finish = resolve));
  }

  get hasSequence(): boolean {
    return this.baseSequence >= 0;
  }

  /** The sequence of its last record (Kafka's ProducerBatch.lastSequence). */
  get lastSequence(): number {
    return this.baseSequence + this.records.length - 1;
  }

  /** Sets the producer state it is sent with; after a first send, the bytes are encoded again (Kafka's resetProducerState). */
  setProducerState(producerId: bigint, producerEpoch: number, baseSequence: number): void {
    if (this.encoded !== null) {
      this.sequenceReset = true;
      this.encoded = null;
    }
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.baseSequence = baseSequence;
  }

  /** Resolves every record: offsets from `baseOffset` (-1 each when unknown), the log append time when the topic uses it. */
  complete(topic: string, partition: number, baseOffset: bigint, logAppendTime: bigint): void {
    const records = this.records;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      r.resolve({
        topic,
        partition,
        offset: baseOffset < 0n ? -1n : baseOffset + BigInt(i),
        timestamp: logAppendTime >= 0n ? logAppendTime : (r.input.timestamp ?? -1n),
      });
    }
    this.finish();
  }

  fail(error: Error): void {
    for (const r of this.records) r.reject(error);
    this.finish();
  }
}
