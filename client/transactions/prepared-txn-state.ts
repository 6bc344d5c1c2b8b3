/**
 * KIP-939's names for one transaction of a transactional id: what a
 * checkpoint stores to finish it after a restart, and what finishing it says
 * became of it (DESIGN §5.6).
 */
/**
 * What became of the transaction a saved PreparedTxnState names, as far as the
 * transaction coordinator can tell: 'committed' (committed now or before),
 * 'aborted' (aborted now or before, or nothing of it ever reached the
 * coordinator, so nothing of it can commit), or 'unknown' — it ended before
 * the call and the coordinator has moved past it (a later transaction, a new
 * producer, the transactional id expired): the coordinator keeps the end state
 * of the last transaction only (DESIGN §5.6).
 */
export type SavedTransactionOutcome = 'committed' | 'aborted' | 'unknown';

/** The transaction a checkpointing framework persists to finish it after a restart (DESIGN §5.6). */
export interface PreparedTransaction {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

/**
 * KIP-939's PreparedTxnState: the producer id and epoch of one prepared
 * transaction. Under Transactions V2 every transaction has its own epoch, so
 * this names exactly one transaction. `toString()` is the form to store in a
 * checkpoint: Kafka's `producerId:epoch`, followed by `:transactionalId`
 * (which may itself contain ':') so that another process can finish it;
 * `PreparedTxnState.fromString` reads both forms.
 */
export class PreparedTxnState implements PreparedTransaction {
  constructor(
    readonly transactionalId: string,
    readonly producerId: bigint,
    readonly producerEpoch: number,
  ) {}

  static fromString(text: string, transactionalId?: string): PreparedTxnState {
    const match = /^(-?\d+):(-?\d+)(?::(.*))?$/s.exec(text);
    if (match === null) {
      throw new TypeError(`PreparedTxnState.fromString: expected "producerId:epoch[:transactionalId]", got ${JSON.stringify(text)}`);
    }
    const id = match[3] ?? transactionalId;
    if (id === undefined || id === '') {
      throw new TypeError(`PreparedTxnState.fromString(${JSON.stringify(text)}): the text names no transactional id; pass it as the second argument`);
    }
    const epoch = Number(match[2]);
    if (epoch < -1 || epoch > 32767) throw new TypeError(`PreparedTxnState.fromString(${JSON.stringify(text)}): epoch ${epoch} is outside -1..32767`);
    return new PreparedTxnState(id, BigInt(match[1]!), epoch);
  }

  /** A saved `{ transactionalId, producerId, producerEpoch }` (e.g. parsed from JSON) as a PreparedTxnState. */
  static from(saved: PreparedTransaction): PreparedTxnState {
    return saved instanceof PreparedTxnState ? saved : new PreparedTxnState(saved.transactionalId, BigInt(saved.producerId), Number(saved.producerEpoch));
  }

  /** Whether this names the same transaction as `other`. */
  equals(other: PreparedTransaction | null): boolean {
    return (
      other !== null && other.transactionalId === this.transactionalId && other.producerId === this.producerId && other.producerEpoch === this.producerEpoch
    );
  }

  toString(): string {
    return `${this.producerId}:${this.producerEpoch}:${this.transactionalId}`;
  }

  toJSON(): { transactionalId: string; producerId: string; producerEpoch: number } {
    return { transactionalId: this.transactionalId, producerId: String(this.producerId), producerEpoch: this.producerEpoch };
  }
}
