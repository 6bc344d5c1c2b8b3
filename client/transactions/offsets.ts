/**
 * sendOffsetsToTransaction's two requests (Kafka's
 * TransactionManager.AddOffsetsToTxnHandler and TxnOffsetCommitHandler):
 * AddOffsetsToTxn adds the consumer group to the transaction (classic
 * protocol only; under Transactions V2 the group coordinator adds it on
 * TxnOffsetCommit v5+), TxnOffsetCommit stages the offsets at the group
 * coordinator.
 *
 * Where they differ from Kafka's handlers: an error that is not a coordinator
 * error fails the call, without a retry, with that error (Kafka retries every
 * retriable one, and wraps UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION in
 * CommitFailedException); the transaction becomes abortable or fatal by the
 * error's type, as there.
 */
import { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { CoordinatorType, groupBy } from '../cluster.js';
import { Errors } from '../errors.js';
import { TV1_MAX_VERSIONS, TV2_TXN_OFFSET_COMMIT_VERSION } from '../transaction-protocol.js';
import { coordinatorError, coordinatorNext, DONE, fail, type Next, type TxnContext, type TxnRequestHandler } from './handler.js';

/** Group metadata for sendOffsetsToTransaction (Kafka's ConsumerGroupMetadata). */
export interface ConsumerGroupMetadata {
  groupId: string;
  generationId?: number;
  memberId?: string;
  groupInstanceId?: string | null;
}

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  /** The next offset to consume. */
  offset: bigint;
  metadata?: string | null;
  leaderEpoch?: number;
}

export class AddOffsetsToTxnHandler implements TxnRequestHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> {
  readonly what = 'AddOffsetsToTxn';
  readonly coordinatorType = CoordinatorType.TRANSACTION;
  readonly requestCodec = AddOffsetsToTxnRequest;
  readonly responseCodec = AddOffsetsToTxnResponse;
  readonly versions = { max: TV1_MAX_VERSIONS.addOffsetsToTxn };
  readonly coordinatorKey: string;

  constructor(
    private readonly txn: TxnContext,
    private readonly groupId: string,
  ) {
    this.coordinatorKey = txn.transactionalId;
  }

  build(): AddOffsetsToTxnRequest {
    return AddOffsetsToTxnRequest.create({
      transactionalId: this.txn.transactionalId,
      producerId: this.txn.identity.producerId,
      producerEpoch: this.txn.identity.producerEpoch,
      groupId: this.groupId,
    });
  }

  handleResponse(response: AddOffsetsToTxnResponse): Next {
    const code = response.errorCode;
    if (code === Errors.NONE) return DONE;
    return coordinatorNext(code) ?? fail(coordinatorError(this.txn.transactionalId, code, this.what));
  }
}

export class TxnOffsetCommitHandler implements TxnRequestHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse> {
  readonly what = 'TxnOffsetCommit';
  readonly coordinatorType = CoordinatorType.GROUP;
  readonly requestCodec = TxnOffsetCommitRequest;
  readonly responseCodec = TxnOffsetCommitResponse;
  readonly coordinatorKey: string;
  readonly versions: { min?: number; max: number };

  constructor(
    private readonly txn: TxnContext,
    private readonly group: ConsumerGroupMetadata,
    private readonly offsets: readonly TopicPartitionOffset[],
    transactionV2: boolean,
  ) {
    this.coordinatorKey = group.groupId;
    this.versions = transactionV2 ? { min: TV2_TXN_OFFSET_COMMIT_VERSION, max: TV2_TXN_OFFSET_COMMIT_VERSION } : { max: TV1_MAX_VERSIONS.txnOffsetCommit };
  }

  build(): TxnOffsetCommitRequest {
    const byTopic = groupBy(this.offsets, (o) => o.topic);
    return TxnOffsetCommitRequest.create({
      transactionalId: this.txn.transactionalId,
      groupId: this.group.groupId,
      producerId: this.txn.identity.producerId,
      producerEpoch: this.txn.identity.producerEpoch,
      generationIdOrMemberEpoch: this.group.generationId ?? -1,
      memberId: this.group.memberId ?? '',
      groupInstanceId: this.group.groupInstanceId ?? null,
      topics: [...byTopic].map(([name, list]) => ({
        name,
        // Versions up to the one sent name topics by name; the id is for v6+.
        topicId: ZERO_UUID,
        partitions: list.map((o) => ({
          partitionIndex: o.partition,
          committedOffset: o.offset,
          committedLeaderEpoch: o.leaderEpoch ?? -1,
          committedMetadata: o.metadata ?? '',
        })),
      })),
    });
  }

  /** The first partition's error decides. */
  handleResponse(response: TxnOffsetCommitResponse): Next {
    for (const t of response.topics) {
      for (const p of t.partitions) {
        if (p.errorCode === Errors.NONE) continue;
        return coordinatorNext(p.errorCode) ?? fail(coordinatorError(this.txn.transactionalId, p.errorCode, `${this.what} (${t.name}-${p.partitionIndex})`));
      }
    }
    return DONE;
  }
}
