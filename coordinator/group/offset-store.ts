/**
 * Committed offsets of consumer groups, in the `__consumer_offsets`
 * partitions this node leads: what TxnOffsetCommit writes and OffsetFetch
 * reads. Transactional commits are written as transactional OffsetCommit
 * records carrying the producer id and epoch, held as pending, and
 * materialized by the COMMIT marker or dropped by the ABORT marker — Kafka's
 * group coordinator does the same. Replaying the log at startup resolves the
 * pending records against the markers found after them.
 *
 * kipgen has no classic consumer-group membership (JoinGroup/SyncGroup), so
 * TxnOffsetCommit's generation and member id are not checked (as for a group
 * with no members in Kafka).
 */
import { encodeRecordBatch, readControlRecord } from '../../runtime/index.js';
import { CONSUMER_OFFSETS_TOPIC, type Cluster } from '../cluster.js';
import { coordinatorRecordType } from '../coordinator-records.js';
import type { LogManager } from '../log/log-manager.js';
import type { PartitionLog } from '../log/partition-log.js';
import {
  OFFSET_COMMIT_RECORD_TYPE,
  decodeOffsetCommitKey,
  decodeOffsetCommitValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
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

  apply(commit: PendingCommit): void {
    let group = this.committed.get(commit.group);
    if (group === undefined) this.committed.set(commit.group, (group = new Map()));
    group.set(tpKey(commit.topic, commit.partition), commit.value);
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
          if (record.key === null || coordinatorRecordType(record.key) !== OFFSET_COMMIT_RECORD_TYPE || record.value === null) continue;
          const key = decodeOffsetCommitKey(record.key);
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

  /**
   * Writes a transactional commit (fsynced) and holds it as pending. The
   * caller has verified that the group's partition is in the transaction; the
   * log enforces the producer epoch (INVALID_PRODUCER_EPOCH).
   */
  async commitTransactional(groupId: string, producerId: bigint, producerEpoch: number, offsets: OffsetToCommit[]): Promise<void> {
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
        isTransactional: true,
        producerId,
        producerEpoch,
        records: commits.map((c) => ({
          key: encodeOffsetCommitKey({ group: c.group, topic: c.topic, partition: c.partition }),
          value: encodeOffsetCommitValue(c.value),
          timestamp: now,
        })),
      }),
    );
    for (const commit of commits) this.addPending(state, producerId, commit);
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
