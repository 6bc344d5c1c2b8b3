/**
 * The producer's transaction state machine and its requests to the
 * transaction, group and share coordinators, after Kafka's TransactionManager.
 * Two protocols, chosen at initTransactions() from the coordinator's finalized
 * `transaction.version` feature: Transactions V2 (KIP-890 part 2: no
 * AddPartitionsToTxn / AddOffsetsToTxn, the partition leaders add them; every
 * EndTxn v5 returns the bumped epoch, so producer id + epoch name one
 * transaction) and the classic one (transaction version 1: partitions added
 * with AddPartitionsToTxn, EndTxn keeps the epoch). With
 * `transactionTwoPhaseCommitEnable`, KIP-939's two-phase commit:
 * initTransactions({ keepPreparedTxn }), prepareTransaction() →
 * PreparedTxnState, completeTransaction(state).
 *
 * States: UNINITIALIZED → INITIALIZING → READY → IN_TRANSACTION →
 * COMMITTING_TRANSACTION | ABORTING_TRANSACTION → READY; ABORTABLE_ERROR (only
 * abortTransaction() allowed) and FATAL_ERROR (only close()).
 */
import {
  AddOffsetsToTxnRequest,
  AddOffsetsToTxnResponse,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResponse,
  AddShareAcksToTxnRequest,
  AddShareAcksToTxnResponse,
  EndTxnRequest,
  EndTxnResponse,
  InitProducerIdRequest,
  InitProducerIdResponse,
  TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
  TxnShareAcknowledgeRequest,
  TxnShareAcknowledgeResponse,
} from '../generated/index.js';
import type { ApiMessageCodec } from '../runtime/codec.js';
import { NetworkError } from '../connection/connection.js';
import { ClusterClient, CoordinatorType, groupBy } from './cluster.js';
import {
  ApiError,
  Errors,
  errorCodeName,
  errorFromCode,
  IllegalStateError,
  InvalidTxnStateError,
  isFatalTransactionError,
  isRetriableCode,
  KafkaError,
  KafkaTimeoutError,
  ProducerFencedError,
  TransactionAbortableError,
  UnsupportedVersionError,
} from './errors.js';
import type { ShareTransactionMetrics } from './metrics.js';
import { acknowledgeTypeCode, ShareAcknowledgements, ShareGroupMetadata } from './share-acknowledgements.js';
import { deliveriesOf, ledgersOfAcks, type TransactionalDeliveries } from './transactional-deliveries.js';

export type TransactionState =
  | 'UNINITIALIZED'
  | 'INITIALIZING'
  | 'READY'
  | 'IN_TRANSACTION'
  | 'COMMITTING_TRANSACTION'
  | 'ABORTING_TRANSACTION'
  | 'ABORTABLE_ERROR'
  | 'FATAL_ERROR';

/** Kafka's TransactionManager.State.isTransitionValid. */
const VALID_SOURCES: Record<TransactionState, readonly TransactionState[]> = {
  UNINITIALIZED: ['READY', 'UNINITIALIZED', 'INITIALIZING'],
  INITIALIZING: ['UNINITIALIZED', 'INITIALIZING', 'ABORTING_TRANSACTION'],
  READY: ['INITIALIZING', 'COMMITTING_TRANSACTION', 'ABORTING_TRANSACTION'],
  IN_TRANSACTION: ['READY'],
  COMMITTING_TRANSACTION: ['IN_TRANSACTION'],
  ABORTING_TRANSACTION: ['IN_TRANSACTION', 'ABORTABLE_ERROR'],
  ABORTABLE_ERROR: ['IN_TRANSACTION', 'COMMITTING_TRANSACTION', 'ABORTABLE_ERROR'],
  FATAL_ERROR: [
    'UNINITIALIZED',
    'INITIALIZING',
    'READY',
    'IN_TRANSACTION',
    'COMMITTING_TRANSACTION',
    'ABORTING_TRANSACTION',
    'ABORTABLE_ERROR',
    'FATAL_ERROR',
  ],
};

/** What may be called in each state, for IllegalStateError messages. */
const ALLOWED: Record<TransactionState, string> = {
  UNINITIALIZED: 'call initTransactions() first',
  INITIALIZING: 'initTransactions() is in progress; wait for it (or call it again after a timeout)',
  READY: 'no transaction is in progress: call beginTransaction() first',
  IN_TRANSACTION:
    'a transaction is in progress: call send(), sendOffsetsToTransaction(), sendShareAcksToTransaction(), commitTransaction() or abortTransaction()',
  COMMITTING_TRANSACTION:
    'commitTransaction() is in progress; wait for it (or call commitTransaction() again after a timeout)',
  ABORTING_TRANSACTION:
    'abortTransaction() is in progress; wait for it (or call abortTransaction() again after a timeout)',
  ABORTABLE_ERROR: 'the transaction failed and can only be aborted: call abortTransaction()',
  FATAL_ERROR: 'the producer failed fatally: close() it and create a new one',
};

/**
 * What became of the transaction a saved PreparedTxnState names, as far as the
 * transaction coordinator can tell: 'committed' (committed now or before),
 * 'aborted' (aborted now or before, or nothing of it ever reached the
 * coordinator, so nothing of it can commit), or 'unknown' — it ended before
 * the call and the coordinator has moved past it (a later transaction, a new
 * producer, the transactional id expired): the coordinator keeps the end state
 * of the last transaction only (DESIGN §5.6).
 */
export type SavedTransactionOutcome = 'committed' | 'aborted' | 'unknown';

/** The transaction a checkpointing framework persists to finish it after a restart (DESIGN §5.6). */
export interface PreparedTransaction {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

/**
 * KIP-939's PreparedTxnState: the producer id and epoch of one prepared
 * transaction. Under Transactions V2 every transaction has its own epoch, so
 * this names exactly one transaction. `toString()` is the form to store in a
 * checkpoint: Kafka's `producerId:epoch`, followed by `:transactionalId`
 * (which may itself contain ':') so that another process can finish it;
 * `PreparedTxnState.fromString` reads both forms.
 */
export class PreparedTxnState implements PreparedTransaction {
  constructor(
    readonly transactionalId: string,
    readonly producerId: bigint,
    readonly producerEpoch: number,
  ) {}

  static fromString(text: string, transactionalId?: string): PreparedTxnState {
    const match = /^(-?\d+):(-?\d+)(?::(.*))?$/s.exec(text);
    if (match === null) {
      throw new TypeError(`PreparedTxnState.fromString: expected "producerId:epoch[:transactionalId]", got ${JSON.stringify(text)}`);
    }
    const id = match[3] ?? transactionalId;
    if (id === undefined || id === '') {
      throw new TypeError(`PreparedTxnState.fromString(${JSON.stringify(text)}): the text names no transactional id; pass it as the second argument`);
    }
    const epoch = Number(match[2]);
    if (epoch < -1 || epoch > 32767) throw new TypeError(`PreparedTxnState.fromString(${JSON.stringify(text)}): epoch ${epoch} is outside -1..32767`);
    return new PreparedTxnState(id, BigInt(match[1]!), epoch);
  }

  /** A saved `{ transactionalId, producerId, producerEpoch }` (e.g. parsed from JSON) as a PreparedTxnState. */
  static from(saved: PreparedTransaction): PreparedTxnState {
    return saved instanceof PreparedTxnState ? saved : new PreparedTxnState(saved.transactionalId, BigInt(saved.producerId), Number(saved.producerEpoch));
  }

  /** Whether this names the same transaction as `other`. */
  equals(other: PreparedTransaction | null): boolean {
    return other !== null && other.transactionalId === this.transactionalId && other.producerId === this.producerId && other.producerEpoch === this.producerEpoch;
  }

  toString(): string {
    return `${this.producerId}:${this.producerEpoch}:${this.transactionalId}`;
  }

  toJSON(): { transactionalId: string; producerId: string; producerEpoch: number } {
    return { transactionalId: this.transactionalId, producerId: String(this.producerId), producerEpoch: this.producerEpoch };
  }
}

/** Group metadata for sendOffsetsToTransaction (Kafka's ConsumerGroupMetadata). */
export interface ConsumerGroupMetadata {
  groupId: string;
  generationId?: number;
  memberId?: string;
  groupInstanceId?: string | null;
}

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  /** The next offset to consume. */
  offset: bigint;
  metadata?: string | null;
  leaderEpoch?: number;
}

/** What the transaction manager needs from the producer's send path. */
export interface SendPathHooks {
  /** Sends every queued batch and waits until all have completed. */
  flush(): Promise<void>;
  /** Fails every batch not yet sent with `error`. */
  abortUndrainedBatches(error: Error): void;
  /** Waits for produce requests in flight. */
  awaitInFlight(): Promise<void>;
  /** Lets queued batches of newly added partitions go out. */
  wakeup(): void;
  /** Sequence numbers start again (new producer id or epoch). */
  resetSequences(): void;
}

/** Failing a batch because its transaction was aborted (Kafka's TransactionAbortedException). */
export class TransactionAbortedError extends KafkaError {
  override name = 'TransactionAbortedError';
}

const TV1_MAX = { endTxn: 4, initProducerId: 5, addPartitions: 3, txnOffsetCommit: 4, addOffsets: 4, produce: 11 };
/** Transactions V2 (KIP-890 part 2) needs at least these; InitProducerId v6 carries KIP-939's flags. */
const TV2_MIN = { endTxn: 5, txnOffsetCommit: 5, produce: 12 };
const INIT_PRODUCER_ID_2PC_VERSION = 6;

/**
 * Kafka's TransactionManager.ADD_PARTITIONS_RETRY_BACKOFF_MS (KAFKA-5477): the
 * first add of a transaction that gets CONCURRENT_TRANSACTIONS is retried after
 * this, not retry.backoff.ms. EndTxn answers once PREPARE_* is written and the
 * markers complete just after, so the next transaction's first add routinely
 * meets the previous one still completing: an expected race, not a failure.
 */
const FIRST_ADD_RETRY_BACKOFF_MS = 20;

interface ShareAckPartition {
  topic: string;
  topicId: string;
  partition: number;
  batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeType: number }[];
}

export class TransactionManager {
  state: TransactionState = 'UNINITIALIZED';
  lastError: Error | null = null;
  producerId = -1n;
  producerEpoch = -1;

  private readonly partitionsInTransaction = new Set<string>();
  private readonly pendingPartitions = new Map<string, { topic: string; partition: number }>();
  private addingPartitions: Promise<void> | null = null;
  /** Offsets / share acks calls of this transaction still running; commit waits for them. */
  private readonly pendingOps = new Set<Promise<unknown>>();
  private transactionStarted = false;
  /** Add requests to the transaction coordinator, one at a time (see addToTransaction). */
  private addChain: Promise<unknown> = Promise.resolve();
  /** An add request (partitions, offsets, share acks) was sent, maybe without an answer: the coordinator may have started the transaction. */
  private addAttempted = false;
  private hasShareAcks = false;
  /**
   * The transactional share consumers whose acks this producer carried: each
   * is told when a transaction ends and asked before acks, prepare and commit
   * whether the open transaction must abort (DESIGN §5.8). Kept across
   * transactions: the consumer's next records belong to the next one.
   */
  private readonly shareConsumers = new Set<TransactionalDeliveries>();
  private transactionBeganAt = 0;
  private timeoutCounted = false;
  private pendingResult: Promise<void> | null = null;
  private epochBumpRequired = false;
  /** Transactions V2 is in use (decided at initTransactions()). */
  transactionV2 = false;
  /**
   * The transaction kept by initTransactions({ keepPreparedTxn: true }), or
   * prepared by prepareTransaction(): what completeTransaction() compares with.
   * While it is set, only commit or abort may follow.
   */
  private preparedState: PreparedTxnState | null = null;

  /** After prepareTransaction() (or a kept prepared transaction): only commit or abort. */
  get prepared(): boolean {
    return this.preparedState !== null;
  }

  constructor(
    readonly transactionalId: string,
    private readonly cluster: ClusterClient,
    private readonly hooks: SendPathHooks,
    private readonly options: { transactionTimeoutMs: number; maxBlockMs: number; enable2Pc?: boolean },
    private readonly metrics: ShareTransactionMetrics,
  ) {}

  /** The highest Produce version this producer may send: v12+ makes the leader add the partition (TV2). */
  get produceMaxVersion(): number {
    return this.transactionV2 ? 13 : TV1_MAX.produce;
  }

  get produceMinVersion(): number {
    return this.transactionV2 ? TV2_MIN.produce : 0;
  }

  // -------------------------------------------------------------------------
  // State

  private transitionTo(target: TransactionState, error?: Error): void {
    if (!VALID_SOURCES[target].includes(this.state)) {
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: invalid transition from ${this.state} to ${target}; ${ALLOWED[this.state]}`,
      );
    }
    if (target === 'ABORTABLE_ERROR' || target === 'FATAL_ERROR') this.lastError = error ?? this.lastError;
    else this.lastError = null;
    this.state = target;
    if (target === 'FATAL_ERROR') {
      this.metrics.transactionActive(false);
      // No transaction of this producer can commit any more: what the consumers handed out is free for the next producer.
      this.endShareConsumerTransactions();
    }
  }

  private illegal(call: string): IllegalStateError {
    return new IllegalStateError(
      `TransactionalId ${this.transactionalId}: cannot call ${call} in state ${this.state}: ${ALLOWED[this.state]}`,
    );
  }

  /**
   * Kafka's maybeFailWithError. In FATAL_ERROR every call throws the fatal
   * error itself (e.g. ProducerFencedError). In ABORTABLE_ERROR calls that
   * belong to the failed transaction throw TransactionAbortableError (cause:
   * the original error) telling to call abortTransaction().
   */
  private maybeFailWithError(call: string): void {
    if (this.state === 'FATAL_ERROR') {
      throw this.lastError ?? new IllegalStateError(`TransactionalId ${this.transactionalId}: ${ALLOWED.FATAL_ERROR}`);
    }
    if (this.state === 'ABORTABLE_ERROR') {
      const cause = this.lastError;
      const code = cause instanceof ApiError && cause.code !== undefined ? cause.code : Errors.TRANSACTION_ABORTABLE;
      throw new TransactionAbortableError(
        code,
        `TransactionalId ${this.transactionalId}: cannot call ${call}: the transaction failed and can only be aborted; call abortTransaction(). Cause: ${cause?.message ?? 'unknown'}`,
        cause,
      );
    }
  }

  get isInTransaction(): boolean {
    return (
      this.state === 'IN_TRANSACTION' ||
      this.state === 'COMMITTING_TRANSACTION' ||
      this.state === 'ABORTING_TRANSACTION' ||
      this.state === 'ABORTABLE_ERROR'
    );
  }

  /** Records an error that broke the current transaction: fatal ones end the producer, others make the transaction abortable. */
  fail(error: Error): void {
    this.maybeCountTimeout(error);
    if (isFatalTransactionError(error)) {
      if (this.state !== 'FATAL_ERROR') this.transitionTo('FATAL_ERROR', error);
      this.countShareTransactionAbort();
      return;
    }
    if (
      this.state === 'IN_TRANSACTION' ||
      this.state === 'COMMITTING_TRANSACTION' ||
      this.state === 'ABORTABLE_ERROR'
    ) {
      this.transitionTo('ABORTABLE_ERROR', error);
    }
  }

  /** The transaction ended aborted (or cannot end otherwise): abort-total counts it, once, if it was a share transaction. */
  private countShareTransactionAbort(): void {
    if (!this.hasShareAcks) return;
    this.metrics.recordAbort();
    this.hasShareAcks = false;
  }

  /** A failed batch with an assigned sequence: the epoch must be bumped before the next transaction. */
  requireEpochBump(): void {
    this.epochBumpRequired = true;
  }

  private maybeCountTimeout(error: unknown): void {
    if (!this.hasShareAcks || this.timeoutCounted) return;
    const code = error instanceof ApiError ? error.code : undefined;
    const brokerAbort =
      code === Errors.INVALID_PRODUCER_EPOCH ||
      code === Errors.PRODUCER_FENCED ||
      code === Errors.TRANSACTION_ABORTABLE ||
      code === Errors.INVALID_TXN_STATE;
    const openFor = Date.now() - this.transactionBeganAt;
    if ((brokerAbort && openFor >= this.options.transactionTimeoutMs) || error instanceof KafkaTimeoutError) {
      this.timeoutCounted = true;
      this.metrics.recordTimeout();
    }
  }

  // -------------------------------------------------------------------------
  // Checks used by the producer's public methods

  /** send() in a transactional producer: only inside a transaction. */
  checkSend(): void {
    this.checkInTransaction('send()');
  }

  private checkInTransaction(call: string): void {
    this.maybeFailWithError(call);
    if (this.state !== 'IN_TRANSACTION') throw this.illegal(call);
    if (this.prepared)
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: the transaction was prepared; only commitTransaction() or abortTransaction() may follow`,
      );
  }

  /**
   * Adds a partition to the transaction: under TV1 sent with
   * AddPartitionsToTxn before its first batch; under TV2 the partition
   * leader adds it when the first batch (Produce v12+) arrives.
   */
  maybeAddPartition(topic: string, partition: number): void {
    // Under TV2 there is nothing to send or track per partition (this runs for every record).
    if (this.transactionV2) {
      this.addAttempted = true;
      return;
    }
    const key = `${topic}:${partition}`;
    if (this.partitionsInTransaction.has(key) || this.pendingPartitions.has(key)) return;
    this.pendingPartitions.set(key, { topic, partition });
  }

  isPartitionAdded(topic: string, partition: number): boolean {
    return this.transactionV2 || this.partitionsInTransaction.has(`${topic}:${partition}`);
  }

  // -------------------------------------------------------------------------
  // initTransactions

  async initTransactions(options: { keepPreparedTxn?: boolean } = {}): Promise<void> {
    const keep = options.keepPreparedTxn === true;
    if (keep && !this.options.enable2Pc) {
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: initTransactions({ keepPreparedTxn: true }) needs two-phase commit: set transactionTwoPhaseCommitEnable: true in the producer config`,
      );
    }
    if (this.state === 'INITIALIZING' && this.pendingResult) return this.pendingResult;
    if (this.state === 'FATAL_ERROR') this.maybeFailWithError('initTransactions()');
    if (this.state !== 'UNINITIALIZED' && this.state !== 'INITIALIZING') {
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: initTransactions() was already called (state ${this.state}); ${ALLOWED[this.state]}`,
      );
    }
    this.transitionTo('INITIALIZING');
    this.pendingResult = this.initProducerId(false, keep)
      .then((kept) => {
        this.transitionTo('READY');
        if (kept !== null) {
          // KIP-939: a transaction prepared by an earlier producer is kept, open, for completeTransaction().
          this.beginTransaction();
          this.transactionStarted = true;
          this.preparedState = kept;
        }
      })
      .catch((error: unknown) => {
        if (error instanceof KafkaTimeoutError) {
          // Stay INITIALIZING: calling initTransactions() again retries.
        } else {
          this.transitionTo('FATAL_ERROR', error as Error);
        }
        throw error;
      })
      .finally(() => (this.pendingResult = null));
    return this.pendingResult;
  }

  /**
   * InitProducerId (and the protocol choice). With `keep` (KIP-939
   * keepPreparedTxn) returns the kept transaction's state, null when none.
   */
  private async initProducerId(bump: boolean, keep = false): Promise<PreparedTxnState | null> {
    const deadline = Date.now() + this.options.maxBlockMs;
    const enable2Pc = this.options.enable2Pc === true;
    await this.chooseProtocol(deadline);
    const { response } = await this.cluster.coordinatorRequest(
      'InitProducerId',
      CoordinatorType.TRANSACTION,
      this.transactionalId,
      InitProducerIdRequest,
      InitProducerIdResponse,
      () =>
        InitProducerIdRequest.create({
          transactionalId: this.transactionalId,
          transactionTimeoutMs: this.options.transactionTimeoutMs,
          producerId: bump ? this.producerId : -1n,
          producerEpoch: bump ? this.producerEpoch : -1,
          enable2Pc,
          keepPreparedTxn: keep,
        }),
      (r) => r.errorCode,
      {
        deadline,
        max: enable2Pc ? INIT_PRODUCER_ID_2PC_VERSION : TV1_MAX.initProducerId,
        min: enable2Pc ? INIT_PRODUCER_ID_2PC_VERSION : bump ? 3 : 0,
      },
    );
    if (response.errorCode === Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED && enable2Pc) {
      throw errorFromCode(
        response.errorCode,
        `InitProducerId with two-phase commit for transactional id ${this.transactionalId}`,
        'the broker refuses two-phase commit (its transaction.two.phase.commit.enable is false, or this principal may not use it): enable it there, or unset transactionTwoPhaseCommitEnable',
      );
    }
    if (response.errorCode !== 0) throw this.coordinatorError(response.errorCode, 'InitProducerId');
    this.producerId = response.producerId;
    this.producerEpoch = response.producerEpoch;
    this.epochBumpRequired = false;
    this.hooks.resetSequences();
    if (keep && response.ongoingTxnProducerId >= 0n) {
      return new PreparedTxnState(this.transactionalId, response.ongoingTxnProducerId, response.ongoingTxnProducerEpoch);
    }
    return null;
  }

  /**
   * Picks the protocol from the coordinator's finalized `transaction.version`;
   * with two-phase commit, throws UnsupportedVersionError unless the
   * coordinator has InitProducerId v6 and Transactions V2.
   */
  private async chooseProtocol(deadline: number): Promise<void> {
    const enable2Pc = this.options.enable2Pc === true;
    const coordinator = await this.cluster.findCoordinator(CoordinatorType.TRANSACTION, this.transactionalId, deadline);
    this.transactionV2 =
      (await this.cluster.finalizedFeature(coordinator, 'transaction.version', deadline)) >= 2 &&
      (await this.cluster.supports(coordinator, EndTxnRequest.apiKey, TV2_MIN.endTxn, deadline));
    if (enable2Pc) {
      if (!(await this.cluster.supports(coordinator, InitProducerIdRequest.apiKey, INIT_PRODUCER_ID_2PC_VERSION, deadline))) {
        throw new UnsupportedVersionError(
          `the transaction coordinator ${this.cluster.describeNode(coordinator)} does not support InitProducerId v6 (two-phase commit, KIP-939); unset transactionTwoPhaseCommitEnable or use a newer broker`,
        );
      }
      if (!this.transactionV2) {
        // Under TV1 a producer keeps its epoch across transactions, so a PreparedTxnState could not tell one from the next.
        throw new UnsupportedVersionError(
          `the transaction coordinator ${this.cluster.describeNode(coordinator)} does not finalize transaction.version 2; two-phase commit needs Transactions V2`,
        );
      }
    }
  }

  /** Errors of transaction-coordinator requests: an old epoch means fenced (fatal), as in Kafka. */
  private coordinatorError(code: number, what: string, message?: string | null): Error {
    if (code === Errors.INVALID_PRODUCER_EPOCH) {
      return new ProducerFencedError(
        code,
        `${what} for transactional id ${this.transactionalId} failed with INVALID_PRODUCER_EPOCH (47): the coordinator has a newer epoch — ` +
          'another producer with this transactional.id started, or the coordinator aborted the transaction after transaction.timeout.ms. ' +
          'This producer cannot be used any more: close() it.',
      );
    }
    return errorFromCode(code, `${what} for transactional id ${this.transactionalId}`, message);
  }

  // -------------------------------------------------------------------------
  // begin / commit / abort

  beginTransaction(): void {
    if (this.state === 'FATAL_ERROR') this.maybeFailWithError('beginTransaction()');
    if (this.state !== 'READY') throw this.illegal('beginTransaction()');
    this.transitionTo('IN_TRANSACTION');
    this.transactionStarted = false;
    this.addAttempted = false;
    this.hasShareAcks = false;
    this.timeoutCounted = false;
    this.preparedState = null;
    this.transactionBeganAt = Date.now();
  }

  /** Sends AddPartitionsToTxn for the partitions waiting to join (one request at a time). */
  addPendingPartitions(): Promise<void> {
    if (this.addingPartitions) return this.addingPartitions;
    if (
      this.pendingPartitions.size === 0 ||
      (this.state !== 'IN_TRANSACTION' && this.state !== 'COMMITTING_TRANSACTION')
    ) {
      return Promise.resolve();
    }
    const batch = new Map(this.pendingPartitions);
    const run = async (): Promise<void> => {
      const deadline = Date.now() + this.options.maxBlockMs;
      const topics = [...groupBy(batch.values(), (p) => p.topic)].map(([name, list]) => ({
        name,
        partitions: list.map((p) => p.partition),
      }));
      await this.addToTransaction(
        'AddPartitionsToTxn',
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnResponse,
        () =>
          AddPartitionsToTxnRequest.create({
            v3AndBelowTransactionalId: this.transactionalId,
            v3AndBelowProducerId: this.producerId,
            v3AndBelowProducerEpoch: this.producerEpoch,
            v3AndBelowTopics: topics,
          }),
        (response) => {
          let retriable = 0;
          for (const topic of response.resultsByTopicV3AndBelow) {
            for (const p of topic.resultsByPartition) {
              const code = p.partitionErrorCode;
              if (code === 0) continue;
              if (code === Errors.OPERATION_NOT_ATTEMPTED) continue;
              if (
                code === Errors.CONCURRENT_TRANSACTIONS ||
                code === Errors.COORDINATOR_LOAD_IN_PROGRESS ||
                code === Errors.UNKNOWN_TOPIC_OR_PARTITION
              ) {
                retriable = code;
                continue;
              }
              if (code === Errors.NOT_COORDINATOR || code === Errors.COORDINATOR_NOT_AVAILABLE) return code;
              throw this.coordinatorError(code, `AddPartitionsToTxn (${topic.name}-${p.partitionIndex})`);
            }
          }
          if (retriable) throw errorFromCode(retriable, 'AddPartitionsToTxn');
          return 0;
        },
        { deadline, max: TV1_MAX.addPartitions },
      );
      for (const key of batch.keys()) {
        this.pendingPartitions.delete(key);
        this.partitionsInTransaction.add(key);
      }
      this.transactionStarted = true;
    };
    this.addingPartitions = run()
      .catch((error: unknown) => {
        this.fail(error as Error);
        this.hooks.abortUndrainedBatches(error as Error);
      })
      .finally(() => {
        this.addingPartitions = null;
        this.hooks.wakeup();
      });
    return this.addingPartitions;
  }

  /** sendOffsetsToTransaction: AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit to the group coordinator. */
  async sendOffsetsToTransaction(
    offsets: readonly TopicPartitionOffset[],
    group: ConsumerGroupMetadata | string,
  ): Promise<void> {
    this.checkInTransaction('sendOffsetsToTransaction()');
    const metadata = typeof group === 'string' ? { groupId: group } : group;
    if (offsets.length === 0) return;
    const op = this.track(async () => {
      const deadline = Date.now() + this.options.maxBlockMs;
      const tv2 = this.transactionV2;
      // TV2: no AddOffsetsToTxn — the group coordinator adds the group on TxnOffsetCommit v5+.
      if (tv2) this.addAttempted = true;
      else await this.addToTransaction(
        'AddOffsetsToTxn',
        AddOffsetsToTxnRequest,
        AddOffsetsToTxnResponse,
        () =>
          AddOffsetsToTxnRequest.create({
            transactionalId: this.transactionalId,
            producerId: this.producerId,
            producerEpoch: this.producerEpoch,
            groupId: metadata.groupId,
          }),
        () => 0, // no partitions: the top-level error code is all
        { deadline, max: TV1_MAX.addOffsets },
      );
      if (!tv2) this.transactionStarted = true;
      const byTopic = groupBy(offsets, (o) => o.topic);
      const commit = await this.cluster.coordinatorRequest(
        'TxnOffsetCommit',
        CoordinatorType.GROUP,
        metadata.groupId,
        TxnOffsetCommitRequest,
        TxnOffsetCommitResponse,
        () =>
          TxnOffsetCommitRequest.create({
            transactionalId: this.transactionalId,
            groupId: metadata.groupId,
            producerId: this.producerId,
            producerEpoch: this.producerEpoch,
            generationIdOrMemberEpoch: metadata.generationId ?? -1,
            memberId: metadata.memberId ?? '',
            groupInstanceId: metadata.groupInstanceId ?? null,
            topics: [...byTopic].map(([name, list]) => ({
              name,
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
              partitions: list.map((o) => ({
                partitionIndex: o.partition,
                committedOffset: o.offset,
                committedLeaderEpoch: o.leaderEpoch ?? -1,
                committedMetadata: o.metadata ?? '',
              })),
            })),
          }),
        (r) => {
          for (const t of r.topics) for (const p of t.partitions) if (p.errorCode !== 0) return p.errorCode;
          return 0;
        },
        // v6 names topics by id, which this request does not carry: v5 under TV2.
        tv2 ? { deadline, min: TV2_MIN.txnOffsetCommit, max: TV2_MIN.txnOffsetCommit } : { deadline, max: TV1_MAX.txnOffsetCommit },
      );
      if (tv2) this.transactionStarted = true;
      for (const t of commit.response.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== 0)
            throw this.coordinatorError(p.errorCode, `TxnOffsetCommit (${t.name}-${p.partitionIndex})`);
        }
      }
    });
    await op;
  }

  /**
   * KIP-1289: AddShareAcksToTxn to the transaction coordinator, then
   * TxnShareAcknowledge to each share coordinator involved (v1, with the
   * member id and generation, when the broker supports it). Resolves once the
   * acks are pending everywhere.
   */
  async sendShareAcksToTransaction(acks: ShareAcknowledgements, group: ShareGroupMetadata): Promise<void> {
    this.checkInTransaction('sendShareAcksToTransaction()');
    if (
      !(group instanceof ShareGroupMetadata) &&
      (typeof group !== 'object' || group === null || typeof (group as ShareGroupMetadata).groupId !== 'string')
    ) {
      throw new IllegalStateError(
        'sendShareAcksToTransaction() needs the ShareGroupMetadata of the consumer (consumer.groupMetadata())',
      );
    }
    if (acks.isEmpty) return;
    const started = performance.now();
    if (!this.hasShareAcks) {
      this.hasShareAcks = true;
      this.metrics.transactionActive(true);
    }
    const consumers = new Set(ledgersOfAcks(acks));
    const fromGroup = deliveriesOf(group);
    if (fromGroup) consumers.add(fromGroup);
    const op = this.track(async () => {
      // A consumer that lost the membership of records in this transaction, or saw one come back before it knew this
      // producer, makes it abortable before anything is sent (Kafka: TxnOffsetCommitHandler, stale generation).
      for (const consumer of consumers) {
        this.shareConsumers.add(consumer);
        consumer.check();
      }
      const deadline = Date.now() + this.options.maxBlockMs;
      const partitions = await this.resolveShareAckPartitions(acks, deadline);
      await this.addShareAcksToTxn(group.groupId, partitions, deadline);
      this.transactionStarted = true;
      await this.txnShareAcknowledge(group, partitions, deadline);
      for (const consumer of consumers) consumer.staged(partitions);
    });
    await op;
    this.metrics.recordPrepareTime(performance.now() - started);
  }

  private async resolveShareAckPartitions(acks: ShareAcknowledgements, deadline: number): Promise<ShareAckPartition[]> {
    const out: ShareAckPartition[] = [];
    for (const p of acks.partitions()) {
      const topicId = p.topicId ?? (await this.cluster.topic(p.topic, deadline)).topicId;
      out.push({
        topic: p.topic,
        topicId,
        partition: p.partition,
        batches: p.batches.map((b) => ({
          firstOffset: b.firstOffset,
          lastOffset: b.lastOffset,
          acknowledgeType: acknowledgeTypeCode(b.acknowledgeType),
        })),
      });
    }
    return out;
  }

  /**
   * Fails with UnsupportedVersionError unless the transaction coordinator has
   * AddShareAcksToTxn (95) and TxnShareAcknowledge (96): for callers whose only
   * use of the transaction is share acknowledgements, before InitProducerId
   * fences anything.
   */
  async checkShareAckSupport(): Promise<void> {
    const deadline = Date.now() + this.options.maxBlockMs;
    const tc = await this.cluster.findCoordinator(CoordinatorType.TRANSACTION, this.transactionalId, deadline);
    for (const codec of [AddShareAcksToTxnRequest, TxnShareAcknowledgeRequest]) {
      if (!(await this.cluster.supports(tc, codec.apiKey, 0, deadline))) {
        throw new UnsupportedVersionError(
          `the transaction coordinator ${this.cluster.describeMissingApi(tc, codec, 'KIP-1289')}. ` +
            'Transactional share acknowledgements need a broker with KIP-1289.',
        );
      }
    }
  }

  private async addShareAcksToTxn(groupId: string, partitions: ShareAckPartition[], deadline: number): Promise<void> {
    const topics = [...groupBy(partitions, (p) => p.topic)].map(([name, list]) => ({
      name,
      partitions: list.map((p) => p.partition),
    }));
    const tc = await this.cluster.findCoordinator(CoordinatorType.TRANSACTION, this.transactionalId, deadline);
    if (!(await this.cluster.supports(tc, AddShareAcksToTxnRequest.apiKey, 0, deadline))) {
      throw new UnsupportedVersionError(
        `the transaction coordinator ${this.cluster.describeMissingApi(tc, AddShareAcksToTxnRequest, 'KIP-1289')}. ` +
          'Transactional share acknowledgements need a broker with KIP-1289; nothing was acknowledged. Abort this transaction.',
      );
    }
    const response = await this.addToTransaction(
      'AddShareAcksToTxn',
      AddShareAcksToTxnRequest,
      AddShareAcksToTxnResponse,
      () =>
        AddShareAcksToTxnRequest.create({
          transactionalId: this.transactionalId,
          producerId: this.producerId,
          producerEpoch: this.producerEpoch,
          groupId,
          topics,
        }),
      (r) => {
        for (const t of r.results) {
          for (const p of t.partitions) {
            const code = p.partitionErrorCode;
            if (code === 0) continue;
            if (
              code === Errors.CONCURRENT_TRANSACTIONS ||
              code === Errors.COORDINATOR_LOAD_IN_PROGRESS ||
              code === Errors.UNKNOWN_TOPIC_OR_PARTITION
            ) {
              throw errorFromCode(code, `AddShareAcksToTxn (${t.name}-${p.partitionIndex})`);
            }
            if (code === Errors.NOT_COORDINATOR || code === Errors.COORDINATOR_NOT_AVAILABLE) return code;
          }
        }
        return 0;
      },
      { deadline },
    );
    for (const t of response.results) {
      for (const p of t.partitions) {
        if (p.partitionErrorCode !== 0)
          throw this.coordinatorError(p.partitionErrorCode, `AddShareAcksToTxn (${t.name}-${p.partitionIndex})`);
      }
    }
  }

  private async txnShareAcknowledge(
    group: ShareGroupMetadata,
    partitions: ShareAckPartition[],
    deadline: number,
  ): Promise<void> {
    let remaining = partitions;
    const key = (p: ShareAckPartition): string => `${group.groupId}:${p.topicId}:${p.partition}`;
    await this.cluster.retry('TxnShareAcknowledge', deadline, async () => {
      const byNode = new Map<number, ShareAckPartition[]>();
      for (const p of remaining) {
        const node = await this.cluster.findCoordinator(CoordinatorType.SHARE, key(p), deadline);
        const list = byNode.get(node);
        if (list) list.push(p);
        else byNode.set(node, [p]);
      }
      const retry: ShareAckPartition[] = [];
      let retryError: Error | null = null;
      let failure: Error | null = null;
      await Promise.all(
        [...byNode].map(async ([nodeId, list]) => {
          try {
            if (!(await this.cluster.supports(nodeId, TxnShareAcknowledgeRequest.apiKey, 0, deadline))) {
              throw new UnsupportedVersionError(
                `the share coordinator ${this.cluster.describeMissingApi(nodeId, TxnShareAcknowledgeRequest, 'KIP-1289')}; abort this transaction`,
              );
            }
            const useV1 = group.memberId !== '';
            const byTopic = groupBy(list, (p) => p.topicId);
            const { response } = await this.cluster.send(
              nodeId,
              TxnShareAcknowledgeRequest,
              TxnShareAcknowledgeResponse,
              (version) =>
                TxnShareAcknowledgeRequest.create({
                  groupId: group.groupId,
                  transactionalId: this.transactionalId,
                  producerId: this.producerId,
                  producerEpoch: this.producerEpoch,
                  memberId: version >= 1 ? group.memberId : '',
                  generationId: version >= 1 ? group.generationId : -1,
                  topics: [...byTopic].map(([topicId, ps]) => ({
                    topicId,
                    partitions: ps.map((p) => ({ partition: p.partition, acknowledgementBatches: p.batches })),
                  })),
                }),
              { deadline, max: useV1 ? 1 : 0 },
            );
            const top = response.errorCode;
            for (const p of list) {
              const result = response.topics
                .find((t) => t.topicId === p.topicId)
                ?.partitions.find((x) => x.partition === p.partition);
              const code = top !== 0 ? top : (result?.errorCode ?? 0);
              const message = result?.errorMessage ?? null;
              if (code === 0) continue;
              if (
                code === Errors.NOT_COORDINATOR ||
                code === Errors.COORDINATOR_NOT_AVAILABLE ||
                code === Errors.NOT_LEADER_OR_FOLLOWER
              ) {
                this.cluster.invalidateCoordinator(CoordinatorType.SHARE, key(p));
              }
              // Every retriable code (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
              // KAFKA_STORAGE_ERROR, NOT_ENOUGH_REPLICAS, …) is retried for this partition only, within the
              // deadline. Retrying acks the broker already stored is safe: a repeat from the same producer id and
              // epoch with the same types succeeds without a second write (coordinator/share/README.md).
              if (isRetriableCode(code)) {
                retry.push(p);
                retryError = errorFromCode(
                  code,
                  `TxnShareAcknowledge (${p.topic}-${p.partition}) to ${this.cluster.describeNode(nodeId)}`,
                  message,
                );
                continue;
              }
              failure ??= this.coordinatorError(
                code,
                `TxnShareAcknowledge (${p.topic}-${p.partition}) to ${this.cluster.describeNode(nodeId)}`,
                message,
              );
            }
          } catch (error) {
            if (error instanceof NetworkError) {
              for (const p of list) this.cluster.invalidateCoordinator(CoordinatorType.SHARE, key(p));
              retry.push(...list);
              retryError = error;
            } else {
              failure ??= error as Error;
            }
          }
        }),
      );
      if (failure) throw failure;
      remaining = retry;
      if (retryError) throw retryError;
    });
  }

  /**
   * The backoff of an add request (AddPartitionsToTxn, AddOffsetsToTxn,
   * AddShareAcksToTxn) that failed: FIRST_ADD_RETRY_BACKOFF_MS (or
   * retry.backoff.ms if smaller) for CONCURRENT_TRANSACTIONS while nothing is
   * in the transaction yet, else the usual exponential one.
   */
  private readonly addBackoff = (error: unknown): number | undefined =>
    !this.transactionStarted && error instanceof KafkaError && error.code === Errors.CONCURRENT_TRANSACTIONS
      ? Math.min(FIRST_ADD_RETRY_BACKOFF_MS, this.cluster.retryBackoffMs)
      : undefined;

  /**
   * An add request (AddPartitionsToTxn, AddOffsetsToTxn, AddShareAcksToTxn)
   * to the transaction coordinator, with the add backoff. Once sent it may
   * have started the transaction (addAttempted). The adds of this producer go
   * one after the other, as Kafka's TransactionManager sends one
   * transactional request at a time: two adds in flight together make the
   * coordinator answer one of them CONCURRENT_TRANSACTIONS (its state change
   * for the other is being written), which costs a retry and its backoff.
   */
  private async addToTransaction<Req, Res extends { errorCode: number }>(
    what: string,
    requestCodec: ApiMessageCodec<Req>,
    responseCodec: ApiMessageCodec<Res>,
    build: (version: number) => Req,
    checkPartitions: (response: Res) => number,
    options: { deadline: number; max?: number },
  ): Promise<Res> {
    this.addAttempted = true;
    // The top-level error code for all three APIs here; the partitions' (as coordinatorRequest's check) by the caller.
    const check = (response: Res): number => (response.errorCode !== 0 ? response.errorCode : checkPartitions(response));
    const fn = () =>
      this.cluster.coordinatorRequest(
        what,
        CoordinatorType.TRANSACTION,
        this.transactionalId,
        requestCodec,
        responseCodec,
        build,
        check,
        { ...options, backoffFor: this.addBackoff },
      );
    const run = this.addChain.then(fn, fn);
    this.addChain = run.then(
      () => undefined,
      () => undefined,
    );
    const { response } = await run;
    if (response.errorCode !== 0) throw this.coordinatorError(response.errorCode, what);
    return response;
  }

  private track(fn: () => Promise<void>): Promise<void> {
    const op = fn().catch((error: unknown) => {
      this.fail(error as Error);
      throw error;
    });
    this.pendingOps.add(op);
    const remove = (): void => void this.pendingOps.delete(op);
    op.then(remove, remove);
    return op;
  }

  /** Waits for sendOffsets/sendShareAcks calls of this transaction (their errors were recorded by fail()). */
  private async awaitPendingOps(): Promise<void> {
    await Promise.allSettled([...this.pendingOps]);
  }

  /** Flushes and waits for every call of the transaction; the snapshot to persist for finishing it later. */
  async prepareTransaction(): Promise<PreparedTxnState> {
    this.checkInTransaction('prepareTransaction()');
    if (this.options.enable2Pc !== true) {
      // As Kafka's KafkaProducer.prepareTransaction: without 2PC the coordinator's transaction timeout would
      // abort the prepared transaction, and a saved PreparedTxnState would name a transaction that is gone.
      throw new InvalidTxnStateError(
        Errors.INVALID_TXN_STATE,
        `TransactionalId ${this.transactionalId}: prepareTransaction() needs two-phase commit: set transactionTwoPhaseCommitEnable: true ` +
          '(transaction.two.phase.commit.enable) in the producer config; without it the transaction timeout would abort the prepared transaction',
      );
    }
    await this.hooks.flush();
    await this.addPendingPartitions();
    await this.awaitPendingOps();
    this.checkShareConsumers();
    this.maybeFailWithError('prepareTransaction()');
    const state = this.snapshot();
    this.preparedState = state;
    return state;
  }

  snapshot(): PreparedTxnState {
    if (this.producerId < 0n) throw this.illegal('snapshot()');
    return new PreparedTxnState(this.transactionalId, this.producerId, this.producerEpoch);
  }

  /** The transaction kept by initTransactions({ keepPreparedTxn: true }) or prepared here; null when none. */
  get preparedTransaction(): PreparedTxnState | null {
    return this.preparedState;
  }

  /**
   * KIP-939 (Kafka's KafkaProducer.completeTransaction): commits the prepared
   * transaction if it is the one `state` names ('committed'), aborts it
   * otherwise — the named one then ended before it and this producer cannot
   * tell how ('unknown'). Without a prepared transaction it throws
   * InvalidTxnStateError, as Kafka does; KafkaProducer.completeTransaction(config, …)
   * asks the coordinator instead.
   */
  async completeTransaction(state: PreparedTransaction): Promise<SavedTransactionOutcome> {
    const named = PreparedTxnState.from(state);
    if (named.transactionalId !== this.transactionalId) {
      throw new IllegalStateError(
        `completeTransaction(): the state names transactional id ${named.transactionalId}, this producer is ${this.transactionalId}`,
      );
    }
    const isNamed = named.equals(this.preparedState);
    // A retry after a timeout finishes what the first call started.
    if (this.state === 'COMMITTING_TRANSACTION') return this.commitTransaction().then(() => (isNamed ? 'committed' : 'unknown'));
    if (this.state === 'ABORTING_TRANSACTION') return this.abortTransaction().then(() => (isNamed ? 'aborted' : 'unknown'));
    this.maybeFailWithError('completeTransaction()');
    if (this.preparedState === null) {
      throw new InvalidTxnStateError(
        Errors.INVALID_TXN_STATE,
        `TransactionalId ${this.transactionalId}: completeTransaction() needs a prepared transaction (prepareTransaction(), or initTransactions({ keepPreparedTxn: true }) ` +
          `after a restart, which found none open); state ${this.state}. After a restart use KafkaProducer.completeTransaction(config, state, result), which asks the coordinator`,
      );
    }
    if (isNamed) {
      await this.commitTransaction();
      return 'committed';
    }
    await this.abortTransaction();
    return 'unknown';
  }

  /**
   * Finishes, after a restart, the transaction `saved` names with `commit`
   * (or abort), and says what became of it (SavedTransactionOutcome). Needs a
   * fresh producer with two-phase commit; throws UnsupportedVersionError when
   * the coordinator has no Transactions V2 or InitProducerId v6.
   *
   * First an EndTxn (v5+) for exactly the saved producer id and epoch. Under
   * Transactions V2 each end of a transaction bumps the epoch, so the
   * coordinator's answer tells the saved transaction's fate wherever its state
   * still holds it (Kafka's TransactionCoordinator.endTransaction, the TV2
   * table): open under that identity → ended now with `commit` (NONE); ended
   * with the same result (epoch + 1, COMPLETE or PREPARE) → NONE, a retry;
   * ended with the other result → INVALID_TXN_STATE — for a commit also the
   * answer when the saved identity is still current with nothing open, i.e.
   * nothing of that transaction ever reached the coordinator. The EndTxn
   * bumps the epoch, which fences the producer that prepared it, as
   * InitProducerId(KeepPreparedTxn) would.
   *
   * PRODUCER_FENCED or INVALID_PRODUCER_ID_MAPPING: the coordinator moved past
   * it (a later transaction or an InitProducerId since, the id expired) or a
   * recovery producer was staged before. Then InitProducerId(KeepPreparedTxn):
   * a kept transaction is committed if it is the saved one (staged case), else
   * aborted (a later one: its records and acks come back at once); the saved
   * one's fate is then 'unknown', as the coordinator keeps no older state.
   */
  async recoverPrepared(saved: PreparedTxnState, commit: boolean): Promise<SavedTransactionOutcome> {
    const deadline = Date.now() + this.options.maxBlockMs;
    await this.chooseProtocol(deadline);
    try {
      await endTransaction(this.cluster, saved, commit, deadline, true);
      return commit ? 'committed' : 'aborted';
    } catch (error) {
      if (error instanceof ApiError && error.code === Errors.INVALID_TXN_STATE) return commit ? 'aborted' : 'committed';
      const movedOn = error instanceof ApiError && (error.code === Errors.PRODUCER_FENCED || error.code === Errors.INVALID_PRODUCER_EPOCH || error.code === Errors.INVALID_PRODUCER_ID_MAPPING);
      if (!movedOn) throw error;
    }
    await this.initTransactions({ keepPreparedTxn: true });
    const kept = this.preparedState;
    if (kept === null) return 'unknown';
    if (commit && kept.equals(saved)) {
      await this.commitTransaction();
      return 'committed';
    }
    await this.abortTransaction();
    return kept.equals(saved) ? 'aborted' : 'unknown';
  }

  async commitTransaction(): Promise<void> {
    if (this.state === 'COMMITTING_TRANSACTION') {
      if (this.pendingResult) return this.pendingResult;
    } else {
      this.maybeFailWithError('commitTransaction()');
      if (this.state !== 'IN_TRANSACTION') throw this.illegal('commitTransaction()');
      this.transitionTo('COMMITTING_TRANSACTION');
    }
    const hadShareAcks = this.hasShareAcks;
    this.pendingResult = (async () => {
      await this.hooks.flush();
      await this.addPendingPartitions();
      await this.awaitPendingOps();
      // A prepared transaction was checked by prepareTransaction(): nothing handed out since can be in it.
      if (!this.prepared) this.checkShareConsumers();
      if (this.state !== 'COMMITTING_TRANSACTION') {
        // A send, sendOffsets or sendShareAcks call failed: commit is impossible.
        throw this.lastError ?? this.illegal('commitTransaction()');
      }
      if (this.transactionStarted || (this.transactionV2 && this.addAttempted)) {
        const started = performance.now();
        await this.endTxn(true);
        if (hadShareAcks) this.metrics.recordCommitTime(performance.now() - started);
      }
      await this.finishTransaction();
    })()
      .catch((error: unknown) => {
        if (error instanceof KafkaTimeoutError) {
          // Stay COMMITTING_TRANSACTION: calling commitTransaction() again retries the commit.
          this.maybeCountTimeout(error);
        } else if (
          this.state === 'COMMITTING_TRANSACTION' ||
          this.state === 'ABORTABLE_ERROR' ||
          this.state === 'FATAL_ERROR'
        ) {
          this.fail(error as Error);
        }
        throw error;
      })
      .finally(() => (this.pendingResult = null));
    return this.pendingResult;
  }

  async abortTransaction(): Promise<void> {
    if (this.state === 'ABORTING_TRANSACTION') {
      if (this.pendingResult) return this.pendingResult;
    } else {
      if (this.state === 'FATAL_ERROR') this.maybeFailWithError('abortTransaction()');
      if (this.state !== 'IN_TRANSACTION' && this.state !== 'ABORTABLE_ERROR') throw this.illegal('abortTransaction()');
      this.transitionTo('ABORTING_TRANSACTION');
    }
    this.pendingResult = (async () => {
      this.hooks.abortUndrainedBatches(
        new TransactionAbortedError(`the transaction of ${this.transactionalId} was aborted; the record was not sent`),
      );
      await this.hooks.awaitInFlight();
      if (this.addingPartitions) await this.addingPartitions;
      await this.awaitPendingOps();
      if (this.state === 'FATAL_ERROR') throw this.lastError!;
      if (this.transactionStarted) await this.endTxn(false);
      else if (this.addAttempted) {
        // An add request may have started the transaction without our knowing: abort it, tolerating "no transaction".
        await this.endTxn(false).catch((error: unknown) => {
          if (!(error instanceof ApiError && error.code === Errors.INVALID_TXN_STATE)) throw error;
        });
      }
      this.countShareTransactionAbort();
      if (this.epochBumpRequired) {
        this.transitionTo('INITIALIZING');
        await this.initProducerId(true);
      }
      await this.finishTransaction();
    })()
      .catch((error: unknown) => {
        if (error instanceof KafkaTimeoutError) {
          this.maybeCountTimeout(error);
        } else if (this.state !== 'FATAL_ERROR') {
          this.transitionTo('FATAL_ERROR', error as Error);
          this.countShareTransactionAbort();
        }
        throw error;
      })
      .finally(() => (this.pendingResult = null));
    return this.pendingResult;
  }

  /**
   * The end shared by commit and abort. Under TV2 a PreparedTxnState names a
   * transaction by the producer id and epoch it ran under, and each EndTxn
   * moves the producer to the next epoch. A prepared transaction that ended
   * without one — empty, so no EndTxn went out (as in Kafka), or answered
   * INVALID_TXN_STATE because nothing had reached the coordinator — would
   * leave the next transaction under the identity this one's checkpoint
   * names, and a recovery from that checkpoint would commit the next one
   * (DESIGN §5.6). It moves on with InitProducerId instead, committed or aborted.
   */
  private async finishTransaction(): Promise<void> {
    if (this.transactionV2 && this.preparedState?.equals(this.snapshot())) await this.initProducerId(true);
    this.transitionTo('READY');
    this.partitionsInTransaction.clear();
    this.pendingPartitions.clear();
    this.transactionStarted = false;
    this.addAttempted = false;
    this.hasShareAcks = false;
    this.preparedState = null;
    this.metrics.transactionActive(false);
    this.endShareConsumerTransactions();
  }

  /** Makes the transaction abortable when a consumer it acknowledges for says it must abort (DESIGN §5.8). */
  private checkShareConsumers(): void {
    try {
      for (const consumer of this.shareConsumers) consumer.check();
    } catch (error) {
      this.fail(error as Error);
    }
  }

  private endShareConsumerTransactions(): void {
    for (const consumer of this.shareConsumers) consumer.transactionEnded();
  }

  private async endTxn(commit: boolean): Promise<void> {
    const next = await endTransaction(this.cluster, this.snapshot(), commit, Date.now() + this.options.maxBlockMs, this.transactionV2);
    if (this.transactionV2 && next.producerId >= 0n) {
      // TV2: the transaction ended with an epoch bump (a new producer id when the epoch ran out).
      this.producerId = next.producerId;
      this.producerEpoch = next.producerEpoch;
      this.epochBumpRequired = false;
      this.hooks.resetSequences();
    }
  }
}

/**
 * EndTxn for a given producer id and epoch, retried within the deadline. Used
 * by commit/abort and to finish a prepared transaction after a restart. An
 * idempotent retry of the same result succeeds (DESIGN §5.6).
 */
export async function endTransaction(
  cluster: ClusterClient,
  txn: PreparedTransaction,
  commit: boolean,
  deadline: number,
  transactionV2 = false,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  const what = `EndTxn(${commit ? 'COMMIT' : 'ABORT'})`;
  const { response } = await cluster.coordinatorRequest(
    what,
    CoordinatorType.TRANSACTION,
    txn.transactionalId,
    EndTxnRequest,
    EndTxnResponse,
    () =>
      EndTxnRequest.create({
        transactionalId: txn.transactionalId,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        committed: commit,
      }),
    (r) => r.errorCode,
    transactionV2 ? { deadline, min: TV2_MIN.endTxn } : { deadline, max: TV1_MAX.endTxn },
  );
  const code = response.errorCode;
  if (code === 0) return { producerId: response.producerId, producerEpoch: response.producerEpoch };
  if (code === Errors.INVALID_PRODUCER_EPOCH || code === Errors.PRODUCER_FENCED) {
    throw new ProducerFencedError(
      code,
      `${what} for transactional id ${txn.transactionalId} (producer id ${txn.producerId}, epoch ${txn.producerEpoch}) failed with ${errorCodeName(code)}: ` +
        'a newer producer with this transactional.id started, or the coordinator aborted the transaction after transaction.timeout.ms. ' +
        'Close this producer; records and acknowledgements of the aborted transaction are redelivered.',
    );
  }
  if (code === Errors.INVALID_TXN_STATE) {
    throw errorFromCode(
      code,
      `${what} for transactional id ${txn.transactionalId} (producer id ${txn.producerId}, epoch ${txn.producerEpoch}) — the transaction is not open, or it ended with the other result (e.g. aborted on timeout)`,
    );
  }
  throw errorFromCode(code, `${what} for transactional id ${txn.transactionalId}`);
}
