/**
 * The transaction coordinator for the transactional ids whose
 * `__transaction_state` partition this node leads: both of Kafka's transaction
 * protocols — the classic one (transaction version 1, as Kafka 3.x clients
 * use it) and Transactions V2 (KIP-890 part 2: every EndTxn v5+ ends the
 * transaction with an epoch bump, so producer id + epoch name one
 * transaction; partitions join implicitly through their leaders) — and
 * KIP-939's two-phase commit (InitProducerId v6: Enable2Pc, KeepPreparedTxn).
 *
 * Every state change is written to `__transaction_state` (fsynced as the
 * flush settings say) before it takes effect or is answered. PREPARE_* is written before any marker is
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
import {
  TWO_PHASE_TIMEOUT_MS,
  TxnState,
  clonePartitions,
  isTwoPhase,
  describePartitions,
  isExpirationAllowed,
  isPrepare,
  txnStateName,
  type TransactionMetadata,
  type TxnStateCode,
} from './transaction-metadata.js';

/** The coordinator epoch written in markers: leadership of a partition never moves in a static cluster. */
const COORDINATOR_EPOCH = 0;
const MAX_EPOCH = 32767;
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

/** What an expired id looked like when its tombstone was written: it is removed only if still so. */
interface ExpiringId {
  meta: TransactionMetadata;
  producerId: bigint;
  producerEpoch: number;
  state: TxnStateCode;
  lastUpdateTimestamp: number;
}

/** KIP-939 flags of InitProducerId v6. */
export interface TwoPhaseOptions {
  enable2Pc: boolean;
  keepPreparedTxn: boolean;
}

/**
 * A transaction kept by InitProducerId(KeepPreparedTxn) for a staged recovery
 * producer (KIP-939): prepared, so it may only be committed or aborted.
 */
function isKept(meta: TransactionMetadata): boolean {
  return meta.state === TxnState.ONGOING && meta.nextProducerId >= 0n;
}

/**
 * The answer to an add or a transactional write for a kept transaction. The
 * Java client holds a kept transaction in PREPARED_TRANSACTION, where only
 * commit or abort may follow (TransactionManager.java); the broker enforces it:
 * the staged recovery identity may not add or write (INVALID_TXN_STATE) —
 * after an exhausted epoch its producer id differs from the one the markers
 * carry, so such a write would never be resolved and would pin the last
 * stable offset — and the producer the keep replaced is fenced.
 */
function keptTransactionError(meta: TransactionMetadata, producerId: bigint, producerEpoch: number): number {
  if (producerId === meta.nextProducerId && producerEpoch === meta.nextProducerEpoch) return ErrorCode.INVALID_TXN_STATE;
  if (producerId === meta.producerId || producerId === meta.nextProducerId) return ErrorCode.PRODUCER_FENCED;
  return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
}

/** The identity that may act on a transactional id now: a staged recovery producer (KIP-939) if any, else the current one. */
function ownerOf(meta: TransactionMetadata): { producerId: bigint; producerEpoch: number } {
  if (meta.state === TxnState.ONGOING && meta.nextProducerId >= 0n) return { producerId: meta.nextProducerId, producerEpoch: meta.nextProducerEpoch };
  return { producerId: meta.producerId, producerEpoch: meta.producerEpoch };
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
  /** The state write in flight per transactional id (while its metadata is `pending`). */
  private readonly writes = new Map<string, Promise<unknown>>();

  constructor(private readonly o: TransactionCoordinatorOptions) {}

  /** Replays `__transaction_state` and resumes every PREPARE_* transaction's markers. */
  recover(): void {
    for (const [id, meta] of this.o.txnLog.replay()) {
      this.txns.set(id, meta);
      this.o.producerIds.reserveUpTo(meta.producerId);
      // A new producer id handed out at PREPARE_* after an epoch overflow is taken too.
      if (meta.nextProducerId >= 0n) this.o.producerIds.reserveUpTo(meta.nextProducerId);
    }
    const prepared = [...this.txns.values()].filter((m) => isPrepare(m.state));
    this.o.log(
      `transaction coordinator loaded ${this.txns.size} transactional ids` +
        (prepared.length > 0 ? `; resuming markers for ${prepared.map((m) => `${m.transactionalId} (${txnStateName(m.state)})`).join(', ')}` : ''),
    );
    for (const meta of prepared) this.completeInBackground(meta);
  }

  /** Starts the timers that abort transactions open longer than their timeout and expire idle transactional ids. */
  start(): void {
    this.timer = setInterval(() => this.abortTimedOut(), this.o.abortCheckIntervalMs);
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
        if (expired.length > 0) this.o.log(`expired ${expired.length} transactional ids idle for ${this.o.transactionalIdExpirationMs} ms or more: ${expired.join(', ')}`);
      });
    }, this.o.removeExpiredTransactionalIdsIntervalMs);
    this.expirationTimer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.expirationTimer !== null) clearInterval(this.expirationTimer);
    this.expirationTimer = null;
    this.o.markers.stop();
    await Promise.allSettled([...this.completing.values()]);
  }

  isCoordinatorFor(transactionalId: string): boolean {
    return this.o.cluster.leaderOf(TRANSACTION_STATE_TOPIC, this.o.cluster.transactionPartitionFor(transactionalId)) === this.o.cluster.nodeId;
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
    const result = (errorCode: number, producerId = -1n, producerEpoch = -1, ongoing?: { producerId: bigint; producerEpoch: number }): InitProducerIdResult => ({
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
      return result(ErrorCode.NONE, this.o.producerIds.next(), 0);
    }
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (!this.isCoordinatorFor(transactionalId)) return fail(ErrorCode.NOT_COORDINATOR);
    // As Kafka: 2PC refused by the broker setting is an authorization failure (a client cannot probe it otherwise).
    if (twoPhase.enable2Pc && !this.o.twoPhaseCommitEnable) return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (twoPhase.keepPreparedTxn && !twoPhase.enable2Pc) return fail(ErrorCode.INVALID_REQUEST);
    // A 2PC transaction is never aborted by the timeout (KIP-939): Kafka stores Int.MaxValue as its timeout.
    if (!twoPhase.enable2Pc && (timeoutMs <= 0 || timeoutMs > this.o.maxTimeoutMs)) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const effectiveTimeoutMs = twoPhase.enable2Pc ? TWO_PHASE_TIMEOUT_MS : timeoutMs;
    const now = Date.now();
    let meta = this.txns.get(transactionalId);
    if (meta === undefined) {
      meta = {
        transactionalId,
        producerId: this.o.producerIds.next(),
        producerEpoch: -1,
        timeoutMs: effectiveTimeoutMs,
        state: TxnState.EMPTY,
        partitions: new Map(),
        shareGroups: new Set(),
        startTimestamp: -1,
        lastUpdateTimestamp: now,
        pending: false,
        clientTransactionVersion: 0,
        nextProducerId: -1n,
        nextProducerEpoch: -1,
        previousProducerId: -1n,
        lastProducerEpoch: -1,
      };
      this.txns.set(transactionalId, meta);
    }
    if (meta.pending || isPrepare(meta.state)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const owner = ownerOf(meta);
    // As Kafka's prepareInitProducerIdTransit (isValidProducerId): metadata just created (epoch -1) never
    // fences — a producer whose transactional id expired, recovering with its old id and epoch, gets a new one.
    const justCreated = meta.producerEpoch === -1;
    if (this.isInitRetry(meta, expected)) {
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
      const recovery = exhausted ? { producerId: this.o.producerIds.next(), producerEpoch: 0 } : { producerId: owner.producerId, producerEpoch: owner.producerEpoch + 1 };
      const error = await this.transition(meta, {
        nextProducerId: recovery.producerId,
        nextProducerEpoch: recovery.producerEpoch,
        timeoutMs: effectiveTimeoutMs,
        lastProducerEpoch: -1,
      });
      if (error !== ErrorCode.NONE) return fail(error);
      this.o.log(
        `transaction ${transactionalId} kept for a recovery producer (producer ${recovery.producerId} epoch ${recovery.producerEpoch}): ${describePartitions(meta.partitions)}`,
      );
      return result(ErrorCode.NONE, recovery.producerId, recovery.producerEpoch, ongoing);
    }
    if (meta.state === TxnState.ONGOING) {
      // Fence the current producer: abort its transaction under a bumped epoch.
      // The caller retries on CONCURRENT_TRANSACTIONS and gets a newer epoch once the abort completes.
      this.o.metrics.transactions.fenced++;
      const error = await this.prepareAbort(meta, 'fenced by a new InitProducerId');
      return fail(error === ErrorCode.NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : error);
    }
    let producerId = meta.producerId;
    let producerEpoch = meta.producerEpoch + 1;
    const rotated = producerEpoch >= MAX_EPOCH;
    if (rotated) {
      producerId = this.o.producerIds.next();
      producerEpoch = 0;
    }
    const error = await this.transition(meta, {
      producerId,
      producerEpoch,
      // Kafka's prepareIncrementProducerEpoch / prepareProducerIdRotation: a producer that named its epoch may
      // resend this request; one that did not (a new producer) fences every earlier epoch.
      lastProducerEpoch: expected.producerId >= 0n ? meta.producerEpoch : -1,
      ...(rotated ? { previousProducerId: meta.producerId } : {}),
      timeoutMs: effectiveTimeoutMs,
      state: TxnState.EMPTY,
      partitions: new Map(),
      shareGroups: new Set(),
      startTimestamp: -1,
      nextProducerId: -1n,
      nextProducerEpoch: -1,
    });
    if (error !== ErrorCode.NONE) return fail(error);
    return result(ErrorCode.NONE, producerId, producerEpoch);
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
    await this.awaitWrite(transactionalId);
    const meta = this.txns.get(transactionalId);
    const error = this.checkProducer(transactionalId, meta, producerId, producerEpoch);
    if (error !== ErrorCode.NONE) return error;
    if (isPrepare(meta!.state)) return ErrorCode.CONCURRENT_TRANSACTIONS;
    const ongoing = meta!.state === TxnState.ONGOING;
    const next = ongoing ? clonePartitions(meta!.partitions) : new Map<string, Set<number>>();
    let added = false;
    for (const { topic, partition } of partitions) {
      let set = next.get(topic);
      if (set === undefined) next.set(topic, (set = new Set()));
      if (!set.has(partition)) {
        set.add(partition);
        added = true;
      }
    }
    const groups = ongoing ? new Set(meta!.shareGroups) : new Set<string>();
    if (shareGroup !== undefined && !groups.has(shareGroup)) {
      groups.add(shareGroup);
      added = true;
    }
    const tv = Math.max(meta!.clientTransactionVersion, clientTransactionVersion);
    if (ongoing && !added && tv === meta!.clientTransactionVersion) return ErrorCode.NONE;
    return this.transition(meta!, {
      state: TxnState.ONGOING,
      partitions: next,
      shareGroups: groups,
      startTimestamp: ongoing ? meta!.startTimestamp : Date.now(),
      clientTransactionVersion: tv,
    });
  }

  /**
   * Whether a partition is in the producer's ongoing transaction (what a
   * partition leader asks before accepting a transactional write, KIP-890).
   */
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, shareGroup?: string): number {
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    const meta = this.txns.get(transactionalId);
    if (meta === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (isKept(meta)) return keptTransactionError(meta, producerId, producerEpoch);
    const owner = ownerOf(meta);
    if (owner.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (producerEpoch < owner.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (producerEpoch !== owner.producerEpoch) return ErrorCode.INVALID_PRODUCER_EPOCH;
    if (meta.state !== TxnState.ONGOING || !meta.partitions.get(topic)?.has(partition)) return ErrorCode.INVALID_TXN_STATE;
    if (shareGroup !== undefined && !meta.shareGroups.has(shareGroup)) return ErrorCode.INVALID_TXN_STATE;
    return ErrorCode.NONE;
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
    const state = meta.state;
    const owner = ownerOf(meta);
    const tv2 = meta.clientTransactionVersion >= 2;
    // At the highest epoch without a producer id to move to, the coordinator aborted (fenced, timed out):
    // a TV2 EndTxn at the last epoch always moves to a new producer id, so this is never a client's retry.
    const isFenceAtLastEpoch = meta.producerEpoch === MAX_EPOCH && meta.nextProducerId < 0n;
    const retryOnEpochBump = tv2 && meta.producerId === producerId && meta.producerEpoch === producerEpoch + 1 && !isFenceAtLastEpoch;
    const retryOnOverflow = tv2 && meta.previousProducerId === producerId && producerEpoch === MAX_EPOCH - 1 && meta.producerEpoch === 0;
    if (owner.producerId !== producerId && !retryOnOverflow && !(isPrepare(state) && meta.nextProducerId === producerId)) {
      return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    }
    if (isPrepare(state) && meta.nextProducerId === producerId) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const current = producerId === meta.producerId && producerEpoch === meta.producerEpoch;
    // Under TV2 every end of a transaction moves the producer to a new epoch, an empty one's too, so that a
    // producer id + epoch (a PreparedTxnState) never names the transaction after it. An abort at the current
    // epoch with nothing open (EMPTY, or COMPLETE_* of the last transaction) therefore ends an empty transaction
    // under epoch + 1 (Kafka's TV2 since KAFKA-14563: PrepareAbort with no partitions); a commit there has nothing
    // to commit and stays INVALID_TXN_STATE below, as in Kafka, whose client sends no EndTxn for an empty one.
    const emptyAbort =
      clientTransactionVersion >= 2 && !commit && current && (state === TxnState.EMPTY || state === TxnState.COMPLETE_COMMIT || state === TxnState.COMPLETE_ABORT);
    let validEpoch: boolean;
    if (!tv2 || state === TxnState.ONGOING) validEpoch = producerEpoch === owner.producerEpoch;
    else if (isPrepare(state)) {
      // The epoch this transaction's EndTxn handed out: the producer's next request, while the markers of this
      // one are still being written. As Kafka (KAFKA-18464): CONCURRENT_TRANSACTIONS, retried, not fenced.
      if (current) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      validEpoch = retryOnEpochBump;
    } else if (state === TxnState.COMPLETE_COMMIT || state === TxnState.COMPLETE_ABORT) {
      validEpoch = retryOnEpochBump || retryOnOverflow || emptyAbort;
      // The epoch the last EndTxn handed out, with no transaction begun under it, and no empty abort (a commit,
      // or a classic EndTxn): kipgen answers INVALID_TXN_STATE, as under TV1, never PRODUCER_FENCED, so that a
      // producer whose add request may or may not have arrived is told there is no transaction, not fenced.
      if (!validEpoch && current) return fail(ErrorCode.INVALID_TXN_STATE);
    } else validEpoch = producerEpoch === meta.producerEpoch;
    if (!validEpoch) return fail(ErrorCode.PRODUCER_FENCED);
    if (meta.pending) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const same = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
    const samePrepare = commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT;
    // One end-of-transaction path for an open transaction and an empty abort: the same bump, overflow and answer.
    if (state === TxnState.ONGOING || emptyAbort) {
      const bump = clientTransactionVersion >= 2;
      let epoch = owner.producerEpoch;
      let nextProducerId = -1n;
      let nextProducerEpoch = -1;
      if (owner.producerId !== meta.producerId) {
        // A recovery producer with a new producer id (KeepPreparedTxn at an exhausted epoch): the markers
        // carry the id the transaction's data was written with, at the highest epoch, and the producer
        // continues under its own id (one epoch on under TV2) once COMPLETE_* is written.
        epoch = MAX_EPOCH;
        nextProducerId = owner.producerId;
        nextProducerEpoch = owner.producerEpoch + (bump ? 1 : 0);
      } else if (bump) {
        if (owner.producerEpoch >= MAX_EPOCH - 1) {
          nextProducerId = this.o.producerIds.next();
          nextProducerEpoch = 0;
        }
        epoch = owner.producerEpoch + 1;
      }
      const error = await this.transition(meta, {
        state: commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT,
        producerId: meta.producerId,
        producerEpoch: epoch,
        nextProducerId,
        nextProducerEpoch,
        // As Kafka's prepareAbortOrCommit: a TV2 end records the epoch it bumped from; a classic one bumps nothing.
        ...(bump ? { lastProducerEpoch: owner.producerId === meta.producerId ? owner.producerEpoch : -1 } : {}),
        // As Kafka's prepareAbortOrCommit: the version of this EndTxn decides how the transaction ends
        // and how a retry of it is recognised — a classic client may take over an id a TV2 one used.
        clientTransactionVersion: bump ? 2 : clientTransactionVersion,
      });
      if (error !== ErrorCode.NONE) return fail(error);
      maybeCrash(commit ? 'crash-after-prepare-commit' : 'crash-after-prepare-abort', this.o.log);
      if (!commit) this.o.log(`transaction ${meta.transactionalId} (producer ${meta.producerId}) aborted by the producer: aborting ${describePartitions(meta.partitions)}`);
      this.completeInBackground(meta);
      return nextProducerId >= 0n
        ? { errorCode: ErrorCode.NONE, producerId: nextProducerId, producerEpoch: nextProducerEpoch }
        : { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: epoch };
    }
    // DESIGN §5.6: the same result again on a finished transaction of this epoch is an idempotent success.
    if (state === same) return { errorCode: ErrorCode.NONE, producerId: meta.producerId, producerEpoch: meta.producerEpoch };
    if (state === samePrepare) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    return fail(ErrorCode.INVALID_TXN_STATE);
  }

  // -------------------------------------------------------------------------
  // Transactional id expiration

  /**
   * Forgets the transactional ids that expired at `now`; resolves to them.
   * Kafka's TransactionStateManager.removeExpiredTransactionalIds: per
   * `__transaction_state` partition, the expired ids are marked pending (its
   * prepareDead: no bump, the state is kept), one batch of tombstones is
   * appended, and once it is written each id that was not changed meanwhile is
   * removed from memory (its removeFromCacheCallback). While the tombstone is
   * written, requests for the id are answered as for any pending state write.
   */
  async removeExpiredTransactionalIds(now = Date.now()): Promise<string[]> {
    if (this.stopped) return [];
    const byPartition = this.groupByPartition(this.collectExpiredTransactionalIds(now));
    const removed = await Promise.all([...byPartition].map(([partition, metas]) => this.expirePartition(partition, metas, now)));
    return removed.flat();
  }

  /**
   * The ids with no state write in flight whose state allows expiration and
   * whose last update is at least transactionalIdExpirationMs before `now`:
   * Kafka's shouldExpire compares `txnLastUpdateTimestamp <= now - transactionalIdExpirationMs`,
   * so an id exactly that old expires.
   */
  private collectExpiredTransactionalIds(now: number): TransactionMetadata[] {
    const cutoff = now - this.o.transactionalIdExpirationMs;
    return [...this.txns.values()].filter((meta) => !meta.pending && isExpirationAllowed(meta.state) && meta.lastUpdateTimestamp <= cutoff);
  }

  private groupByPartition(metas: TransactionMetadata[]): Map<number, TransactionMetadata[]> {
    const groups = new Map<number, TransactionMetadata[]>();
    for (const meta of metas) {
      const partition = this.o.cluster.transactionPartitionFor(meta.transactionalId);
      const group = groups.get(partition);
      if (group === undefined) groups.set(partition, [meta]);
      else group.push(meta);
    }
    return groups;
  }

  /** Writes the tombstones of one partition's expired ids, then removes those still as they were; resolves to the removed ids. */
  private async expirePartition(partition: number, metas: TransactionMetadata[], now: number): Promise<string[]> {
    const expiring: ExpiringId[] = metas.map((meta) => ({ meta, producerId: meta.producerId, producerEpoch: meta.producerEpoch, state: meta.state, lastUpdateTimestamp: meta.lastUpdateTimestamp }));
    const ids = metas.map((meta) => meta.transactionalId);
    try {
      await this.whilePending(metas, this.o.txnLog.writeTombstones(partition, ids, now));
    } catch (error) {
      // As Kafka when the append fails: the ids stay, no longer pending, and the next pass tries again.
      this.o.log(`writing tombstones for expired transactional ids ${ids.join(', ')} failed: ${(error as Error).message}`);
      return [];
    }
    return expiring.filter((entry) => this.removeIfUnchanged(entry)).map((entry) => entry.meta.transactionalId);
  }

  /**
   * Kafka removes an expired id from its cache only if it is still pending Dead
   * with the producer epoch it had when the tombstone was prepared; kipgen's
   * analogue: still the same metadata, with the identity, state and last update
   * it had. A tombstone for an id changed meanwhile is then superseded as soon
   * as that id's next state is written; until then a restart would forget it.
   */
  private removeIfUnchanged(entry: ExpiringId): boolean {
    const meta = entry.meta;
    const unchanged =
      this.txns.get(meta.transactionalId) === meta &&
      meta.producerId === entry.producerId &&
      meta.producerEpoch === entry.producerEpoch &&
      meta.state === entry.state &&
      meta.lastUpdateTimestamp === entry.lastUpdateTimestamp;
    if (!unchanged) {
      this.o.log(`expired transactional id ${meta.transactionalId} changed while its tombstone was written: kept`);
      return false;
    }
    this.txns.delete(meta.transactionalId);
    return true;
  }

  // -------------------------------------------------------------------------
  // Internals

  /**
   * Kafka's retry of a successful epoch bump (TransactionMetadata.prepareIncrementProducerEpoch,
   * with TransactionCoordinator.isValidProducerId): the expected epoch is lastProducerEpoch, under
   * the current producer id or — when that bump moved to a new one at an exhausted epoch — the one before.
   */
  private isInitRetry(meta: TransactionMetadata, expected: { producerId: bigint; producerEpoch: number }): boolean {
    if (expected.producerId < 0n || meta.lastProducerEpoch < 0 || expected.producerEpoch !== meta.lastProducerEpoch) return false;
    if (meta.state !== TxnState.EMPTY && meta.state !== TxnState.COMPLETE_COMMIT && meta.state !== TxnState.COMPLETE_ABORT) return false;
    if (expected.producerId === meta.producerId) return expected.producerEpoch !== meta.producerEpoch;
    return expected.producerId === meta.previousProducerId && expected.producerEpoch >= MAX_EPOCH - 1;
  }

  private checkProducer(transactionalId: string, meta: TransactionMetadata | undefined, producerId: bigint, producerEpoch: number): number {
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    if (meta === undefined) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    // After an epoch overflow the new producer id is handed out at PREPARE_*; it may act once COMPLETE_* is written.
    if (isPrepare(meta.state) && meta.nextProducerId === producerId && producerEpoch === meta.nextProducerEpoch) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (isKept(meta)) return keptTransactionError(meta, producerId, producerEpoch);
    const owner = ownerOf(meta);
    if (owner.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (owner.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (meta.pending) return ErrorCode.CONCURRENT_TRANSACTIONS;
    return ErrorCode.NONE;
  }

  /**
   * Writes PREPARE_ABORT and sends the ABORT markers in the background. The
   * abort (a timeout or fencing) happens under a bumped epoch, so the producer
   * that owned the transaction is fenced.
   */
  private async prepareAbort(meta: TransactionMetadata, why: string): Promise<number> {
    const owner = ownerOf(meta);
    // Under TV2 an EndTxn with epoch E is recognised as a retry when the state holds E + 1, so an abort the
    // coordinator starts (fencing, timeout) bumps twice, as Kafka's (prepareFenceProducerEpoch, then
    // prepareAbortOrCommit's TV2 bump): the fenced producer's EndTxn is then PRODUCER_FENCED, not a
    // "retry" that hands it the epoch the abort ran under. At the cap see isFenceAtLastEpoch.
    const step = meta.clientTransactionVersion >= 2 ? 2 : 1;
    // The markers carry the transaction's producer id; a recovery producer under a new id (KeepPreparedTxn
    // at an exhausted epoch) has an epoch of its own, so they take the highest epoch of the old id.
    const epoch = owner.producerId !== meta.producerId ? MAX_EPOCH : Math.min(owner.producerEpoch + step, MAX_EPOCH);
    const error = await this.transition(meta, { state: TxnState.PREPARE_ABORT, producerEpoch: epoch, nextProducerId: -1n, nextProducerEpoch: -1, lastProducerEpoch: -1 });
    if (error !== ErrorCode.NONE) return error;
    this.o.log(`transaction ${meta.transactionalId} (producer ${meta.producerId}) ${why}: aborting ${describePartitions(meta.partitions)}`);
    maybeCrash('crash-after-prepare-abort', this.o.log);
    this.completeInBackground(meta);
    return ErrorCode.NONE;
  }

  /** Sends the markers of a PREPARE_* transaction until acknowledged, then writes COMPLETE_*. */
  private completeInBackground(meta: TransactionMetadata): void {
    const run = this.complete(meta).catch((error: Error) => {
      if (!this.stopped) this.o.log(`completing transaction ${meta.transactionalId} failed: ${error.message}`);
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

  /**
   * Adds of one transaction may arrive together — under TV2 a partition
   * leader's implicit add races the producer's AddShareAcksToTxn — so an add
   * waits for a state write in flight for the same id (a few milliseconds)
   * instead of answering CONCURRENT_TRANSACTIONS, which costs the client a
   * retry and its backoff.
   */
  private async awaitWrite(transactionalId: string): Promise<void> {
    for (let i = 0; i < 8; i++) {
      const write = this.writes.get(transactionalId);
      if (write === undefined) return;
      await write.catch(() => {});
    }
  }

  private async complete(meta: TransactionMetadata): Promise<void> {
    const commit = meta.state === TxnState.PREPARE_COMMIT;
    await this.o.markers.send(
      { producerId: meta.producerId, producerEpoch: meta.producerEpoch, commit, coordinatorEpoch: COORDINATOR_EPOCH },
      meta.partitions,
    );
    maybeCrash('crash-before-complete', this.o.log);
    const target: TxnStateCode = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
    for (;;) {
      if (this.stopped) return;
      // After an epoch overflow the producer continues under the new producer id handed out at PREPARE_*.
      const overflow = meta.nextProducerId >= 0n;
      const error = await this.transition(meta, {
        state: target,
        partitions: new Map(),
        shareGroups: new Set(),
        startTimestamp: -1,
        ...(overflow ? { producerId: meta.nextProducerId, producerEpoch: meta.nextProducerEpoch, previousProducerId: meta.producerId } : {}),
        nextProducerId: -1n,
        nextProducerEpoch: -1,
      });
      if (error === ErrorCode.NONE) break;
      await new Promise((resolve) => setTimeout(resolve, this.o.retryBackoffMs));
    }
    if (commit) this.o.metrics.transactions.committed++;
    else this.o.metrics.transactions.aborted++;
  }

  /** Writes the changed state to `__transaction_state`, then applies it in memory. */
  private async transition(meta: TransactionMetadata, change: Partial<TransactionMetadata>): Promise<number> {
    const next: TransactionMetadata = { ...meta, ...change, lastUpdateTimestamp: Date.now(), pending: false };
    try {
      await this.whilePending([meta], this.o.txnLog.write(next));
    } catch (error) {
      this.o.log(`writing ${txnStateName(next.state)} for ${meta.transactionalId} failed: ${(error as Error).message}`);
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
    Object.assign(meta, next);
    return ErrorCode.NONE;
  }

  /**
   * Awaits a write to `__transaction_state` with `metas` pending meanwhile (Kafka's
   * pendingState): their requests get CONCURRENT_TRANSACTIONS or wait for the
   * write (`writes`). Pending ends whether the write succeeded or not.
   */
  private async whilePending(metas: TransactionMetadata[], write: Promise<void>): Promise<void> {
    for (const meta of metas) {
      meta.pending = true;
      this.writes.set(meta.transactionalId, write);
    }
    try {
      await write;
    } finally {
      for (const meta of metas) {
        meta.pending = false;
        if (this.writes.get(meta.transactionalId) === write) this.writes.delete(meta.transactionalId);
      }
    }
  }

  private abortTimedOut(): void {
    const now = Date.now();
    for (const meta of this.txns.values()) {
      if (meta.state !== TxnState.ONGOING || meta.pending || meta.startTimestamp < 0 || isTwoPhase(meta)) continue;
      if (now < meta.startTimestamp + meta.timeoutMs) continue;
      this.o.metrics.transactions.timedOut++;
      void this.prepareAbort(meta, `timed out after ${meta.timeoutMs} ms`).then((error) => {
        if (error !== ErrorCode.NONE) this.o.log(`aborting timed-out ${meta.transactionalId} failed: ${errorCodeName(error)}`);
      });
    }
  }
}
