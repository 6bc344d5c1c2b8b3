/**
 * KafkaProducer.completeTransaction: ending, after a restart, the transaction
 * a checkpoint saved (KIP-939, DESIGN §5.6), with short-lived two-phase-commit
 * producers of the saved transactional id.
 */
import { ApiKey } from '../../generated/index.js';
import { CoordinatorType, type ClusterClient } from '../cluster.js';
import { ConfigError, UnsupportedVersionError } from '../errors.js';
import { endTransaction, PreparedTxnState, type PreparedTransaction, type SavedTransactionOutcome, type TransactionManager } from '../transaction-manager.js';
import { INIT_PRODUCER_ID_2PC_VERSION } from '../transaction-protocol.js';
import type { CompleteTransactionConfig } from './config.js';

/** The finalized transaction.version of Transactions V2 (KIP-890 part 2). */
const TRANSACTION_VERSION_2 = 2;

/** What completeSavedTransaction needs of a two-phase-commit producer of the saved transactional id. */
export interface RecoveryProducer {
  readonly txn: TransactionManager;
  readonly cluster: ClusterClient;
  initTransactions(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Ends the saved transaction with `result` if it is still open, and aborts a
 * later one open instead; see KafkaProducer.completeTransaction. `open`
 * makes a fresh recovery producer; each one made is closed here.
 */
export async function completeSavedTransaction(
  config: CompleteTransactionConfig,
  saved: PreparedTransaction | string,
  result: 'commit' | 'abort',
  open: (state: PreparedTxnState) => RecoveryProducer,
): Promise<SavedTransactionOutcome> {
  if (result !== 'commit' && result !== 'abort')
    throw new ConfigError(`completeTransaction: result must be 'commit' or 'abort', got ${JSON.stringify(result)}`);
  const state = typeof saved === 'string' ? PreparedTxnState.fromString(saved) : PreparedTxnState.from(saved);
  const producer = open(state);
  try {
    try {
      return await producer.txn.recoverPrepared(state, result === 'commit');
    } catch (error) {
      if (!(error instanceof UnsupportedVersionError)) throw error;
      const deadline = Date.now() + (config.maxBlockMs ?? 60_000);
      if (await hasTwoPhaseCommitWithoutKeep(producer.cluster, state, deadline)) return await abortWhateverIsOpen(open(state));
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
async function hasTwoPhaseCommitWithoutKeep(cluster: ClusterClient, state: PreparedTxnState, deadline: number): Promise<boolean> {
  const tc = await cluster.findCoordinator(CoordinatorType.TRANSACTION, state.transactionalId, deadline);
  return (
    (await cluster.finalizedFeature(tc, 'transaction.version', deadline)) >= TRANSACTION_VERSION_2 &&
    (await cluster.supports(tc, ApiKey.InitProducerId, INIT_PRODUCER_ID_2PC_VERSION, deadline))
  );
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
async function abortWhateverIsOpen(aborter: RecoveryProducer): Promise<'unknown'> {
  try {
    await aborter.initTransactions();
  } finally {
    await aborter.close();
  }
  return 'unknown';
}
