/**
 * The producer's Sender (Kafka's producer/internals/Sender.java): takes the
 * ready batches from the RecordAccumulator, sends one Produce request per
 * leader with up to max.in.flight.requests.per.connection of them unanswered
 * per broker (Kafka's NetworkClient InFlightRequests.canSendMore), and
 * settles each batch from its answer — success (records resolved), retry
 * with the same sequence after a backoff, put back in sequence order (and
 * fresh metadata when the leader moved), or failure (records rejected; the
 * later batches' sequences adjusted or a new epoch, by the SequenceKeeper).
 * It runs on setImmediate / a timer instead of a thread, and holds back a
 * partition until the producer has an id and, under the classic transaction
 * protocol, the partition has joined the transaction.
 */
import { ProduceRequest, ProduceResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID } from '../../runtime/record-batch.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { groupBy, type ClusterClient } from '../cluster.js';
import { ApiError, Errors, errorFromCode, isRetriableCode, KafkaError, KafkaTimeoutError } from '../errors.js';
import type { TransactionManager } from '../transaction-manager.js';
import type { ProducerSettings } from './config.js';
import type { IdempotentProducerId } from './idempotent-producer-id.js';
import { PRODUCE_MAX_VERSION_BEFORE_TV2, PRODUCE_TOPIC_ID_VERSION, STALE_METADATA_ERRORS } from './produce-protocol.js';
import type { ProducerBatch } from './producer-batch.js';
import { HOLD, RETRY_LATER, type DrainedBatch, type DrainTarget, type PartitionQueue, type RecordAccumulator } from './record-accumulator.js';
import { SequenceKeeper } from './sequence-keeper.js';

export class Sender implements DrainTarget {
  private readonly inFlightRequests = new Set<Promise<void>>();
  private scheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private closed = false;
  /** Set by leaderFor during one drain: what to ask for once the drain is over. */
  private needMetadata = false;
  private needPartitions = false;
  /** Produce requests sent to each node and not yet answered. */
  private readonly requestsInFlight = new Map<number, number>();
  /** Set for an idempotent producer: its sequence rules. */
  private readonly sequences: SequenceKeeper | null;

  constructor(
    private readonly cluster: ClusterClient,
    private readonly accumulator: RecordAccumulator,
    private readonly txn: TransactionManager | null,
    /** Set for an idempotent producer without a transactional id. */
    private readonly producerId: IdempotentProducerId | null,
    private readonly settings: ProducerSettings,
  ) {
    this.sequences = settings.idempotent
      ? new SequenceKeeper({
          transactional: txn !== null,
          producerId: () => this.producerIdNow(),
          producerEpoch: () => this.producerEpochNow(),
          bumpEpoch: () => producerId!.bumpEpoch(),
          failTransaction: (error) => this.failTransaction(error),
        })
      : null;
  }

  /** Runs the sender soon (once, however often it is woken before it runs). */
  wakeup(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.run();
    });
  }

  /** Runs the sender at `at` (epoch ms) unless it is already due to run earlier. */
  scheduleAt(at: number): void {
    if (at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.run();
      },
      Math.max(0, at - Date.now()),
    );
  }

  /** Stops: nothing is sent or retried from now on. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  async awaitInFlight(): Promise<void> {
    while (this.inFlightRequests.size > 0) await Promise.allSettled([...this.inFlightRequests]);
  }

  /** Fails every batch waiting to be sent with `error`; those in requests wait for their answers. */
  abortUndrainedBatches(error: Error): void {
    // A failed batch that was sent before (it has a sequence) may be in the log: the next transaction needs a new epoch.
    if (this.accumulator.abortUndrained(error)) this.txn?.requireEpochBump();
  }

  /** One round (Kafka's Sender.sendProducerData): drain what is ready, ask for what is missing, send. */
  private run(): void {
    if (this.closed) return;
    this.needMetadata = false;
    this.needPartitions = false;
    this.sequences?.beforeDrain(this.accumulator.partitions());
    const { byNode, nextCheckAt } = this.accumulator.drain(Date.now(), this);
    if (this.needPartitions && this.txn) void this.txn.addPendingPartitions();
    if (this.needMetadata) {
      this.cluster.invalidateMetadata();
      void this.cluster.refreshMetadata(this.accumulator.topics()).catch(() => {});
    }
    for (const [nodeId, items] of byNode) this.sendProduce(nodeId, items);
    if (nextCheckAt < Infinity) this.scheduleAt(nextCheckAt);
    // Kafka's sender loops while there is work: a partition's next ready batch goes in the next request.
    if (byNode.size > 0) this.wakeup();
  }

  /**
   * DrainTarget: the partition's leader, once the producer may send `batch`
   * to the partition at all and the leader's connection has room for one more
   * request; a request's answer wakes the sender again.
   */
  leaderFor(queue: PartitionQueue, batch: ProducerBatch, now: number): number {
    if (this.producerId && !this.producerId.valid) {
      this.producerId.ensure();
      return HOLD;
    }
    if (this.txn && !this.txn.isPartitionAdded(queue.topic, queue.partition)) {
      this.needPartitions = true;
      return HOLD;
    }
    if (this.sequences?.mustWait(queue, batch)) return HOLD;
    const leader = this.cluster.cachedTopic(queue.topic)?.partitions.find((p) => p.partition === queue.partition)?.leader ?? -1;
    if (leader < 0) {
      this.needMetadata = true;
      queue.retryAt = now + this.cluster.backoff(1);
      return RETRY_LATER;
    }
    if ((this.requestsInFlight.get(leader) ?? 0) >= this.settings.maxInFlight) return HOLD;
    return leader;
  }

  /**
   * DrainTarget: a waiting batch ran out of delivery.timeout.ms (Kafka's
   * Sender.sendProducerData on expiredBatches): failed without adjusting the
   * later sequences; one that was sent before leaves its sequences unresolved.
   */
  expired(queue: PartitionQueue, batch: ProducerBatch, error: KafkaTimeoutError): void {
    this.onBatchFailed(queue, batch, error, false);
  }

  /** The producer id batches carry now: the transaction's, the idempotent producer's, or none. */
  private producerIdNow(): bigint {
    if (!this.settings.idempotent) return NO_PRODUCER_ID;
    return this.txn ? this.txn.producerId : this.producerId!.id;
  }

  private producerEpochNow(): number {
    if (!this.settings.idempotent) return NO_PRODUCER_EPOCH;
    return this.txn ? this.txn.producerEpoch : this.producerId!.epoch;
  }

  /** One Produce request to `nodeId` with a batch for each partition (Kafka's Sender.sendProduceRequest). */
  private sendProduce(nodeId: number, drained: DrainedBatch[]): void {
    // A batch expired later in the same drain may have made the transaction abortable, which failed the waiting batches.
    const items = drained.filter(({ queue, batch }) => queue.batches[0] === batch);
    if (items.length === 0) return;
    // The bytes as drained: a rewrite of the sequences while the request is out applies to the next attempt only.
    const records = new Map<ProducerBatch, Uint8Array>();
    for (const { queue, batch } of items) {
      queue.batches.shift();
      queue.sending++;
      batch.attempts++;
      // Kafka's drainBatchesForOneNode: a batch's sequence is given once, at its first drain.
      if (this.sequences && !batch.hasSequence) queue.assignSequence(batch, this.producerIdNow(), this.producerEpochNow());
      records.set(batch, batch.encoded ?? this.accumulator.encode(batch));
    }
    this.requestsInFlight.set(nodeId, (this.requestsInFlight.get(nodeId) ?? 0) + 1);
    const byTopic = groupBy(items, (item) => item.queue.topic);
    const request = (version: number) =>
      ProduceRequest.create({
        transactionalId: this.txn?.transactionalId ?? null,
        acks: this.settings.acks,
        timeoutMs: this.cluster.requestTimeoutMs,
        topicData: [...byTopic].map(([name, list]) => ({
          name: version >= PRODUCE_TOPIC_ID_VERSION ? '' : name,
          topicId: version >= PRODUCE_TOPIC_ID_VERSION ? list[0]!.queue.topicId : ZERO_UUID,
          partitionData: list.map(({ queue, batch }) => ({ index: queue.partition, records: records.get(batch)! })),
        })),
      });
    const run = (async () => {
      let response: ProduceResponse | undefined;
      try {
        ({ response } = await this.cluster.send(nodeId, ProduceRequest, ProduceResponse, request, {
          max: this.txn ? this.txn.produceMaxVersion : PRODUCE_MAX_VERSION_BEFORE_TV2,
          min: this.txn ? this.txn.produceMinVersion : undefined,
        }));
      } catch (error) {
        for (const { queue, batch } of items) this.onBatchError(queue, batch, error as Error);
        return;
      }
      this.handleResponse(nodeId, items, response);
    })().finally(() => {
      this.requestsInFlight.set(nodeId, this.requestsInFlight.get(nodeId)! - 1);
      this.inFlightRequests.delete(run);
      this.wakeup();
    });
    this.inFlightRequests.add(run);
  }

  /** Settles each batch of a request from its partition's answer (Kafka's Sender.handleProduceResponse / completeBatch). */
  private handleResponse(nodeId: number, items: DrainedBatch[], response: ProduceResponse | undefined): void {
    for (const { queue, batch } of items) {
      if (response === undefined) {
        // acks=0: no response.
        queue.sending--;
        this.accumulator.complete(queue, batch, -1n, -1n);
        continue;
      }
      const topic = response.responses.find((t) => t.name === queue.topic || t.topicId === queue.topicId);
      const part = topic?.partitionResponses.find((p) => p.index === queue.partition);
      if (!part) {
        this.onBatchError(queue, batch, new KafkaError(`the Produce response of node ${nodeId} has no result for ${queue.key}`, { retriable: false }));
        continue;
      }
      // DUPLICATE_SEQUENCE_NUMBER: the broker has the batch but no longer its offset; a success without one, as in Kafka.
      if (part.errorCode === Errors.NONE || part.errorCode === Errors.DUPLICATE_SEQUENCE_NUMBER) {
        const baseOffset = part.errorCode === Errors.NONE ? part.baseOffset : -1n;
        queue.sending--;
        if (this.sequences) queue.acknowledged(batch, baseOffset, this.txn !== null);
        this.accumulator.complete(queue, batch, baseOffset, part.logAppendTimeMs);
        continue;
      }
      const error = errorFromCode(part.errorCode, `Produce to ${queue.key} on ${this.cluster.describeNode(nodeId)}`, part.errorMessage);
      this.onBatchError(queue, batch, error, part.logStartOffset);
    }
  }

  /**
   * A batch attempt failed: put it back for a retry, same sequence, in
   * sequence order (Kafka's Sender.completeBatch, canRetry, reenqueueBatch),
   * if the error allows one and it is in time; else fail it.
   */
  private onBatchError(queue: PartitionQueue, batch: ProducerBatch, error: Error, logStartOffset = -1n): void {
    queue.sending--;
    const code = error instanceof ApiError ? error.code : undefined;
    const inTime = Date.now() - batch.createdAt < this.settings.deliveryTimeoutMs;
    const state = this.txn?.state;
    const aborting = state === 'ABORTING_TRANSACTION' || state === 'ABORTABLE_ERROR' || state === 'FATAL_ERROR';
    // A batch of a transaction that is aborting (or can only abort) is never retried: a retry would
    // land in the *next* transaction and commit there (the chaos soak found such duplicates).
    const allowed = inTime && !this.closed && !aborting;
    const retriable = error instanceof NetworkError || (code !== undefined && isRetriableCode(code));
    const sequenceRule = allowed && code !== undefined && this.sequences ? this.sequences.canRetry(queue, batch, code, logStartOffset) : undefined;
    if (allowed && (sequenceRule ?? retriable)) {
      if (error instanceof NetworkError || STALE_METADATA_ERRORS.has(code!)) {
        this.cluster.invalidateMetadata();
        void this.cluster.refreshMetadata([queue.topic]).catch(() => {});
      }
      batch.retryAt = Date.now() + this.cluster.backoff(batch.attempts);
      queue.reenqueue(batch);
      this.scheduleAt(batch.retryAt);
      return;
    }
    if (retriable && !inTime) {
      error = new KafkaTimeoutError(
        `${batch.records.length} record(s) for ${queue.key} expired: not acknowledged within delivery.timeout.ms (${this.settings.deliveryTimeoutMs} ms); last error: ${error.message}`,
        error,
      );
    }
    // The broker answered with an error code: the batch is not in its log (Kafka adjusts the later sequences here, its retries being unlimited).
    this.onBatchFailed(queue, batch, error, code !== undefined);
  }

  /**
   * A batch failed for good (Kafka's Sender.failBatch and
   * TransactionManager.handleFailedBatch): its records are rejected, the
   * partition's later sequences follow (SequenceKeeper.failed) when the
   * broker `answered` with an error, else its sequences are unresolved
   * (it may be in the log; Kafka's markSequenceUnresolved for an expired
   * batch that was sent), and its transaction can only abort.
   */
  private onBatchFailed(queue: PartitionQueue, batch: ProducerBatch, error: Error, answered: boolean): void {
    // A transaction whose batch may or may not be in the log needs a new epoch before the next one.
    if (batch.hasSequence && this.txn) this.txn.requireEpochBump();
    if (answered) this.sequences?.failed(queue, batch, error);
    else this.sequences?.expired(queue, batch);
    this.accumulator.fail(batch, error);
    if (this.txn && this.txn.isInTransaction) this.failTransaction(error);
  }

  /** The transaction can only abort (or the producer is fenced): what waits to be sent fails with its error. */
  private failTransaction(error: Error): void {
    if (!this.txn) return;
    this.txn.fail(error);
    if (this.txn.state === 'ABORTABLE_ERROR' || this.txn.state === 'FATAL_ERROR') this.abortUndrainedBatches(this.txn.lastError ?? error);
  }
}
