/**
 * TransactionalShareAcknowledger (KIP-1289 §3.2): transactional share
 * acknowledgements for a source without a Kafka producer (Flink/Spark
 * sources), plus what a checkpointing framework needs to finish a transaction
 * after a restart (DESIGN §5.6).
 */
import type { Registry } from 'prom-client';
import type { CommonClientConfig } from '../cluster.js';
import { ConfigError } from '../errors.js';
import type { ShareTransactionMetricsSnapshot } from '../metrics.js';
import { KafkaProducer, type CompleteTransactionConfig } from '../producer.js';
import { ShareAcknowledgements, ShareGroupMetadata } from './acknowledgements.js';
import type { PreparedTransaction, PreparedTxnState, SavedTransactionOutcome, TransactionState } from '../transaction-manager.js';

export interface TransactionalShareAcknowledgerConfig extends CommonClientConfig {
  transactionalId: string;
  /** transaction.timeout.ms. Default 60 000. */
  transactionTimeoutMs?: number;
  /** Deadline of each call. Default 60 000. */
  maxBlockMs?: number;
  metricsRegistry?: Registry | null;
  /** transaction.two.phase.commit.enable (KIP-939), as on KafkaProducer. Default false. */
  transactionTwoPhaseCommitEnable?: boolean;
}

function toMetadata(group: string | ShareGroupMetadata): ShareGroupMetadata {
  return typeof group === 'string' ? new ShareGroupMetadata(group) : group;
}

export class TransactionalShareAcknowledger {
  private readonly producer: KafkaProducer;

  constructor(private readonly config: TransactionalShareAcknowledgerConfig) {
    if (!config.transactionalId) throw new ConfigError('TransactionalShareAcknowledger needs a transactionalId');
    this.producer = new KafkaProducer({
      ...config,
      clientId: config.clientId ?? `share-acknowledger-${config.transactionalId}`,
    });
  }

  /**
   * Finishes, after a restart, the transaction a checkpoint recorded (the
   * PreparedTxnState of prepareAcknowledgements(), or its string form): see
   * KafkaProducer.completeTransaction. With 'commit' the named transaction is
   * committed if still open; a later one open instead is aborted (its acks
   * discarded, the records redelivered at once). Resolves to what became of
   * the named one: 'committed', 'aborted' or 'unknown'. Call it before
   * initTransactions(), which would abort it. The acknowledger that prepared
   * it needs transactionTwoPhaseCommitEnable.
   */
  static completeTransaction(
    config: CompleteTransactionConfig,
    prepared: PreparedTransaction | string,
    result: 'commit' | 'abort',
  ): Promise<SavedTransactionOutcome> {
    return KafkaProducer.completeTransaction(config, prepared, result);
  }

  /** Instance form of completeTransaction, with this acknowledger's connection settings. */
  completeTransaction(prepared: PreparedTransaction | string, result: 'commit' | 'abort'): Promise<SavedTransactionOutcome> {
    return KafkaProducer.completeTransaction(this.config, prepared, result);
  }

  /**
   * Initializes the internal transactional producer (fencing older instances).
   * Call once. A broker without KIP-1289 (AddShareAcksToTxn 95,
   * TxnShareAcknowledge 96, e.g. Apache Kafka 4.4) fails it with
   * UnsupportedVersionError first — before any instance is fenced and before
   * the application has consumed a record it could not acknowledge.
   */
  async initTransactions(): Promise<void> {
    await this.producer.checkShareAckSupport();
    await this.producer.initTransactions();
  }

  /**
   * Atomically commits share acknowledgements: beginTransaction →
   * sendShareAcksToTransaction → commitTransaction. `group` is the consumer's
   * groupMetadata() (preferred: lets the broker check that the member still
   * holds the records) or just the group id. On failure the transaction is
   * aborted when it can be, and the error rethrown.
   */
  async commitAcknowledgements(acks: ShareAcknowledgements, group: string | ShareGroupMetadata): Promise<void> {
    this.producer.beginTransaction();
    try {
      await this.producer.sendShareAcksToTransaction(acks, toMetadata(group));
      await this.producer.commitTransaction();
    } catch (error) {
      await this.abortIfPossible();
      throw error;
    }
  }

  /**
   * Two-phase form for checkpointing (needs transactionTwoPhaseCommitEnable):
   * begins a transaction, makes the acks pending, and returns the snapshot to
   * persist in the checkpoint. Finish it
   * with commitPrepared() / abortAcknowledgements(), or after a restart with
   * completeTransaction(snapshot, 'commit' | 'abort').
   */
  async prepareAcknowledgements(acks: ShareAcknowledgements, group: string | ShareGroupMetadata): Promise<PreparedTxnState> {
    this.producer.beginTransaction();
    try {
      await this.producer.sendShareAcksToTransaction(acks, toMetadata(group));
      return await this.producer.prepareTransaction();
    } catch (error) {
      await this.abortIfPossible();
      throw error;
    }
  }

  /** Commits the transaction opened by prepareAcknowledgements(). */
  commitPrepared(): Promise<void> {
    return this.producer.commitTransaction();
  }

  /** Aborts the transaction in progress: its acks are discarded and the records redelivered at once. */
  abortAcknowledgements(): Promise<void> {
    return this.producer.abortTransaction();
  }

  /** transactionalId, producerId and epoch now in use, to persist in a checkpoint. */
  snapshot(): PreparedTxnState {
    return this.producer.transactionSnapshot();
  }

  get transactionState(): TransactionState | null {
    return this.producer.transactionState;
  }

  metrics(): ShareTransactionMetricsSnapshot {
    return this.producer.metrics();
  }

  close(timeoutMs?: number): Promise<void> {
    return this.producer.close(timeoutMs);
  }

  private async abortIfPossible(): Promise<void> {
    const state = this.producer.transactionState;
    if (state === 'IN_TRANSACTION' || state === 'ABORTABLE_ERROR') {
      await this.producer.abortTransaction().catch(() => {});
    }
  }
}
