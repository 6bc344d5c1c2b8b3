/**
 * What the transaction coordinator knows about one transactional id, and the
 * legal moves of its state machine (Kafka's TransactionState):
 *
 *   EMPTY ──AddPartitions──▶ ONGOING ──EndTxn──▶ PREPARE_COMMIT ──markers acked──▶ COMPLETE_COMMIT
 *     ▲                        │     ╲ (abort, timeout, fencing)                         │
 *     │                        │      ▶ PREPARE_ABORT ──markers acked──▶ COMPLETE_ABORT  │
 *     └──────── InitProducerId (epoch bump) ◀────────────────────────────────────────────┘
 *
 * COMPLETE_* accept a new transaction (→ ONGOING) or InitProducerId (→ EMPTY).
 * Under TV2 an EndTxn ABORT also takes EMPTY and COMPLETE_* to PREPARE_ABORT:
 * an empty transaction, ended under a new epoch like any other.
 */

/** TransactionLogValue.TransactionStatus (kafka-facts/semantics.md). */
export const TxnState = {
  EMPTY: 0,
  ONGOING: 1,
  PREPARE_COMMIT: 2,
  PREPARE_ABORT: 3,
  COMPLETE_COMMIT: 4,
  COMPLETE_ABORT: 5,
  DEAD: 6,
  PREPARE_EPOCH_FENCE: 7,
} as const;
export type TxnStateCode = (typeof TxnState)[keyof typeof TxnState];

const NAMES = ['EMPTY', 'ONGOING', 'PREPARE_COMMIT', 'PREPARE_ABORT', 'COMPLETE_COMMIT', 'COMPLETE_ABORT', 'DEAD', 'PREPARE_EPOCH_FENCE'];

export function txnStateName(state: number): string {
  return NAMES[state] ?? `UNKNOWN(${state})`;
}

export interface TransactionMetadata {
  readonly transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  timeoutMs: number;
  state: TxnStateCode;
  /** topic → partitions in the transaction. */
  partitions: Map<string, Set<number>>;
  /**
   * The share groups the transaction holds acknowledgements for
   * (AddShareAcksToTxn): TxnShareAcknowledge for any other group is refused.
   * Kafka's TransactionLogValue has no field for it: kipgen keeps it in a
   * tagged field of its own (transaction-log.ts), which Kafka's readers skip.
   */
  shareGroups: Set<string>;
  /** When the transaction became ONGOING (drives the timeout); -1 outside one. */
  startTimestamp: number;
  lastUpdateTimestamp: number;
  /**
   * A state write is in flight for this id: any other request for it gets
   * CONCURRENT_TRANSACTIONS until it lands (Kafka's pendingState).
   */
  pending: boolean;
  /**
   * The transaction version the producer speaks (Kafka's clientTransactionVersion):
   * 2 once it ended a transaction with EndTxn v5+ or had a partition added by a
   * Produce v12+ / TxnOffsetCommit v5+ (the partition leader's AddPartitionsToTxn
   * v5); then every EndTxn bumps the epoch. 0 or 1 otherwise (the classic flow).
   */
  clientTransactionVersion: number;
  /**
   * The identity the producer holds next, when it differs from
   * producerId/producerEpoch: in PREPARE_* after an epoch overflow (a new
   * producer id, epoch 0, taken over at COMPLETE_*), and in ONGOING after
   * InitProducerId(KeepPreparedTxn) staged a recovery producer for the kept
   * transaction (KIP-939): that producer alone may then end it. -1 when none.
   */
  nextProducerId: bigint;
  nextProducerEpoch: number;
  /** The producer id before an epoch overflow moved to a new one (an EndTxn retry from it is answered). */
  previousProducerId: bigint;
  /**
   * Kafka's lastProducerEpoch: the epoch the producer held before the last
   * bump it asked for (InitProducerId with its id and epoch, or a TV2 EndTxn),
   * so that the same InitProducerId resent after a lost answer is told the
   * current epoch instead of PRODUCER_FENCED. -1 after any bump a producer did
   * not ask for (fencing, a timeout, a new producer without an id), so no
   * fenced producer can pass for a retry. In memory only, as in Kafka
   * (TransactionLogValue has no field for it): after a restart a retry spanning
   * it is fenced.
   */
  lastProducerEpoch: number;
}

/** Kafka's timeout of a two-phase-commit (KIP-939) transaction: never aborted by the timeout. */
export const TWO_PHASE_TIMEOUT_MS = 0x7fffffff;

export function isTwoPhase(meta: Pick<TransactionMetadata, 'timeoutMs'>): boolean {
  return meta.timeoutMs === TWO_PHASE_TIMEOUT_MS;
}

export function isPrepare(state: number): boolean {
  return state === TxnState.PREPARE_COMMIT || state === TxnState.PREPARE_ABORT;
}

/**
 * Whether a transactional id in this state may be expired after
 * transactional.id.expiration.ms: only with no transaction open or being
 * completed (Kafka's TransactionState.isExpirationAllowed: Empty,
 * CompleteCommit, CompleteAbort).
 */
export function isExpirationAllowed(state: number): boolean {
  return state === TxnState.EMPTY || state === TxnState.COMPLETE_COMMIT || state === TxnState.COMPLETE_ABORT;
}

export function clonePartitions(partitions: Map<string, Set<number>>): Map<string, Set<number>> {
  return new Map([...partitions].map(([topic, set]) => [topic, new Set(set)]));
}

/** `topic-0, topic-1, other-3` for logs. */
export function describePartitions(partitions: Map<string, Set<number>>): string {
  const out: string[] = [];
  for (const [topic, set] of partitions) for (const p of [...set].sort((a, b) => a - b)) out.push(`${topic}-${p}`);
  return out.join(', ') || '(none)';
}
