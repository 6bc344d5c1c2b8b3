/**
 * What a transaction that carries share acks (KIP-1289) owes outside the
 * coordinators: the transactional share consumers whose records it
 * acknowledges (DESIGN §5.8), and the share-transaction metrics (active,
 * aborts, timeouts).
 */
import { ApiError, KafkaTimeoutError } from '../errors.js';
import type { ShareTransactionMetrics } from '../metrics.js';
import { BROKER_ABORT_CODES } from '../transaction-protocol.js';
import type { TransactionalDeliveries } from '../share/transactional-deliveries.js';
import type { CurrentTransaction } from './current-transaction.js';

export class ShareTransactionLink {
  /**
   * The transactional share consumers whose acks this producer carried: each
   * is told when a transaction ends and asked before acks, prepare and commit
   * whether the open transaction must abort. Kept across transactions: the
   * consumer's next records belong to the next one.
   */
  private readonly consumers = new Set<TransactionalDeliveries>();

  constructor(
    private readonly current: CurrentTransaction,
    private readonly metrics: ShareTransactionMetrics,
    private readonly transactionTimeoutMs: number,
  ) {}

  /** The transaction binds share acks: the first time, it counts as an active share transaction. */
  bindAcks(): void {
    if (this.current.hasShareAcks) return;
    this.current.hasShareAcks = true;
    this.metrics.transactionActive(true);
  }

  /**
   * Links `consumers` to this producer and asks each whether the open
   * transaction must abort: one that lost the membership of records in it, or
   * saw one come back before it knew this producer, throws CommitFailedError
   * (Kafka: TxnOffsetCommitHandler, stale generation).
   */
  link(consumers: Iterable<TransactionalDeliveries>): void {
    for (const consumer of consumers) {
      this.consumers.add(consumer);
      consumer.check();
    }
  }

  /** Throws when a linked consumer says the open transaction must abort. */
  check(): void {
    for (const consumer of this.consumers) consumer.check();
  }

  /** The transaction ended (or none of this producer can commit any more): the consumers may hand out again. */
  transactionEnded(): void {
    for (const consumer of this.consumers) consumer.transactionEnded();
  }

  /** The transaction ended aborted (or cannot end otherwise): abort-total counts it, once, if it carried share acks. */
  countAbort(): void {
    if (!this.current.hasShareAcks) return;
    this.metrics.recordAbort();
    this.current.hasShareAcks = false;
  }

  /** Counts a share transaction's timeout once: a call timed out, or the coordinator ended it after transaction.timeout.ms. */
  maybeCountTimeout(error: unknown): void {
    if (!this.current.hasShareAcks || this.current.timeoutCounted) return;
    const code = error instanceof ApiError ? error.code : undefined;
    const brokerAbort = code !== undefined && BROKER_ABORT_CODES.has(code);
    const openFor = Date.now() - this.current.beganAt;
    if ((brokerAbort && openFor >= this.transactionTimeoutMs) || error instanceof KafkaTimeoutError) {
      this.current.timeoutCounted = true;
      this.metrics.recordTimeout();
    }
  }
}
