/**
 * One partition of a Fetch answer turned into the records poll() returns
 * (Kafka's CompletedFetch.nextFetchedRecord): records before the fetch
 * offset (a compressed batch starts earlier) are dropped, control batches
 * are skipped, and under read_committed a transactional batch whose producer
 * is in the answer's abort index (AbortedTransactions: producer id and first
 * offset) is skipped until that producer's ABORT marker. The records are
 * decoded at once; what max.poll.records leaves over is handed out by later
 * polls, and the position moves past skipped batches only when they are
 * reached.
 */
import { decodeRecordBatches, readControlRecord } from '../../runtime/record-batch.js';
import type { ConsumerRecord } from './consumer-record.js';
import type { IsolationLevel } from './config.js';
import type { TopicPartition } from './topic-partition.js';

export interface AbortedTransaction {
  producerId: bigint;
  firstOffset: bigint;
}

export class CompletedFetch {
  private readonly records: ConsumerRecord[] = [];
  private next = 0;
  /** Where fetching goes on after every record here is consumed: past the last batch, skipped ones included. */
  private readonly endOffset: bigint;

  constructor(
    readonly tp: TopicPartition,
    /** The position the fetch was sent for: the answer is dropped if the position moved meanwhile. */
    public fetchOffset: bigint,
    bytes: Uint8Array | null,
    isolation: IsolationLevel,
    abortedTransactions: readonly AbortedTransaction[] | null,
  ) {
    let nextFetchOffset = fetchOffset;
    // Kafka keeps the abort index in a priority queue by first offset.
    const aborted = isolation === 'read_committed' ? [...(abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1)) : [];
    const abortedProducerIds = new Set<bigint>();
    const batches = bytes && bytes.length > 0 ? decodeRecordBatches(bytes).batches : [];
    for (const batch of batches) {
      if (batch.lastOffset < fetchOffset) continue;
      if (isolation === 'read_committed' && batch.producerId >= 0n) {
        while (aborted.length > 0 && aborted[0]!.firstOffset <= batch.lastOffset) abortedProducerIds.add(aborted.shift()!.producerId);
        if (batch.isControl && batch.records.length > 0 && readControlRecord(batch.records[0]!).type === 'ABORT') {
          abortedProducerIds.delete(batch.producerId);
        } else if (batch.isTransactional && abortedProducerIds.has(batch.producerId)) {
          nextFetchOffset = batch.lastOffset + 1n;
          continue;
        }
      }
      // Kafka's batch.nextOffset(): past the batch's last offset even when compaction removed its last record.
      nextFetchOffset = batch.lastOffset + 1n;
      if (batch.isControl) continue;
      const leaderEpoch = batch.partitionLeaderEpoch >= 0 ? batch.partitionLeaderEpoch : null;
      for (const record of batch.records) {
        if (record.offset < fetchOffset) continue;
        this.records.push({
          topic: tp.topic,
          partition: tp.partition,
          offset: record.offset,
          timestamp: record.timestamp,
          timestampType: batch.timestampType,
          key: record.key,
          value: record.value,
          headers: record.headers,
          leaderEpoch,
        });
      }
    }
    this.endOffset = nextFetchOffset;
  }

  get isConsumed(): boolean {
    return this.next >= this.records.length;
  }

  /**
   * Up to `max` records, and the position after them: the offset after the
   * last one, or the end of the fetch once everything is handed out.
   */
  take(max: number): { records: ConsumerRecord[]; position: bigint; leaderEpoch: number | null } {
    const records = this.records.slice(this.next, this.next + max);
    this.next += records.length;
    const last = records[records.length - 1];
    const position = this.isConsumed ? this.endOffset : last!.offset + 1n;
    return { records, position, leaderEpoch: last?.leaderEpoch ?? null };
  }
}
