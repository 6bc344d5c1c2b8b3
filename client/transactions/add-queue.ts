/**
 * The add requests of one producer to its transaction coordinator
 * (AddPartitionsToTxn, AddOffsetsToTxn, AddShareAcksToTxn), one after the
 * other, as Kafka's TransactionManager keeps one transactional request in
 * flight: two adds in flight together make the coordinator answer one of them
 * CONCURRENT_TRANSACTIONS (its state change for the other is being written),
 * which costs a retry and its backoff.
 */
import type { ClusterClient } from '../cluster.js';
import { Errors, KafkaError } from '../errors.js';
import type { CurrentTransaction } from './current-transaction.js';
import { sendTxnRequest, type TxnRequestHandler } from './handler.js';

/**
 * Kafka's TransactionManager.ADD_PARTITIONS_RETRY_BACKOFF_MS (KAFKA-5477): the
 * first add of a transaction that gets CONCURRENT_TRANSACTIONS is retried after
 * this, not retry.backoff.ms. EndTxn answers once PREPARE_* is written and the
 * markers complete just after, so the next transaction's first add routinely
 * meets the previous one still completing: an expected race, not a failure.
 */
export const FIRST_ADD_RETRY_BACKOFF_MS = 20;

export class AddRequestQueue {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cluster: ClusterClient,
    private readonly current: CurrentTransaction,
  ) {}

  /** Sends `handler`'s add after the adds before it; once sent it may have started the transaction (addAttempted). */
  send<Req, Res>(handler: TxnRequestHandler<Req, Res>, deadline: number): Promise<Res> {
    this.current.addAttempted = true;
    const run = (): Promise<Res> => sendTxnRequest(this.cluster, handler, { deadline, backoffFor: this.backoffFor });
    const result = this.chain.then(run, run);
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /**
   * FIRST_ADD_RETRY_BACKOFF_MS (or retry.backoff.ms if smaller) for
   * CONCURRENT_TRANSACTIONS while nothing is in the transaction yet, else the
   * usual exponential backoff (Kafka's AddPartitionsToTxnHandler.maybeOverrideRetryBackoffMs).
   */
  private readonly backoffFor = (error: unknown): number | undefined =>
    !this.current.started && error instanceof KafkaError && error.code === Errors.CONCURRENT_TRANSACTIONS
      ? Math.min(FIRST_ADD_RETRY_BACKOFF_MS, this.cluster.retryBackoffMs)
      : undefined;
}
