/**
 * The share consumer's in-flight records (Kafka's ShareInFlightBatch and the
 * per-partition Acknowledgements it feeds): the records poll() delivered that
 * are not acknowledged yet, and the acknowledgements waiting for the next
 * ShareFetch or ShareAcknowledge to their leader.
 */
import type { ShareConsumerRecord } from './acknowledgements.js';
import { ACKNOWLEDGE_TYPE_CODES } from './acknowledgements.js';
import { GAP_ACKNOWLEDGE_TYPE } from './protocol.js';
import { tpKey, type AckBatch, type PartitionAckBatches, type TopicPartitionRef } from './types.js';

export class InFlightRecords {
  /**
   * Records delivered and not yet acknowledged, by `topicId:partition:offset`;
   * null when the consumer never acknowledges what it delivers (transactional
   * mode without fallback), so that poll() keeps nothing per record.
   */
  readonly delivered: Map<string, ShareConsumerRecord> | null;
  /** Acks waiting to be sent, per `topicId:partition`: offset → AcknowledgeType code (GAP_ACKNOWLEDGE_TYPE for a gap). */
  private readonly pending = new Map<string, { ref: TopicPartitionRef; offsets: Map<bigint, number> }>();

  constructor(tracksDelivered: boolean) {
    this.delivered = tracksDelivered ? new Map() : null;
  }

  /** The key of `delivered` for an offset of a partition: `${deliveredPrefix(ref)}${offset}`. */
  static deliveredPrefix(topicId: string, partition: number): string {
    return `${tpKey(topicId, partition)}:`;
  }

  wasDelivered(record: ShareConsumerRecord): boolean {
    return this.delivered?.has(`${InFlightRecords.deliveredPrefix(record.topicId, record.partition)}${record.offset}`) ?? false;
  }

  /** Queues an acknowledgement; a later one of the same offset replaces it. */
  add(ref: TopicPartitionRef, offset: bigint, code: number): void {
    const key = tpKey(ref.topicId, ref.partition);
    let entry = this.pending.get(key);
    if (!entry) {
      entry = { ref, offsets: new Map() };
      this.pending.set(key, entry);
    }
    entry.offsets.set(offset, code);
  }

  private isPending(record: ShareConsumerRecord): boolean {
    return this.pending.get(tpKey(record.topicId, record.partition))?.offsets.has(record.offset) ?? false;
  }

  /** Implicit mode: every delivered record not yet acknowledged is accepted. */
  acceptAllDelivered(): void {
    if (!this.delivered) return;
    for (const record of this.delivered.values()) {
      if (this.isPending(record)) continue;
      this.add(record, record.offset, ACKNOWLEDGE_TYPE_CODES.accept);
    }
  }

  /** Delivered records without an acknowledgement (explicit mode requires none before the next poll). */
  unacknowledged(): ShareConsumerRecord[] {
    if (!this.delivered) return [];
    return [...this.delivered.values()].filter((r) => !this.isPending(r));
  }

  /** Transactional mode: what was delivered stays acquired for the producer's transaction; forget it here. */
  forgetDelivered(): void {
    this.delivered?.clear();
  }

  /** Transactional mode, closing: keep the GAP acks only; record acks belong to transactions. */
  keepGapsOnly(): void {
    for (const [key, entry] of this.pending) {
      for (const [o, t] of entry.offsets) if (t !== GAP_ACKNOWLEDGE_TYPE) entry.offsets.delete(o);
      if (entry.offsets.size === 0) this.pending.delete(key);
    }
  }

  /**
   * Takes the pending acks of the partitions `filter` picks, as wire batches
   * (consecutive offsets of one type merged), by `topicId:partition`; their
   * records stop being in flight.
   */
  take(filter: (ref: TopicPartitionRef) => boolean): Map<string, PartitionAckBatches> {
    const out = new Map<string, PartitionAckBatches>();
    for (const [key, entry] of this.pending) {
      if (!filter(entry.ref)) continue;
      this.pending.delete(key);
      const offsets = [...entry.offsets].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const batches: AckBatch[] = [];
      for (const [offset, type] of offsets) {
        const last = batches[batches.length - 1];
        if (last && last.lastOffset + 1n === offset && last.acknowledgeTypes[0] === type) last.lastOffset = offset;
        else batches.push({ firstOffset: offset, lastOffset: offset, acknowledgeTypes: [type] });
      }
      if (this.delivered) for (const [offset] of offsets) this.delivered.delete(`${key}:${offset}`);
      out.set(key, { ref: entry.ref, batches });
    }
    return out;
  }
}
