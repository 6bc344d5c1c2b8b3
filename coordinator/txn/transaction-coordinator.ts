/**
 * The transaction coordinator for the transactional ids whose
 * `__transaction_state` partition this node leads: Kafka's classic
 * transaction protocol (transaction version 1, as Kafka 3.x clients use it).
 *
 * Every state change is written to `__transaction_state` and fsynced before it
 * takes effect or is answered. PREPARE_* is written before any marker is
 * sent, COMPLETE_* only after every partition leader acknowledged its marker,
 * so after a crash the replayed PREPARE_* resumes sending (KIP-1289 case 4).
 * A transaction open past its timeout, or whose producer is fenced by a new
 * InitProducerId, is aborted under a bumped epoch, so the old producer gets
 * PRODUCER_FENCED from then on (KIP-1289 case 5).
 */
import { TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode, errorCodeName } from '../errors.js';
import { maybeCrash } from '../faults.js';
import type { Metrics } from '../metrics.js';
import type { MarkerSender } from './marker-sender.js';
import type { ProducerIdManager } from './producer-id-manager.js';
import type { TransactionLog } from './transaction-log.js';
import {
  TxnState,
  clonePartitions,
  describePartitions,
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
  retryBackoffMs: number;
  metrics: Metrics;
  log: (line: string) => void;
}

export class TransactionCoordinator {
  private readonly txns = new Map<string, TransactionMetadata>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The background completion (markers then COMPLETE_*) in progress per transactional id; awaited on close. */
  private readonly completing = new Map<string, Promise<void>>();

  constructor(private readonly o: TransactionCoordinatorOptions) {}

  /** Replays `__transaction_state` and resumes every PREPARE_* transaction's markers. */
  recover(): void {
    for (const [id, meta] of this.o.txnLog.replay()) {
      this.txns.set(id, meta);
      this.o.producerIds.reserveUpTo(meta.producerId);
    }
    const prepared = [...this.txns.values()].filter((m) => isPrepare(m.state));
    this.o.log(
      `transaction coordinator loaded ${this.txns.size} transactional ids` +
        (prepared.length > 0 ? `; resuming markers for ${prepared.map((m) => `${m.transactionalId} (${txnStateName(m.state)})`).join(', ')}` : ''),
    );
    for (const meta of prepared) this.completeInBackground(meta);
  }

  /** Starts the timer that aborts transactions open longer than their timeout. */
  start(): void {
    this.timer = setInterval(() => this.abortTimedOut(), this.o.abortCheckIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
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
  ): Promise<ProducerIdAndEpoch> {
    const fail = (errorCode: number): ProducerIdAndEpoch => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    if (transactionalId === null) {
      // An idempotent producer: a fresh id each time (sequence state lives in the partitions).
      return { errorCode: ErrorCode.NONE, producerId: this.o.producerIds.next(), producerEpoch: 0 };
    }
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (!this.isCoordinatorFor(transactionalId)) return fail(ErrorCode.NOT_COORDINATOR);
    if (timeoutMs <= 0 || timeoutMs > this.o.maxTimeoutMs) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const now = Date.now();
    let meta = this.txns.get(transactionalId);
    if (meta === undefined) {
      meta = {
        transactionalId,
        producerId: this.o.producerIds.next(),
        producerEpoch: -1,
        timeoutMs,
        state: TxnState.EMPTY,
        partitions: new Map(),
        startTimestamp: -1,
        lastUpdateTimestamp: now,
        pending: false,
      };
      this.txns.set(transactionalId, meta);
    }
    if (meta.pending || isPrepare(meta.state)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    if (expected.producerId >= 0n && (expected.producerId !== meta.producerId || expected.producerEpoch !== meta.producerEpoch)) {
      return fail(ErrorCode.PRODUCER_FENCED);
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
    if (producerEpoch >= MAX_EPOCH) {
      producerId = this.o.producerIds.next();
      producerEpoch = 0;
    }
    const error = await this.transition(meta, {
      producerId,
      producerEpoch,
      timeoutMs,
      state: TxnState.EMPTY,
      partitions: new Map(),
      startTimestamp: -1,
    });
    if (error !== ErrorCode.NONE) return fail(error);
    return { errorCode: ErrorCode.NONE, producerId, producerEpoch };
  }

  // -------------------------------------------------------------------------
  // AddPartitionsToTxn, AddOffsetsToTxn, AddShareAcksToTxn

  /**
   * Adds partitions to the producer's transaction (starting it if needed).
   * Returns one error code for all of them: the caller reports it per partition.
   */
  async addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: TopicPartitionRef[]): Promise<number> {
    await this.awaitCompletion(transactionalId, producerId, producerEpoch);
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
    if (ongoing && !added) return ErrorCode.NONE;
    return this.transition(meta!, {
      state: TxnState.ONGOING,
      partitions: next,
      startTimestamp: ongoing ? meta!.startTimestamp : Date.now(),
    });
  }

  /**
   * Whether a partition is in the producer's ongoing transaction (what a
   * partition leader asks before accepting a transactional write, KIP-890).
   */
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number): number {
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    const meta = this.txns.get(transactionalId);
    if (meta === undefined || meta.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (producerEpoch < meta.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (producerEpoch !== meta.producerEpoch) return ErrorCode.INVALID_PRODUCER_EPOCH;
    if (meta.state !== TxnState.ONGOING || !meta.partitions.get(topic)?.has(partition)) return ErrorCode.INVALID_TXN_STATE;
    return ErrorCode.NONE;
  }

  // -------------------------------------------------------------------------
  // EndTxn

  async endTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean): Promise<ProducerIdAndEpoch> {
    const meta = this.txns.get(transactionalId);
    const answer = (errorCode: number): ProducerIdAndEpoch => ({
      errorCode,
      producerId: meta?.producerId ?? -1n,
      producerEpoch: meta?.producerEpoch ?? -1,
    });
    const error = this.checkProducer(transactionalId, meta, producerId, producerEpoch);
    if (error !== ErrorCode.NONE) return answer(error);
    const state = meta!.state;
    const same = commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
    const samePrepare = commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT;
    if (state === TxnState.ONGOING) {
      if (commit) {
        const written = await this.transition(meta!, { state: TxnState.PREPARE_COMMIT });
        if (written !== ErrorCode.NONE) return answer(written);
        maybeCrash('crash-after-prepare-commit', this.o.log);
        this.completeInBackground(meta!);
        return answer(ErrorCode.NONE);
      }
      return answer(await this.prepareAbort(meta!, 'aborted by the producer', false));
    }
    // DESIGN §5.6: the same result again on a finished transaction of this epoch is an idempotent success.
    if (state === same) return answer(ErrorCode.NONE);
    if (state === samePrepare) return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
    return answer(ErrorCode.INVALID_TXN_STATE);
  }

  // -------------------------------------------------------------------------
  // Internals

  private checkProducer(transactionalId: string, meta: TransactionMetadata | undefined, producerId: bigint, producerEpoch: number): number {
    if (!this.isCoordinatorFor(transactionalId)) return ErrorCode.NOT_COORDINATOR;
    if (meta === undefined || meta.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (meta.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (meta.pending) return ErrorCode.CONCURRENT_TRANSACTIONS;
    return ErrorCode.NONE;
  }

  /**
   * Writes PREPARE_ABORT and sends the ABORT markers in the background. With
   * `bumpEpoch` (timeouts and fencing) the abort happens under epoch + 1, so
   * the producer that owned the transaction is fenced.
   */
  private async prepareAbort(meta: TransactionMetadata, why: string, bumpEpoch = true): Promise<number> {
    const epoch = bumpEpoch ? Math.min(meta.producerEpoch + 1, MAX_EPOCH) : meta.producerEpoch;
    const error = await this.transition(meta, { state: TxnState.PREPARE_ABORT, producerEpoch: epoch });
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
    if (completion === undefined || meta === undefined || meta.producerId !== producerId || meta.producerEpoch !== producerEpoch) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([completion, new Promise<void>((resolve) => (timer = setTimeout(resolve, COMPLETION_WAIT_MS)))]);
    clearTimeout(timer);
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
      const error = await this.transition(meta, { state: target, partitions: new Map(), startTimestamp: -1 });
      if (error === ErrorCode.NONE) break;
      await new Promise((resolve) => setTimeout(resolve, this.o.retryBackoffMs));
    }
    if (commit) this.o.metrics.transactions.committed++;
    else this.o.metrics.transactions.aborted++;
  }

  /** Writes the changed state to `__transaction_state` (fsynced), then applies it in memory. */
  private async transition(meta: TransactionMetadata, change: Partial<TransactionMetadata>): Promise<number> {
    const next: TransactionMetadata = { ...meta, ...change, lastUpdateTimestamp: Date.now(), pending: false };
    meta.pending = true;
    try {
      await this.o.txnLog.write(next);
    } catch (error) {
      this.o.log(`writing ${txnStateName(next.state)} for ${meta.transactionalId} failed: ${(error as Error).message}`);
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    } finally {
      meta.pending = false;
    }
    Object.assign(meta, next);
    return ErrorCode.NONE;
  }

  private abortTimedOut(): void {
    const now = Date.now();
    for (const meta of this.txns.values()) {
      if (meta.state !== TxnState.ONGOING || meta.pending || meta.startTimestamp < 0) continue;
      if (now < meta.startTimestamp + meta.timeoutMs) continue;
      this.o.metrics.transactions.timedOut++;
      void this.prepareAbort(meta, `timed out after ${meta.timeoutMs} ms`).then((error) => {
        if (error !== ErrorCode.NONE) this.o.log(`aborting timed-out ${meta.transactionalId} failed: ${errorCodeName(error)}`);
      });
    }
  }
}
