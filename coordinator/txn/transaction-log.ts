/**
 * The transaction coordinator's state in `__transaction_state`: one
 * TransactionLogKey/TransactionLogValue record per state change, written as
 * Kafka writes them (value version 0, the classic transaction protocol) and
 * written (to the page cache; fsynced as the flush settings say, log/flush.ts)
 * before the coordinator acts on it. Replaying the partitions this
 * node leads, last record per key wins, rebuilds every transaction's state.
 */
import { TransactionLogKey, TransactionLogValue } from '../../generated/index.js';
import { encodeRecordBatch } from '../../runtime/index.js';
import { TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import {
  coordinatorRecordType,
  decodeCoordinatorKey,
  decodeCoordinatorValue,
  encodeCoordinatorKey,
  encodeCoordinatorValue,
} from '../coordinator-record-layout.js';
import type { LogManager } from '../log/log-manager.js';
import type { PartitionLog } from '../log/partition-log.js';
import { TransactionMetadata, TxnState, type TxnStateCode, type TxnTransitMetadata } from './transaction-metadata.js';

/**
 * kipgen's own tagged field of TransactionLogValue v1: the share groups the
 * transaction holds acks for, as a UTF-8 JSON array of group ids. Far above
 * Kafka's tags (0-3), and skipped by any reader that does not know it.
 */
const SHARE_GROUPS_TAG = 10_000;

/** v0 for the classic flow, as Kafka writes it; v1 (tagged fields) once a producer uses TV2, an identity is staged, or share groups are held. */
function valueVersion(meta: TxnTransitMetadata): number {
  return meta.clientTransactionVersion >= 2 || meta.nextProducerId >= 0n || meta.previousProducerId >= 0n || meta.shareGroups.size > 0 ? 1 : 0;
}

function encodeTransactionKey(transactionalId: string): Uint8Array {
  return encodeCoordinatorKey(TransactionLogKey, TransactionLogKey.create({ transactionalId }));
}

export function encodeTransactionRecord(meta: TxnTransitMetadata): { key: Uint8Array; value: Uint8Array } {
  const key = encodeTransactionKey(meta.transactionalId);
  const value = encodeCoordinatorValue(
    TransactionLogValue,
    TransactionLogValue.create({
      producerId: meta.producerId,
      producerEpoch: meta.producerEpoch,
      transactionTimeoutMs: meta.timeoutMs,
      transactionStatus: meta.state,
      // Kafka writes no partition list for EMPTY.
      transactionPartitions:
        meta.state === TxnState.EMPTY ? null : [...meta.partitions].map(([topic, set]) => ({ topic, partitionIds: [...set].sort((a, b) => a - b) })),
      transactionLastUpdateTimestampMs: BigInt(meta.lastUpdateTimestamp),
      transactionStartTimestampMs: BigInt(meta.startTimestamp),
      previousProducerId: meta.previousProducerId,
      nextProducerId: meta.nextProducerId,
      nextProducerEpoch: meta.nextProducerEpoch,
      clientTransactionVersion: meta.clientTransactionVersion,
      ...(meta.shareGroups.size > 0
        ? { _unknownTaggedFields: [{ tag: SHARE_GROUPS_TAG, data: new TextEncoder().encode(JSON.stringify([...meta.shareGroups].sort())) }] }
        : {}),
    }),
    valueVersion(meta),
  );
  return { key, value };
}

export function decodeTransactionRecord(key: Uint8Array, value: Uint8Array | null): TxnTransitMetadata | { tombstone: string } {
  const { transactionalId } = decodeCoordinatorKey(TransactionLogKey, key);
  if (value === null) return { tombstone: transactionalId };
  const { value: v } = decodeCoordinatorValue(TransactionLogValue, value);
  const partitions = new Map<string, Set<number>>();
  for (const entry of v.transactionPartitions ?? []) partitions.set(entry.topic, new Set(entry.partitionIds));
  const groupsField = v._unknownTaggedFields?.find((f) => f.tag === SHARE_GROUPS_TAG);
  const shareGroups = new Set<string>(groupsField === undefined ? [] : (JSON.parse(new TextDecoder().decode(groupsField.data)) as string[]));
  return {
    transactionalId,
    producerId: v.producerId,
    producerEpoch: v.producerEpoch,
    timeoutMs: v.transactionTimeoutMs,
    state: v.transactionStatus as TxnStateCode,
    partitions,
    shareGroups,
    startTimestamp: Number(v.transactionStartTimestampMs),
    lastUpdateTimestamp: Number(v.transactionLastUpdateTimestampMs),
    clientTransactionVersion: v.clientTransactionVersion,
    nextProducerId: v.nextProducerId,
    nextProducerEpoch: v.nextProducerEpoch,
    previousProducerId: v.previousProducerId,
    lastProducerEpoch: -1,
  };
}

export class TransactionLog {
  constructor(
    private readonly cluster: Cluster,
    private readonly logs: LogManager,
  ) {}

  /** Appends `meta` (the target of a prepared transition) to its partition (fsynced per the flush settings). */
  async write(meta: TxnTransitMetadata): Promise<void> {
    const log = this.ledLog(this.cluster.transactionPartitionFor(meta.transactionalId));
    const { key, value } = encodeTransactionRecord(meta);
    const now = BigInt(Date.now());
    await log.append(encodeRecordBatch({ baseTimestamp: now, records: [{ key, value, timestamp: now }] }));
  }

  /**
   * Appends one tombstone (null value) per transactional id, all of
   * `partition`, in one batch stamped `timestampMs`: replay then
   * forgets them. Kafka's TransactionStateManager.writeTombstonesForExpiredTransactionalIds
   * writes the expired ids of a partition the same way.
   */
  async writeTombstones(partition: number, transactionalIds: string[], timestampMs: number): Promise<void> {
    const log = this.ledLog(partition);
    const timestamp = BigInt(timestampMs);
    const records = transactionalIds.map((transactionalId) => ({ key: encodeTransactionKey(transactionalId), value: null, timestamp }));
    await log.append(encodeRecordBatch({ baseTimestamp: timestamp, records }));
  }

  /** The log of a `__transaction_state` partition this node leads; a write elsewhere is a bug, so it throws. */
  private ledLog(partition: number): PartitionLog {
    const log = this.logs.get(TRANSACTION_STATE_TOPIC, partition);
    if (log === undefined) throw new Error(`${TRANSACTION_STATE_TOPIC}-${partition} is not led by node ${this.cluster.nodeId}`);
    return log;
  }

  /** Every transactional id's latest state in the partitions this node leads. */
  replay(): Map<string, TransactionMetadata> {
    const out = new Map<string, TransactionMetadata>();
    const topic = this.cluster.topicByName(TRANSACTION_STATE_TOPIC)!;
    for (const partition of this.cluster.localPartitions(topic)) {
      const log = this.logs.get(TRANSACTION_STATE_TOPIC, partition)!;
      for (const batch of log.batches()) {
        if (batch.isControl) continue;
        for (const record of batch.records) {
          if (record.key === null || coordinatorRecordType(record.key) !== TransactionLogKey.apiKey) continue;
          const decoded = decodeTransactionRecord(record.key, record.value);
          if ('tombstone' in decoded) out.delete(decoded.tombstone);
          else out.set(decoded.transactionalId, new TransactionMetadata(decoded));
        }
      }
    }
    return out;
  }
}
