/**
 * KIP-939's two-phase commit on top of the transaction manager: finishing the
 * prepared transaction a PreparedTxnState names (Kafka's
 * KafkaProducer.completeTransaction), and, after a restart, finishing the one
 * a checkpoint saved with nothing prepared in this process (DESIGN §5.6).
 */
import type { ClusterClient } from '../cluster.js';
import { ApiError, Errors, IllegalStateError, InvalidTxnStateError } from '../errors.js';
import { MOVED_PAST_CODES } from '../transaction-protocol.js';
import { endTransaction } from './end-txn.js';
import { PreparedTxnState, type PreparedTransaction, type SavedTransactionOutcome } from './prepared-txn-state.js';
import type { TransactionState } from './state.js';

/** What the two-phase flows use of the transaction manager. */
export interface TwoPhaseManager {
  readonly transactionalId: string;
  readonly state: TransactionState;
  /** The transaction kept or prepared here; null when none. */
  readonly preparedTransaction: PreparedTxnState | null;
  maybeFailWithError(call: string): void;
  chooseProtocol(deadline: number): Promise<void>;
  initTransactions(options: { keepPreparedTxn?: boolean }): Promise<void>;
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
}

/** prepareTransaction() without two-phase commit: as Kafka's KafkaProducer.prepareTransaction, refused. */
export function twoPhaseCommitRequired(transactionalId: string): InvalidTxnStateError {
  // Without 2PC the coordinator's transaction timeout would abort the prepared transaction, and a saved
  // PreparedTxnState would name a transaction that is gone.
  return new InvalidTxnStateError(
    Errors.INVALID_TXN_STATE,
    `TransactionalId ${transactionalId}: prepareTransaction() needs two-phase commit: set transactionTwoPhaseCommitEnable: true ` +
      '(transaction.two.phase.commit.enable) in the producer config; without it the transaction timeout would abort the prepared transaction',
  );
}

/**
 * KIP-939 (Kafka's KafkaProducer.completeTransaction): commits the prepared
 * transaction if it is the one `state` names ('committed'), aborts it
 * otherwise — the named one then ended before it and this producer cannot
 * tell how ('unknown'). Without a prepared transaction it throws
 * InvalidTxnStateError, as Kafka does; KafkaProducer.completeTransaction(config, …)
 * asks the coordinator instead.
 */
export async function completePrepared(txn: TwoPhaseManager, state: PreparedTransaction): Promise<SavedTransactionOutcome> {
  const named = PreparedTxnState.from(state);
  if (named.transactionalId !== txn.transactionalId) {
    throw new IllegalStateError(`completeTransaction(): the state names transactional id ${named.transactionalId}, this producer is ${txn.transactionalId}`);
  }
  const isNamed = named.equals(txn.preparedTransaction);
  // A retry after a timeout finishes what the first call started.
  if (txn.state === 'COMMITTING_TRANSACTION') return txn.commitTransaction().then(() => (isNamed ? 'committed' : 'unknown'));
  if (txn.state === 'ABORTING_TRANSACTION') return txn.abortTransaction().then(() => (isNamed ? 'aborted' : 'unknown'));
  txn.maybeFailWithError('completeTransaction()');
  if (txn.preparedTransaction === null) {
    throw new InvalidTxnStateError(
      Errors.INVALID_TXN_STATE,
      `TransactionalId ${txn.transactionalId}: completeTransaction() needs a prepared transaction (prepareTransaction(), or initTransactions({ keepPreparedTxn: true }) ` +
        `after a restart, which found none open); state ${txn.state}. After a restart use KafkaProducer.completeTransaction(config, state, result), which asks the coordinator`,
    );
  }
  if (isNamed) {
    await txn.commitTransaction();
    return 'committed';
  }
  await txn.abortTransaction();
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
export async function recoverPrepared(
  txn: TwoPhaseManager,
  cluster: ClusterClient,
  saved: PreparedTxnState,
  commit: boolean,
  deadline: number,
): Promise<SavedTransactionOutcome> {
  await txn.chooseProtocol(deadline);
  try {
    await endTransaction(cluster, saved, commit, deadline, true);
    return commit ? 'committed' : 'aborted';
  } catch (error) {
    if (error instanceof ApiError && error.code === Errors.INVALID_TXN_STATE) return commit ? 'aborted' : 'committed';
    const movedOn = error instanceof ApiError && error.code !== undefined && MOVED_PAST_CODES.has(error.code);
    if (!movedOn) throw error;
  }
  await txn.initTransactions({ keepPreparedTxn: true });
  const kept = txn.preparedTransaction;
  if (kept === null) return 'unknown';
  if (commit && kept.equals(saved)) {
    await txn.commitTransaction();
    return 'committed';
  }
  await txn.abortTransaction();
  return kept.equals(saved) ? 'aborted' : 'unknown';
}
