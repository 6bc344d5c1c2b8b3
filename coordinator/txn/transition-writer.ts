/**
 * How a prepared transition reaches `__transaction_state` and then memory
 * (Kafka's TransactionStateManager.appendTransactionToLog, whose callback
 * calls TransactionMetadata.completeTransitionTo): the target is written and
 * fsynced as the flush settings say, and applied only once the write succeeded. Also the record of the
 * writes in flight per transactional id, which add requests wait for.
 */
import { ErrorCode } from '../errors.js';
import type { TransactionLog } from './transaction-log.js';
import { IllegalTransitionError, txnStateName, type TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata.js';

export class TransitionWriter {
  /** The state write in flight per transactional id (while its metadata is pending). */
  private readonly writes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly txnLog: TransactionLog,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Prepares a transition (which marks it pending), writes its target, and
   * applies it only then. A failed write leaves the metadata as it was and
   * answers COORDINATOR_NOT_AVAILABLE; a refused transition is logged and
   * answered with its error code, the metadata as it was.
   */
  async transition(meta: TransactionMetadata, prepare: () => TxnTransitMetadata): Promise<number> {
    let target: TxnTransitMetadata;
    try {
      target = prepare();
    } catch (error) {
      return this.refused(error);
    }
    try {
      await this.writing([meta], this.txnLog.write(target));
    } catch (error) {
      meta.cancelTransition();
      this.log(`writing ${txnStateName(target.state)} for ${meta.transactionalId} failed: ${(error as Error).message}`);
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
    try {
      meta.completeTransitionTo(target);
    } catch (error) {
      // Written but refused in memory: as in Kafka, a bug, logged loudly; the id stays as it was
      // until a restart replays what was written.
      meta.cancelTransition();
      return this.refused(error);
    }
    return ErrorCode.NONE;
  }

  /**
   * Awaits a write to `__transaction_state` for `metas`, whose prepared
   * transitions keep them pending meanwhile (Kafka's pendingState): their
   * requests get CONCURRENT_TRANSACTIONS, or wait for it (awaitWrite).
   */
  async writing(metas: TransactionMetadata[], write: Promise<void>): Promise<void> {
    for (const meta of metas) this.writes.set(meta.transactionalId, write);
    try {
      await write;
    } finally {
      for (const meta of metas) if (this.writes.get(meta.transactionalId) === write) this.writes.delete(meta.transactionalId);
    }
  }

  /**
   * Adds of one transaction may arrive together — under TV2 a partition
   * leader's implicit add races the producer's AddShareAcksToTxn — so an add
   * waits for a state write in flight for the same id (a few milliseconds)
   * instead of answering CONCURRENT_TRANSACTIONS, which costs the client a
   * retry and its backoff.
   */
  async awaitWrite(transactionalId: string): Promise<void> {
    for (let i = 0; i < 8; i++) {
      const write = this.writes.get(transactionalId);
      if (write === undefined) return;
      await write.catch(() => {});
    }
  }

  /** Logs a transition the metadata refused and returns the code to answer; anything else is rethrown. */
  private refused(error: unknown): number {
    if (!(error instanceof IllegalTransitionError)) throw error;
    this.log(`transaction state machine refused a transition: ${error.message}`);
    return error.code;
  }
}
