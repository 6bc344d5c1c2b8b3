/**
 * Who may act on a transactional id, and what an EndTxn asks for: the checks
 * the transaction coordinator makes before it prepares a transition, pure
 * functions of the metadata and the request (in Kafka they sit inline in
 * TransactionCoordinator.scala: handleAddPartitionsToTransaction,
 * endTransaction's isValidEpoch / retryOnEpochBump / retryOnOverflow,
 * prepareInitProducerIdTransit's isValidProducerId).
 */
import { ErrorCode } from '../errors.js';
import { MAX_EPOCH, TxnState, isPrepare, type ProducerIdentity, type TransactionMetadata } from './transaction-metadata.js';

/**
 * The answer to an add or a transactional write for a kept transaction. The
 * Java client holds a kept transaction in PREPARED_TRANSACTION, where only
 * commit or abort may follow (TransactionManager.java); the broker enforces it:
 * the staged recovery identity may not add or write (INVALID_TXN_STATE) —
 * after an exhausted epoch its producer id differs from the one the markers
 * carry, so such a write would never be resolved and would pin the last
 * stable offset — and the producer the keep replaced is fenced.
 */
export function keptTransactionError(meta: TransactionMetadata, producerId: bigint, producerEpoch: number): number {
  if (producerId === meta.nextProducerId && producerEpoch === meta.nextProducerEpoch) return ErrorCode.INVALID_TXN_STATE;
  if (producerId === meta.producerId || producerId === meta.nextProducerId) return ErrorCode.PRODUCER_FENCED;
  return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
}

/**
 * Kafka's retry of a successful epoch bump (TransactionMetadata.prepareIncrementProducerEpoch,
 * with TransactionCoordinator.isValidProducerId): the expected epoch is lastProducerEpoch, under
 * the current producer id or — when that bump moved to a new one at an exhausted epoch — the one before.
 */
export function isInitRetry(meta: TransactionMetadata, expected: ProducerIdentity): boolean {
  if (expected.producerId < 0n || meta.lastProducerEpoch < 0 || expected.producerEpoch !== meta.lastProducerEpoch) return false;
  if (meta.state !== TxnState.EMPTY && meta.state !== TxnState.COMPLETE_COMMIT && meta.state !== TxnState.COMPLETE_ABORT) return false;
  if (expected.producerId === meta.producerId) return expected.producerEpoch !== meta.producerEpoch;
  return expected.producerId === meta.previousProducerId && expected.producerEpoch >= MAX_EPOCH - 1;
}

/** Whether this producer may add to the id's transaction now (AddPartitionsToTxn, AddOffsetsToTxn, AddShareAcksToTxn). */
export function checkAddingProducer(meta: TransactionMetadata, producerId: bigint, producerEpoch: number): number {
  // After an epoch overflow the new producer id is handed out at PREPARE_*; it may act once COMPLETE_* is written.
  if (isPrepare(meta.state) && meta.nextProducerId === producerId && producerEpoch === meta.nextProducerEpoch) return ErrorCode.CONCURRENT_TRANSACTIONS;
  if (meta.isKept()) return keptTransactionError(meta, producerId, producerEpoch);
  const owner = meta.owner();
  if (owner.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
  if (owner.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
  if (meta.pending) return ErrorCode.CONCURRENT_TRANSACTIONS;
  return ErrorCode.NONE;
}

/** Whether a partition is in the producer's ongoing transaction (what a partition leader asks before a transactional write, KIP-890). */
export function checkWrite(
  meta: TransactionMetadata,
  producerId: bigint,
  producerEpoch: number,
  topic: string,
  partition: number,
  shareGroup?: string,
): number {
  if (meta.isKept()) return keptTransactionError(meta, producerId, producerEpoch);
  const owner = meta.owner();
  if (owner.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
  if (producerEpoch < owner.producerEpoch) return ErrorCode.PRODUCER_FENCED;
  if (producerEpoch !== owner.producerEpoch) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (meta.state !== TxnState.ONGOING || !meta.partitions.get(topic)?.has(partition)) return ErrorCode.INVALID_TXN_STATE;
  if (shareGroup !== undefined && !meta.shareGroups.has(shareGroup)) return ErrorCode.INVALID_TXN_STATE;
  return ErrorCode.NONE;
}

/** What an EndTxn gets: end the transaction now (`end`), or this answer (NONE: the same result again, the current identity). */
export type EndTxnVerdict = { end: true } | { end: false; errorCode: number };

/**
 * Judges an EndTxn. Under TV2 a retry of the same result is recognised by the
 * epoch it was sent with (one below the current one), and an abort with no
 * transaction open ends an empty one.
 */
export function judgeEndTxn(
  meta: TransactionMetadata,
  producerId: bigint,
  producerEpoch: number,
  commit: boolean,
  clientTransactionVersion: number,
): EndTxnVerdict {
  const answer = (errorCode: number): EndTxnVerdict => ({ end: false, errorCode });
  const state = meta.state;
  const owner = meta.owner();
  const tv2 = meta.clientTransactionVersion >= 2;
  // At the highest epoch without a producer id to move to, the coordinator aborted (fenced, timed out):
  // a TV2 EndTxn at the last epoch always moves to a new producer id, so this is never a client's retry.
  const isFenceAtLastEpoch = meta.producerEpoch === MAX_EPOCH && meta.nextProducerId < 0n;
  const retryOnEpochBump = tv2 && meta.producerId === producerId && meta.producerEpoch === producerEpoch + 1 && !isFenceAtLastEpoch;
  const retryOnOverflow = tv2 && meta.previousProducerId === producerId && producerEpoch === MAX_EPOCH - 1 && meta.producerEpoch === 0;
  if (owner.producerId !== producerId && !retryOnOverflow && !(isPrepare(state) && meta.nextProducerId === producerId)) {
    return answer(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  }
  if (isPrepare(state) && meta.nextProducerId === producerId) return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
  const current = producerId === meta.producerId && producerEpoch === meta.producerEpoch;
  // Under TV2 every end of a transaction moves the producer to a new epoch, an empty one's too, so that a
  // producer id + epoch (a PreparedTxnState) never names the transaction after it. An abort at the current
  // epoch with nothing open (EMPTY, or COMPLETE_* of the last transaction) therefore ends an empty transaction
  // under epoch + 1 (Kafka's TV2 since KAFKA-14563: PrepareAbort with no partitions); a commit there has nothing
  // to commit and stays INVALID_TXN_STATE below, as in Kafka, whose client sends no EndTxn for an empty one.
  const emptyAbort =
    clientTransactionVersion >= 2 &&
    !commit &&
    current &&
    (state === TxnState.EMPTY || state === TxnState.COMPLETE_COMMIT || state === TxnState.COMPLETE_ABORT);
  let validEpoch: boolean;
  if (!tv2 || state === TxnState.ONGOING) validEpoch = producerEpoch === owner.producerEpoch;
  else if (isPrepare(state)) {
    // The epoch this transaction's EndTxn handed out: the producer's next request, while the markers of this
    // one are still being written. As Kafka (KAFKA-18464): CONCURRENT_TRANSACTIONS, retried, not fenced.
    if (current) return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
    validEpoch = retryOnEpochBump;
  } else if (state === TxnState.COMPLETE_COMMIT || state === TxnState.COMPLETE_ABORT) {
    validEpoch = retryOnEpochBump || retryOnOverflow || emptyAbort;
    // The epoch the last EndTxn handed out, with no transaction begun under it, and no empty abort (a commit,
    // or a classic EndTxn): kipgen answers INVALID_TXN_STATE, as under TV1, never PRODUCER_FENCED, so that a
    // producer whose add request may or may not have arrived is told there is no transaction, not fenced.
    if (!validEpoch && current) return answer(ErrorCode.INVALID_TXN_STATE);
  } else validEpoch = producerEpoch === meta.producerEpoch;
  if (!validEpoch) return answer(ErrorCode.PRODUCER_FENCED);
  if (meta.pending) return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
  // One end-of-transaction path for an open transaction and an empty abort: the same bump, overflow and answer.
  if (state === TxnState.ONGOING || emptyAbort) return { end: true };
  // DESIGN §5.6: the same result again on a finished transaction of this epoch is an idempotent success.
  if (state === (commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT)) return answer(ErrorCode.NONE);
  if (state === (commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT)) return answer(ErrorCode.CONCURRENT_TRANSACTIONS);
  return answer(ErrorCode.INVALID_TXN_STATE);
}
