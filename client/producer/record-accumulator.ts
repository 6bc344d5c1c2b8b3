/**
 * The producer's RecordAccumulator (Kafka's producer/internals/RecordAccumulator.java):
 * a queue of batches per partition that send() appends to and the Sender
 * drains. It decides when a partition's first batch may go — batch.size
 * reached, linger.ms passed, a flush or close under way, a retry's backoff
 * over, delivery.timeout.ms not yet passed — and hands the ready ones to the
 * Sender grouped by leader; a drained batch is closed here, with its sequence
 * numbers, encoded and compressed once. It knows nothing of the network or of
 * transactions: the Sender answers where each ready partition goes and with
 * which producer id.
 */
import { encodeRecordBatch, NO_SEQUENCE } from '../../runtime/record-batch.js';
import { ConfigError, KafkaTimeoutError } from '../errors.js';
import { DefaultPartitioner, type Partitioner } from '../partitioner.js';
import type { ProducerSettings } from './config.js';
import { ProducerBatch, type PendingRecord } from './producer-batch.js';

/** Sequence numbers wrap at int32's end, as Kafka's DefaultRecordBatch.incrementSequence. */
const SEQUENCE_MODULUS = 2 ** 31;

/** One partition's batches, oldest first (Kafka's per-TopicPartition deque), and its ordering state. */
export interface PartitionQueue {
  /** `topic:partition`. */
  readonly key: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  batches: ProducerBatch[];
  /**
   * The first batch is in a request without an answer yet. One batch per
   * partition at a time (Kafka's guaranteeMessageOrder with one request in
   * flight, mutePartition): a retry can never overtake a later batch.
   */
  inFlight: boolean;
  /** The first batch waits until then (epoch ms) after a failed attempt. */
  retryAt: number;
  /** The sequence number of the partition's next new batch (idempotence). */
  nextSequence: number;
}

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
  /** The node to send the partition's first (ready) batch to, or HOLD, or RETRY_LATER. */
  leaderFor(queue: PartitionQueue, now: number): number;
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
      queue = { key, topic, topicId, partition, batches: [], inFlight: false, retryAt: 0, nextSequence: 0 };
      this.queues.set(key, queue);
    }
    let batch = queue.batches[queue.batches.length - 1];
    if (!batch || batch.encoded !== null || (batch.records.length > 0 && batch.bytes + size > this.settings.batchSize)) {
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
   * expiredBatches): each partition not in flight offers its first batch if
   * it is ready, grouped by the node `target` routes it to. A first batch past
   * delivery.timeout.ms is taken off and handed to `target.expired` instead,
   * there and then, so that what that does to the other partitions (an
   * abortable transaction fails their batches) applies before they are drained.
   */
  drain(now: number, target: DrainTarget): Drained {
    const byNode = new Map<number, DrainedBatch[]>();
    let next = Infinity;
    for (const queue of this.queues.values()) {
      if (queue.inFlight || queue.batches.length === 0) continue;
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
      if (queue.retryAt > now) {
        next = Math.min(next, queue.retryAt);
        continue;
      }
      if (!this.isReady(queue, batch, now)) {
        next = Math.min(next, batch.createdAt + this.settings.lingerMs);
        continue;
      }
      const leader = target.leaderFor(queue, now);
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
   * Closes a drained batch for good (Kafka's drainBatchesForOneNode, which sets
   * the producer state, then ProducerBatch.close): an idempotent producer's
   * batch takes the partition's next sequence numbers, and the batch is
   * encoded, compressed, once; every retry sends these bytes.
   */
  closeBatch(queue: PartitionQueue, batch: ProducerBatch, producerId: bigint, producerEpoch: number): void {
    const idempotent = this.settings.idempotent;
    if (idempotent) {
      batch.baseSequence = queue.nextSequence;
      queue.nextSequence = (queue.nextSequence + batch.records.length) % SEQUENCE_MODULUS;
    }
    batch.encoded = encodeRecordBatch({
      baseOffset: 0n,
      compression: this.settings.compression,
      compressionLevel: this.settings.compressionLevel,
      isTransactional: this.settings.transactionalId !== null,
      producerId,
      producerEpoch,
      baseSequence: idempotent ? batch.baseSequence : NO_SEQUENCE,
      records: batch.records.map((r) => r.input),
    });
  }

  /** The in-flight first batch of `queue` was answered with success: off the queue, its records resolved. */
  completeFirst(queue: PartitionQueue, batch: ProducerBatch, baseOffset: bigint, logAppendTime: bigint): void {
    queue.inFlight = false;
    queue.batches.shift();
    batch.complete(queue.topic, queue.partition, baseOffset, logAppendTime);
    this.incomplete.delete(batch);
  }

  /** Rejects every record of a batch already off its queue. */
  fail(batch: ProducerBatch, error: Error): void {
    batch.fail(error);
    this.incomplete.delete(batch);
  }

  /**
   * Fails every queued batch but the one in flight of each partition (Kafka's
   * abortUndrainedBatches). Returns whether one of them had been sent before
   * (it has a sequence number): the broker may have appended it.
   */
  abortUndrained(error: Error): boolean {
    let sequenced = false;
    for (const queue of this.queues.values()) {
      const keep: ProducerBatch[] = [];
      for (const batch of queue.batches) {
        if (queue.inFlight && batch === queue.batches[0]) keep.push(batch);
        else {
          if (batch.baseSequence >= 0) sequenced = true;
          this.fail(batch, error);
        }
      }
      queue.batches = keep;
    }
    return sequenced;
  }

  /** Fails every queued batch, in flight or not (the producer closed). */
  failAll(error: Error): void {
    for (const queue of this.queues.values()) {
      for (const batch of queue.batches) this.fail(batch, error);
      queue.batches = [];
    }
  }

  /** The topics of every partition that has had a batch, each once. */
  topics(): string[] {
    return [...new Set([...this.queues.values()].map((q) => q.topic))];
  }

  /** Every partition's next sequence back to 0 (a new producer id or epoch). */
  resetSequences(): void {
    for (const queue of this.queues.values()) queue.nextSequence = 0;
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
