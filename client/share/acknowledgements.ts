/**
 * ShareAcknowledgements (KIP-1289 §3.4) and ShareGroupMetadata (§3.3).
 */
import type { RecordHeader } from '../../runtime/record-batch.js';
import { ConfigError } from '../errors.js';
import { copyAckLedgers, noteAckedRecord } from './transactional-deliveries.js';

/** How a record is acknowledged: ACCEPT (1) processed, RELEASE (2) deliver again, REJECT (3) archive unprocessed. */
export type AcknowledgeType = 'accept' | 'release' | 'reject';

/** The wire values of ShareAcknowledge/TxnShareAcknowledge AcknowledgeType. */
export const ACKNOWLEDGE_TYPE_CODES: Readonly<Record<AcknowledgeType, number>> = { accept: 1, release: 2, reject: 3 };

export function acknowledgeTypeCode(type: AcknowledgeType): number {
  const code = ACKNOWLEDGE_TYPE_CODES[type];
  if (code === undefined) throw new ConfigError(`acknowledge type must be 'accept', 'release' or 'reject', not ${JSON.stringify(type)}`);
  return code;
}

/** A record delivered to a share consumer. */
export interface ShareConsumerRecord {
  topic: string;
  topicId: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  /** How many times the record has been delivered, this delivery included. */
  deliveryCount: number;
}

/** What identifies a record for acknowledgement. */
export interface RecordPosition {
  topic: string;
  partition: number;
  offset: bigint;
  /** Known for records from a share consumer; looked up in metadata otherwise. */
  topicId?: string;
}

/** One batch of acknowledgements: offsets firstOffset..lastOffset (inclusive) all acknowledged with one type. */
export interface ShareAcknowledgementBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeType: AcknowledgeType;
}

/** The acknowledgements of one topic-partition. */
export interface PartitionAcknowledgements {
  topic: string;
  topicId: string | undefined;
  partition: number;
  batches: ShareAcknowledgementBatch[];
}

interface Entry {
  topic: string;
  topicId: string | undefined;
  partition: number;
  /** Disjoint, sorted by firstOffset; adjacent batches of one type are merged. */
  batches: ShareAcknowledgementBatch[];
}

/**
 * Acknowledgements for records of any number of topic-partitions, kept per
 * topic-partition as sorted batches of consecutive offsets of one type (the
 * KIP's Map<TopicPartition, ShareAcknowledgements> in one object). A record
 * added again replaces its earlier type.
 */
export class ShareAcknowledgements {
  private readonly entries = new Map<string, Entry>();

  /** Acknowledges every record with `type`, merging consecutive offsets into batches. */
  static fromRecords(records: Iterable<RecordPosition>, type: AcknowledgeType): ShareAcknowledgements {
    const acks = new ShareAcknowledgements();
    for (const record of records) acks.add(record, type);
    return acks;
  }

  /** Adds one record's acknowledgement. Returns this, for chaining. */
  add(record: RecordPosition, type: AcknowledgeType): this {
    // A record of a transactional share consumer tells the producer which consumer to report transaction ends to.
    noteAckedRecord(this, record);
    return this.addRange(record.topic, record.partition, record.offset, record.offset, type, record.topicId);
  }

  /** Adds a range of offsets (inclusive) acknowledged with one type. */
  addRange(topic: string, partition: number, firstOffset: bigint, lastOffset: bigint, type: AcknowledgeType, topicId?: string): this {
    acknowledgeTypeCode(type);
    if (typeof firstOffset !== 'bigint' || typeof lastOffset !== 'bigint' || firstOffset < 0n || lastOffset < firstOffset) {
      throw new ConfigError(`invalid acknowledgement range ${firstOffset}..${lastOffset} for ${topic}-${partition}`);
    }
    const key = `${topic}\u0000${partition}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { topic, topicId, partition, batches: [] };
      this.entries.set(key, entry);
    } else if (topicId !== undefined) {
      entry.topicId = topicId;
    }
    paint(entry.batches, { firstOffset, lastOffset, acknowledgeType: type });
    return this;
  }

  /** Adds every acknowledgement of `other` (later ones win). */
  merge(other: ShareAcknowledgements): this {
    copyAckLedgers(this, other);
    for (const p of other.partitions()) {
      for (const b of p.batches) this.addRange(p.topic, p.partition, b.firstOffset, b.lastOffset, b.acknowledgeType, p.topicId);
    }
    return this;
  }

  /** The acknowledgements per topic-partition, sorted by topic then partition. */
  partitions(): PartitionAcknowledgements[] {
    return [...this.entries.values()]
      .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition))
      .map((e) => ({
        topic: e.topic,
        topicId: e.topicId,
        partition: e.partition,
        batches: e.batches.map((b) => ({ ...b })),
      }));
  }

  /** The batches of one topic-partition (empty if none). */
  batches(topic: string, partition: number): ShareAcknowledgementBatch[] {
    return (this.entries.get(`${topic}\u0000${partition}`)?.batches ?? []).map((b) => ({ ...b }));
  }

  get isEmpty(): boolean {
    return this.entries.size === 0;
  }

  /** Number of acknowledged records. */
  get recordCount(): number {
    let n = 0n;
    for (const e of this.entries.values()) for (const b of e.batches) n += b.lastOffset - b.firstOffset + 1n;
    return Number(n);
  }

  toString(): string {
    return this.partitions()
      .map((p) => `${p.topic}-${p.partition}: ${p.batches.map((b) => `${b.firstOffset}-${b.lastOffset}:${b.acknowledgeType}`).join(', ')}`)
      .join('; ');
  }
}

/** Inserts `batch` into sorted disjoint `batches`, overriding what it overlaps and merging same-type neighbours. */
function paint(batches: ShareAcknowledgementBatch[], batch: ShareAcknowledgementBatch): void {
  const last = batches[batches.length - 1];
  // Fast paths: records added in increasing order.
  if (!last || batch.firstOffset > last.lastOffset) {
    if (last && last.acknowledgeType === batch.acknowledgeType && last.lastOffset + 1n === batch.firstOffset) {
      last.lastOffset = batch.lastOffset;
    } else {
      batches.push(batch);
    }
    return;
  }
  const out: ShareAcknowledgementBatch[] = [];
  let inserted = false;
  for (const b of batches) {
    if (b.lastOffset < batch.firstOffset || b.firstOffset > batch.lastOffset) {
      if (!inserted && b.firstOffset > batch.lastOffset) {
        out.push(batch);
        inserted = true;
      }
      out.push(b);
      continue;
    }
    if (b.firstOffset < batch.firstOffset) out.push({ ...b, lastOffset: batch.firstOffset - 1n });
    if (!inserted) {
      out.push(batch);
      inserted = true;
    }
    if (b.lastOffset > batch.lastOffset) out.push({ ...b, firstOffset: batch.lastOffset + 1n });
  }
  if (!inserted) out.push(batch);
  // Merge adjacent batches of one type.
  batches.length = 0;
  for (const b of out) {
    const prev = batches[batches.length - 1];
    if (prev && prev.acknowledgeType === b.acknowledgeType && prev.lastOffset + 1n === b.firstOffset) prev.lastOffset = b.lastOffset;
    else batches.push({ ...b });
  }
}

/**
 * The share-group membership a transaction acknowledges for (KIP §3.3):
 * group id, member id and generation id (the member epoch). From
 * `KafkaShareConsumer.groupMetadata()`.
 */
export class ShareGroupMetadata {
  constructor(
    readonly groupId: string,
    /** Empty when unknown (then TxnShareAcknowledge cannot check ownership). */
    readonly memberId: string = '',
    /** The member epoch, or -1 when unknown. */
    readonly generationId: number = -1,
  ) {
    if (typeof groupId !== 'string' || groupId.length === 0) throw new ConfigError('ShareGroupMetadata needs a non-empty groupId');
  }

  toString(): string {
    return `ShareGroupMetadata(groupId=${this.groupId}, memberId=${this.memberId}, generationId=${this.generationId})`;
  }
}
