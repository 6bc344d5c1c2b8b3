/**
 * The CoordinatorLog handed to the share coordinator: this node's
 * `__share_group_state` partition, with transactional appends checked
 * against the transaction coordinator first (a TxnShareAcknowledge must
 * follow AddShareAcksToTxn, as TxnOffsetCommit must follow AddOffsetsToTxn).
 */
import { encodeRecordBatch, type RecordBatch } from '../runtime/index.js';
import type { AppendResult, CoordinatorLog, CoordinatorRecord, IsolationLevel, ReadResult, TransactionalProducer } from './broker-context.js';
import type { PartitionLog } from './log/partition-log.js';
import type { TransactionVerifier } from './txn/verifier.js';

export class ShareStateLog implements CoordinatorLog {
  constructor(
    private readonly log: PartitionLog,
    private readonly verifier: TransactionVerifier,
  ) {}

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

  async append(records: readonly CoordinatorRecord[], transaction?: TransactionalProducer): Promise<AppendResult> {
    if (records.length === 0) throw new Error('append needs at least one record');
    if (transaction !== undefined) {
      await this.verifier.verifyWrite(this.log, transaction.transactionalId, transaction.producerId, transaction.producerEpoch);
    }
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
    return { baseOffset: info.baseOffset, lastOffset: info.lastOffset };
  }
}
