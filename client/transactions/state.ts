/**
 * The transactional producer's state machine, after Kafka's
 * TransactionManager.State (clients/.../producer/internals/TransactionManager.java):
 * the states, the states each may be entered from, and the checks the public
 * calls make against them (maybeFailWithError, the IllegalStateError that
 * says what may be called instead).
 */
import { ApiError, Errors, IllegalStateError, TransactionAbortableError } from '../errors.js';

export type TransactionState =
  'UNINITIALIZED' | 'INITIALIZING' | 'READY' | 'IN_TRANSACTION' | 'COMMITTING_TRANSACTION' | 'ABORTING_TRANSACTION' | 'ABORTABLE_ERROR' | 'FATAL_ERROR';

export const TRANSACTION_STATES: readonly TransactionState[] = [
  'UNINITIALIZED',
  'INITIALIZING',
  'READY',
  'IN_TRANSACTION',
  'COMMITTING_TRANSACTION',
  'ABORTING_TRANSACTION',
  'ABORTABLE_ERROR',
  'FATAL_ERROR',
];

/**
 * Each state with the states it may be entered from: Kafka's
 * State.isTransitionValid, where this client differs:
 * - no PREPARED_TRANSACTION: a KIP-939 prepared transaction stays
 *   IN_TRANSACTION with its PreparedTxnState recorded, and the calls check
 *   that only commit or abort follow;
 * - INITIALIZING is entered again from INITIALIZING (initTransactions() after
 *   a timeout retries) and from ABORTING_TRANSACTION only (the epoch bump after
 *   an abort; a commit never needs one here);
 * - UNINITIALIZED is never entered again; ABORTABLE_ERROR not from
 *   INITIALIZING (a failed InitProducerId is fatal here).
 */
export const LEGAL_PREVIOUS_STATES: Readonly<Record<TransactionState, readonly TransactionState[]>> = {
  UNINITIALIZED: ['READY', 'UNINITIALIZED', 'INITIALIZING'],
  INITIALIZING: ['UNINITIALIZED', 'INITIALIZING', 'ABORTING_TRANSACTION'],
  READY: ['INITIALIZING', 'COMMITTING_TRANSACTION', 'ABORTING_TRANSACTION'],
  IN_TRANSACTION: ['READY'],
  COMMITTING_TRANSACTION: ['IN_TRANSACTION'],
  ABORTING_TRANSACTION: ['IN_TRANSACTION', 'ABORTABLE_ERROR'],
  ABORTABLE_ERROR: ['IN_TRANSACTION', 'COMMITTING_TRANSACTION', 'ABORTABLE_ERROR'],
  FATAL_ERROR: TRANSACTION_STATES,
};

/** What may be called in each state, for IllegalStateError messages. */
export const ALLOWED_CALLS: Readonly<Record<TransactionState, string>> = {
  UNINITIALIZED: 'call initTransactions() first',
  INITIALIZING: 'initTransactions() is in progress; wait for it (or call it again after a timeout)',
  READY: 'no transaction is in progress: call beginTransaction() first',
  IN_TRANSACTION:
    'a transaction is in progress: call send(), sendOffsetsToTransaction(), sendShareAcksToTransaction(), commitTransaction() or abortTransaction()',
  COMMITTING_TRANSACTION: 'commitTransaction() is in progress; wait for it (or call commitTransaction() again after a timeout)',
  ABORTING_TRANSACTION: 'abortTransaction() is in progress; wait for it (or call abortTransaction() again after a timeout)',
  ABORTABLE_ERROR: 'the transaction failed and can only be aborted: call abortTransaction()',
  FATAL_ERROR: 'the producer failed fatally: close() it and create a new one',
};

/** The current state, the error that put it there, and the checks against both. */
export class TransactionStateMachine {
  private current: TransactionState = 'UNINITIALIZED';
  private error: Error | null = null;

  constructor(
    private readonly transactionalId: string,
    /** Told once the producer enters FATAL_ERROR: no transaction of it can commit any more. */
    private readonly onFatal: () => void = () => undefined,
  ) {}

  get state(): TransactionState {
    return this.current;
  }

  /** The error behind ABORTABLE_ERROR or FATAL_ERROR; null in the other states. */
  get lastError(): Error | null {
    return this.error;
  }

  /** Kafka's transitionTo: an illegal move throws and changes nothing. */
  transitionTo(target: TransactionState, error?: Error): void {
    if (!LEGAL_PREVIOUS_STATES[target].includes(this.current)) {
      throw new IllegalStateError(
        `TransactionalId ${this.transactionalId}: invalid transition from ${this.current} to ${target}; ${ALLOWED_CALLS[this.current]}`,
      );
    }
    if (target === 'ABORTABLE_ERROR' || target === 'FATAL_ERROR') this.error = error ?? this.error;
    else this.error = null;
    this.current = target;
    if (target === 'FATAL_ERROR') this.onFatal();
  }

  /** A transaction is open, ending, or failed and waiting for its abort. */
  get isInTransaction(): boolean {
    return (
      this.current === 'IN_TRANSACTION' ||
      this.current === 'COMMITTING_TRANSACTION' ||
      this.current === 'ABORTING_TRANSACTION' ||
      this.current === 'ABORTABLE_ERROR'
    );
  }

  illegal(call: string): IllegalStateError {
    return new IllegalStateError(`TransactionalId ${this.transactionalId}: cannot call ${call} in state ${this.current}: ${ALLOWED_CALLS[this.current]}`);
  }

  /**
   * Kafka's maybeFailWithError. In FATAL_ERROR every call throws the fatal
   * error itself (e.g. ProducerFencedError). In ABORTABLE_ERROR calls that
   * belong to the failed transaction throw TransactionAbortableError (cause:
   * the original error) telling to call abortTransaction().
   */
  maybeFailWithError(call: string): void {
    if (this.current === 'FATAL_ERROR') {
      throw this.error ?? new IllegalStateError(`TransactionalId ${this.transactionalId}: ${ALLOWED_CALLS.FATAL_ERROR}`);
    }
    if (this.current === 'ABORTABLE_ERROR') {
      const cause = this.error;
      const code = cause instanceof ApiError && cause.code !== undefined ? cause.code : Errors.TRANSACTION_ABORTABLE;
      throw new TransactionAbortableError(
        code,
        `TransactionalId ${this.transactionalId}: cannot call ${call}: the transaction failed and can only be aborted; call abortTransaction(). Cause: ${cause?.message ?? 'unknown'}`,
        cause,
      );
    }
  }
}
