/**
 * Per-partition producer state, as Kafka's ProducerStateManager keeps it:
 * for every producer id its epoch, the last few batches it wrote (to answer a
 * retried batch with its original offsets), and the first offset of its open
 * transaction (which bounds the last stable offset). Aborted transactions are
 * indexed for read_committed fetches. All of it is rebuilt by replaying the
 * log at startup, so none of it is written to disk separately.
 *
 * A producer id idle for `producer.id.expiration.ms` with no transaction open
 * is forgotten (removeExpired, Kafka's removeExpiredProducers), so that the
 * state does not grow with every producer id that ever wrote. The aborted-
 * transaction index is not producer state in that sense and is kept.
 */
import { NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, type RecordBatchHeader } from '../../runtime/index.js';
import { ErrorCode, BrokerError } from '../errors.js';
import type { AbortedTransaction } from '../broker-context.js';

/** Kafka keeps the metadata of the last 5 batches per producer for duplicate detection. */
const RETAINED_BATCHES = 5;
const INT32_MAX = 0x7fffffff;

interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
  /** The batch's max timestamp as stored (Kafka's BatchMetadata.timestamp): the append time on a LogAppendTime topic. */
  timestamp: bigint;
}

interface ProducerEntry {
  producerId: bigint;
  epoch: number;
  batches: BatchMetadata[];
  /** First offset of the open transaction, or null. */
  txnFirstOffset: bigint | null;
  /** The last COMMIT/ABORT marker written for this producer: a resend of it finds nothing open and writes nothing. */
  lastMarker: { epoch: number; commit: boolean } | null;
  /**
   * Kafka's ProducerStateEntry.lastTimestamp: the max timestamp of the
   * producer's last data batch, or the timestamp of its last marker —
   * whichever was appended last, even if older. On a CreateTime topic these
   * are the producer's timestamps, so a producer whose clock lags ages faster,
   * as in Kafka; on a LogAppendTime topic, the broker's append time.
   */
  lastTimestamp: bigint;
  /** The transaction coordinator epoch of its last marker, -1 before any (Kafka's ProducerStateEntry.coordinatorEpoch). */
  coordinatorEpoch: number;
}

export interface AbortedTxnEntry extends AbortedTransaction {
  /** Offset of the ABORT marker. */
  readonly lastOffset: bigint;
}

/** A retried batch that is already in the log: answer with where it went. */
export interface Duplicate {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  /** The original batch's stored max timestamp, which Kafka returns as the duplicate's logAppendTime. */
  readonly timestamp: bigint;
}

export class ProducerState {
  private readonly producers = new Map<bigint, ProducerEntry>();
  /** Open transactions: producer id → first offset (insertion order is offset order). */
  private readonly ongoing = new Map<bigint, bigint>();
  readonly aborted: AbortedTxnEntry[] = [];

  /**
   * Checks a batch from a producer before it is appended (Kafka's
   * ProducerAppendInfo). Returns the earlier append when the batch is a retry
   * of one of the last 5 batches; throws BrokerError INVALID_PRODUCER_EPOCH,
   * OUT_OF_ORDER_SEQUENCE_NUMBER, DUPLICATE_SEQUENCE_NUMBER or INVALID_TXN_STATE.
   */
  check(header: RecordBatchHeader): Duplicate | null {
    const pid = header.producerId;
    if (pid < 0n) return null;
    const entry = this.producers.get(pid);
    if (entry === undefined) return null; // a producer new to this partition may start at any sequence
    if (header.producerEpoch < entry.epoch) {
      throw new BrokerError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `producer ${pid} wrote with epoch ${header.producerEpoch}, older than the current epoch ${entry.epoch}`,
      );
    }
    if (!header.isTransactional && entry.txnFirstOffset !== null) {
      throw new BrokerError(
        ErrorCode.INVALID_TXN_STATE,
        `producer ${pid} sent a non-transactional batch while its transaction from offset ${entry.txnFirstOffset} is open`,
      );
    }
    if (header.baseSequence === NO_SEQUENCE) return null;
    const firstSeq = header.baseSequence;
    const lastSeq = header.lastSequence;
    if (header.producerEpoch > entry.epoch) {
      if (firstSeq !== 0 && entry.epoch !== NO_PRODUCER_EPOCH) {
        throw new BrokerError(
          ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          `producer ${pid}: the first batch of epoch ${header.producerEpoch} must have sequence 0, got ${firstSeq}`,
        );
      }
      return null;
    }
    for (const batch of entry.batches) {
      if (batch.firstSeq === firstSeq && batch.lastSeq === lastSeq) {
        return { firstOffset: batch.firstOffset, lastOffset: batch.lastOffset, timestamp: batch.timestamp };
      }
    }
    const currentLastSeq = entry.batches.length > 0 ? entry.batches[entry.batches.length - 1]!.lastSeq : NO_SEQUENCE;
    const inSequence = firstSeq === currentLastSeq + 1 || (firstSeq === 0 && currentLastSeq === INT32_MAX);
    if (!inSequence) {
      const oldest = entry.batches[0];
      if (oldest !== undefined && currentLastSeq >= lastSeq && lastSeq < oldest.firstSeq && firstSeq >= 0) {
        // Older than the batches kept for retries, so it is certainly in the log already.
        throw new BrokerError(
          ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
          `producer ${pid} epoch ${header.producerEpoch}: sequences ${firstSeq}-${lastSeq} were written before (last is ${currentLastSeq})`,
        );
      }
      throw new BrokerError(
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        `producer ${pid} epoch ${header.producerEpoch}: expected sequence ${currentLastSeq + 1}, got ${firstSeq}`,
      );
    }
    return null;
  }

  /** Records an appended (or replayed) data batch. */
  onBatch(header: RecordBatchHeader): void {
    const pid = header.producerId;
    if (pid < 0n) return;
    const entry = this.entry(pid);
    if (header.producerEpoch > entry.epoch) {
      entry.epoch = header.producerEpoch;
      entry.batches = [];
    }
    entry.lastTimestamp = header.maxTimestamp;
    if (header.baseSequence !== NO_SEQUENCE) {
      entry.batches.push({
        firstSeq: header.baseSequence,
        lastSeq: header.lastSequence,
        firstOffset: header.baseOffset,
        lastOffset: header.lastOffset,
        timestamp: header.maxTimestamp,
      });
      if (entry.batches.length > RETAINED_BATCHES) entry.batches.shift();
    }
    if (header.isTransactional && entry.txnFirstOffset === null) {
      entry.txnFirstOffset = header.baseOffset;
      this.ongoing.set(pid, header.baseOffset);
    }
  }

  /**
   * Checks a COMMIT/ABORT marker before it is appended: a marker from an older
   * epoch than the producer's is a zombie coordinator's (INVALID_PRODUCER_EPOCH).
   */
  checkMarker(producerId: bigint, producerEpoch: number): void {
    const entry = this.producers.get(producerId);
    if (entry !== undefined && producerEpoch < entry.epoch) {
      throw new BrokerError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `marker for producer ${producerId} has epoch ${producerEpoch}, older than the current epoch ${entry.epoch}`,
      );
    }
  }

  /**
   * Records an appended (or replayed) marker: closes the producer's open
   * transaction, if any. `timestamp` is the marker's (its control record's).
   */
  onMarker(producerId: bigint, producerEpoch: number, commit: boolean, markerOffset: bigint, timestamp: bigint, coordinatorEpoch = -1): void {
    const entry = this.entry(producerId);
    entry.coordinatorEpoch = coordinatorEpoch;
    if (producerEpoch > entry.epoch) {
      entry.epoch = producerEpoch;
      entry.batches = [];
    }
    entry.lastTimestamp = timestamp;
    const first = entry.txnFirstOffset;
    entry.txnFirstOffset = null;
    entry.lastMarker = { epoch: producerEpoch, commit };
    this.ongoing.delete(producerId);
    if (first !== null && !commit) this.aborted.push({ producerId, firstOffset: first, lastOffset: markerOffset });
  }

  /**
   * Whether this marker was already written here and nothing was opened
   * since: the coordinator resent it (its first send was appended but not
   * acknowledged), so writing it again would add a second control batch.
   */
  isResentMarker(producerId: bigint, producerEpoch: number, commit: boolean): boolean {
    const entry = this.producers.get(producerId);
    return (
      entry !== undefined &&
      entry.txnFirstOffset === null &&
      entry.lastMarker !== null &&
      entry.lastMarker.epoch === producerEpoch &&
      entry.lastMarker.commit === commit
    );
  }

  /** The first offset of the producer's open transaction here (it identifies that transaction in this log), or null. */
  ongoingTransactionStart(producerId: bigint, producerEpoch: number): bigint | null {
    const entry = this.producers.get(producerId);
    return entry !== undefined && entry.epoch === producerEpoch ? entry.txnFirstOffset : null;
  }

  /**
   * Whether the transaction that started at `firstOffset` is still open here
   * (a first offset names one transaction of this log, whatever its epoch).
   */
  isTransactionOpen(producerId: bigint, firstOffset: bigint): boolean {
    return this.ongoing.get(producerId) === firstOffset;
  }

  /** Whether the producer has an open transaction here. */
  hasOngoingTransaction(producerId: bigint, producerEpoch: number): boolean {
    const entry = this.producers.get(producerId);
    return entry !== undefined && entry.txnFirstOffset !== null && entry.epoch === producerEpoch;
  }

  /** The first offset of the earliest open transaction, or null. */
  firstUnstableOffset(): bigint | null {
    let min: bigint | null = null;
    for (const offset of this.ongoing.values()) if (min === null || offset < min) min = offset;
    return min;
  }

  /** Aborted transactions that overlap [from, upTo): what a read_committed fetch of that range needs. */
  abortedWithin(from: bigint, upTo: bigint): AbortedTransaction[] {
    const out: AbortedTransaction[] = [];
    for (const txn of this.aborted) {
      if (txn.lastOffset >= from && txn.firstOffset < upTo) out.push({ producerId: txn.producerId, firstOffset: txn.firstOffset });
    }
    return out;
  }

  /**
   * Forgets every producer with no open transaction whose last timestamp is
   * `expirationMs` or more before `nowMs` (Kafka's
   * ProducerStateManager.removeExpiredProducers / isProducerExpired); returns
   * how many. A producer with an open transaction is kept however old, since
   * its first offset pins the last stable offset until its marker. The
   * aborted-transaction index is left alone: read_committed fetches of the
   * aborted records still need it (Kafka keeps it in per-segment files).
   *
   * A forgotten producer that writes again is new to this partition, as in
   * Kafka: any sequence and any epoch are accepted, a retry of a batch written
   * before is written again, and a resent marker is written again (a second
   * control batch closing nothing, which Kafka would also write).
   */
  removeExpired(nowMs: number, expirationMs: number): number {
    const now = BigInt(nowMs);
    const expiration = BigInt(expirationMs);
    let removed = 0;
    for (const [producerId, entry] of this.producers) {
      if (entry.txnFirstOffset === null && now - entry.lastTimestamp >= expiration) {
        this.producers.delete(producerId);
        removed++;
      }
    }
    return removed;
  }

  /** Producer ids with their epochs, open transactions and last timestamps: DescribeProducers' answer, dumps and tests. */
  describe(): { producerId: bigint; epoch: number; txnFirstOffset: bigint | null; lastSequence: number; lastTimestamp: bigint; coordinatorEpoch: number }[] {
    return [...this.producers.values()].map((e) => ({
      producerId: e.producerId,
      epoch: e.epoch,
      txnFirstOffset: e.txnFirstOffset,
      lastSequence: e.batches.length > 0 ? e.batches[e.batches.length - 1]!.lastSeq : NO_SEQUENCE,
      lastTimestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
    }));
  }

  private entry(producerId: bigint): ProducerEntry {
    let entry = this.producers.get(producerId);
    if (entry === undefined) {
      entry = { producerId, epoch: NO_PRODUCER_EPOCH, batches: [], txnFirstOffset: null, lastMarker: null, lastTimestamp: NO_TIMESTAMP, coordinatorEpoch: -1 };
      this.producers.set(producerId, entry);
    }
    return entry;
  }
}
