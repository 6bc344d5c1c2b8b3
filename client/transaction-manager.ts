/**
 * The producer's transactions, after Kafka's TransactionManager
 * (clients/.../producer/internals/TransactionManager.java): the public calls
 * check the state machine (transactions/state.ts) and drive one handler per
 * request (transactions/), with the open transaction's state in
 * transactions/current-transaction.ts.
 *
 * Two protocols, chosen at initTransactions() from the coordinator's
 * finalized `transaction.version` feature: Transactions V2 (KIP-890 part 2:
 * no AddPartitionsToTxn / AddOffsetsToTxn, the partition leaders add them;
 * every EndTxn v5 returns the bumped epoch, so producer id + epoch name one
 * transaction) and the classic one (transaction version 1: partitions added
 * with AddPartitionsToTxn, EndTxn keeps the epoch). With
 * `transactionTwoPhaseCommitEnable`, KIP-939's two-phase commit
 * (transactions/two-phase.ts).
 */
import type { ClusterClient } from './cluster.js';
import { ApiError, Errors, IllegalStateError, isFatalTransactionError, KafkaError, KafkaTimeoutError } from './errors.js';
import type { ShareTransactionMetrics } from './metrics.js';
import type { ShareAcknowledgements, ShareGroupMetadata } from './share/acknowledgements.js';
import { TV1_MAX_VERSIONS, TV2_MIN_VERSIONS, TV2_PRODUCE_MAX_VERSION } from './transaction-protocol.js';
import { deliveriesOf, ledgersOfAcks } from './share/transactional-deliveries.js';
import { PartitionAdder } from './transactions/add-partitions.js';
import { AddRequestQueue } from './transactions/add-queue.js';
import { checkShareAckSupport, coordinatorRunsTransactionsV2 } from './transactions/coordinator-protocol.js';
import { CurrentTransaction } from './transactions/current-transaction.js';
import { endTransaction } from './transactions/end-txn.js';
import { sendTxnRequest, sendUntilAnswered, type TxnContext } from './transactions/handler.js';
import { InitProducerIdHandler } from './transactions/init-producer-id.js';
import { AddOffsetsToTxnHandler, TxnOffsetCommitHandler, type ConsumerGroupMetadata, type TopicPartitionOffset } from './transactions/offsets.js';
import { PreparedTxnState, type PreparedTransaction, type SavedTransactionOutcome } from './transactions/prepared-txn-state.js';
import {
  AddShareAcksToTxnHandler,
  requireAddShareAcksToTxn,
  requireShareGroupMetadata,
  resolveShareAckPartitions,
  txnShareAcknowledge,
} from './transactions/share-acks.js';
import { ShareTransactionLink } from './transactions/share-transaction.js';
import { ALLOWED_CALLS, TransactionStateMachine, type TransactionState } from './transactions/state.js';
import { completePrepared, recoverPrepared, twoPhaseCommitRequired, type TwoPhaseManager } from './transactions/two-phase.js';

export { endTransaction } from './transactions/end-txn.js';
export { PreparedTxnState } from './transactions/prepared-txn-state.js';
export type { PreparedTransaction, SavedTransactionOutcome } from './transactions/prepared-txn-state.js';
export type { ConsumerGroupMetadata, TopicPartitionOffset } from './transactions/offsets.js';
export type { TransactionState } from './transactions/state.js';

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

export class TransactionManager implements TwoPhaseManager {
  producerId = -1n;
  producerEpoch = -1;
  /** Transactions V2 is in use (decided at initTransactions()). */
  transactionV2 = false;
  /** A failed batch had a sequence assigned: bump the epoch before the next transaction (Kafka's clientSideEpochBumpRequired). */
  private epochBumpRequired = false;
  private readonly machine: TransactionStateMachine;
  private readonly current = new CurrentTransaction();
  private readonly adds: AddRequestQueue;
  private readonly share: ShareTransactionLink;
  private readonly ctx: TxnContext;
  private readonly partitions: PartitionAdder;
  /** initTransactions(), commitTransaction() or abortTransaction() under way: calling it again joins it. */
  private pendingResult: Promise<void> | null = null;

  constructor(
    readonly transactionalId: string,
    private readonly cluster: ClusterClient,
    private readonly hooks: SendPathHooks,
    private readonly options: { transactionTimeoutMs: number; maxBlockMs: number; enable2Pc?: boolean },
    private readonly metrics: ShareTransactionMetrics,
  ) {
    this.machine = new TransactionStateMachine(transactionalId, () => {
      this.metrics.transactionActive(false);
      // No transaction of this producer can commit any more: what the consumers handed out is free for the next producer.
      this.share.transactionEnded();
    });
    this.adds = new AddRequestQueue(cluster, this.current);
    this.share = new ShareTransactionLink(this.current, metrics, options.transactionTimeoutMs);
    this.ctx = { transactionalId, identity: this };
    this.partitions = new PartitionAdder(this.ctx, this.current, this.adds, {
      deadline: () => this.deadline,
      failed: (error) => {
        this.fail(error);
        this.hooks.abortUndrainedBatches(error);
      },
      ended: () => this.hooks.wakeup(),
    });
  }

  get state(): TransactionState {
    return this.machine.state;
  }

  get lastError(): Error | null {
    return this.machine.lastError;
  }

  /** After prepareTransaction() (or a kept prepared transaction): only commit or abort. */
  get prepared(): boolean {
    return this.current.prepared !== null;
  }

  /** The transaction kept by initTransactions({ keepPreparedTxn: true }) or prepared here; null when none. */
  get preparedTransaction(): PreparedTxnState | null {
    return this.current.prepared;
  }

  /** The highest Produce version this producer may send: v12+ makes the leader add the partition (TV2). */
  get produceMaxVersion(): number {
    return this.transactionV2 ? TV2_PRODUCE_MAX_VERSION : TV1_MAX_VERSIONS.produce;
  }

  get produceMinVersion(): number {
    return this.transactionV2 ? TV2_MIN_VERSIONS.produce : 0;
  }

  get isInTransaction(): boolean {
    return this.machine.isInTransaction;
  }

  private get deadline(): number {
    return Date.now() + this.options.maxBlockMs;
  }

  /** Records an error that broke the current transaction: fatal ones end the producer, others make the transaction abortable. */
  fail(error: Error): void {
    this.share.maybeCountTimeout(error);
    if (isFatalTransactionError(error)) {
      if (this.state !== 'FATAL_ERROR') this.machine.transitionTo('FATAL_ERROR', error);
      this.share.countAbort();
      return;
    }
    if (this.state === 'IN_TRANSACTION' || this.state === 'COMMITTING_TRANSACTION' || this.state === 'ABORTABLE_ERROR') {
      this.machine.transitionTo('ABORTABLE_ERROR', error);
    }
  }

  /** A failed batch with an assigned sequence: the epoch must be bumped before the next transaction. */
  requireEpochBump(): void {
    this.epochBumpRequired = true;
  }

  /** send() in a transactional producer: only inside a transaction. */
  checkSend(): void {
    this.checkInTransaction('send()');
  }

  /** @internal Kafka's maybeFailWithError: throws the error of FATAL_ERROR, or TransactionAbortableError in ABORTABLE_ERROR. */
  maybeFailWithError(call: string): void {
    this.machine.maybeFailWithError(call);
  }

  private checkInTransaction(call: string): void {
    this.machine.maybeFailWithError(call);
    if (this.state !== 'IN_TRANSACTION') throw this.machine.illegal(call);
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
    if (this.transactionV2) this.current.addAttempted = true;
    else this.current.addPartition(topic, partition);
  }

  isPartitionAdded(topic: string, partition: number): boolean {
    return this.transactionV2 || this.current.isPartitionAdded(topic, partition);
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
    if (this.state === 'FATAL_ERROR') this.machine.maybeFailWithError('initTransactions()');
    if (this.state !== 'UNINITIALIZED' && this.state !== 'INITIALIZING') {
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: initTransactions() was already called (state ${this.state}); ${ALLOWED_CALLS[this.state]}`,
      );
    }
    this.machine.transitionTo('INITIALIZING');
    this.pendingResult = this.initProducerId(false, keep)
      .then((kept) => {
        this.machine.transitionTo('READY');
        if (kept !== null) {
          // KIP-939: a transaction prepared by an earlier producer is kept, open, for completeTransaction().
          this.beginTransaction();
          this.current.started = true;
          this.current.prepared = kept;
        }
      })
      .catch((error: unknown) => {
        // After a timeout it stays INITIALIZING: calling initTransactions() again retries.
        if (!(error instanceof KafkaTimeoutError)) this.machine.transitionTo('FATAL_ERROR', error as Error);
        throw error;
      })
      .finally(() => (this.pendingResult = null));
    return this.pendingResult;
  }

  /** @internal Picks the protocol from the transaction coordinator's features (and checks two-phase commit's needs). */
  async chooseProtocol(deadline: number): Promise<void> {
    this.transactionV2 = await coordinatorRunsTransactionsV2(this.cluster, this.transactionalId, this.options.enable2Pc === true, deadline);
  }

  /**
   * InitProducerId (and the protocol choice). With `keep` (KIP-939
   * keepPreparedTxn) returns the kept transaction's state, null when none.
   */
  private async initProducerId(bump: boolean, keep = false): Promise<PreparedTxnState | null> {
    const deadline = this.deadline;
    const { enable2Pc = false, transactionTimeoutMs } = this.options;
    await this.chooseProtocol(deadline);
    const handler = new InitProducerIdHandler(this.ctx, { bump, keepPreparedTxn: keep, enable2Pc, transactionTimeoutMs });
    const response = await sendTxnRequest(this.cluster, handler, { deadline });
    this.setProducerIdAndEpoch(response.producerId, response.producerEpoch);
    if (keep && response.ongoingTxnProducerId >= 0n) {
      return new PreparedTxnState(this.transactionalId, response.ongoingTxnProducerId, response.ongoingTxnProducerEpoch);
    }
    return null;
  }

  /** Kafka's setProducerIdAndEpoch + resetSequenceNumbers: a new identity, sequences from 0, no bump owed. */
  private setProducerIdAndEpoch(producerId: bigint, producerEpoch: number): void {
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.epochBumpRequired = false;
    this.hooks.resetSequences();
  }

  // -------------------------------------------------------------------------
  // The open transaction

  beginTransaction(): void {
    if (this.state === 'FATAL_ERROR') this.machine.maybeFailWithError('beginTransaction()');
    if (this.state !== 'READY') throw this.machine.illegal('beginTransaction()');
    this.machine.transitionTo('IN_TRANSACTION');
    this.current.reset();
  }

  /** Sends AddPartitionsToTxn for the partitions waiting to join (one request at a time). */
  addPendingPartitions(): Promise<void> {
    const open = this.state === 'IN_TRANSACTION' || this.state === 'COMMITTING_TRANSACTION';
    return this.partitions.pending ?? (open ? this.partitions.addWaiting() : Promise.resolve());
  }

  /** sendOffsetsToTransaction: AddOffsetsToTxn to the transaction coordinator (TV1 only), then TxnOffsetCommit to the group coordinator. */
  async sendOffsetsToTransaction(offsets: readonly TopicPartitionOffset[], group: ConsumerGroupMetadata | string): Promise<void> {
    this.checkInTransaction('sendOffsetsToTransaction()');
    const metadata = typeof group === 'string' ? { groupId: group } : group;
    if (offsets.length === 0) return;
    await this.track(async () => {
      const deadline = this.deadline;
      const tv2 = this.transactionV2;
      // TV2: no AddOffsetsToTxn — the group coordinator adds the group on TxnOffsetCommit v5+.
      if (tv2) this.current.addAttempted = true;
      else {
        await this.adds.send(new AddOffsetsToTxnHandler(this.ctx, metadata.groupId), deadline);
        this.current.started = true;
      }
      const { next } = await sendUntilAnswered(this.cluster, new TxnOffsetCommitHandler(this.ctx, metadata, offsets, tv2), { deadline });
      // TV2: the group coordinator answered, so it may have added the group to the transaction, even with partition errors.
      if (tv2) this.current.started = true;
      if (next.kind === 'fail') throw next.error;
    });
  }

  /**
   * KIP-1289: AddShareAcksToTxn to the transaction coordinator, then
   * TxnShareAcknowledge to each share coordinator involved (v1, with the
   * member id and generation, when the broker supports it). Resolves once the
   * acks are pending everywhere.
   */
  async sendShareAcksToTransaction(acks: ShareAcknowledgements, group: ShareGroupMetadata): Promise<void> {
    this.checkInTransaction('sendShareAcksToTransaction()');
    requireShareGroupMetadata(group);
    if (acks.isEmpty) return;
    const started = performance.now();
    this.share.bindAcks();
    const consumers = new Set(ledgersOfAcks(acks));
    const fromGroup = deliveriesOf(group);
    if (fromGroup) consumers.add(fromGroup);
    // The acks close the processing of their records, whose outputs are queued by now: those batches go out at once,
    // in flight with the acks' requests (handler.ts TRANSACTION_LANE), not after linger.ms or at the commit. Kafka has
    // no share acks (its sendOffsetsToTransaction leaves linger.ms alone). Batch errors reach the transaction as before.
    void this.hooks.flush().catch(() => {});
    await this.track(async () => {
      this.share.link(consumers);
      const deadline = this.deadline;
      const partitions = await resolveShareAckPartitions(this.cluster, acks, deadline);
      await requireAddShareAcksToTxn(this.cluster, this.transactionalId, deadline);
      await this.adds.send(new AddShareAcksToTxnHandler(this.ctx, group.groupId, partitions), deadline);
      this.current.started = true;
      await txnShareAcknowledge(this.cluster, this.ctx, group, partitions, deadline);
      for (const consumer of consumers) consumer.staged(partitions);
    });
    this.metrics.recordPrepareTime(performance.now() - started);
  }

  /** UnsupportedVersionError unless the transaction coordinator has KIP-1289's APIs; before InitProducerId fences anything. */
  async checkShareAckSupport(): Promise<void> {
    await checkShareAckSupport(this.cluster, this.transactionalId, this.deadline);
  }

  /** Every record, partition add and offsets / acks call of the transaction has its answer. */
  private async settle(): Promise<void> {
    await this.hooks.flush();
    await this.addPendingPartitions();
    await this.current.settled();
  }

  /** A call of the open transaction: commit and abort wait for it; its failure breaks the transaction. */
  private track(call: () => Promise<void>): Promise<void> {
    return this.current.track(
      call().catch((error: unknown) => {
        this.fail(error as Error);
        throw error;
      }),
    );
  }

  /** Makes the transaction abortable when a consumer it acknowledges for says it must abort (DESIGN §5.8). */
  private checkShareConsumers(): void {
    try {
      this.share.check();
    } catch (error) {
      this.fail(error as Error);
    }
  }

  // -------------------------------------------------------------------------
  // Two-phase commit (KIP-939)

  /** Flushes and waits for every call of the transaction; the snapshot to persist for finishing it later. */
  async prepareTransaction(): Promise<PreparedTxnState> {
    this.checkInTransaction('prepareTransaction()');
    if (this.options.enable2Pc !== true) throw twoPhaseCommitRequired(this.transactionalId);
    await this.settle();
    this.checkShareConsumers();
    this.machine.maybeFailWithError('prepareTransaction()');
    const state = this.snapshot();
    this.current.prepared = state;
    return state;
  }

  snapshot(): PreparedTxnState {
    if (this.producerId < 0n) throw this.machine.illegal('snapshot()');
    return new PreparedTxnState(this.transactionalId, this.producerId, this.producerEpoch);
  }

  /** KIP-939 completeTransaction(state): commits the prepared transaction if `state` names it (transactions/two-phase.ts). */
  completeTransaction(state: PreparedTransaction): Promise<SavedTransactionOutcome> {
    return completePrepared(this, state);
  }

  /** Finishes, after a restart, the transaction `saved` names (transactions/two-phase.ts). */
  recoverPrepared(saved: PreparedTxnState, commit: boolean): Promise<SavedTransactionOutcome> {
    return recoverPrepared(this, this.cluster, saved, commit, this.deadline);
  }

  // -------------------------------------------------------------------------
  // Ending the transaction

  async commitTransaction(): Promise<void> {
    if (this.state === 'COMMITTING_TRANSACTION') {
      if (this.pendingResult) return this.pendingResult;
    } else {
      this.machine.maybeFailWithError('commitTransaction()');
      if (this.state !== 'IN_TRANSACTION') throw this.machine.illegal('commitTransaction()');
      this.machine.transitionTo('COMMITTING_TRANSACTION');
    }
    const hadShareAcks = this.current.hasShareAcks;
    this.pendingResult = (async () => {
      await this.settle();
      // A prepared transaction was checked by prepareTransaction(): nothing handed out since can be in it.
      if (!this.prepared) this.checkShareConsumers();
      if (this.state !== 'COMMITTING_TRANSACTION') {
        // A send, sendOffsets or sendShareAcks call failed: commit is impossible.
        throw this.lastError ?? this.machine.illegal('commitTransaction()');
      }
      if (this.current.started || (this.transactionV2 && this.current.addAttempted)) {
        const started = performance.now();
        await this.endTxn(true);
        if (hadShareAcks) this.metrics.recordCommitTime(performance.now() - started);
      }
      await this.finishTransaction();
    })()
      .catch((error: unknown) => {
        if (error instanceof KafkaTimeoutError) {
          // Stay COMMITTING_TRANSACTION: calling commitTransaction() again retries the commit.
          this.share.maybeCountTimeout(error);
        } else if (this.state === 'COMMITTING_TRANSACTION' || this.state === 'ABORTABLE_ERROR' || this.state === 'FATAL_ERROR') {
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
      if (this.state === 'FATAL_ERROR') this.machine.maybeFailWithError('abortTransaction()');
      if (this.state !== 'IN_TRANSACTION' && this.state !== 'ABORTABLE_ERROR') throw this.machine.illegal('abortTransaction()');
      this.machine.transitionTo('ABORTING_TRANSACTION');
    }
    this.pendingResult = (async () => {
      this.hooks.abortUndrainedBatches(new TransactionAbortedError(`the transaction of ${this.transactionalId} was aborted; the record was not sent`));
      await this.hooks.awaitInFlight();
      const adding = this.partitions.pending;
      if (adding) await adding;
      await this.current.settled();
      if (this.state === 'FATAL_ERROR') throw this.lastError!;
      if (this.current.started) await this.endTxn(false);
      else if (this.current.addAttempted) {
        // An add request may have started the transaction without our knowing: abort it, tolerating "no transaction".
        await this.endTxn(false).catch((error: unknown) => {
          if (!(error instanceof ApiError && error.code === Errors.INVALID_TXN_STATE)) throw error;
        });
      }
      this.share.countAbort();
      if (this.epochBumpRequired) {
        this.machine.transitionTo('INITIALIZING');
        await this.initProducerId(true);
      }
      await this.finishTransaction();
    })()
      .catch((error: unknown) => {
        if (error instanceof KafkaTimeoutError) {
          this.share.maybeCountTimeout(error);
        } else if (this.state !== 'FATAL_ERROR') {
          this.machine.transitionTo('FATAL_ERROR', error as Error);
          this.share.countAbort();
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
    if (this.transactionV2 && this.current.prepared?.equals(this.snapshot())) await this.initProducerId(true);
    this.machine.transitionTo('READY');
    this.current.reset();
    this.metrics.transactionActive(false);
    this.share.transactionEnded();
  }

  private async endTxn(commit: boolean): Promise<void> {
    const next = await endTransaction(this.cluster, this.snapshot(), commit, this.deadline, this.transactionV2);
    // TV2: the transaction ended with an epoch bump (a new producer id when the epoch ran out).
    if (this.transactionV2 && next.producerId >= 0n) this.setProducerIdAndEpoch(next.producerId, next.producerEpoch);
  }
}
