/**
 * AddPartitionsToTxn (Kafka's TransactionManager.AddPartitionsToTxnHandler)
 * and the partitions waiting for it,
 * classic protocol only: under Transactions V2 the partition leader adds the
 * partition when the first Produce v12+ arrives. This client sends the v3-and-
 * below form, one transactional id per request.
 *
 * Where it differs from Kafka's handler: a partition error outside the listed
 * ones is retried when its code is retriable, else it fails the call with
 * that partition's error (Kafka fails with one KafkaException naming all).
 */
import { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../../generated/index.js';
import { CoordinatorType, groupBy } from '../cluster.js';
import { Errors, errorFromCode, KafkaError } from '../errors.js';
import { ADD_RETRIABLE_PARTITION_CODES, COORDINATOR_MOVED_CODES, TV1_MAX_VERSIONS } from '../transaction-protocol.js';
import type { AddRequestQueue } from './add-queue.js';
import type { CurrentTransaction, TopicPartition } from './current-transaction.js';
import { coordinatorError, coordinatorNext, DONE, fail, retry, type Next, type TxnContext, type TxnRequestHandler } from './handler.js';

const WHAT = 'AddPartitionsToTxn';

export class AddPartitionsToTxnHandler implements TxnRequestHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> {
  readonly what = WHAT;
  readonly coordinatorType = CoordinatorType.TRANSACTION;
  readonly requestCodec = AddPartitionsToTxnRequest;
  readonly responseCodec = AddPartitionsToTxnResponse;
  readonly versions = { max: TV1_MAX_VERSIONS.addPartitionsToTxn };
  readonly coordinatorKey: string;
  private readonly topics: { name: string; partitions: number[] }[];

  constructor(
    private readonly txn: TxnContext,
    partitions: Iterable<TopicPartition>,
  ) {
    this.coordinatorKey = txn.transactionalId;
    this.topics = [...groupBy(partitions, (p) => p.topic)].map(([name, list]) => ({
      name,
      partitions: list.map((p) => p.partition),
    }));
  }

  build(): AddPartitionsToTxnRequest {
    return AddPartitionsToTxnRequest.create({
      v3AndBelowTransactionalId: this.txn.transactionalId,
      v3AndBelowProducerId: this.txn.identity.producerId,
      v3AndBelowProducerEpoch: this.txn.identity.producerEpoch,
      v3AndBelowTopics: this.topics,
    });
  }

  handleResponse(response: AddPartitionsToTxnResponse): Next {
    if (response.errorCode !== Errors.NONE) {
      return coordinatorNext(response.errorCode) ?? fail(coordinatorError(this.txn.transactionalId, response.errorCode, WHAT));
    }
    let retriable = 0;
    for (const topic of response.resultsByTopicV3AndBelow) {
      for (const p of topic.resultsByPartition) {
        const code = p.partitionErrorCode;
        // OPERATION_NOT_ATTEMPTED: another partition's error stopped this one; that error decides.
        if (code === Errors.NONE || code === Errors.OPERATION_NOT_ATTEMPTED) continue;
        if (ADD_RETRIABLE_PARTITION_CODES.has(code)) {
          retriable = code;
          continue;
        }
        if (COORDINATOR_MOVED_CODES.has(code)) return { kind: 'coordinator', code };
        const error = coordinatorError(this.txn.transactionalId, code, `${WHAT} (${topic.name}-${p.partitionIndex})`);
        return error instanceof KafkaError && error.retriable ? retry(error) : fail(error);
      }
    }
    return retriable !== 0 ? retry(errorFromCode(retriable, WHAT)) : DONE;
  }
}

/**
 * Sends the partitions waiting to join (classic protocol) with one
 * AddPartitionsToTxn at a time; their queued batches wait for it, as Kafka's
 * TransactionManager holds back batches of pendingPartitionsInTransaction.
 */
export class PartitionAdder {
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly txn: TxnContext,
    private readonly current: CurrentTransaction,
    private readonly adds: AddRequestQueue,
    private readonly events: {
      deadline(): number;
      /** The add failed: the transaction breaks and the batches waiting for it fail with `error`. */
      failed(error: Error): void;
      /** The add ended either way: batches may go out (or fail) now. */
      ended(): void;
    },
  ) {}

  /** The AddPartitionsToTxn in flight; null when none. */
  get pending(): Promise<void> | null {
    return this.inFlight;
  }

  /** Sends the partitions waiting now; with none waiting, nothing. */
  addWaiting(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.current.pendingPartitions.size === 0) return Promise.resolve();
    const batch = new Map(this.current.pendingPartitions);
    const run = async (): Promise<void> => {
      await this.adds.send(new AddPartitionsToTxnHandler(this.txn, batch.values()), this.events.deadline());
      this.current.partitionsJoined(batch);
    };
    this.inFlight = run()
      .catch((error: unknown) => this.events.failed(error as Error))
      .finally(() => {
        this.inFlight = null;
        this.events.ended();
      });
    return this.inFlight;
  }
}
