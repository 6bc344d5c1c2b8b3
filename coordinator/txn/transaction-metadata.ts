/**
 * What the transaction coordinator knows about one transactional id, and the
 * only way it changes (Kafka's TransactionMetadata and TxnTransitMetadata,
 * transaction-coordinator/…/TransactionMetadata.java): a transition is
 * prepared — checked against the legal moves of transaction-state.ts, marked
 * pending, and returned as the target state — then written to
 * `__transaction_state`, and applied by completeTransitionTo only once the
 * write succeeded. While one is pending no other may be prepared. An illegal
 * move throws IllegalTransitionError and leaves the metadata as it was.
 *
 * The epoch arithmetic of each transition lives here too, as in Kafka's
 * prepare* methods; what a request may do (who is fenced, what is a retry)
 * stays with the coordinator (transaction-coordinator.ts).
 */
import { BrokerError, ErrorCode } from '../errors.js';
import { TxnState, isValidTransition, txnStateName, type TxnStateCode } from './transaction-state.js';

export {
  ALL_TXN_STATES,
  TxnState,
  VALID_PREVIOUS_STATES,
  isExpirationAllowed,
  isPrepare,
  isValidTransition,
  txnStateName,
  type TxnStateCode,
} from './transaction-state.js';

/** The highest producer epoch; a producer is never handed it (the coordinator keeps it to fence). */
export const MAX_EPOCH = 32767;

/** Kafka's timeout of a two-phase-commit (KIP-939) transaction: never aborted by the timeout. */
export const TWO_PHASE_TIMEOUT_MS = 0x7fffffff;

/**
 * One transactional id's state as `__transaction_state` holds it; as the
 * target of a transition, Kafka's TxnTransitMetadata.
 */
export interface TxnTransitMetadata {
  readonly transactionalId: string;
  readonly state: TxnStateCode;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly timeoutMs: number;
  /** topic → partitions in the transaction. */
  readonly partitions: Map<string, Set<number>>;
  /**
   * The share groups the transaction holds acknowledgements for
   * (AddShareAcksToTxn): TxnShareAcknowledge for any other group is refused.
   * Kafka's TransactionLogValue has no field for it: kipgen keeps it in a
   * tagged field of its own (transaction-log.ts), which Kafka's readers skip.
   */
  readonly shareGroups: Set<string>;
  /** When the transaction became ONGOING (drives the timeout); -1 outside one. */
  readonly startTimestamp: number;
  readonly lastUpdateTimestamp: number;
  /**
   * The transaction version the producer speaks (Kafka's clientTransactionVersion):
   * 2 once it ended a transaction with EndTxn v5+ or had a partition added by a
   * Produce v12+ / TxnOffsetCommit v5+ (the partition leader's AddPartitionsToTxn
   * v5); then every EndTxn bumps the epoch. 0 or 1 otherwise (the classic flow).
   */
  readonly clientTransactionVersion: number;
  /**
   * The identity the producer holds next, when it differs from
   * producerId/producerEpoch: in PREPARE_* after an epoch overflow (a new
   * producer id, epoch 0, taken over at COMPLETE_*), and in ONGOING after
   * InitProducerId(KeepPreparedTxn) staged a recovery producer for the kept
   * transaction (KIP-939): that producer alone may then end it. -1 when none.
   */
  readonly nextProducerId: bigint;
  readonly nextProducerEpoch: number;
  /** The producer id before an epoch overflow moved to a new one (an EndTxn retry from it is answered). */
  readonly previousProducerId: bigint;
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
  readonly lastProducerEpoch: number;
}

type TransitChange = Partial<Omit<TxnTransitMetadata, 'transactionalId' | 'state'>>;

/**
 * A transition refused: illegal from the current state, or prepared while
 * another is pending (CONCURRENT_TRANSACTIONS, as Kafka's coordinator answers
 * when pendingTransitionInProgress). Kafka throws IllegalStateException, which
 * reaches a client as UNKNOWN_SERVER_ERROR.
 */
export class IllegalTransitionError extends BrokerError {
  override name = 'IllegalTransitionError';
}

export interface ProducerIdentity {
  producerId: bigint;
  producerEpoch: number;
}

export class TransactionMetadata implements TxnTransitMetadata {
  declare readonly transactionalId: string;
  declare readonly state: TxnStateCode;
  declare readonly producerId: bigint;
  declare readonly producerEpoch: number;
  declare readonly timeoutMs: number;
  declare readonly partitions: Map<string, Set<number>>;
  declare readonly shareGroups: Set<string>;
  declare readonly startTimestamp: number;
  declare readonly lastUpdateTimestamp: number;
  declare readonly clientTransactionVersion: number;
  declare readonly nextProducerId: bigint;
  declare readonly nextProducerEpoch: number;
  declare readonly previousProducerId: bigint;
  declare readonly lastProducerEpoch: number;
  /** The state the transition in flight moves to (Kafka's pendingState); null when none. */
  #pendingTo: TxnStateCode | null = null;

  constructor(state: TxnTransitMetadata) {
    Object.assign(this, state);
  }

  /** A transactional id seen for the first time: EMPTY, no epoch yet (Kafka's NO_PRODUCER_EPOCH). */
  static fresh(transactionalId: string, producerId: bigint, timeoutMs: number, now: number): TransactionMetadata {
    return new TransactionMetadata({
      transactionalId,
      state: TxnState.EMPTY,
      producerId,
      producerEpoch: -1,
      timeoutMs,
      partitions: new Map(),
      shareGroups: new Set(),
      startTimestamp: -1,
      lastUpdateTimestamp: now,
      clientTransactionVersion: 0,
      nextProducerId: -1n,
      nextProducerEpoch: -1,
      previousProducerId: -1n,
      lastProducerEpoch: -1,
    });
  }

  get pendingState(): TxnStateCode | null {
    return this.#pendingTo;
  }

  /** A state write is in flight: any other request for the id gets CONCURRENT_TRANSACTIONS or waits (Kafka's pendingTransitionInProgress). */
  get pending(): boolean {
    return this.#pendingTo !== null;
  }

  /**
   * A transaction kept by InitProducerId(KeepPreparedTxn) for a staged
   * recovery producer (KIP-939): prepared, so it may only be committed or aborted.
   */
  isKept(): boolean {
    return this.state === TxnState.ONGOING && this.nextProducerId >= 0n;
  }

  /** The identity that may act on the id now: a staged recovery producer (KIP-939) if any, else the current one. */
  owner(): ProducerIdentity {
    if (this.isKept()) return { producerId: this.nextProducerId, producerEpoch: this.nextProducerEpoch };
    return { producerId: this.producerId, producerEpoch: this.producerEpoch };
  }

  // -------------------------------------------------------------------------
  // Preparing a transition (Kafka's prepare* methods)

  /**
   * InitProducerId on an id with no transaction open: EMPTY under the next
   * epoch (Kafka's prepareIncrementProducerEpoch), or under a new producer id
   * at epoch 0 when the epoch is exhausted (its prepareProducerIdRotation).
   * A producer that named its epoch may resend the request (lastProducerEpoch
   * records it); one that did not fences every earlier epoch.
   */
  prepareIncrementProducerEpoch(timeoutMs: number, producerNamedItsEpoch: boolean, newProducerId: () => bigint, now: number): TxnTransitMetadata {
    const rotate = this.producerEpoch + 1 >= MAX_EPOCH;
    return this.prepareTransitionTo(TxnState.EMPTY, now, {
      producerId: rotate ? newProducerId() : this.producerId,
      producerEpoch: rotate ? 0 : this.producerEpoch + 1,
      lastProducerEpoch: producerNamedItsEpoch ? this.producerEpoch : -1,
      ...(rotate ? { previousProducerId: this.producerId } : {}),
      timeoutMs,
      partitions: new Map(),
      shareGroups: new Set(),
      startTimestamp: -1,
      nextProducerId: -1n,
      nextProducerEpoch: -1,
    });
  }

  /**
   * KIP-939's InitProducerId(KeepPreparedTxn) on an open two-phase transaction:
   * it stays ONGOING under its identity (what a saved PreparedTxnState names)
   * and `recovery` is staged as the only producer that may end it. Kafka's
   * coordinator answers UNSUPPORTED_VERSION to KeepPreparedTxn: kipgen's own path.
   */
  prepareKeepPreparedTxn(recovery: ProducerIdentity, now: number): TxnTransitMetadata {
    return this.prepareTransitionTo(TxnState.ONGOING, now, {
      nextProducerId: recovery.producerId,
      nextProducerEpoch: recovery.producerEpoch,
      lastProducerEpoch: -1,
    });
  }

  /** Partitions or share groups join the transaction, opening it when none is (Kafka's prepareAddPartitions). */
  prepareAddPartitions(partitions: Map<string, Set<number>>, shareGroups: Set<string>, clientTransactionVersion: number, now: number): TxnTransitMetadata {
    return this.prepareTransitionTo(TxnState.ONGOING, now, {
      partitions,
      shareGroups,
      startTimestamp: this.state === TxnState.ONGOING ? this.startTimestamp : now,
      clientTransactionVersion,
    });
  }

  /**
   * EndTxn: PREPARE_COMMIT or PREPARE_ABORT (Kafka's prepareAbortOrCommit).
   * Under TV2 (EndTxn v5+, `clientTransactionVersion` 2) the markers carry the next epoch and the
   * producer continues under it, or under a new producer id at epoch 0 when
   * the epoch is exhausted (taken over at COMPLETE_*). A recovery producer
   * with a producer id of its own (KeepPreparedTxn at an exhausted epoch):
   * the markers carry the id the transaction's data was written with, at the
   * highest epoch, and the producer continues under its own id (one epoch on
   * under TV2) once COMPLETE_* is written.
   */
  prepareAbortOrCommit(commit: boolean, clientTransactionVersion: number, newProducerId: () => bigint, now: number): TxnTransitMetadata {
    const bump = clientTransactionVersion >= 2;
    const owner = this.owner();
    let epoch = owner.producerEpoch;
    let nextProducerId = -1n;
    let nextProducerEpoch = -1;
    if (owner.producerId !== this.producerId) {
      epoch = MAX_EPOCH;
      nextProducerId = owner.producerId;
      nextProducerEpoch = owner.producerEpoch + (bump ? 1 : 0);
    } else if (bump) {
      if (owner.producerEpoch >= MAX_EPOCH - 1) {
        nextProducerId = newProducerId();
        nextProducerEpoch = 0;
      }
      epoch = owner.producerEpoch + 1;
    }
    return this.prepareTransitionTo(commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, now, {
      producerEpoch: epoch,
      nextProducerId,
      nextProducerEpoch,
      // As Kafka's prepareAbortOrCommit: a TV2 end records the epoch it bumped from; a classic one bumps nothing.
      ...(bump ? { lastProducerEpoch: owner.producerId === this.producerId ? owner.producerEpoch : -1 } : {}),
      // The version of this EndTxn decides how the transaction ends and how a retry of it is
      // recognised: a classic client may take over an id a TV2 one used.
      clientTransactionVersion: bump ? 2 : clientTransactionVersion,
    });
  }

  /**
   * The coordinator aborts the open transaction (a timeout, or a new
   * InitProducerId fencing its producer) under a bumped epoch, so that
   * producer is fenced. Kafka marks PREPARE_EPOCH_FENCE pending
   * (prepareFenceProducerEpoch) and, under the same lock, replaces it with
   * PREPARE_ABORT (TransactionCoordinator.endTransaction, isEpochFence);
   * nothing can run between the two here, so this is one step to PREPARE_ABORT.
   * Under TV2 an EndTxn with epoch E is a retry when the state holds E + 1, so
   * the epoch moves two on, as Kafka's fence then TV2 bump: the fenced
   * producer's EndTxn is then PRODUCER_FENCED, not a "retry" handed the epoch
   * the abort ran under. A recovery producer under a new id (KeepPreparedTxn
   * at an exhausted epoch) has an epoch of its own, so the markers take the
   * highest epoch of the transaction's id.
   */
  prepareFenceProducerEpoch(now: number): TxnTransitMetadata {
    const owner = this.owner();
    const step = this.clientTransactionVersion >= 2 ? 2 : 1;
    const epoch = owner.producerId !== this.producerId ? MAX_EPOCH : Math.min(owner.producerEpoch + step, MAX_EPOCH);
    return this.prepareTransitionTo(TxnState.PREPARE_ABORT, now, { producerEpoch: epoch, nextProducerId: -1n, nextProducerEpoch: -1, lastProducerEpoch: -1 });
  }

  /**
   * Every marker acknowledged: COMPLETE_COMMIT or COMPLETE_ABORT (Kafka's
   * prepareComplete), the transaction's partitions and share groups cleared;
   * after an epoch overflow the producer continues under the identity handed
   * out at PREPARE_*. Kafka prepares this as soon as PREPARE_* is written, so
   * the id stays pending while its markers are sent; kipgen prepares it once
   * they are acknowledged, and answers requests meanwhile from the PREPARE_*
   * state (CONCURRENT_TRANSACTIONS for all but a retry of the same EndTxn).
   */
  prepareComplete(now: number): TxnTransitMetadata {
    const overflow = this.nextProducerId >= 0n;
    return this.prepareTransitionTo(this.state === TxnState.PREPARE_COMMIT ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT, now, {
      partitions: new Map(),
      shareGroups: new Set(),
      startTimestamp: -1,
      ...(overflow ? { producerId: this.nextProducerId, producerEpoch: this.nextProducerEpoch, previousProducerId: this.producerId } : {}),
      nextProducerId: -1n,
      nextProducerEpoch: -1,
    });
  }

  /**
   * The id expired: DEAD pending while its tombstone is written (Kafka's
   * prepareDead). Never completed: once the tombstone is written the id is
   * removed from memory, or kept as it was.
   */
  prepareDead(now: number): TxnTransitMetadata {
    return this.prepareTransitionTo(TxnState.DEAD, now, {});
  }

  /**
   * The one checked way to a new state (Kafka's prepareTransitionTo): refused
   * while another transition is pending, or when `state` may not follow the
   * current one; otherwise marks `state` pending and returns the target.
   */
  prepareTransitionTo(state: TxnStateCode, now: number, change: TransitChange): TxnTransitMetadata {
    if (this.#pendingTo !== null) {
      throw new IllegalTransitionError(
        ErrorCode.CONCURRENT_TRANSACTIONS,
        `transactional id ${this.transactionalId}: cannot prepare ${txnStateName(state)} while the transition to ${txnStateName(this.#pendingTo)} is pending`,
      );
    }
    if (!isValidTransition(this.state, state)) throw this.illegal(`${txnStateName(this.state)} → ${txnStateName(state)} is not a legal transition`);
    const target: TxnTransitMetadata = { ...this.snapshot(), ...change, state, lastUpdateTimestamp: now };
    if (target.producerId < 0n) throw this.illegal(`producer id ${target.producerId} in the transition to ${txnStateName(state)}`);
    // As Kafka: only a transactional id never initialised (epoch -1) may head for DEAD without an epoch.
    if (state !== TxnState.DEAD && target.producerEpoch < 0)
      throw this.illegal(`producer epoch ${target.producerEpoch} in the transition to ${txnStateName(state)}`);
    this.#pendingTo = state;
    return target;
  }

  // -------------------------------------------------------------------------
  // Completing a transition

  /**
   * Applies a prepared transition once its write succeeded (Kafka's
   * completeTransitionTo): refused unless it is the pending one, legal from the
   * current state, and consistent with it — the checks Kafka makes that hold
   * for kipgen's transitions. DEAD and PREPARE_EPOCH_FENCE are never applied,
   * as in Kafka. A refusal leaves the metadata and its pending state as they were.
   */
  completeTransitionTo(target: TxnTransitMetadata): void {
    const to = target.state;
    if (this.#pendingTo === null) throw this.illegal(`completing ${txnStateName(to)} with no transition pending`);
    if (this.#pendingTo !== to) throw this.illegal(`completing ${txnStateName(to)} while the transition to ${txnStateName(this.#pendingTo)} is pending`);
    if (target.transactionalId !== this.transactionalId) throw this.illegal(`completing a transition of ${target.transactionalId}`);
    if (!isValidTransition(this.state, to)) throw this.illegal(`${txnStateName(this.state)} → ${txnStateName(to)} is not a legal transition`);
    const inconsistency = this.inconsistency(target);
    if (inconsistency !== null) throw this.illegal(`${txnStateName(this.state)} → ${txnStateName(to)}: ${inconsistency}`);
    Object.assign(this, target);
    this.#pendingTo = null;
  }

  /** The write of the pending transition failed: nothing changes, and the id is free again (as Kafka's TransactionStateManager on a failed append). */
  cancelTransition(): void {
    this.#pendingTo = null;
  }

  /** What makes `target` an impossible successor of the current state, or null (Kafka's per-state checks in completeTransitionTo). */
  private inconsistency(target: TxnTransitMetadata): string | null {
    const sameProducer = target.producerId === this.producerId;
    switch (target.state) {
      case TxnState.EMPTY:
        if (target.partitions.size > 0 || target.startTimestamp !== -1) return 'EMPTY holds no partitions and no start time';
        if (
          !(sameProducer && target.producerEpoch >= this.producerEpoch && target.producerEpoch <= this.producerEpoch + 1) &&
          !(!sameProducer && target.producerEpoch === 0)
        ) {
          return `epoch ${this.producerEpoch} → ${target.producerEpoch} is neither the same, one on, nor 0 under a new producer id`;
        }
        return null;
      case TxnState.ONGOING:
        if (!sameProducer || target.producerEpoch !== this.producerEpoch) return 'an open transaction keeps its producer id and epoch';
        if (target.timeoutMs !== this.timeoutMs) return 'an open transaction keeps its timeout';
        if (!containsAll(target.partitions, this.partitions)) return 'partitions leave an open transaction';
        return null;
      case TxnState.PREPARE_COMMIT:
      case TxnState.PREPARE_ABORT:
        if (!sameProducer || target.producerEpoch < this.producerEpoch) return 'ending a transaction keeps its producer id and never lowers its epoch';
        if (target.timeoutMs !== this.timeoutMs) return 'ending a transaction keeps its timeout';
        if (!containsAll(target.partitions, this.partitions) || !containsAll(this.partitions, target.partitions))
          return 'ending a transaction keeps its partitions';
        return null;
      case TxnState.COMPLETE_COMMIT:
      case TxnState.COMPLETE_ABORT:
        if (target.partitions.size > 0) return 'a completed transaction holds no partitions';
        if (target.timeoutMs !== this.timeoutMs) return 'completing a transaction keeps its timeout';
        if (sameProducer ? target.producerEpoch !== this.producerEpoch : target.producerId !== this.nextProducerId) {
          return 'completing keeps the identity, or takes over the one handed out at PREPARE_*';
        }
        return null;
      default:
        return `${txnStateName(target.state)} is only ever pending, never applied`;
    }
  }

  /** The fields alone (the pending state is an ES private field, so a spread leaves it out). */
  private snapshot(): TxnTransitMetadata {
    return { ...this };
  }

  private illegal(what: string): IllegalTransitionError {
    return new IllegalTransitionError(ErrorCode.UNKNOWN_SERVER_ERROR, `transactional id ${this.transactionalId} (${txnStateName(this.state)}): ${what}`);
  }
}

function containsAll(outer: Map<string, Set<number>>, inner: Map<string, Set<number>>): boolean {
  for (const [topic, set] of inner) for (const p of set) if (!outer.get(topic)?.has(p)) return false;
  return true;
}

export function isTwoPhase(meta: Pick<TxnTransitMetadata, 'timeoutMs'>): boolean {
  return meta.timeoutMs === TWO_PHASE_TIMEOUT_MS;
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
