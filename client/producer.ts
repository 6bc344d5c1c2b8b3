/**
 * KafkaProducer: batching per partition (lingerMs, batchSize), RecordBatch v2,
 * idempotence with sequence numbers, transactions, and KIP-1289's
 * sendShareAcksToTransaction.
 */
import type { Registry } from 'prom-client';
import { InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse } from '../generated/index.js';
import { NetworkError } from '../connection/connection.js';
import { COMPRESSION_TYPES, compress } from '../runtime/index.js';
import {
  encodeRecordBatch,
  type CompressionType,
  type RecordHeader,
  type RecordInput,
} from '../runtime/record-batch.js';
import { ClusterClient, CoordinatorType, groupBy, type CommonClientConfig } from './cluster.js';
import {
  ApiError,
  ClientClosedError,
  ConfigError,
  Errors,
  errorFromCode,
  IllegalStateError,
  isRetriableCode,
  KafkaError,
  KafkaTimeoutError,
  UnsupportedVersionError,
} from './errors.js';
import { ShareTransactionMetrics, type ShareTransactionMetricsSnapshot } from './metrics.js';
import { DefaultPartitioner, type Partitioner } from './partitioner.js';
import type { ShareAcknowledgements, ShareGroupMetadata } from './share-acknowledgements.js';
import {
  endTransaction,
  PreparedTxnState,
  TransactionAbortedError,
  TransactionManager,
  type ConsumerGroupMetadata,
  type PreparedTransaction,
  type SavedTransactionOutcome,
  type TopicPartitionOffset,
  type TransactionState,
} from './transaction-manager.js';

export interface ProducerConfig extends CommonClientConfig {
  /** transactional.id: enables transactions (and idempotence). */
  transactionalId?: string | null;
  /** enable.idempotence. Default true (forced by a transactionalId). */
  enableIdempotence?: boolean;
  /** acks: 0, 1 or -1/'all'. Default 'all' (required by idempotence). */
  acks?: 0 | 1 | -1 | 'all';
  /** linger.ms. Default 5. */
  lingerMs?: number;
  /** batch.size in bytes. Default 16 384. */
  batchSize?: number;
  /** max.request.size: the largest record accepted. Default 1 MiB. */
  maxRequestSize?: number;
  /** delivery.timeout.ms: a record fails if not acknowledged within this. Default 120 000. */
  deliveryTimeoutMs?: number;
  /** max.block.ms: deadline of metadata waits and of transactional calls. Default 60 000. */
  maxBlockMs?: number;
  /**
   * allow.auto.create.topics: a send to a topic the cluster does not have asks
   * the broker to create it (with the broker's defaults), as Kafka's producer
   * does; the broker's auto.create.topics.enable has the last word. Default true.
   */
  allowAutoCreateTopics?: boolean;
  /** transaction.timeout.ms. Default 60 000. Not applied with two-phase commit (KIP-939). */
  transactionTimeoutMs?: number;
  /**
   * transaction.two.phase.commit.enable (KIP-939). Default false. With it
   * the coordinator never aborts this producer's transactions on the
   * timeout, initTransactions({ keepPreparedTxn: true }) keeps a prepared
   * transaction for completeTransaction(state), and close() leaves a
   * prepared transaction open. Needs Transactions V2 on the broker.
   */
  transactionTwoPhaseCommitEnable?: boolean;
  /** compression.type: 'none' (default), 'gzip', 'snappy', 'lz4' or 'zstd'. */
  compressionType?: CompressionType;
  /** The former name of compressionType; used when compressionType is not set. */
  compression?: CompressionType;
  /**
   * compression.gzip.level (1-9, default 6) or compression.zstd.level
   * (-131072..22, default 3), for the codec chosen. lz4 and snappy take none
   * (see the runtime's compression module).
   */
  compressionLevel?: number;
  /** Default: Kafka's (murmur2 for keys, sticky for null keys). */
  partitioner?: Partitioner;
  /** Where the KIP-1289 metrics are registered; default prom-client's global registry; null to skip Prometheus. */
  metricsRegistry?: Registry | null;
}

export type HeaderValue = string | Uint8Array | null;

export interface ProducerRecord {
  topic: string;
  partition?: number;
  key?: Uint8Array | string | null;
  value?: Uint8Array | string | null;
  headers?: Record<string, HeaderValue> | readonly RecordHeader[];
  /** Epoch ms; default now. */
  timestamp?: number | bigint;
}

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0. */
  offset: bigint;
  timestamp: bigint;
}

interface PendingRecord {
  input: RecordInput;
  resolve: (metadata: RecordMetadata) => void;
  reject: (error: Error) => void;
}

interface ProducerBatch {
  records: PendingRecord[];
  bytes: number;
  createdAt: number;
  baseSequence: number;
  encoded: Uint8Array | null;
  attempts: number;
  done: Promise<void>;
  finish: () => void;
}

interface PartitionQueue {
  key: string;
  topic: string;
  topicId: string;
  partition: number;
  batches: ProducerBatch[];
  inFlight: boolean;
  retryAt: number;
  nextSequence: number;
}

const encoder = new TextEncoder();
const toBytes = (v: Uint8Array | string | null | undefined): Uint8Array | null =>
  v === undefined || v === null ? null : typeof v === 'string' ? encoder.encode(v) : v;

const PRODUCE_MAX_VERSION = 11; // transaction version 1 (KIP-890 part 2 needs v12+)

export class KafkaProducer {
  readonly clientId: string;
  private readonly cluster: ClusterClient;
  private readonly txn: TransactionManager | null;
  private readonly metricsImpl: ShareTransactionMetrics;
  private readonly queues = new Map<string, PartitionQueue>();
  private readonly partitioner: DefaultPartitioner;
  private readonly userPartitioner: Partitioner | undefined;
  private readonly cfg: {
    acks: number;
    idempotent: boolean;
    lingerMs: number;
    batchSize: number;
    maxRequestSize: number;
    deliveryTimeoutMs: number;
    maxBlockMs: number;
    allowAutoCreateTopics: boolean;
    transactionTimeoutMs: number;
    compression: CompressionType;
    compressionLevel: number | undefined;
    enable2Pc: boolean;
  };
  private readonly incomplete = new Set<ProducerBatch>();
  private readonly inFlightRequests = new Set<Promise<void>>();
  private appendTail: Promise<void> = Promise.resolve();
  private waitingAppends = 0;
  private flushing = 0;
  private closing = false;
  private closed = false;
  private senderScheduled = false;
  private senderTimer: NodeJS.Timeout | null = null;
  private senderTimerAt = Infinity;
  /** Idempotent (non-transactional) producer id. */
  private producerId = -1n;
  private producerEpoch = -1;
  private initializingProducerId: Promise<void> | null = null;
  /** Counts beginTransaction() calls: a send waiting for metadata belongs to the transaction it was made in. */
  private transactionGeneration = 0;

  constructor(config: ProducerConfig) {
    this.cluster = new ClusterClient(
      config,
      config.transactionalId ? `producer-${config.transactionalId}` : 'producer-1',
    );
    this.clientId = this.cluster.clientId;
    const transactional = typeof config.transactionalId === 'string' && config.transactionalId.length > 0;
    const acks = config.acks === 'all' || config.acks === undefined ? -1 : config.acks;
    const idempotent = transactional || (config.enableIdempotence ?? true);
    if (idempotent && acks !== -1) {
      if (transactional || config.enableIdempotence === true) {
        throw new ConfigError(`acks must be 'all' for an idempotent or transactional producer (got ${config.acks})`);
      }
    }
    this.cfg = {
      acks,
      idempotent: idempotent && acks === -1,
      lingerMs: config.lingerMs ?? 5,
      batchSize: config.batchSize ?? 16384,
      maxRequestSize: config.maxRequestSize ?? 1024 * 1024,
      deliveryTimeoutMs: config.deliveryTimeoutMs ?? 120_000,
      maxBlockMs: config.maxBlockMs ?? 60_000,
      allowAutoCreateTopics: config.allowAutoCreateTopics ?? true,
      transactionTimeoutMs: config.transactionTimeoutMs ?? 60_000,
      compression: config.compressionType ?? config.compression ?? 'none',
      compressionLevel: config.compressionLevel,
      enable2Pc: config.transactionTwoPhaseCommitEnable === true,
    };
    checkCompression(this.cfg.compression, this.cfg.compressionLevel);
    this.partitioner = new DefaultPartitioner(this.cfg.batchSize);
    this.userPartitioner = config.partitioner;
    this.metricsImpl = new ShareTransactionMetrics({
      clientId: this.clientId,
      transactionalId: transactional ? config.transactionalId! : null,
      registry: config.metricsRegistry,
    });
    this.txn = transactional
      ? new TransactionManager(
          config.transactionalId!,
          this.cluster,
          {
            flush: () => this.flushInternal(),
            abortUndrainedBatches: (error) => this.abortUndrainedBatches(error),
            awaitInFlight: () => this.awaitInFlight(),
            wakeup: () => this.wakeup(),
            resetSequences: () => this.resetSequences(),
          },
          {
            transactionTimeoutMs: this.cfg.transactionTimeoutMs,
            maxBlockMs: this.cfg.maxBlockMs,
            enable2Pc: config.transactionTwoPhaseCommitEnable === true,
          },
          this.metricsImpl,
        )
      : null;
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
    if (result !== 'commit' && result !== 'abort') throw new ConfigError(`completeTransaction: result must be 'commit' or 'abort', got ${JSON.stringify(result)}`);
    const state = typeof saved === 'string' ? PreparedTxnState.fromString(saved) : PreparedTxnState.from(saved);
    const producer = KafkaProducer.recoveryProducer(config, state);
    try {
      try {
        return await producer.txn!.recoverPrepared(state, result === 'commit');
      } catch (error) {
        if (!(error instanceof UnsupportedVersionError)) throw error;
        const deadline = Date.now() + (config.maxBlockMs ?? 60_000);
        if (await producer.hasTwoPhaseCommitWithoutKeep(state, deadline)) return await KafkaProducer.abortWhateverIsOpen(config, state);
        // Under the classic protocol a producer keeps its epoch from one transaction to the next, so the saved
        // id and epoch name this transaction and every later one of the producer: EndTxn for them could commit
        // a transaction the restored checkpoint never saw. Kafka's producer has no recovery without 2PC on
        // Transactions V2 either; kipgen ends whatever is open under the saved identity only when asked to.
        if (config.classicProtocolFallback !== true) {
          throw new UnsupportedVersionError(
            `completeTransaction(${state}): the broker has no two-phase commit on Transactions V2 (${error.message}). ` +
              'Under the classic protocol the saved producer id and epoch cannot tell the saved transaction from a later one, so it was not ended; ' +
              'pass classicProtocolFallback: true to end whatever transaction is open under them',
          );
        }
        producer.cluster.logger.warn(
          `completeTransaction(${state}): the broker has no two-phase commit on Transactions V2 (${error.message}); ` +
            'classicProtocolFallback: EndTxn for the saved producer id and epoch, which under the classic protocol cannot tell the saved transaction from a later one',
        );
        await endTransaction(producer.cluster, state, result === 'commit', Date.now() + (config.maxBlockMs ?? 60_000));
        return result === 'commit' ? 'committed' : 'aborted';
      }
    } finally {
      await producer.close();
    }
  }

  /**
   * Does the transaction coordinator run Transactions V2 with two-phase
   * commit (InitProducerId v6), so that a failed keepPreparedTxn means only
   * that it lacks keepPreparedTxn? Apache Kafka 4.4 is such a broker: its
   * TransactionCoordinator.handleInitProducerId answers keepPreparedTxn with
   * UNSUPPORTED_VERSION ("the feature hasn't been implemented yet").
   */
  private async hasTwoPhaseCommitWithoutKeep(state: PreparedTxnState, deadline: number): Promise<boolean> {
    const tc = await this.cluster.findCoordinator(CoordinatorType.TRANSACTION, state.transactionalId, deadline);
    return (await this.cluster.finalizedFeature(tc, 'transaction.version', deadline)) >= 2 && (await this.cluster.supports(tc, InitProducerIdRequest.apiKey, 6, deadline));
  }

  /** A short-lived two-phase-commit producer of the saved transactional id, for completeTransaction. */
  private static recoveryProducer(config: CompleteTransactionConfig, state: PreparedTxnState): KafkaProducer {
    return new KafkaProducer({
      ...config,
      transactionalId: state.transactionalId,
      transactionTwoPhaseCommitEnable: true,
      clientId: config.clientId ?? `producer-${state.transactionalId}-recovery`,
      metricsRegistry: null,
    });
  }

  /**
   * The end of completeTransaction on a Transactions V2 broker with two-phase
   * commit but without keepPreparedTxn (Apache Kafka 4.4), once
   * recoverPrepared's EndTxn for exactly the saved producer id and epoch was
   * answered PRODUCER_FENCED / INVALID_PRODUCER_ID_MAPPING: the coordinator
   * is past the saved transaction (Kafka's TV2 EndTxn table accepts a commit
   * only for the ONGOING transaction at that epoch, or as a retry of its
   * commit), and a later transaction may be open. A two-phase-commit
   * InitProducerId without keepPreparedTxn aborts whatever is open, as
   * keepPreparedTxn + abort would; the saved transaction's end is then
   * 'unknown', as there. Kafka's own producer has no recovery on such a
   * broker (its keepPreparedTxn fails): this is kipgen's.
   */
  private static async abortWhateverIsOpen(config: CompleteTransactionConfig, state: PreparedTxnState): Promise<'unknown'> {
    const aborter = KafkaProducer.recoveryProducer(config, state);
    try {
      await aborter.initTransactions();
    } finally {
      await aborter.close();
    }
    return 'unknown';
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
      throw new IllegalStateError(
        `cannot call ${call}: this producer has no transactionalId; set transactionalId in its config to use transactions`,
      );
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
  async sendOffsetsToTransaction(
    offsets: readonly TopicPartitionOffset[],
    groupMetadata: ConsumerGroupMetadata | string,
  ): Promise<void> {
    await this.requireTxn('sendOffsetsToTransaction()').sendOffsetsToTransaction(offsets, groupMetadata);
  }

  /**
   * KIP-1289: binds share-group acknowledgements to the current transaction
   * (AddShareAcksToTxn, then TxnShareAcknowledge to each share coordinator).
   * Resolves when the acks are pending; they take effect when the transaction
   * commits, and are discarded (records redelivered) when it aborts.
   */
  async sendShareAcksToTransaction(
    acknowledgements: ShareAcknowledgements,
    groupMetadata: ShareGroupMetadata,
  ): Promise<void> {
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
      if (!record || typeof record.topic !== 'string' || record.topic === '')
        throw new ConfigError('a ProducerRecord needs a topic');
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
    let size = 21 + (key?.length ?? 0) + (value?.length ?? 0);
    for (const h of headers) size += 2 + h.key.length * 3 + (h.value?.length ?? 0);
    if (size + 61 > this.cfg.maxRequestSize) {
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
              ? new KafkaTimeoutError(`topic ${record.topic} not present in metadata after ${this.cfg.maxBlockMs} ms (max.block.ms)${this.whyAbsent(record.topic)}`, error)
              : error;
          this.failTransactionOf(generation, e);
          reject(e as Error);
        })
        .finally(() => this.waitingAppends--);
    });
  }

  private append(
    record: ProducerRecord,
    topic: { name: string; topicId: string; partitions: { partition: number }[] },
    size: number,
    pending: PendingRecord,
  ): void {
    const count = topic.partitions.length;
    let partition: number;
    if (record.partition !== undefined) {
      partition = record.partition;
      if (!Number.isInteger(partition) || partition < 0 || partition >= count) {
        throw new ConfigError(`partition ${partition} of topic ${record.topic} does not exist (it has ${count})`);
      }
    } else if (this.userPartitioner) {
      partition = this.userPartitioner(record.topic, pending.input.key ?? null, count);
    } else {
      partition = this.partitioner.partition(record.topic, pending.input.key ?? null, count, size);
    }
    this.txn?.maybeAddPartition(record.topic, partition);
    const key = `${record.topic}:${partition}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = {
        key,
        topic: record.topic,
        topicId: topic.topicId,
        partition,
        batches: [],
        inFlight: false,
        retryAt: 0,
        nextSequence: 0,
      };
      this.queues.set(key, queue);
    }
    let batch = queue.batches[queue.batches.length - 1];
    if (!batch || batch.encoded !== null || (batch.records.length > 0 && batch.bytes + size > this.cfg.batchSize)) {
      if (batch && !this.userPartitioner) this.partitioner.onBatchClosed(record.topic, partition);
      let finish!: () => void;
      const done = new Promise<void>((r) => (finish = r));
      batch = {
        records: [],
        bytes: 61,
        createdAt: Date.now(),
        baseSequence: -1,
        encoded: null,
        attempts: 0,
        done,
        finish,
      };
      queue.batches.push(batch);
      this.incomplete.add(batch);
    }
    batch.records.push(pending);
    batch.bytes += size;
    if (batch.bytes >= this.cfg.batchSize || this.cfg.lingerMs <= 0) this.wakeup();
    else this.scheduleSender(batch.createdAt + this.cfg.lingerMs);
  }

  /** Sends everything queued now and waits until all of it completed (successfully or not). */
  async flush(): Promise<void> {
    this.checkOpen();
    await this.flushInternal();
  }

  private async flushInternal(): Promise<void> {
    await this.appendTail;
    const waiting = [...this.incomplete].map((b) => b.done);
    if (waiting.length === 0) return;
    this.flushing++;
    this.wakeup();
    try {
      await Promise.all(waiting);
    } finally {
      this.flushing--;
    }
  }

  // -------------------------------------------------------------------------
  // Sender

  private wakeup(): void {
    if (this.senderScheduled || this.closed) return;
    this.senderScheduled = true;
    setImmediate(() => {
      this.senderScheduled = false;
      this.runSender();
    });
  }

  private scheduleSender(at: number): void {
    if (at >= this.senderTimerAt) return;
    if (this.senderTimer) clearTimeout(this.senderTimer);
    this.senderTimerAt = at;
    this.senderTimer = setTimeout(
      () => {
        this.senderTimer = null;
        this.senderTimerAt = Infinity;
        this.runSender();
      },
      Math.max(0, at - Date.now()),
    );
  }

  private resetSequences(): void {
    for (const queue of this.queues.values()) queue.nextSequence = 0;
  }

  /** Fails every queued batch but the one in flight of each partition with `error`. */
  private abortUndrainedBatches(error: Error): void {
    for (const queue of this.queues.values()) {
      const keep: ProducerBatch[] = [];
      for (const batch of queue.batches) {
        if (queue.inFlight && batch === queue.batches[0]) keep.push(batch);
        else {
          // Sent before (a sequence was assigned) and maybe appended: the next transaction needs a new epoch.
          if (batch.baseSequence >= 0) this.txn?.requireEpochBump();
          this.failBatch(batch, error);
        }
      }
      queue.batches = keep;
    }
  }

  private async awaitInFlight(): Promise<void> {
    while (this.inFlightRequests.size > 0) await Promise.allSettled([...this.inFlightRequests]);
  }

  private completeBatch(queue: PartitionQueue, batch: ProducerBatch, baseOffset: bigint, logAppendTime: bigint): void {
    batch.records.forEach((r, i) =>
      r.resolve({
        topic: queue.topic,
        partition: queue.partition,
        offset: baseOffset < 0n ? -1n : baseOffset + BigInt(i),
        timestamp: logAppendTime >= 0n ? logAppendTime : (r.input.timestamp ?? -1n),
      }),
    );
    this.incomplete.delete(batch);
    batch.finish();
  }

  private failBatch(batch: ProducerBatch, error: Error): void {
    for (const r of batch.records) r.reject(error);
    this.incomplete.delete(batch);
    batch.finish();
  }

  private ensureProducerId(): void {
    if (this.initializingProducerId) return;
    this.initializingProducerId = (async () => {
      const deadline = Date.now() + this.cfg.maxBlockMs;
      const { response } = await this.cluster.retry('InitProducerId', deadline, async () => {
        const result = await this.cluster.send(
          this.cluster.anyNode(),
          InitProducerIdRequest,
          InitProducerIdResponse,
          () =>
            InitProducerIdRequest.create({
              transactionalId: null,
              transactionTimeoutMs: this.cfg.transactionTimeoutMs,
            }),
          { deadline, max: 5 },
        );
        if (result.response.errorCode !== 0) throw errorFromCode(result.response.errorCode, 'InitProducerId');
        return result;
      });
      this.producerId = response.producerId;
      this.producerEpoch = response.producerEpoch;
      this.resetSequences();
    })()
      .catch((error: unknown) => {
        this.cluster.logger.error(
          `producer ${this.clientId}: could not get a producer id: ${(error as Error).message}`,
        );
        this.abortUndrainedBatches(error as Error);
      })
      .finally(() => {
        this.initializingProducerId = null;
        this.wakeup();
      });
  }

  private get currentProducerId(): { id: bigint; epoch: number } {
    return this.txn
      ? { id: this.txn.producerId, epoch: this.txn.producerEpoch }
      : { id: this.producerId, epoch: this.producerEpoch };
  }

  private runSender(): void {
    if (this.closed) return;
    const now = Date.now();
    let next = Infinity;
    const byNode = new Map<number, Array<{ queue: PartitionQueue; batch: ProducerBatch }>>();
    let needMetadata = false;
    let needPartitions = false;
    for (const queue of this.queues.values()) {
      if (queue.inFlight || queue.batches.length === 0) continue;
      const batch = queue.batches[0]!;
      if (now - batch.createdAt >= this.cfg.deliveryTimeoutMs) {
        queue.batches.shift();
        this.onBatchFailed(
          queue,
          batch,
          new KafkaTimeoutError(
            `${batch.records.length} record(s) for ${queue.key} expired: not acknowledged within delivery.timeout.ms (${this.cfg.deliveryTimeoutMs} ms)`,
          ),
        );
        next = now;
        continue;
      }
      if (queue.retryAt > now) {
        next = Math.min(next, queue.retryAt);
        continue;
      }
      const ready =
        this.flushing > 0 ||
        this.closing ||
        queue.batches.length > 1 ||
        batch.bytes >= this.cfg.batchSize ||
        now - batch.createdAt >= this.cfg.lingerMs;
      if (!ready) {
        next = Math.min(next, batch.createdAt + this.cfg.lingerMs);
        continue;
      }
      if (this.cfg.idempotent && !this.txn && this.producerId < 0n) {
        this.ensureProducerId();
        continue;
      }
      if (this.txn && !this.txn.isPartitionAdded(queue.topic, queue.partition)) {
        needPartitions = true;
        continue;
      }
      const leader =
        this.cluster.cachedTopic(queue.topic)?.partitions.find((p) => p.partition === queue.partition)?.leader ?? -1;
      if (leader < 0) {
        needMetadata = true;
        queue.retryAt = now + this.cluster.backoff(1);
        next = Math.min(next, queue.retryAt);
        continue;
      }
      const list = byNode.get(leader) ?? [];
      list.push({ queue, batch });
      byNode.set(leader, list);
    }
    if (needPartitions && this.txn) void this.txn.addPendingPartitions();
    if (needMetadata) {
      this.cluster.invalidateMetadata();
      void this.cluster.refreshMetadata([...new Set([...this.queues.values()].map((q) => q.topic))]).catch(() => {});
    }
    for (const [nodeId, items] of byNode) this.sendProduce(nodeId, items);
    if (next < Infinity) this.scheduleSender(next);
  }

  private encode(queue: PartitionQueue, batch: ProducerBatch): Uint8Array {
    if (batch.encoded) return batch.encoded;
    const { id, epoch } = this.currentProducerId;
    if (this.cfg.idempotent) {
      batch.baseSequence = queue.nextSequence;
      queue.nextSequence = (queue.nextSequence + batch.records.length) % 2 ** 31;
    }
    batch.encoded = encodeRecordBatch({
      baseOffset: 0n,
      compression: this.cfg.compression,
      compressionLevel: this.cfg.compressionLevel,
      isTransactional: this.txn !== null,
      producerId: this.cfg.idempotent ? id : -1n,
      producerEpoch: this.cfg.idempotent ? epoch : -1,
      baseSequence: this.cfg.idempotent ? batch.baseSequence : -1,
      records: batch.records.map((r) => r.input),
    });
    return batch.encoded;
  }

  private sendProduce(nodeId: number, items: Array<{ queue: PartitionQueue; batch: ProducerBatch }>): void {
    for (const item of items) {
      item.queue.inFlight = true;
      item.batch.attempts++;
      this.encode(item.queue, item.batch);
    }
    const byTopic = groupBy(items, (item) => item.queue.topic);
    const request = (version: number) =>
      ProduceRequest.create({
        transactionalId: this.txn?.transactionalId ?? null,
        acks: this.cfg.acks,
        timeoutMs: this.cluster.requestTimeoutMs,
        topicData: [...byTopic].map(([name, list]) => ({
          name: version >= 13 ? '' : name,
          topicId: version >= 13 ? list[0]!.queue.topicId : 'AAAAAAAAAAAAAAAAAAAAAA',
          partitionData: list.map(({ queue, batch }) => ({ index: queue.partition, records: batch.encoded })),
        })),
      });
    const run = (async () => {
      let response: ProduceResponse | undefined;
      try {
        ({ response } = await this.cluster.send(nodeId, ProduceRequest, ProduceResponse, request, {
          max: this.txn ? this.txn.produceMaxVersion : PRODUCE_MAX_VERSION,
          min: this.txn ? this.txn.produceMinVersion : undefined,
        }));
      } catch (error) {
        for (const { queue, batch } of items) this.onBatchError(queue, batch, error as Error);
        return;
      }
      for (const { queue, batch } of items) {
        if (response === undefined) {
          // acks=0: no response.
          queue.inFlight = false;
          queue.batches.shift();
          this.completeBatch(queue, batch, -1n, -1n);
          continue;
        }
        const topic = response.responses.find((t) => t.name === queue.topic || t.topicId === queue.topicId);
        const part = topic?.partitionResponses.find((p) => p.index === queue.partition);
        if (!part) {
          this.onBatchError(
            queue,
            batch,
            new KafkaError(`the Produce response of node ${nodeId} has no result for ${queue.key}`, {
              retriable: false,
            }),
          );
          continue;
        }
        if (part.errorCode === 0 || part.errorCode === Errors.DUPLICATE_SEQUENCE_NUMBER) {
          queue.inFlight = false;
          queue.batches.shift();
          this.completeBatch(queue, batch, part.errorCode === 0 ? part.baseOffset : -1n, part.logAppendTimeMs);
          continue;
        }
        this.onBatchError(
          queue,
          batch,
          errorFromCode(
            part.errorCode,
            `Produce to ${queue.key} on ${this.cluster.describeNode(nodeId)}`,
            part.errorMessage,
          ),
        );
      }
    })().finally(() => {
      this.inFlightRequests.delete(run);
      this.wakeup();
    });
    this.inFlightRequests.add(run);
  }

  /** A batch attempt failed: retry it (same sequence) if retriable and in time, else fail it. */
  private onBatchError(queue: PartitionQueue, batch: ProducerBatch, error: Error): void {
    queue.inFlight = false;
    const code = error instanceof ApiError ? error.code : undefined;
    const retriable = error instanceof NetworkError || (code !== undefined && isRetriableCode(code));
    const inTime = Date.now() - batch.createdAt < this.cfg.deliveryTimeoutMs;
    const aborting =
      this.txn !== null &&
      (this.txn.state === 'ABORTING_TRANSACTION' ||
        this.txn.state === 'ABORTABLE_ERROR' ||
        this.txn.state === 'FATAL_ERROR');
    // A batch of a transaction that is aborting (or can only abort) is never retried: a retry would
    // land in the *next* transaction and commit there (chaos soak: duplicates; test/chaos/CLIENT-ISSUES.md #0).
    if (retriable && inTime && !this.closed && !aborting) {
      if (
        code === Errors.NOT_LEADER_OR_FOLLOWER ||
        code === Errors.UNKNOWN_TOPIC_OR_PARTITION ||
        code === Errors.LEADER_NOT_AVAILABLE ||
        error instanceof NetworkError
      ) {
        this.cluster.invalidateMetadata();
        void this.cluster.refreshMetadata([queue.topic]).catch(() => {});
      }
      queue.retryAt = Date.now() + this.cluster.backoff(batch.attempts);
      this.scheduleSender(queue.retryAt);
      return;
    }
    queue.batches.shift();
    if (retriable && !inTime) {
      error = new KafkaTimeoutError(
        `${batch.records.length} record(s) for ${queue.key} expired: not acknowledged within delivery.timeout.ms (${this.cfg.deliveryTimeoutMs} ms); last error: ${error.message}`,
        error,
      );
    }
    this.onBatchFailed(queue, batch, error);
  }

  private onBatchFailed(queue: PartitionQueue, batch: ProducerBatch, error: Error): void {
    if (batch.baseSequence >= 0) {
      // The broker may or may not have this sequence: start a new epoch / producer id.
      if (this.txn) this.txn.requireEpochBump();
      else {
        this.producerId = -1n;
        this.resetSequences();
      }
    }
    this.failBatch(batch, error);
    if (this.txn && this.txn.isInTransaction) {
      this.txn.fail(error);
      if (this.txn.state === 'ABORTABLE_ERROR' || this.txn.state === 'FATAL_ERROR') {
        this.abortUndrainedBatches(this.txn.lastError ?? error);
      }
    }
  }

  /**
   * Closes the producer: an open transaction is aborted (as Kafka does), other
   * queued records are sent first (within `timeoutMs`), then connections close.
   */
  /** Why a metadata wait for `topic` found nothing, when the broker said the topic does not exist. */
  private whyAbsent(topic: string): string {
    if (!this.cluster.saidAbsent(topic)) return '';
    return this.cfg.allowAutoCreateTopics
      ? `: the broker answers that the topic does not exist and did not create it when asked (its auto.create.topics.enable is off, or it refused): create the topic first`
      : `: the broker answers that the topic does not exist, and this producer does not ask it to create topics (allowAutoCreateTopics: false): create the topic first`;
  }

  async close(timeoutMs = this.cfg.maxBlockMs): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    const work = (async () => {
      try {
        const keepPrepared = this.cfg.enable2Pc && this.txn?.preparedTransaction != null;
        if (keepPrepared) {
          // KIP-939: a prepared transaction belongs to the external commit decision; close() leaves it open.
        } else if (this.txn && (this.txn.state === 'IN_TRANSACTION' || this.txn.state === 'ABORTABLE_ERROR')) {
          await this.txn
            .abortTransaction()
            .catch((error: unknown) =>
              this.cluster.logger.warn(
                `producer ${this.clientId}: aborting the open transaction on close failed: ${(error as Error).message}`,
              ),
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
    if (this.senderTimer) clearTimeout(this.senderTimer);
    const closedError = new ClientClosedError(`producer ${this.clientId}`);
    for (const queue of this.queues.values()) {
      for (const batch of queue.batches) this.failBatch(batch, closedError);
      queue.batches = [];
    }
    this.metricsImpl.close();
    await this.cluster.close();
  }
}

/**
 * Fails at construction, not at the first send, for an unknown codec, a level
 * the codec does not take, or a codec whose optional library is not installed.
 */
function checkCompression(type: CompressionType, level: number | undefined): void {
  if (!COMPRESSION_TYPES.includes(type)) {
    throw new ConfigError(`compressionType must be one of ${COMPRESSION_TYPES.join(', ')}; got ${String(type)}`);
  }
  try {
    compress(type, new Uint8Array(0), level);
  } catch (error) {
    throw new ConfigError(`compressionType ${type}${level === undefined ? '' : ` level ${level}`}: ${(error as Error).message}`);
  }
}

/** The settings of KafkaProducer.completeTransaction: connection settings, plus what to do on a broker without two-phase commit. */
export type CompleteTransactionConfig = CommonClientConfig & {
  maxBlockMs?: number;
  /**
   * On a broker without two-phase commit on Transactions V2, end whatever transaction is
   * open under the saved producer id and epoch with EndTxn, though under the classic
   * protocol they also name the producer's later transactions. Default false: such a
   * broker makes completeTransaction throw UnsupportedVersionError and end nothing.
   */
  classicProtocolFallback?: boolean;
};
