/**
 * Everything that belongs to one transaction and nothing after it, in one
 * place with one reset (Kafka's TransactionManager.resetTransactionState and
 * the fields it clears: partitionsInTransaction, pendingPartitionsInTransaction,
 * transactionStarted, preparedTxnState), plus KIP-1289's share acks bound to
 * it and the calls still running in it.
 */
import type { PreparedTxnState } from './prepared-txn-state.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export class CurrentTransaction {
  /** Partitions the coordinator has added (TV1), as `topic:partition`. */
  readonly partitionsAdded = new Set<string>();
  /** Partitions with records queued that are still to be added (TV1). */
  readonly pendingPartitions = new Map<string, TopicPartition>();
  /** sendOffsets / sendShareAcks calls still running; commit and abort wait for them. */
  readonly pendingCalls = new Set<Promise<unknown>>();
  /** The coordinator has the transaction: an add (partitions, offsets, share acks) succeeded, or a kept prepared one. */
  started = false;
  /** An add request was sent, maybe without an answer: the coordinator may have started the transaction. */
  addAttempted = false;
  /** Share acks were bound (KIP-1289): the share-transaction metrics count its end. */
  hasShareAcks = false;
  /** Its timeout has been counted in the metrics (once per transaction). */
  timeoutCounted = false;
  /** Date.now() at beginTransaction(). */
  beganAt = 0;
  /**
   * The transaction kept by initTransactions({ keepPreparedTxn: true }), or
   * prepared by prepareTransaction(): what completeTransaction() compares with.
   * While it is set, only commit or abort may follow.
   */
  prepared: PreparedTxnState | null = null;

  /**
   * Forgets the transaction: at beginTransaction() and when one ends
   * (committed, aborted, or moved past with an epoch bump). Calls of the
   * transaction have settled by then: commit and abort wait for them.
   */
  reset(now = Date.now()): void {
    this.partitionsAdded.clear();
    this.pendingPartitions.clear();
    this.pendingCalls.clear();
    this.started = false;
    this.addAttempted = false;
    this.hasShareAcks = false;
    this.timeoutCounted = false;
    this.beganAt = now;
    this.prepared = null;
  }

  /** A partition joins (TV1): it waits for the next AddPartitionsToTxn unless already added or waiting. */
  addPartition(topic: string, partition: number): void {
    const key = partitionKey(topic, partition);
    if (this.partitionsAdded.has(key) || this.pendingPartitions.has(key)) return;
    this.pendingPartitions.set(key, { topic, partition });
  }

  isPartitionAdded(topic: string, partition: number): boolean {
    return this.partitionsAdded.has(partitionKey(topic, partition));
  }

  /** The partitions of `batch` were added by the coordinator. */
  partitionsJoined(batch: ReadonlyMap<string, TopicPartition>): void {
    for (const key of batch.keys()) {
      this.pendingPartitions.delete(key);
      this.partitionsAdded.add(key);
    }
    this.started = true;
  }

  /** Runs `call` as part of the transaction: commit and abort wait for it to settle. */
  track<T>(call: Promise<T>): Promise<T> {
    this.pendingCalls.add(call);
    const remove = (): void => void this.pendingCalls.delete(call);
    call.then(remove, remove);
    return call;
  }

  /** Waits for every call of the transaction; their errors were recorded where they failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pendingCalls]);
  }
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}:${partition}`;
}
