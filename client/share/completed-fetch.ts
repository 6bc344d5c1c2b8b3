/**
 * One partition of a ShareFetch answer turned into the records poll()
 * delivers (Kafka's ShareCompletedFetch): the data records inside the
 * acquired ranges, each with its delivery count, and the acquired offsets
 * that hold no record acknowledged as gaps.
 */
import { decodeRecordBatches } from '../../runtime/record-batch.js';
import type { ShareConsumerRecord } from './acknowledgements.js';
import { InFlightRecords } from './in-flight-records.js';
import { GAP_ACKNOWLEDGE_TYPE } from './protocol.js';
import type { TopicPartitionRef } from './types.js';

export interface AcquiredRange {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryCount: number;
}

/** Acquired ranges wider than this are not scanned for gaps (a gap scan is per offset). */
const GAP_SCAN_LIMIT = 100000n;

/**
 * The records of `bytes` that lie in `acquired`, remembered in `inFlight`
 * (when it tracks deliveries); gaps among the acquired offsets are queued
 * there as GAP acknowledgements.
 */
export function acquiredRecords(
  ref: TopicPartitionRef,
  bytes: Uint8Array | null,
  acquired: readonly AcquiredRange[],
  inFlight: InFlightRecords,
): ShareConsumerRecord[] {
  if (acquired.length === 0) return [];
  const out: ShareConsumerRecord[] = [];
  const found = new Set<bigint>();
  /** Offset ranges of the complete batches in the response: an acquired offset in one of them with no data record is a gap. */
  const covered: Array<{ from: bigint; to: bigint }> = [];
  const ranges = [...acquired].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
  const rangeOf = (offset: bigint) => ranges.find((r) => offset >= r.firstOffset && offset <= r.lastOffset);
  const delivered = inFlight.delivered;
  const deliveredKey = InFlightRecords.deliveredPrefix(ref.topicId, ref.partition);
  if (bytes && bytes.length > 0) {
    const { batches } = decodeRecordBatches(bytes);
    for (const batch of batches) {
      covered.push({ from: batch.baseOffset, to: batch.lastOffset });
      if (batch.isControl) continue;
      for (const record of batch.records) {
        const range = rangeOf(record.offset);
        if (!range || found.has(record.offset)) continue;
        found.add(record.offset);
        const shareRecord: ShareConsumerRecord = {
          topic: ref.topic,
          topicId: ref.topicId,
          partition: ref.partition,
          offset: record.offset,
          timestamp: record.timestamp,
          key: record.key,
          value: record.value,
          headers: record.headers,
          deliveryCount: range.deliveryCount,
        };
        out.push(shareRecord);
        if (delivered) delivered.set(`${deliveredKey}${record.offset}`, shareRecord);
      }
    }
  }
  // Acquired offsets that are positively not records — inside a complete batch of the response but not one of
  // its data records (a control record, a record removed by compaction) — are acknowledged as GAP. An acquired
  // offset that no batch of the response covers (bytes cut short, a batch not sent) may be a real record: it is
  // left alone, so that its lock expires and it is delivered again. Archiving it (GAP → ARCHIVED) would lose it;
  // in transactional mode no one would ever process it.
  const isCovered = (o: bigint) => covered.some((c) => o >= c.from && o <= c.to);
  for (const range of ranges) {
    const span = range.lastOffset - range.firstOffset + 1n;
    if (span > GAP_SCAN_LIMIT) continue;
    for (let o = range.firstOffset; o <= range.lastOffset; o++) if (!found.has(o) && isCovered(o)) inFlight.add(ref, o, GAP_ACKNOWLEDGE_TYPE);
  }
  return out;
}
