/**
 * The producer's RecordAccumulator (Kafka's producer/internals/RecordAccumulator.java):
 * a queue of batches per partition that send() appends to and the Sender
 * drains. It decides when a partition's first waiting batch may go —
 * batch.size reached, linger.ms passed, a flush or close under way, a
 * retry's backoff over, delivery.timeout.ms not yet passed — and hands the
 * ready ones to the Sender grouped by leader, one batch per partition per
 * drain (a partition may have several drained batches in flight); a drained
 * batch is encoded and compressed here, once unless its sequence is
 * rewritten. It knows nothing of the network or of transactions: the Sender
 * answers where each ready partition goes, whether it must wait, and with
 * which producer id.
 */
import { encodeRecordBatch, NO_SEQUENCE } from '../../runtime/record-batch.js';
import { ConfigError, KafkaTimeoutError } from '../errors.js';
import { DefaultPartitioner, type Partitioner } from '../partitioner.js';
import type { ProducerSettings } from './config.js';
import { PartitionQueue } from './partition-queue.js';
import { ProducerBatch, type PendingRecord } from './producer-batch.js';

export { PartitionQueue } from './partition-queue.js';

/** A ready partition with the batch to send for it. */
export interface DrainedBatch {
  readonly queue: PartitionQueue;
  readonly batch: ProducerBatch;
}

/** `leaderFor`'s answer when a ready partition is held back this round (no producer id yet, partition not yet in the transaction). */
export const HOLD = -1;
/** `leaderFor`'s answer when the partition must wait until its `retryAt`, which `leaderFor` set (no leader known). */
export const RETRY_LATER = -2;

/** Where the Sender takes what `drain` finds. */
export interface DrainTarget {
  /** The node to send the partition's first waiting (ready) `batch` to, or HOLD, or RETRY_LATER. */
  leaderFor(queue: PartitionQueue, batch: ProducerBatch, now: number): number;
  /** The partition's first batch ran out of delivery.timeout.ms before it was sent; it is off the queue. */
  expired(queue: PartitionQueue, batch: ProducerBatch, error: KafkaTimeoutError): void;
}

export interface Drained {
  byNode: Map<number, DrainedBatch[]>;
  /** When a partition left waiting becomes ready (epoch ms); Infinity when none waits. */
  nextCheckAt: number;
}

export class RecordAccumulator {
  private readonly queues = new Map<string, PartitionQueue>();
  /** Every batch not yet answered, sent or not (Kafka's IncompleteBatches): what flush waits for. */
  private readonly incomplete = new Set<ProducerBatch>();
  private readonly partitioner: DefaultPartitioner;
  private flushesInProgress = 0;
  private closing = false;

  constructor(
    private readonly settings: ProducerSettings,
    private readonly userPartitioner: Partitioner | undefined,
  ) {
    this.partitioner = new DefaultPartitioner(settings.batchSize);
  }

  /**
   * The partition of a record: the one it names (checked against `count`),
   * else the user's partitioner's, else the built-in one's (murmur2 of the key,
   * sticky for no key), as Kafka's KafkaProducer.partition and the
   * accumulator's BuiltInPartitioner choose.
   */
  partitionFor(topic: string, named: number | undefined, key: Uint8Array | null, count: number, size: number): number {
    if (named !== undefined) {
      if (!Number.isInteger(named) || named < 0 || named >= count) {
        throw new ConfigError(`partition ${named} of topic ${topic} does not exist (it has ${count})`);
      }
      return named;
    }
    if (this.userPartitioner) return this.userPartitioner(topic, key, count);
    return this.partitioner.partition(topic, key, count, size);
  }

  /**
   * Adds a record to its partition's last batch, or to a new one when that one
   * is full or already drained. Returns when the Sender should next look: 0 for
   * now (a full batch, or no linger), else when the batch's linger.ms ends.
   */
  append(topic: string, topicId: string, partition: number, size: number, pending: PendingRecord): number {
    const key = `${topic}:${partition}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = new PartitionQueue(topic, topicId, partition);
      this.queues.set(key, queue);
    }
    let batch = queue.batches[queue.batches.length - 1];
    if (!batch || batch.closed || (batch.records.length > 0 && batch.bytes + size > this.settings.batchSize)) {
      if (batch && !this.userPartitioner) this.partitioner.onBatchClosed(topic, partition);
      batch = new ProducerBatch(Date.now());
      queue.batches.push(batch);
      this.incomplete.add(batch);
    }
    batch.records.push(pending);
    batch.bytes += size;
    return batch.bytes >= this.settings.batchSize || this.settings.lingerMs <= 0 ? 0 : batch.createdAt + this.settings.lingerMs;
  }

  /**
   * ready + drain in one pass (Kafka's RecordAccumulator.ready, drain and
   * expiredBatches): each partition offers its first waiting batch if it is
   * ready, grouped by the node `target` routes it to; with
   * max.in.flight.requests.per.connection 1, only while none of the
   * partition's batches is in a request (Kafka's mutePartition under
   * guaranteeMessageOrder). A first batch past
   * delivery.timeout.ms is taken off and handed to `target.expired` instead,
   * there and then, so that what that does to the other partitions (an
   * abortable transaction fails their batches) applies before they are drained.
   */
  drain(now: number, target: DrainTarget): Drained {
    const byNode = new Map<number, DrainedBatch[]>();
    let next = Infinity;
    for (const queue of this.queues.values()) {
      if (queue.batches.length === 0 || (this.settings.maxInFlight === 1 && queue.sending > 0)) continue;
      const batch = queue.batches[0]!;
      if (now - batch.createdAt >= this.settings.deliveryTimeoutMs) {
        queue.batches.shift();
        target.expired(
          queue,
          batch,
          new KafkaTimeoutError(
            `${batch.records.length} record(s) for ${queue.key} expired: not acknowledged within delivery.timeout.ms (${this.settings.deliveryTimeoutMs} ms)`,
          ),
        );
        next = now;
        continue;
      }
      const waitUntil = Math.max(queue.retryAt, batch.retryAt);
      if (waitUntil > now) {
        next = Math.min(next, waitUntil);
        continue;
      }
      if (!this.isReady(queue, batch, now)) {
        next = Math.min(next, batch.createdAt + this.settings.lingerMs);
        continue;
      }
      const leader = target.leaderFor(queue, batch, now);
      if (leader === HOLD) continue;
      if (leader === RETRY_LATER) {
        next = Math.min(next, queue.retryAt);
        continue;
      }
      const list = byNode.get(leader);
      if (list) list.push({ queue, batch });
      else byNode.set(leader, [{ queue, batch }]);
    }
    return { byNode, nextCheckAt: next };
  }

  /** Kafka's RecordAccumulator.batchReady: full, lingered long enough, or everything must go now. */
  private isReady(queue: PartitionQueue, batch: ProducerBatch, now: number): boolean {
    return (
      this.flushesInProgress > 0 ||
      this.closing ||
      queue.batches.length > 1 ||
      batch.bytes >= this.settings.batchSize ||
      now - batch.createdAt >= this.settings.lingerMs
    );
  }

  /**
   * The bytes of a drained batch (Kafka's ProducerBatch.close): encoded and
   * compressed with the producer state it carries, once; every retry sends
   * these bytes unless its sequence was rewritten since.
   */
  encode(batch: ProducerBatch): Uint8Array {
    batch.closed = true;
    const idempotent = this.settings.idempotent;
    batch.encoded = encodeRecordBatch({
      baseOffset: 0n,
      compression: this.settings.compression,
      compressionLevel: this.settings.compressionLevel,
      isTransactional: this.settings.transactionalId !== null,
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: idempotent ? batch.baseSequence : NO_SEQUENCE,
      records: batch.records.map((r) => r.input),
    });
    return batch.encoded;
  }

  /** An in-flight batch was answered with success: its records resolved. */
  complete(queue: PartitionQueue, batch: ProducerBatch, baseOffset: bigint, logAppendTime: bigint): void {
    batch.complete(queue.topic, queue.partition, baseOffset, logAppendTime);
    this.incomplete.delete(batch);
  }

  /** Rejects every record of a batch already off its queue. */
  fail(batch: ProducerBatch, error: Error): void {
    batch.fail(error);
    this.incomplete.delete(batch);
  }

  /**
   * Fails every batch waiting to be sent (Kafka's abortUndrainedBatches);
   * those in requests are left to their answers. Returns whether one of them
   * had been sent before (it has a sequence number): the broker may have
   * appended it.
   */
  abortUndrained(error: Error): boolean {
    let sequenced = false;
    for (const queue of this.queues.values()) {
      for (const batch of queue.batches) {
        if (batch.hasSequence) {
          sequenced = true;
          queue.removeInFlight(batch);
        }
        this.fail(batch, error);
      }
      queue.batches = [];
    }
    return sequenced;
  }

  /** Every partition, for the Sender's rounds over their sequence state. */
  partitions(): IterableIterator<PartitionQueue> {
    return this.queues.values();
  }

  /** Fails every queued batch, in flight or not (the producer closed). */
  failAll(error: Error): void {
    for (const batch of [...this.incomplete]) this.fail(batch, error);
    for (const queue of this.queues.values()) {
      queue.batches = [];
      queue.inFlight.length = 0;
    }
  }

  /** The topics of every partition that has had a batch, each once. */
  topics(): string[] {
    return [...new Set([...this.queues.values()].map((q) => q.topic))];
  }

  /** Every partition's sequences start again (a new producer id or epoch; Kafka's TransactionManager.resetSequenceNumbers). */
  resetSequences(): void {
    for (const queue of this.queues.values()) queue.resetSequences();
  }

  /** What a flush waits for: every batch not yet answered now. */
  incompleteDone(): Promise<void>[] {
    return [...this.incomplete].map((b) => b.done);
  }

  /** While a flush is in progress every batch is ready at once (Kafka's beginFlush). */
  beginFlush(): void {
    this.flushesInProgress++;
  }

  endFlush(): void {
    this.flushesInProgress--;
  }

  /** From now on every batch is ready at once: close sends what is queued without lingering. */
  beginClose(): void {
    this.closing = true;
  }
}
