/**
 * Committed offsets of consumer groups, in the `__consumer_offsets`
 * partitions this node leads: what TxnOffsetCommit writes and OffsetFetch
 * reads. Transactional commits are written as transactional OffsetCommit
 * records carrying the producer id and epoch, held as pending, and
 * materialized by the COMMIT marker or dropped by the ABORT marker — Kafka's
 * group coordinator does the same. Replaying the log at startup resolves the
 * pending records against the markers found after them.
 *
 * OffsetCommit writes plain (non-transactional) OffsetCommit records before
 * the reply (fsynced as the flush settings say). Classic groups' GroupMetadata records are kept here too
 * (the last one per group); DeleteGroups writes tombstones for both.
 */
import { encodeRecordBatch, readControlRecord } from '../../runtime/index.js';
import { CONSUMER_OFFSETS_TOPIC, type Cluster } from '../cluster.js';
import { coordinatorRecordType } from '../coordinator-record-layout.js';
import { ErrorCode } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { PartitionLog } from '../log/partition-log.js';
import {
  GROUP_METADATA_RECORD_TYPE,
  OFFSET_COMMIT_RECORD_TYPE,
  decodeGroupMetadataKey,
  decodeGroupMetadataValue,
  decodeOffsetCommitKey,
  decodeOffsetCommitValue,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  type GroupMetadata,
  type OffsetCommitValue,
} from './offset-records.js';

export interface OffsetToCommit {
  topic: string;
  partition: number;
  offset: bigint;
  leaderEpoch: number;
  metadata: string | null;
}

type GroupOffsets = Map<string, Map<string, OffsetCommitValue>>; // group → "topic\0partition" → value

interface PendingCommit {
  group: string;
  topic: string;
  partition: number;
  value: OffsetCommitValue;
}

export interface FetchedOffset {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  /** A transactional commit for this partition is pending (OffsetFetch RequireStable → UNSTABLE_OFFSET_COMMIT). */
  unstable: boolean;
}

/** State of one `__consumer_offsets` partition. */
class OffsetsPartition {
  readonly committed: GroupOffsets = new Map();
  /** producer id → offsets it wrote in its open transaction. */
  readonly pending = new Map<bigint, PendingCommit[]>();
  /** The last GroupMetadata record of each classic group (deleted groups removed). */
  readonly groups = new Map<string, GroupMetadata>();

  apply(commit: PendingCommit): void {
    let group = this.committed.get(commit.group);
    if (group === undefined) this.committed.set(commit.group, (group = new Map()));
    group.set(tpKey(commit.topic, commit.partition), commit.value);
  }

  /**
   * A tombstone: the committed offset goes, and so do the pending transactional
   * ones for the same partition (Kafka's OffsetMetadataManager.replay of a null value).
   */
  remove(group: string, topic: string, partition: number): void {
    this.committed.get(group)?.delete(tpKey(topic, partition));
    for (const [producerId, list] of this.pending) {
      const kept = list.filter((c) => c.group !== group || c.topic !== topic || c.partition !== partition);
      if (kept.length === 0) this.pending.delete(producerId);
      else if (kept.length !== list.length) this.pending.set(producerId, kept);
    }
  }

  /** Whether the group has an offset, committed or pending, for this partition. */
  hasOffset(group: string, topic: string, partition: number): boolean {
    if (this.committed.get(group)?.has(tpKey(topic, partition))) return true;
    for (const list of this.pending.values()) if (list.some((c) => c.group === group && c.topic === topic && c.partition === partition)) return true;
    return false;
  }

  complete(producerId: bigint, commit: boolean): number {
    const pending = this.pending.get(producerId) ?? [];
    this.pending.delete(producerId);
    if (commit) for (const entry of pending) this.apply(entry);
    return pending.length;
  }
}

export class OffsetStore {
  private readonly partitions = new Map<number, OffsetsPartition>();

  constructor(
    private readonly cluster: Cluster,
    private readonly logs: LogManager,
  ) {}

  /** Rebuilds every local `__consumer_offsets` partition from its log. */
  recover(): void {
    const topic = this.cluster.topicByName(CONSUMER_OFFSETS_TOPIC)!;
    for (const partition of this.cluster.localPartitions(topic)) {
      const state = new OffsetsPartition();
      this.partitions.set(partition, state);
      for (const batch of this.log(partition).batches()) {
        if (batch.isControl) {
          const marker = batch.records[0] ? readControlRecord(batch.records[0]) : null;
          if (marker && (marker.type === 'COMMIT' || marker.type === 'ABORT')) state.complete(batch.producerId, marker.type === 'COMMIT');
          continue;
        }
        for (const record of batch.records) {
          if (record.key === null) continue;
          const type = coordinatorRecordType(record.key);
          if (type === GROUP_METADATA_RECORD_TYPE) {
            const group = decodeGroupMetadataKey(record.key);
            if (record.value === null) state.groups.delete(group);
            else state.groups.set(group, decodeGroupMetadataValue(record.value));
            continue;
          }
          if (type !== OFFSET_COMMIT_RECORD_TYPE) continue;
          const key = decodeOffsetCommitKey(record.key);
          if (record.value === null) {
            state.remove(key.group, key.topic, key.partition);
            continue;
          }
          const commit = { ...key, value: decodeOffsetCommitValue(record.value) };
          if (batch.isTransactional) this.addPending(state, batch.producerId, commit);
          else state.apply(commit);
        }
      }
    }
  }

  /** Whether this node is the group coordinator of `groupId`. */
  isCoordinatorFor(groupId: string): boolean {
    return this.partitions.has(this.cluster.offsetsPartitionFor(groupId));
  }

  /** NONE, or why this node cannot serve the group: an empty id (INVALID_GROUP_ID), another node coordinates it (NOT_COORDINATOR). */
  coordinatorError(groupId: string): number {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID;
    return this.isCoordinatorFor(groupId) ? ErrorCode.NONE : ErrorCode.NOT_COORDINATOR;
  }

  /**
   * Writes a transactional commit and holds it as pending. The
   * caller has verified that the group's partition is in the transaction; the
   * log enforces the producer epoch (INVALID_PRODUCER_EPOCH).
   */
  async commitTransactional(groupId: string, producerId: bigint, producerEpoch: number, offsets: OffsetToCommit[]): Promise<void> {
    const { state, commits } = await this.writeCommits(groupId, offsets, { isTransactional: true, producerId, producerEpoch });
    for (const commit of commits) this.addPending(state, producerId, commit);
  }

  /** OffsetCommit: writes the offsets as one batch, then they are committed. */
  async commit(groupId: string, offsets: OffsetToCommit[]): Promise<void> {
    const { state, commits } = await this.writeCommits(groupId, offsets, {});
    for (const commit of commits) state.apply(commit);
  }

  /** Appends one batch of OffsetCommit records, plain or transactional; the caller applies them. */
  private async writeCommits(
    groupId: string,
    offsets: OffsetToCommit[],
    producer: { isTransactional?: boolean; producerId?: bigint; producerEpoch?: number },
  ): Promise<{ state: OffsetsPartition; commits: PendingCommit[] }> {
    const partition = this.cluster.offsetsPartitionFor(groupId);
    const state = this.partitions.get(partition)!;
    const now = BigInt(Date.now());
    const commits: PendingCommit[] = offsets.map((o) => ({
      group: groupId,
      topic: o.topic,
      partition: o.partition,
      value: { offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata ?? '', commitTimestamp: now },
    }));
    await this.log(partition).append(
      encodeRecordBatch({
        baseTimestamp: now,
        ...producer,
        records: commits.map((c) => ({
          key: encodeOffsetCommitKey({ group: c.group, topic: c.topic, partition: c.partition }),
          value: encodeOffsetCommitValue(c.value),
          timestamp: now,
        })),
      }),
    );
    return { state, commits };
  }

  /** Stores a classic group's metadata (its generation and members) as Kafka does after each rebalance. */
  async writeGroupMetadata(groupId: string, value: GroupMetadata): Promise<void> {
    const partition = this.cluster.offsetsPartitionFor(groupId);
    const now = BigInt(Date.now());
    await this.log(partition).append(
      encodeRecordBatch({ baseTimestamp: now, records: [{ key: encodeGroupMetadataKey(groupId), value: encodeGroupMetadataValue(value), timestamp: now }] }),
    );
    this.partitions.get(partition)!.groups.set(groupId, value);
  }

  /** The last stored metadata of a classic group, if any. */
  groupMetadata(groupId: string): GroupMetadata | undefined {
    return this.partitions.get(this.cluster.offsetsPartitionFor(groupId))?.groups.get(groupId);
  }

  /** Whether the group has committed offsets, or pending transactional ones. */
  hasOffsets(groupId: string): boolean {
    const state = this.partitions.get(this.cluster.offsetsPartitionFor(groupId));
    if (state === undefined) return false;
    if ((state.committed.get(groupId)?.size ?? 0) > 0) return true;
    for (const list of state.pending.values()) if (list.some((c) => c.group === groupId)) return true;
    return false;
  }

  /** Groups with offsets or metadata in this node's partitions. */
  groupIds(): string[] {
    const ids = new Set<string>();
    for (const state of this.partitions.values()) {
      for (const [group, offsets] of state.committed) if (offsets.size > 0) ids.add(group);
      for (const group of state.groups.keys()) ids.add(group);
    }
    return [...ids];
  }

  /** DeleteGroups: tombstones for the group's offsets and metadata, then forgotten. */
  async deleteGroup(groupId: string): Promise<void> {
    const partition = this.cluster.offsetsPartitionFor(groupId);
    const state = this.partitions.get(partition)!;
    const now = BigInt(Date.now());
    const records: { key: Uint8Array; value: null; timestamp: bigint }[] = [];
    for (const key of state.committed.get(groupId)?.keys() ?? []) {
      const [topic, p] = key.split('\u0000') as [string, string];
      records.push({ key: encodeOffsetCommitKey({ group: groupId, topic, partition: Number(p) }), value: null, timestamp: now });
    }
    records.push({ key: encodeGroupMetadataKey(groupId), value: null, timestamp: now });
    await this.log(partition).append(encodeRecordBatch({ baseTimestamp: now, records }));
    state.committed.delete(groupId);
    state.groups.delete(groupId);
  }

  /**
   * OffsetDelete: a tombstone for each listed partition the group has an offset
   * for, committed or pending (Kafka's OffsetMetadataManager.deleteOffsets), in
   * one batch written before the reply; the others are left as they are.
   */
  async deleteOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[]): Promise<void> {
    const partition = this.cluster.offsetsPartitionFor(groupId);
    const state = this.partitions.get(partition)!;
    const present = partitions.filter((p) => state.hasOffset(groupId, p.topic, p.partition));
    if (present.length === 0) return;
    const now = BigInt(Date.now());
    const records = present.map((p) => ({
      key: encodeOffsetCommitKey({ group: groupId, topic: p.topic, partition: p.partition }),
      value: null,
      timestamp: now,
    }));
    await this.log(partition).append(encodeRecordBatch({ baseTimestamp: now, records }));
    for (const p of present) state.remove(groupId, p.topic, p.partition);
  }

  /** A marker reached `__consumer_offsets-<partition>`: materialize or drop that producer's pending offsets. */
  completeTransaction(partition: number, producerId: bigint, commit: boolean): void {
    this.partitions.get(partition)?.complete(producerId, commit);
  }

  /** Committed offsets of a group: all of them, or the listed topic partitions. */
  fetch(groupId: string, wanted: { topic: string; partitions: number[] }[] | null): Map<string, Map<number, FetchedOffset | null>> {
    const state = this.partitions.get(this.cluster.offsetsPartitionFor(groupId));
    const committed = state?.committed.get(groupId) ?? new Map<string, OffsetCommitValue>();
    const unstable = new Set<string>();
    for (const list of state?.pending.values() ?? []) for (const c of list) if (c.group === groupId) unstable.add(tpKey(c.topic, c.partition));
    const out = new Map<string, Map<number, FetchedOffset | null>>();
    const put = (topic: string, partition: number): void => {
      let topicMap = out.get(topic);
      if (topicMap === undefined) out.set(topic, (topicMap = new Map()));
      const key = tpKey(topic, partition);
      const value = committed.get(key);
      topicMap.set(
        partition,
        value === undefined && !unstable.has(key)
          ? null
          : { offset: value?.offset ?? -1n, leaderEpoch: value?.leaderEpoch ?? -1, metadata: value?.metadata ?? '', unstable: unstable.has(key) },
      );
    };
    if (wanted === null) {
      for (const key of new Set([...committed.keys(), ...unstable])) {
        const [topic, partition] = key.split('\u0000') as [string, string];
        put(topic, Number(partition));
      }
    } else {
      for (const t of wanted) for (const p of t.partitions) put(t.topic, p);
    }
    return out;
  }

  private addPending(state: OffsetsPartition, producerId: bigint, commit: PendingCommit): void {
    let list = state.pending.get(producerId);
    if (list === undefined) state.pending.set(producerId, (list = []));
    list.push(commit);
  }

  private log(partition: number): PartitionLog {
    return this.logs.get(CONSUMER_OFFSETS_TOPIC, partition)!;
  }
}

function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
