/**
 * The states of a transactional id and the legal moves between them (Kafka's
 * TransactionState, transaction-coordinator/…/TransactionState.java, whose
 * VALID_PREVIOUS_STATES this table follows):
 *
 *   EMPTY ──AddPartitions──▶ ONGOING ──EndTxn──▶ PREPARE_COMMIT ──markers acked──▶ COMPLETE_COMMIT
 *     ▲                        │     ╲ (abort, timeout, fencing)                         │
 *     │                        │      ▶ PREPARE_ABORT ──markers acked──▶ COMPLETE_ABORT  │
 *     └──────── InitProducerId (epoch bump) ◀────────────────────────────────────────────┘
 *
 * COMPLETE_* accept a new transaction (→ ONGOING) or InitProducerId (→ EMPTY).
 * Under TV2 an EndTxn ABORT also takes EMPTY and COMPLETE_* to PREPARE_ABORT:
 * an empty transaction, ended under a new epoch like any other. ONGOING →
 * ONGOING is a partition or share group added, or (KIP-939) the transaction
 * kept for a recovery producer. DEAD (an expired id whose tombstone is being
 * written) and PREPARE_EPOCH_FENCE are only ever pending, never written: see
 * TransactionMetadata.completeTransitionTo.
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

export const ALL_TXN_STATES: readonly TxnStateCode[] = Object.values(TxnState);

const NAMES = ['EMPTY', 'ONGOING', 'PREPARE_COMMIT', 'PREPARE_ABORT', 'COMPLETE_COMMIT', 'COMPLETE_ABORT', 'DEAD', 'PREPARE_EPOCH_FENCE'];

export function txnStateName(state: number): string {
  return NAMES[state] ?? `UNKNOWN(${state})`;
}

/**
 * The names Kafka's TransactionState gives the states (stateName), which
 * DescribeTransactions and ListTransactions answer with and filter by.
 */
const KAFKA_NAMES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

export function kafkaTxnStateName(state: number): string {
  return KAFKA_NAMES[state] ?? `Unknown(${state})`;
}

/** The state a Kafka name stands for (case-sensitive, as Kafka's TransactionState.fromName); undefined for none. */
export function txnStateFromKafkaName(name: string): TxnStateCode | undefined {
  const index = KAFKA_NAMES.indexOf(name);
  return index < 0 ? undefined : (index as TxnStateCode);
}

const { EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE } = TxnState;

/** For each state, the states a transactional id may move to it from. */
export const VALID_PREVIOUS_STATES: Readonly<Record<TxnStateCode, readonly TxnStateCode[]>> = {
  [EMPTY]: [EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT],
  [ONGOING]: [ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT],
  [PREPARE_COMMIT]: [ONGOING],
  [PREPARE_ABORT]: [ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT],
  [COMPLETE_COMMIT]: [PREPARE_COMMIT],
  [COMPLETE_ABORT]: [PREPARE_ABORT],
  [DEAD]: [EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT],
  [PREPARE_EPOCH_FENCE]: [ONGOING],
};

export function isValidTransition(from: TxnStateCode, to: TxnStateCode): boolean {
  return VALID_PREVIOUS_STATES[to]?.includes(from) ?? false;
}

export function isPrepare(state: number): boolean {
  return state === PREPARE_COMMIT || state === PREPARE_ABORT;
}

export function isComplete(state: number): boolean {
  return state === COMPLETE_COMMIT || state === COMPLETE_ABORT;
}

/**
 * Whether a transactional id in this state may be expired after
 * transactional.id.expiration.ms: only with no transaction open or being
 * completed (Kafka's TransactionState.isExpirationAllowed: Empty,
 * CompleteCommit, CompleteAbort).
 */
export function isExpirationAllowed(state: number): boolean {
  return state === EMPTY || isComplete(state);
}
