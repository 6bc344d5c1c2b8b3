/**
 * The transaction coordinator for the transactional ids whose
 * `__transaction_state` partition this node leads: both of Kafka's transaction
 * protocols — the classic one (transaction version 1, as Kafka 3.x clients
 * use it) and Transactions V2 (KIP-890 part 2: every EndTxn v5+ ends the
 * transaction with an epoch bump, so producer id + epoch name one
 * transaction; partitions join implicitly through their leaders) — and
 * KIP-939's two-phase commit (InitProducerId v6: Enable2Pc, KeepPreparedTxn).
 *
 * Every state change is prepared by the transactional id's metadata, which
 * refuses an illegal move or a second one while one is pending
 * (transaction-metadata.ts, Kafka's TransactionMetadata), then written to
 * `__transaction_state` (fsynced as the flush settings say) before it takes
 * effect or is answered (transition-writer.ts). PREPARE_* is written before any marker is
 * sent, COMPLETE_* only after every partition leader acknowledged its marker,
 * so after a crash the replayed PREPARE_* resumes sending (KIP-1289 case 4).
 * A transaction open past its timeout, or whose producer is fenced by a new
 * InitProducerId, is aborted under a bumped epoch, so the old producer gets
 * PRODUCER_FENCED from then on (KIP-1289 case 5).
 *
 * A transactional id with no transaction open or completing whose state was
 * last written `transactionalIdExpirationMs` ago is forgotten: a tombstone
 * for it is written to `__transaction_state` first (removeExpiredTransactionalIds).
 */
import { TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode, errorCodeName } from '../errors.js';
import { maybeCrash } from '../faults.js';
import type { Metrics } from '../metrics.js';
import type { MarkerSender } from './marker-sender.js';
import type { ProducerIdManager } from './producer-id-manager.js';
import type { TransactionLog } from './transaction-log.js';
import { checkAddingProducer, checkWrite, isInitRetry, judgeEndTxn } from './producer-checks.js';
import {
  MAX_EPOCH,
  TWO_PHASE_TIMEOUT_MS,
  TransactionMetadata,
  TxnState,
  clonePartitions,
  describePartitions,
  isPrepare,
  isTwoPhase,
  txnStateName,
  type TxnTransitMetadata,
} from './transaction-metadata.js';
import { removeExpiredTransactionalIds } from './transactional-id-expiration.js';
import { TransitionWriter } from './transition-writer.js';

/** The coordinator epoch written in markers: leadership of a partition never moves in a static cluster. */
const COORDINATOR_EPOCH = 0;
/**
 * How long an add request (AddPartitionsToTxn, AddOffsetsToTxn,
 * AddShareAcksToTxn) of a producer waits for that producer's previous
 * transaction to finish completing (markers, then COMPLETE_*) before it is
 * answered CONCURRENT_TRANSACTIONS. EndTxn answers once PREPARE_* is written,
 * so a producer's next transaction routinely starts while the markers of the
 * last one are still being written (a few milliseconds); answering at once
 * would cost every such transaction a client round trip and retry backoff.
 */
const COMPLETION_WAIT_MS = 500;

export interface ProducerIdAndEpoch {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

/** InitProducerId's answer: with KeepPreparedTxn, also the kept transaction's identity (-1 when none). */
export interface InitProducerIdResult extends ProducerIdAndEpoch {
  ongoingTxnProducerId: bigint;
  ongoingTxnProducerEpoch: number;
}

/** KIP-939 flags of InitProducerId v6. */
export interface TwoPhaseOptions {
  enable2Pc: boolean;
  keepPreparedTxn: boolean;
}

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

export interface TransactionCoordinatorOptions {
  cluster: Cluster;
  txnLog: TransactionLog;
  producerIds: ProducerIdManager;
  markers: MarkerSender;
  maxTimeoutMs: number;
  abortCheckIntervalMs: number;
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
  retryBackoffMs: number;
  /** transaction.two.phase.commit.enable: whether InitProducerId may enable 2PC (KIP-939). */
  twoPhaseCommitEnable: boolean;
  metrics: Metrics;
  log: (line: string) => void;
}

export class TransactionCoordinator {
  private readonly txns = new Map<string, TransactionMetadata>();
  private timer: NodeJS.Timeout | null = null;
  private expirationTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The background completion (markers then COMPLETE_*) in progress per transactional id; awaited on close. */
  private readonly completing = new Map<string, Promise<void>>();
  /** Prepared transitions to `__transaction_state`, then to memory. */
  private readonly writer: TransitionWriter;

  constructor(private readonly options: TransactionCoordinatorOptions) {
    this.writer = new TransitionWriter(options.txnLog, options.log);
  }

  /** Replays `__transaction_state` and resumes every PREPARE_* transaction's markers. */
  recover(): void {
    for (const [id, meta] of this.options.txnLog.replay()) {
      this.txns.set(id, meta);
      this.options.producerIds.reserveUpTo(meta.producerId);
      // A new producer id handed out at PREPARE_* after an epoch overflow is taken too.
      if (meta.nextProducerId >= 0n) this.options.producerIds.reserveUpTo(meta.nextProducerId);
    }
    const prepared = [...this.txns.values()].filter((m) => isPrepare(m.state));
    this.options.log(
      `transaction coordinator loaded ${this.txns.size} transactional ids` +
        (prepared.length > 0 ? `; resuming markers for ${prepared.map((m) => `${m.transactionalId} (${txnStateName(m.state)})`).join(', ')}` : ''),
    );
    for (const meta of prepared) this.completeInBackground(meta);
  }

  /** Starts the timers that abort transactions open longer than their timeout and expire idle transactional ids. */
  start(): void {
    this.timer = setInterval(() => this.abortTimedOut(), this.options.abortCheckIntervalMs);
    this.timer.unref();
    this.startExpiringTransactionalIds();
  }

  /**
   * Runs removeExpiredTransactionalIds(Date.now()) every
   * `removeExpiredTransactionalIdsIntervalMs` until close(), first one interval
   * after start, as Kafka's TransactionStateManager.enableTransactionalIdExpiration
   * schedules it (no pass at load). The timer is unref'd: it never keeps the
   * process alive.
   */
  startExpiringTransactionalIds(): void {
    if (this.expirationTimer !== null) return;
    this.expirationTimer = setInterval(() => {
      void this.removeExpiredTransactionalIds(Date.now()).then((expired) => {
        if (expired.length > 0)
          this.options.log(
            `expired ${expired.length} transactional ids idle for ${this.options.transactionalIdExpirationMs} ms or more: ${expired.join(', ')}`,
          );
      });
    }, this.options.removeExpiredTransactionalIdsIntervalMs);
    this.expirationTimer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.expirationTimer !== null) clearInterval(this.expirationTimer);
    this.expirationTimer = null;
    this.options.markers.stop();
    await Promise.allSettled([...this.completing.values()]);
  }

  isCoordinatorFor(transactionalId: string): boolean {
    return (
      this.options.cluster.leaderOf(TRANSACTION_STATE_TOPIC, this.options.cluster.transactionPartitionFor(transactionalId)) === this.options.cluster.nodeId
    );
  }

  /** The current state of a transactional id (tests, dumps). */
  get(transactionalId: string): Readonly<TransactionMetadata> | undefined {
    return this.txns.get(transactionalId);
  }

  all(): Readonly<TransactionMetadata>[] {
    return [...this.txns.values()];
  }

  // -------------------------------------------------------------------------
  // InitProducerId

  async initProducerId(
    transactionalId: string | null,
    timeoutMs: number,
    expected: { producerId: bigint; producerEpoch: number },
    twoPhase: TwoPhaseOptions = { enable2Pc: false, keepPreparedTxn: false },
  ): Promise<InitProducerIdResult> {
    const result = (
      errorCode: number,
      producerId = -1n,
      producerEpoch = -1,
      ongoing?: { producerId: bigint; producerEpoch: number },
    ): InitProducerIdResult => ({
      errorCode,
      producerId,
      producerEpoch,
      ongoingTxnProducerId: ongoing?.producerId ?? -1n,
      ongoingTxnProducerEpoch: ongoing?.producerEpoch ?? -1,
    });
    const fail = (errorCode: number): InitProducerIdResult => result(errorCode);
    if (transactionalId === null) {
      if (twoPhase.enable2Pc || twoPhase.keepPreparedTxn) return fail(ErrorCode.INVALID_REQUEST);
      // An idempotent producer: a fresh id each time (sequence state lives in the partitions).
      return result(ErrorCode.NONE, this.options.producerIds.next(), 0);
    }
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (!this.isCoordinatorFor(transactionalId)) return fail(ErrorCode.NOT_COORDINATOR);
    // As Kafka: 2PC refused by the broker setting is an authorization failure (a client cannot probe it otherwise).
    if (twoPhase.enable2Pc && !this.options.twoPhaseCommitEnable) return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (twoPhase.keepPreparedTxn && !twoPhase.enable2Pc) return fail(ErrorCode.INVALID_REQUEST);
    // A 2PC transaction is never aborted by the timeout (KIP-939): Kafka stores Int.MaxValue as its timeout.
    if (!twoPhase.enable2Pc && (timeoutMs <= 0 || timeoutMs > this.options.maxTimeoutMs)) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const effectiveTimeoutMs = twoPhase.enable2Pc ? TWO_PHASE_TIMEOUT_MS : timeoutMs;
    const now = Date.now();
    let meta = this.txns.get(transactionalId);
    if (meta === undefined) {
      meta = TransactionMetadata.fresh(transactionalId, this.options.producerIds.next(), effectiveTimeoutMs, now);
      this.txns.set(transactionalId, meta);
    }
    if (meta.pending || isPrepare(meta.state)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const owner = meta.owner();
    // As Kafka's prepareInitProducerIdTransit (isValidProducerId): metadata just created (epoch -1) never
    // fences — a producer whose transactional id expired, recovering with its old id and epoch, gets a new one.
    const justCreated = meta.producerEpoch === -1;
    if (isInitRetry(meta, expected)) {
      // As Kafka's prepareIncrementProducerEpoch: the expected epoch is the one this producer held before its
      // last bump, so this is that InitProducerId again after a lost answer: the current identity, no new bump.
      return result(ErrorCode.NONE, meta.producerId, meta.producerEpoch);
    }
    if (!justCreated && expected.producerId >= 0n && (expected.producerId !== owner.producerId || expected.producerEpoch !== owner.producerEpoch)) {
      return fail(ErrorCode.PRODUCER_FENCED);
    }
    // Only a two-phase transaction can be prepared (the Java client's prepareTransaction() needs 2PC), so only
    // one is kept; any other open transaction is aborted as without KeepPreparedTxn. This also keeps a
    // producer id + epoch either two-phase or not for good, which the partition leaders rely on (verifier.ts).
    if (meta.state === TxnState.ONGOING && twoPhase.keepPreparedTxn && isTwoPhase(meta)) {
      // KIP-939: keep the transaction (prepared by a producer that is gone) for a recovery producer
      // to commit or abort. The transaction keeps its identity — what a saved PreparedTxnState names —
      // and the recovery producer gets the next epoch, which fences the old one. When no epoch is
      // left to hand out (the recovery producer's EndTxn needs one more), it gets a new producer id at
      // epoch 0, as KIP-939 allows (hence OngoingTxnProducerId): aborting a prepared transaction here
      // would make completeTransaction(state) report success for a transaction that never committed.
      const ongoing = { producerId: meta.producerId, producerEpoch: meta.producerEpoch };
      const exhausted = owner.producerEpoch >= MAX_EPOCH - 1;
      const recovery = exhausted
        ? { producerId: this.options.producerIds.next(), producerEpoch: 0 }
        : { producerId: owner.producerId, producerEpoch: owner.producerEpoch + 1 };
      // The kept transaction is two-phase and so is this request: its timeout stays Kafka's 2PC one.
      const kept = meta;
      const error = await this.writer.transition(kept, () => kept.prepareKeepPreparedTxn(recovery, now));
      if (error !== ErrorCode.NONE) return fail(error);
      this.options.log(
        `transaction ${transactionalId} kept for a recovery producer (producer ${recovery.producerId} epoch ${recovery.producerEpoch}): ${describePartitions(meta.partitions)}`,
      );
      return result(ErrorCode.NONE, recovery.producerId, recovery.producerEpoch, ongoing);
    }
    if (meta.state === TxnState.ONGOING) {
      // Fence the current producer: abort its transaction under a bumped epoch.
      // The caller retries on CONCURRENT_TRANSACTIONS and gets a newer epoch once the abort completes.
      this.options.metrics.transactions.fenced++;
      const error = await this.prepareAbort(meta, 'fenced by a new InitProducerId');
      return fail(error === ErrorCode.NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : error);
    }
    const initialised = meta;
    let target: TxnTransitMetadata | undefined;
    const error = await this.writer.transition(
      initialised,
      () => (target = initialised.prepareIncrementProducerEpoch(effectiveTimeoutMs, expected.producerId >= 0n, () => this.options.producerIds.next(), now)),
    );
    if (error !== ErrorCode.NONE) return fail(error);
    return result(ErrorCode.NONE, target!.producerId, target!.producerEpoch);
  }

  // -------------------------------------------------------------------------
  // AddPartitionsToTxn, AddOffsetsToTxn, AddShareAcksToTxn

  /**
   * Adds partitions to the producer's transaction (starting it if needed).
   * Returns one error code for all of them: the caller reports it per partition.
   */
  async addPartitions(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: TopicPartitionRef[],
    clientTransactionVersion = 0,
    /** AddShareAcksToTxn: the share group the transaction now holds acks for. */
    shareGroup?: string,
  ): Promise<number> {
    await this.awaitCompletion(transactionalId, producerId, producerEpoch);
    await this.writer.awaitWrite(transactionalId);
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    const meta = this.txns.get(transactionalId);
    if (meta === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    const error = checkAddingProducer(meta, producerId, producerEpoch);
    if (error !== ErrorCode.NONE) return error;
    if (isPrepare(meta.state)) return ErrorCode.CONCURRENT_TRANSACTIONS;
    const ongoing = meta.state === TxnState.ONGOING;
    const next = ongoing ? clonePartitions(meta.partitions) : new Map<string, Set<number>>();
    let added = false;
    for (const { topic, partition } of partitions) {
      let set = next.get(topic);
      if (set === undefined) next.set(topic, (set = new Set()));
      if (!set.has(partition)) {
        set.add(partition);
        added = true;
      }
    }
    const groups = ongoing ? new Set(meta.shareGroups) : new Set<string>();
    if (shareGroup !== undefined && !groups.has(shareGroup)) {
      groups.add(shareGroup);
      added = true;
    }
    const tv = Math.max(meta.clientTransactionVersion, clientTransactionVersion);
    if (ongoing && !added && tv === meta.clientTransactionVersion) return ErrorCode.NONE;
    return this.writer.transition(meta, () => meta.prepareAddPartitions(next, groups, tv, Date.now()));
  }

  /**
   * Whether a partition is in the producer's ongoing transaction (what a
   * partition leader asks before accepting a transactional write, KIP-890).
   */
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, shareGroup?: string): number {
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    const meta = this.txns.get(transactionalId);
    if (meta === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    return checkWrite(meta, producerId, producerEpoch, topic, partition, shareGroup);
  }

  /**
   * Whether the transactional id's producer uses two-phase commit (KIP-939):
   * its transaction may be kept for a recovery producer at any time, so a
   * partition leader verifies each of its writes (verifier.ts).
   */
  isTwoPhaseTransaction(transactionalId: string): boolean {
    const meta = this.txns.get(transactionalId);
    return meta !== undefined && isTwoPhase(meta);
  }

  // -------------------------------------------------------------------------
  // EndTxn

  /**
   * EndTxn. `clientTransactionVersion` 2 (EndTxn v5+) ends the transaction
   * under epoch + 1 — a new producer id at epoch 0 when the epoch is
   * exhausted — and answers that identity, as Kafka's TV2 does; the markers
   * carry the bumped epoch. A retry of the same result is recognised by the
   * epoch it was sent with (one below the current one under TV2). Under TV2
   * an abort with no transaction open ends an empty one the same way.
   */
  async endTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    commit: boolean,
    clientTransactionVersion = 0,
  ): Promise<ProducerIdAndEpoch> {
    const fail = (errorCode: number): ProducerIdAndEpoch => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (!this.isCoordinatorFor(transactionalId)) return fail(ErrorCode.NOT_COORDINATOR);
    const meta = this.txns.get(transactionalId);
    if (meta === undefined) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const verdict = judgeEndTxn(meta, producerId, producerEpoch, commit, clientTransactionVersion);
    if (!verdict.end) {
      return verdict.errorCode === ErrorCode.NONE
        ? { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch }
        : fail(verdict.errorCode);
    }
    let target: TxnTransitMetadata | undefined;
    const error = await this.writer.transition(
      meta,
      () => (target = meta.prepareAbortOrCommit(commit, clientTransactionVersion, () => this.options.producerIds.next(), Date.now())),
    );
    if (error !== ErrorCode.NONE) return fail(error);
    maybeCrash(commit ? 'crash-after-prepare-commit' : 'crash-after-prepare-abort', this.options.log);
    if (!commit)
      this.options.log(
        `transaction ${meta.transactionalId} (producer ${meta.producerId}) aborted by the producer: aborting ${describePartitions(meta.partitions)}`,
      );
    this.completeInBackground(meta);
    // Under TV2 the producer continues one epoch on, or under a new producer id after an overflow.
    return target!.nextProducerId >= 0n
      ? { errorCode: ErrorCode.NONE, producerId: target!.nextProducerId, producerEpoch: target!.nextProducerEpoch }
      : { errorCode: ErrorCode.NONE, producerId: target!.producerId, producerEpoch: target!.producerEpoch };
  }

  // -------------------------------------------------------------------------
  // Transactional id expiration

  /** Forgets the transactional ids that expired at `now` (transactional-id-expiration.ts); resolves to them. */
  async removeExpiredTransactionalIds(now = Date.now()): Promise<string[]> {
    if (this.stopped) return [];
    const { cluster, txnLog, transactionalIdExpirationMs, log } = this.options;
    return removeExpiredTransactionalIds(
      { txns: this.txns, cluster, txnLog, transactionalIdExpirationMs, log, writing: (metas, write) => this.writer.writing(metas, write) },
      now,
    );
  }

  // -------------------------------------------------------------------------
  // Internals

  /**
   * Writes PREPARE_ABORT and sends the ABORT markers in the background. The
   * abort (a timeout or fencing) happens under a bumped epoch, so the producer
   * that owned the transaction is fenced.
   */
  private async prepareAbort(meta: TransactionMetadata, why: string): Promise<number> {
    // At the epoch cap the fenced producer's EndTxn is told apart by endTransaction's isFenceAtLastEpoch.
    const error = await this.writer.transition(meta, () => meta.prepareFenceProducerEpoch(Date.now()));
    if (error !== ErrorCode.NONE) return error;
    this.options.log(`transaction ${meta.transactionalId} (producer ${meta.producerId}) ${why}: aborting ${describePartitions(meta.partitions)}`);
    maybeCrash('crash-after-prepare-abort', this.options.log);
    this.completeInBackground(meta);
    return ErrorCode.NONE;
  }

  /** Sends the markers of a PREPARE_* transaction until acknowledged, then writes COMPLETE_*. */
  private completeInBackground(meta: TransactionMetadata): void {
    const run = this.complete(meta).catch((error: Error) => {
      if (!this.stopped) this.options.log(`completing transaction ${meta.transactionalId} failed: ${error.message}`);
    });
    this.completing.set(meta.transactionalId, run);
    void run.finally(() => {
      if (this.completing.get(meta.transactionalId) === run) this.completing.delete(meta.transactionalId);
    });
  }

  /**
   * When this producer's (same id and epoch) previous transaction is still
   * completing, waits for that — at most COMPLETION_WAIT_MS — so that the next
   * transaction's first add usually succeeds instead of getting
   * CONCURRENT_TRANSACTIONS. A fenced producer (older epoch) does not wait.
   */
  private async awaitCompletion(transactionalId: string, producerId: bigint, producerEpoch: number): Promise<void> {
    const meta = this.txns.get(transactionalId);
    const completion = this.completing.get(transactionalId);
    if (completion === undefined || meta === undefined) return;
    const overflowed = meta.nextProducerId === producerId && producerEpoch === meta.nextProducerEpoch;
    if (!overflowed && (meta.producerId !== producerId || meta.producerEpoch !== producerEpoch)) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([completion, new Promise<void>((resolve) => (timer = setTimeout(resolve, COMPLETION_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private async complete(meta: TransactionMetadata): Promise<void> {
    const commit = meta.state === TxnState.PREPARE_COMMIT;
    await this.options.markers.send(
      { producerId: meta.producerId, producerEpoch: meta.producerEpoch, commit, coordinatorEpoch: COORDINATOR_EPOCH },
      meta.partitions,
    );
    maybeCrash('crash-before-complete', this.options.log);
    for (;;) {
      if (this.stopped) return;
      const error = await this.writer.transition(meta, () => meta.prepareComplete(Date.now()));
      if (error === ErrorCode.NONE) break;
      // A failed write is retried; a refused transition (logged by transition()) would be refused again.
      if (error !== ErrorCode.COORDINATOR_NOT_AVAILABLE) throw new Error(`${txnStateName(meta.state)} cannot complete: ${errorCodeName(error)}`);
      await new Promise((resolve) => setTimeout(resolve, this.options.retryBackoffMs));
    }
    if (commit) this.options.metrics.transactions.committed++;
    else this.options.metrics.transactions.aborted++;
  }

  private abortTimedOut(): void {
    const now = Date.now();
    for (const meta of this.txns.values()) {
      if (meta.state !== TxnState.ONGOING || meta.pending || meta.startTimestamp < 0 || isTwoPhase(meta)) continue;
      if (now < meta.startTimestamp + meta.timeoutMs) continue;
      this.options.metrics.transactions.timedOut++;
      void this.prepareAbort(meta, `timed out after ${meta.timeoutMs} ms`).then((error) => {
        if (error !== ErrorCode.NONE) this.options.log(`aborting timed-out ${meta.transactionalId} failed: ${errorCodeName(error)}`);
      });
    }
  }
}
