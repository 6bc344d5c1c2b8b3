/**
 * KafkaProducer, the facade (Kafka's KafkaProducer.java): checks and
 * partitions each record and appends it to the RecordAccumulator, which the
 * Sender drains into Produce requests (client/producer/); transactions go
 * through the TransactionManager, and KIP-1289's sendShareAcksToTransaction
 * with them.
 */
import { RECORD_BATCH_OVERHEAD, type RecordHeader, type RecordInput } from '../runtime/record-batch.js';
import { ClusterClient } from './cluster.js';
import { ApiError, ClientClosedError, ConfigError, Errors, IllegalStateError, KafkaTimeoutError } from './errors.js';
import { ShareTransactionMetrics, type ShareTransactionMetricsSnapshot } from './metrics.js';
import {
  producerSettings,
  type CompleteTransactionConfig,
  type HeaderValue,
  type ProducerConfig,
  type ProducerRecord,
  type ProducerSettings,
  type RecordMetadata,
} from './producer/config.js';
import { IdempotentProducerId } from './producer/idempotent-producer-id.js';
import { headerSizeEstimate, MAX_RECORD_OVERHEAD, type PendingRecord } from './producer/producer-batch.js';
import { RecordAccumulator } from './producer/record-accumulator.js';
import { completeSavedTransaction } from './producer/saved-transaction.js';
import { Sender } from './producer/sender.js';
import type { ShareAcknowledgements, ShareGroupMetadata } from './share/acknowledgements.js';
import {
  PreparedTxnState,
  TransactionAbortedError,
  TransactionManager,
  type ConsumerGroupMetadata,
  type PreparedTransaction,
  type SavedTransactionOutcome,
  type TopicPartitionOffset,
  type TransactionState,
} from './transaction-manager.js';

export type { CompleteTransactionConfig, HeaderValue, ProducerConfig, ProducerRecord, RecordMetadata } from './producer/config.js';

const encoder = new TextEncoder();
const toBytes = (v: Uint8Array | string | null | undefined): Uint8Array | null =>
  v === undefined || v === null ? null : typeof v === 'string' ? encoder.encode(v) : v;

export class KafkaProducer {
  readonly clientId: string;
  private readonly cluster: ClusterClient;
  private readonly txn: TransactionManager | null;
  private readonly metricsImpl: ShareTransactionMetrics;
  private readonly cfg: ProducerSettings;
  private readonly accumulator: RecordAccumulator;
  private readonly sender: Sender;
  /** Sends waiting for their topic's metadata, in order: a later send with metadata at hand waits behind them. */
  private appendTail: Promise<void> = Promise.resolve();
  private waitingAppends = 0;
  private closing = false;
  private closed = false;
  /** Counts beginTransaction() calls: a send waiting for metadata belongs to the transaction it was made in. */
  private transactionGeneration = 0;

  constructor(config: ProducerConfig) {
    this.cluster = new ClusterClient(config, config.transactionalId ? `producer-${config.transactionalId}` : 'producer-1');
    this.clientId = this.cluster.clientId;
    this.cfg = producerSettings(config);
    this.accumulator = new RecordAccumulator(this.cfg, config.partitioner);
    this.metricsImpl = new ShareTransactionMetrics({
      clientId: this.clientId,
      transactionalId: this.cfg.transactionalId,
      registry: config.metricsRegistry,
    });
    this.txn =
      this.cfg.transactionalId !== null
        ? new TransactionManager(
            this.cfg.transactionalId,
            this.cluster,
            {
              flush: () => this.flushInternal(),
              abortUndrainedBatches: (error) => this.sender.abortUndrainedBatches(error),
              awaitInFlight: () => this.sender.awaitInFlight(),
              wakeup: () => this.sender.wakeup(),
              resetSequences: () => this.accumulator.resetSequences(),
            },
            {
              transactionTimeoutMs: this.cfg.transactionTimeoutMs,
              maxBlockMs: this.cfg.maxBlockMs,
              enable2Pc: this.cfg.enable2Pc,
            },
            this.metricsImpl,
          )
        : null;
    const producerId =
      this.cfg.idempotent && !this.txn
        ? new IdempotentProducerId(this.cluster, this.cfg, {
            fetched: () => this.accumulator.resetSequences(),
            failed: (error) => this.sender.abortUndrainedBatches(error),
            settled: () => this.sender.wakeup(),
          })
        : null;
    this.sender = new Sender(this.cluster, this.accumulator, this.txn, producerId, this.cfg);
  }

  /**
   * Finishes, after a restart, the transaction a checkpoint saved (KIP-939,
   * DESIGN §5.6), with a short-lived two-phase-commit producer; call it
   * before initTransactions() of the new producer with the same transactional
   * id. The saved transaction, if still open, ends with `result`; a later
   * transaction open instead (whose checkpoint never completed) is aborted,
   * its records and acks redelivered at once. Resolves to what became of the
   * saved transaction: 'committed', 'aborted', or 'unknown' where the
   * coordinator no longer knows (TransactionManager.recoverPrepared says
   * which is which). On a broker without Transactions V2 (where saved states
   * cannot tell one transaction from the next) it throws, or with
   * classicProtocolFallback ends whatever is open under the saved producer id
   * and epoch (EndTxn), with a warning.
   */
  static async completeTransaction(
    config: CompleteTransactionConfig,
    saved: PreparedTransaction | string,
    result: 'commit' | 'abort',
  ): Promise<SavedTransactionOutcome> {
    return completeSavedTransaction(config, saved, result, (state) => {
      const producer = new KafkaProducer({
        ...config,
        transactionalId: state.transactionalId,
        transactionTwoPhaseCommitEnable: true,
        clientId: config.clientId ?? `producer-${state.transactionalId}-recovery`,
        metricsRegistry: null,
      });
      return {
        txn: producer.txn!,
        cluster: producer.cluster,
        initTransactions: () => producer.initTransactions(),
        close: () => producer.close(),
      };
    });
  }

  // -------------------------------------------------------------------------
  // Transactions

  /** The transaction state (Kafka's TransactionManager state); null for a non-transactional producer. */
  get transactionState(): TransactionState | null {
    return this.txn?.state ?? null;
  }

  private requireTxn(call: string): TransactionManager {
    this.checkOpen();
    if (!this.txn) {
      throw new IllegalStateError(`cannot call ${call}: this producer has no transactionalId; set transactionalId in its config to use transactions`);
    }
    return this.txn;
  }

  private checkOpen(): void {
    if (this.closed || this.closing) throw new ClientClosedError(`producer ${this.clientId}`);
  }

  /**
   * Gets a producer id and epoch from the transaction coordinator, fencing
   * older producers with this transactional id (aborting their open
   * transaction). With `keepPreparedTxn` (KIP-939, needs
   * transactionTwoPhaseCommitEnable) an open transaction is kept instead, in
   * the prepared state: finish it with completeTransaction(state),
   * commitTransaction() or abortTransaction(); `preparedTransaction` names it.
   */
  async initTransactions(options: { keepPreparedTxn?: boolean } = {}): Promise<void> {
    await this.requireTxn('initTransactions()').initTransactions(options);
  }

  /**
   * @internal For TransactionalShareAcknowledger: UnsupportedVersionError
   * unless the transaction coordinator has KIP-1289's APIs (95, 96).
   */
  async checkShareAckSupport(): Promise<void> {
    await this.requireTxn('checkShareAckSupport()').checkShareAckSupport();
  }

  /**
   * KIP-939: commits the prepared transaction if it is the one `state` names
   * (a PreparedTxnState or its string form): 'committed'; aborts it otherwise:
   * 'unknown', what became of the named one. Without a prepared transaction it
   * throws InvalidTxnStateError, as Kafka does.
   */
  async completeTransaction(state: PreparedTransaction | string): Promise<SavedTransactionOutcome> {
    const txn = this.requireTxn('completeTransaction()');
    return txn.completeTransaction(typeof state === 'string' ? PreparedTxnState.fromString(state, txn.transactionalId) : state);
  }

  /** The prepared transaction (prepareTransaction(), or kept by initTransactions({ keepPreparedTxn: true })); null when none. */
  get preparedTransaction(): PreparedTxnState | null {
    return this.txn?.preparedTransaction ?? null;
  }

  beginTransaction(): void {
    this.requireTxn('beginTransaction()').beginTransaction();
    this.transactionGeneration++;
  }

  /** Adds consumer-group offsets to the transaction (AddOffsetsToTxn + TxnOffsetCommit). */
  async sendOffsetsToTransaction(offsets: readonly TopicPartitionOffset[], groupMetadata: ConsumerGroupMetadata | string): Promise<void> {
    await this.requireTxn('sendOffsetsToTransaction()').sendOffsetsToTransaction(offsets, groupMetadata);
  }

  /**
   * KIP-1289: binds share-group acknowledgements to the current transaction
   * (AddShareAcksToTxn, then TxnShareAcknowledge to each share coordinator).
   * Resolves when the acks are pending; they take effect when the transaction
   * commits, and are discarded (records redelivered) when it aborts. The
   * records queued in the transaction are sent at once, without waiting for
   * linger.ms, in flight with these requests.
   */
  async sendShareAcksToTransaction(acknowledgements: ShareAcknowledgements, groupMetadata: ShareGroupMetadata): Promise<void> {
    await this.requireTxn('sendShareAcksToTransaction()').sendShareAcksToTransaction(acknowledgements, groupMetadata);
  }

  /** Flushes every send, waits for offsets/acks calls, then EndTxn(COMMIT). */
  async commitTransaction(): Promise<void> {
    await this.requireTxn('commitTransaction()').commitTransaction();
  }

  /** Fails unsent records, waits for requests in flight, then EndTxn(ABORT). */
  async abortTransaction(): Promise<void> {
    await this.requireTxn('abortTransaction()').abortTransaction();
  }

  /**
   * Flushes and waits for every call of the current transaction, leaving it
   * open, and returns what a checkpoint must persist to commit or abort it
   * later — also from another process with KafkaProducer.completeTransaction().
   * Afterwards only commitTransaction() or abortTransaction() are allowed.
   */
  async prepareTransaction(): Promise<PreparedTxnState> {
    return this.requireTxn('prepareTransaction()').prepareTransaction();
  }

  /** The transactional id, producer id and epoch now in use (after initTransactions()). */
  transactionSnapshot(): PreparedTxnState {
    return this.requireTxn('transactionSnapshot()').snapshot();
  }

  /** The KIP-1289 share-transaction metrics (see client/metrics.ts for their definitions). */
  metrics(): ShareTransactionMetricsSnapshot {
    return this.metricsImpl.snapshot();
  }

  // -------------------------------------------------------------------------
  // send

  /**
   * Queues a record and resolves with its offset once the broker acknowledged
   * it (or rejects: in a transaction the transaction then becomes abortable).
   */
  send(record: ProducerRecord): Promise<RecordMetadata> {
    try {
      this.checkOpen();
      this.txn?.checkSend();
      if (!record || typeof record.topic !== 'string' || record.topic === '') throw new ConfigError('a ProducerRecord needs a topic');
    } catch (error) {
      return Promise.reject(error);
    }
    const generation = this.transactionGeneration;
    const result = this.enqueue(record, generation);
    // A record of the open transaction that cannot be sent (too large, a bad
    // partition, no metadata) must stop that transaction from committing
    // without it, or its share acks would commit with no output: the
    // transaction becomes abortable. Attaching this handler also marks the
    // promise as handled, so `void producer.send(...)` never crashes the process.
    result.catch((error: unknown) => this.failTransactionOf(generation, error));
    return result;
  }

  /** Makes the transaction a failed send belonged to abortable, unless it has ended since. */
  private failTransactionOf(generation: number, error: unknown): void {
    const txn = this.txn;
    if (!txn || generation !== this.transactionGeneration) return;
    // Already failed (a batch error is recorded where it happens) or ending: nothing to add.
    if (txn.state !== 'IN_TRANSACTION' && txn.state !== 'COMMITTING_TRANSACTION') return;
    if (error instanceof TransactionAbortedError) return;
    txn.fail(error instanceof Error ? error : new Error(String(error)));
  }

  /** Validates, sizes and queues a record; resolves when its batch is acknowledged. */
  private enqueue(record: ProducerRecord, generation: number): Promise<RecordMetadata> {
    const key = toBytes(record.key);
    const value = toBytes(record.value);
    const headers: RecordHeader[] = Array.isArray(record.headers)
      ? (record.headers as RecordHeader[])
      : Object.entries((record.headers ?? {}) as Record<string, HeaderValue>).map(([k, v]) => ({
          key: k,
          value: toBytes(v),
        }));
    const timestamp = record.timestamp === undefined ? BigInt(Date.now()) : BigInt(record.timestamp);
    const input: RecordInput = { timestamp, key, value, headers };
    let size = MAX_RECORD_OVERHEAD + (key?.length ?? 0) + (value?.length ?? 0);
    for (const h of headers) size += headerSizeEstimate(h.key, h.value);
    if (size + RECORD_BATCH_OVERHEAD > this.cfg.maxRequestSize) {
      const error = new ApiError(
        Errors.MESSAGE_TOO_LARGE,
        `the record is ${size} bytes, more than max.request.size (${this.cfg.maxRequestSize}); it was not sent (MESSAGE_TOO_LARGE)`,
      );
      this.failTransactionOf(generation, error);
      return Promise.reject(error);
    }
    return new Promise<RecordMetadata>((resolve, reject) => {
      const pending: PendingRecord = { input, resolve, reject };
      const cached = this.cluster.cachedTopic(record.topic);
      if (this.waitingAppends === 0 && cached) {
        try {
          this.append(record, cached, size, pending);
        } catch (error) {
          this.failTransactionOf(generation, error);
          reject(error);
        }
        return;
      }
      // Slow path: wait for metadata, keeping the order of sends.
      this.waitingAppends++;
      this.appendTail = this.appendTail
        .then(async () => {
          // A metadata failure fails the record, and through send() its transaction.
          const topic = await this.cluster.topic(record.topic, Date.now() + this.cfg.maxBlockMs, this.cfg.allowAutoCreateTopics);
          this.checkOpen();
          if (this.txn) {
            // Only into the transaction the record was sent in (which may be committing: commit waits for
            // these appends); never into a later one, and never after that one ended.
            const state = this.txn.state;
            if (generation !== this.transactionGeneration || (state !== 'IN_TRANSACTION' && state !== 'COMMITTING_TRANSACTION')) {
              if (state === 'ABORTABLE_ERROR' || state === 'FATAL_ERROR') this.txn.checkSend();
              throw new TransactionAbortedError(
                `the transaction of ${this.txn.transactionalId} in which the record was sent ended before it was queued; it was not sent`,
              );
            }
          }
          this.append(record, topic, size, pending);
        })
        .catch((error: unknown) => {
          const e =
            error instanceof KafkaTimeoutError
              ? new KafkaTimeoutError(
                  `topic ${record.topic} not present in metadata after ${this.cfg.maxBlockMs} ms (max.block.ms)${this.whyAbsent(record.topic)}`,
                  error,
                )
              : error;
          this.failTransactionOf(generation, e);
          reject(e as Error);
        })
        .finally(() => this.waitingAppends--);
    });
  }

  /** Validates, sizes, partitions and appends a record whose topic's metadata is at hand (Kafka's KafkaProducer.doSend). */
  private append(record: ProducerRecord, topic: { topicId: string; partitions: { partition: number }[] }, size: number, pending: PendingRecord): void {
    const partition = this.accumulator.partitionFor(record.topic, record.partition, pending.input.key ?? null, topic.partitions.length, size);
    this.txn?.maybeAddPartition(record.topic, partition);
    const sendAt = this.accumulator.append(record.topic, topic.topicId, partition, size, pending);
    if (sendAt === 0) this.sender.wakeup();
    else this.sender.scheduleAt(sendAt);
  }

  /** Sends everything queued now and waits until all of it completed (successfully or not). */
  async flush(): Promise<void> {
    this.checkOpen();
    await this.flushInternal();
  }

  private async flushInternal(): Promise<void> {
    await this.appendTail;
    const waiting = this.accumulator.incompleteDone();
    if (waiting.length === 0) return;
    this.accumulator.beginFlush();
    this.sender.wakeup();
    try {
      await Promise.all(waiting);
    } finally {
      this.accumulator.endFlush();
    }
  }

  /** Why a metadata wait for `topic` found nothing, when the broker said the topic does not exist. */
  private whyAbsent(topic: string): string {
    if (!this.cluster.saidAbsent(topic)) return '';
    return this.cfg.allowAutoCreateTopics
      ? `: the broker answers that the topic does not exist and did not create it when asked (its auto.create.topics.enable is off, or it refused): create the topic first`
      : `: the broker answers that the topic does not exist, and this producer does not ask it to create topics (allowAutoCreateTopics: false): create the topic first`;
  }

  /**
   * Closes the producer: an open transaction is aborted (as Kafka does), other
   * queued records are sent first (within `timeoutMs`), then connections close.
   */
  async close(timeoutMs = this.cfg.maxBlockMs): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    this.accumulator.beginClose();
    const work = (async () => {
      try {
        const keepPrepared = this.cfg.enable2Pc && this.txn?.preparedTransaction != null;
        if (keepPrepared) {
          // KIP-939: a prepared transaction belongs to the external commit decision; close() leaves it open.
        } else if (this.txn && (this.txn.state === 'IN_TRANSACTION' || this.txn.state === 'ABORTABLE_ERROR')) {
          await this.txn
            .abortTransaction()
            .catch((error: unknown) =>
              this.cluster.logger.warn(`producer ${this.clientId}: aborting the open transaction on close failed: ${(error as Error).message}`),
            );
        } else {
          await this.flushInternal();
        }
      } catch {
        /* errors were reported to the sends */
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.closed = true;
    this.sender.close();
    this.accumulator.failAll(new ClientClosedError(`producer ${this.clientId}`));
    this.metricsImpl.close();
    await this.cluster.close();
  }
}
