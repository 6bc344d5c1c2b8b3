/**
 * What a share consumer in 'transactional' acknowledgement mode has handed to
 * the application in the open transaction (DESIGN §5.8), so that no record
 * goes into the transaction that already holds an earlier delivery of it.
 *
 * A record comes back to the same consumer while the transaction processing
 * its earlier delivery is still open when its acquisition lock runs out
 * between two polls (a checkpoint interval longer than
 * share.record.lock.duration.ms), or when the member is timed out and rejoins.
 * The broker cannot see it: an acknowledgement names an offset, not a
 * delivery, and the second delivery is held by the same member id, so one
 * ACCEPT would cover two outputs.
 *
 * - A record delivered again while an earlier delivery of it is in the open
 *   transaction is withheld: poll() does not return it, and it stays acquired,
 *   so that the acknowledgement of the earlier delivery, when the transaction
 *   sends it, lands on this acquisition (one processing, one ack). When the
 *   transaction ends, a withheld record whose ack did not become pending in
 *   it is released (RELEASE) so that it comes back at once.
 * - Membership lost (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH) while records of
 *   the old membership are in the open transaction without a pending ack: the
 *   group has released them, so the transaction cannot acknowledge what it
 *   processed. It becomes abortable: sendShareAcksToTransaction(),
 *   prepareTransaction() and commitTransaction() fail with CommitFailedError,
 *   as Kafka's producer fails sendOffsetsToTransaction with a stale group
 *   generation (TransactionManager.TxnOffsetCommitHandler: UNKNOWN_MEMBER_ID,
 *   ILLEGAL_GENERATION → abortableError(CommitFailedException)). The records
 *   come back after the abort.
 *
 * The consumer fetches its next batch while the application works on the
 * last one (share/prefetch.ts). Those records are judged twice: when they
 * arrive (screen: a second delivery of a record the open transaction holds
 * without a pending ack is withheld then, so that the ack lands on it), and
 * when a poll hands them out (admit), in whatever transaction is open then.
 *
 * The producer learns of the consumer when a transaction carries its acks
 * (the groupMetadata() passed, or the records the ShareAcknowledgements were
 * built from) and from then on reports the end of each of its transactions.
 * Before that first link the consumer cannot know where a transaction ends:
 * a repeat is then handed out (withholding it could keep it forever), and the
 * transaction that first links is made abortable instead — at worst one
 * needless abort, never a duplicate.
 */
import { CommitFailedError } from '../errors.js';
import type { ShareConsumerRecord } from './acknowledgements.js';

/** A partition's acks as the producer resolved them (topic id known). */
export interface StagedPartitionAcks {
  topicId: string;
  partition: number;
  batches: readonly { firstOffset: bigint; lastOffset: bigint }[];
}

/** Where a delivered record is, to release it. */
interface RecordRef {
  topic: string;
  topicId: string;
  partition: number;
  offset: bigint;
}

interface HandedOut {
  record: RecordRef;
  /** The membership (see TransactionalDeliveries.incarnation) it was delivered under. */
  incarnation: number;
  /** Its ack is pending in the open transaction (TxnShareAcknowledge succeeded). */
  staged: boolean;
}

/** Unlinked, the ledger is never cleared by a transaction end: it keeps at most this many offsets (oldest dropped). */
const UNLINKED_LIMIT = 100_000;

const tpKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

export class TransactionalDeliveries {
  /** Bumped at each membership loss. */
  private incarnation = 0;
  /** Records handed out in the open transaction, per `topicId:partition`, by offset. */
  private readonly handedOut = new Map<string, Map<bigint, HandedOut>>();
  private size = 0;
  /** Deliveries kept from the application, per `topicId:partition:offset`. */
  private readonly withheld = new Map<string, RecordRef>();
  /** Why the open transaction must abort, or null. */
  private broken: { reason: string; code: number | undefined } | null = null;
  /** A producer reports this consumer's transaction ends (see the module comment). */
  private linked = false;

  constructor(
    /** Queues a RELEASE of a withheld record (sent with the next ShareFetch). */
    private readonly release: (record: RecordRef) => void,
    private readonly describe: string,
  ) {}

  /** The records of one poll that may go to the application; the others are withheld. */
  admit(records: ShareConsumerRecord[]): ShareConsumerRecord[] {
    const out: ShareConsumerRecord[] = [];
    for (const record of records) {
      const key = tpKey(record.topicId, record.partition);
      let offsets = this.handedOut.get(key);
      const earlier = offsets?.get(record.offset);
      if (earlier !== undefined && this.repeat(record, earlier) === 'withheld') continue;
      if (!offsets) {
        offsets = new Map();
        this.handedOut.set(key, offsets);
      }
      if (earlier === undefined) this.size++;
      offsets.set(record.offset, {
        record: { topic: record.topic, topicId: record.topicId, partition: record.partition, offset: record.offset },
        incarnation: this.incarnation,
        staged: false,
      });
      out.push(record);
    }
    if (!this.linked && this.size > UNLINKED_LIMIT) this.dropOldest(this.size - UNLINKED_LIMIT);
    return out;
  }

  /**
   * The records of a prefetch (share/prefetch.ts: the next batch, fetched
   * while the application still works in the open transaction), as they
   * arrive: those a later poll may hand out, and admit then. A second
   * delivery of a record the open transaction holds without a pending ack is
   * withheld now, as admit() withholds it, so that the transaction's ack
   * lands on it. The other repeats are judged by admit() when a poll hands
   * them out: in the same transaction as poll() judges its own fetch; after
   * it ended, they are new work. A record whose ack the transaction staged
   * comes back only when the coordinator ended that transaction (aborted:
   * the producer learns why from its own requests), or when the prefetch took
   * it after its lock ran out, before the ack was sent: then the ack landed
   * on this acquisition, the record is no longer this member's, and the next
   * transaction's TxnShareAcknowledge for it fails, so that one can only
   * abort; never a second committed output.
   */
  screen(records: ShareConsumerRecord[]): ShareConsumerRecord[] {
    return records.filter((record) => {
      const open = this.handedOut.get(tpKey(record.topicId, record.partition))?.get(record.offset);
      return open === undefined || open.staged || !this.linked || this.repeat(record, open) !== 'withheld';
    });
  }

  /** A record delivered again while `earlier` is in the open transaction: withheld, or handed out with the transaction broken. */
  private repeat(record: ShareConsumerRecord, earlier: HandedOut): 'withheld' | 'handed out' {
    const where = `${this.describe}: record ${record.topic}-${record.partition}@${record.offset} came back (delivery ${record.deliveryCount}) `;
    if (earlier.staged) {
      // Its ack was pending in the open transaction: only the transaction's end on the broker (an abort by the
      // coordinator, on timeout or fencing) frees it. That transaction cannot commit; the record is new work.
      this.breakTransaction(`${where}although its acknowledgement was pending in the open transaction: the coordinator aborted that transaction`, undefined);
    } else if (this.linked) {
      this.withheld.set(`${tpKey(record.topicId, record.partition)}:${record.offset}`, earlier.record);
      return 'withheld';
    } else {
      this.breakTransaction(
        `${where}before any transaction carried acknowledgements of this consumer, so an earlier delivery of it may be in the open transaction`,
        undefined,
      );
    }
    return 'handed out';
  }

  /**
   * The group no longer has this member (it rejoins): records of the old
   * membership without a pending ack break the open transaction, and the
   * withheld deliveries are gone (the group released them).
   */
  membershipLost(reason: string, code: number): void {
    this.withheld.clear();
    let unstaged = 0;
    for (const offsets of this.handedOut.values()) {
      for (const entry of offsets.values()) if (!entry.staged && entry.incarnation === this.incarnation) unstaged++;
    }
    this.incarnation++;
    if (unstaged > 0) {
      this.breakTransaction(
        `${this.describe}: the share group lost this member (${reason}) while the open transaction holds ${unstaged} record(s) ` +
          'of that membership without a pending acknowledgement; the group released them',
        code,
      );
    }
  }

  /**
   * Called by a producer before it acknowledges, prepares or commits for
   * this consumer: from now on it reports transaction ends. Throws
   * CommitFailedError when the open transaction must abort.
   */
  check(): void {
    this.linked = true;
    if (this.broken) {
      throw new CommitFailedError(
        `${this.broken.reason}. Abort the transaction (abortTransaction()); its records are delivered again after the abort.`,
        this.broken.code,
      );
    }
  }

  /** The acks of these partitions are now pending in the open transaction. */
  staged(partitions: readonly StagedPartitionAcks[]): void {
    for (const p of partitions) {
      const offsets = this.handedOut.get(tpKey(p.topicId, p.partition));
      if (!offsets) continue;
      for (const [offset, entry] of offsets) {
        if (p.batches.some((b) => offset >= b.firstOffset && offset <= b.lastOffset)) entry.staged = true;
      }
    }
  }

  /**
   * The producer's transaction committed or aborted (or the producer failed
   * for good, which ends it too): forget what it held, and release the
   * withheld deliveries whose ack did not become pending in it, which would
   * otherwise wait for their lock to run out. A staged one is no longer ours:
   * TX_PENDING, then finished by the commit or made AVAILABLE by the abort.
   * A record handed out without a pending ack is left as it is, acquired
   * until its lock runs out (KIP-1289 §6 case 6: an explicit abort before the
   * acks redelivers on lock expiry).
   */
  transactionEnded(): void {
    for (const w of this.withheld.values()) {
      const entry = this.handedOut.get(tpKey(w.topicId, w.partition))?.get(w.offset);
      if (entry?.staged !== true) this.release(w);
    }
    this.withheld.clear();
    this.handedOut.clear();
    this.size = 0;
    this.broken = null;
  }

  /** Records handed out in the open transaction (for tests and logs). */
  get handedOutCount(): number {
    return this.size;
  }

  get withheldCount(): number {
    return this.withheld.size;
  }

  private breakTransaction(reason: string, code: number | undefined): void {
    this.broken ??= { reason, code };
  }

  private dropOldest(count: number): void {
    for (const [key, offsets] of this.handedOut) {
      for (const offset of offsets.keys()) {
        if (count-- <= 0) return;
        offsets.delete(offset);
        this.size--;
      }
      if (offsets.size === 0) this.handedOut.delete(key);
    }
  }
}

/** The ledger behind a ShareGroupMetadata or a delivered record, for the producer to find. */
const ledgers = new WeakMap<object, TransactionalDeliveries>();
/** The ledgers of the records a ShareAcknowledgements was built from. */
const ackLedgers = new WeakMap<object, Set<TransactionalDeliveries>>();

export function attachDeliveries(owner: object, deliveries: TransactionalDeliveries): void {
  ledgers.set(owner, deliveries);
}

export function deliveriesOf(owner: object): TransactionalDeliveries | undefined {
  return ledgers.get(owner);
}

/** `acks` now names `record`: remember the ledger of the consumer that delivered it (if any). */
export function noteAckedRecord(acks: object, record: object): void {
  const ledger = ledgers.get(record);
  if (ledger === undefined) return;
  let set = ackLedgers.get(acks);
  if (!set) {
    set = new Set();
    ackLedgers.set(acks, set);
  }
  set.add(ledger);
}

/** `into` takes every ledger `from` knows (ShareAcknowledgements.merge). */
export function copyAckLedgers(into: object, from: object): void {
  for (const ledger of ackLedgers.get(from) ?? []) {
    let set = ackLedgers.get(into);
    if (!set) {
      set = new Set();
      ackLedgers.set(into, set);
    }
    set.add(ledger);
  }
}

export function ledgersOfAcks(acks: object): ReadonlySet<TransactionalDeliveries> {
  return ackLedgers.get(acks) ?? new Set();
}
