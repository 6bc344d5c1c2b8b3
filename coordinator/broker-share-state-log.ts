/**
 * The CoordinatorLog handed to the share coordinator: this node's
 * `__share_group_state` partition, with transactional appends checked
 * against the transaction coordinator first (a TxnShareAcknowledge must
 * follow AddShareAcksToTxn, as TxnOffsetCommit must follow AddOffsetsToTxn).
 * The check names the share group: acks for a group the transaction did not
 * add are refused even when another group's acks already opened the
 * transaction in this partition.
 *
 * What was verified is remembered per producer for its open transaction
 * here only: the entry goes when the transaction's marker is appended, so
 * the memory is bounded by the open transactions, not by every producer id
 * that ever wrote. (Kafka's nearest state, the partition's verification
 * entries, is dropped by producer-id expiration after producer.id.expiration.ms;
 * this one is exact and goes sooner.)
 */
import { encodeRecordBatch, type RecordBatch } from '../runtime/index.js';
import type { AppendResult, CoordinatorLog, CoordinatorRecord, IsolationLevel, ReadResult, TransactionalProducer } from './broker-context.js';
import type { PartitionLog } from './log/partition-log.js';
import type { TransactionVerifier } from './txn/verifier.js';

export class ShareStateLog implements CoordinatorLog {
  /** Per producer: the open transaction here (its first offset) and the groups verified for it. */
  private readonly verifiedGroups = new Map<bigint, { first: bigint; groups: Set<string> }>();

  constructor(
    private readonly log: PartitionLog,
    private readonly verifier: TransactionVerifier,
  ) {
    // Any append may be the marker that closes a remembered transaction (markers reach the log from
    // the marker writer, not through this class), so each one prunes.
    log.onAppend(() => this.prune());
  }

  /** How many producers have groups remembered for an open transaction here (for tests). */
  verifiedTransactionCount(): number {
    return this.verifiedGroups.size;
  }

  /**
   * Forgets the groups of transactions no longer open in the log. A marker is
   * the only thing that closes one: producer-id expiration never removes a
   * producer with an open transaction, so an expired producer's entry went
   * with its marker, and the check here covers both.
   */
  private prune(): void {
    if (this.verifiedGroups.size === 0) return;
    for (const [producerId, known] of this.verifiedGroups) {
      if (!this.log.producers.isTransactionOpen(producerId, known.first)) this.verifiedGroups.delete(producerId);
    }
  }

  get topic(): string {
    return this.log.topic;
  }
  get topicId(): string {
    return this.log.topicId;
  }
  get partition(): number {
    return this.log.partition;
  }
  logStartOffset(): bigint {
    return this.log.logStartOffset();
  }
  logEndOffset(): bigint {
    return this.log.logEndOffset();
  }
  highWatermark(): bigint {
    return this.log.highWatermark();
  }
  lastStableOffset(): bigint {
    return this.log.lastStableOffset();
  }
  read(fromOffset: bigint, maxBytes: number, isolation?: IsolationLevel): ReadResult {
    return this.log.read(fromOffset, maxBytes, isolation);
  }
  onAppend(listener: () => void): () => void {
    return this.log.onAppend(listener);
  }
  batches(fromOffset?: bigint): Iterable<RecordBatch> {
    return this.log.batches(fromOffset);
  }

  /** Verifies a transactional write, unless the same group was verified for the producer's transaction open here. */
  private async verify(transaction: TransactionalProducer): Promise<void> {
    const { producerId, producerEpoch, groupId } = transaction;
    if (groupId === undefined) {
      await this.verifier.verifyWrite(this.log, transaction.transactionalId, producerId, producerEpoch);
      return;
    }
    const first = this.log.producers.ongoingTransactionStart(producerId, producerEpoch);
    const known = this.verifiedGroups.get(producerId);
    // A two-phase producer is verified at each write: a KeepPreparedTxn may have fenced it meanwhile (verifier.ts).
    if (first !== null && known?.first === first && known.groups.has(groupId) && this.verifier.isKnownOneShot(producerId, producerEpoch)) return;
    await this.verifier.verifyShareGroupWrite(this.log, transaction.transactionalId, producerId, producerEpoch, groupId);
  }

  /** After a verified write: its group is known for the transaction it opened or continued here. */
  private remember(transaction: TransactionalProducer): void {
    if (transaction.groupId === undefined) return;
    const start = this.log.producers.ongoingTransactionStart(transaction.producerId, transaction.producerEpoch);
    if (start === null) return;
    const known = this.verifiedGroups.get(transaction.producerId);
    const entry = known?.first === start ? known : { first: start, groups: new Set<string>() };
    entry.groups.add(transaction.groupId);
    this.verifiedGroups.set(transaction.producerId, entry);
  }

  async append(records: readonly CoordinatorRecord[], transaction?: TransactionalProducer): Promise<AppendResult> {
    if (records.length === 0) throw new Error('append needs at least one record');
    if (transaction !== undefined) await this.verify(transaction);
    const now = BigInt(Date.now());
    const info = await this.log.append(
      encodeRecordBatch({
        baseTimestamp: now,
        isTransactional: transaction !== undefined,
        producerId: transaction?.producerId ?? -1n,
        producerEpoch: transaction?.producerEpoch ?? -1,
        records: records.map((r) => ({ key: r.key, value: r.value, timestamp: now })),
      }),
    );
    if (transaction !== undefined) this.remember(transaction);
    return { baseOffset: info.baseOffset, lastOffset: info.lastOffset };
  }
}
