import { describe, expect, it } from 'vitest';
import {
  ApiError,
  Errors,
  InvalidTxnStateError,
  isFatalTransactionError,
  ProducerFencedError,
  TransactionalIdAuthorizationError,
} from '../../client/errors.js';
import { AddPartitionsToTxnHandler } from '../../client/transactions/add-partitions.js';
import { EndTxnHandler } from '../../client/transactions/end-txn.js';
import type { Next, TxnContext } from '../../client/transactions/handler.js';
import { InitProducerIdHandler } from '../../client/transactions/init-producer-id.js';
import { AddOffsetsToTxnHandler, TxnOffsetCommitHandler } from '../../client/transactions/offsets.js';
import { AddShareAcksToTxnHandler } from '../../client/transactions/share-acks.js';
import {
  AddOffsetsToTxnResponse,
  AddPartitionsToTxnResponse,
  AddShareAcksToTxnResponse,
  EndTxnResponse,
  InitProducerIdResponse,
  TxnOffsetCommitResponse,
} from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/uuid.js';

// What each transaction handler makes of an answer (Kafka's TxnRequestHandler.handleResponse branches):
// the codes it retries, those that send it to find the coordinator again, and those that fail the call,
// fatally (a fence) or abortably.

const txn: TxnContext = { transactionalId: 'tx-1', identity: { producerId: 7n, producerEpoch: 3 } };

/** The outcome as `kind`, with the error's class and whether it ends the producer. */
function describeNext(next: Next): string {
  if (next.kind === 'done') return 'done';
  if (next.kind === 'coordinator') return `coordinator ${next.code}`;
  return `${next.kind} ${next.error.name}${isFatalTransactionError(next.error) ? ' (fatal)' : ''}`;
}

const addPartitions = (codes: number[], top = 0): string =>
  describeNext(
    new AddPartitionsToTxnHandler(txn, []).handleResponse(
      AddPartitionsToTxnResponse.create({
        errorCode: top,
        resultsByTopicV3AndBelow: [{ name: 'out', resultsByPartition: codes.map((code, i) => ({ partitionIndex: i, partitionErrorCode: code })) }],
      }),
    ),
  );

const addShareAcks = (codes: number[], top = 0): string =>
  describeNext(
    new AddShareAcksToTxnHandler(txn, 'g', []).handleResponse(
      AddShareAcksToTxnResponse.create({
        errorCode: top,
        results: [{ name: 'in', partitions: codes.map((code, i) => ({ partitionIndex: i, partitionErrorCode: code })) }],
      }),
    ),
  );

describe('transaction request handlers', () => {
  it('AddPartitionsToTxn: busy codes retry, a moved coordinator is looked up again, a fence is fatal', () => {
    expect(addPartitions([0, 0])).toBe('done');
    expect(addPartitions([Errors.OPERATION_NOT_ATTEMPTED, 0])).toBe('done');
    expect(addPartitions([Errors.CONCURRENT_TRANSACTIONS])).toBe('retry ApiError');
    expect(addPartitions([Errors.UNKNOWN_TOPIC_OR_PARTITION])).toBe('retry UnknownTopicOrPartitionError');
    expect(addPartitions([Errors.NOT_COORDINATOR])).toBe(`coordinator ${Errors.NOT_COORDINATOR}`);
    expect(addPartitions([0], Errors.COORDINATOR_LOAD_IN_PROGRESS)).toBe(`coordinator ${Errors.COORDINATOR_LOAD_IN_PROGRESS}`);
    // The first partition with a code outside the lists decides, before a busy one later on...
    expect(addPartitions([Errors.INVALID_PRODUCER_EPOCH, Errors.CONCURRENT_TRANSACTIONS])).toBe('fail ProducerFencedError (fatal)');
    // ...and after one earlier.
    expect(addPartitions([Errors.CONCURRENT_TRANSACTIONS, Errors.PRODUCER_FENCED])).toBe('fail ProducerFencedError (fatal)');
    expect(addPartitions([Errors.REQUEST_TIMED_OUT])).toBe('retry ApiError');
    expect(addPartitions([Errors.TOPIC_AUTHORIZATION_FAILED])).toBe('fail TopicAuthorizationError');
    expect(addPartitions([0], Errors.INVALID_TXN_STATE)).toBe('fail InvalidTxnStateError (fatal)');
  });

  it('AddShareAcksToTxn: any partition busy or moved resends the request; else the first failed partition decides', () => {
    expect(addShareAcks([0])).toBe('done');
    expect(addShareAcks([Errors.INVALID_RECORD_STATE, Errors.CONCURRENT_TRANSACTIONS])).toBe('retry ApiError');
    expect(addShareAcks([Errors.INVALID_RECORD_STATE, Errors.COORDINATOR_NOT_AVAILABLE])).toBe(`coordinator ${Errors.COORDINATOR_NOT_AVAILABLE}`);
    expect(addShareAcks([Errors.INVALID_RECORD_STATE, Errors.PRODUCER_FENCED])).toBe('fail InvalidRecordStateError');
    expect(addShareAcks([Errors.INVALID_PRODUCER_EPOCH])).toBe('fail ProducerFencedError (fatal)');
    // Retriable by Kafka's table but not one an add resends: the call fails (abortable).
    expect(addShareAcks([Errors.REQUEST_TIMED_OUT])).toBe('fail ApiError');
    expect(addShareAcks([0], Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)).toBe('fail TransactionalIdAuthorizationError (fatal)');
  });

  it('AddOffsetsToTxn and TxnOffsetCommit: coordinator errors go back to the plumbing, the rest fail without a retry', () => {
    const addOffsets = (code: number): string =>
      describeNext(new AddOffsetsToTxnHandler(txn, 'cg').handleResponse(AddOffsetsToTxnResponse.create({ errorCode: code })));
    expect(addOffsets(0)).toBe('done');
    expect(addOffsets(Errors.CONCURRENT_TRANSACTIONS)).toBe(`coordinator ${Errors.CONCURRENT_TRANSACTIONS}`);
    expect(addOffsets(Errors.GROUP_AUTHORIZATION_FAILED)).toBe('fail GroupAuthorizationError');

    const handler = new TxnOffsetCommitHandler(txn, { groupId: 'cg' }, [{ topic: 'in', partition: 0, offset: 5n }], true);
    const commit = (codes: number[]): string =>
      describeNext(
        handler.handleResponse(
          TxnOffsetCommitResponse.create({
            topics: [{ name: 'in', partitions: codes.map((errorCode, i) => ({ partitionIndex: i, errorCode })) }],
          }),
        ),
      );
    expect(commit([0, 0])).toBe('done');
    expect(commit([0, Errors.NOT_COORDINATOR])).toBe(`coordinator ${Errors.NOT_COORDINATOR}`);
    expect(commit([Errors.ILLEGAL_GENERATION, Errors.NOT_COORDINATOR])).toBe('fail ApiError');
    expect(commit([Errors.INVALID_PRODUCER_EPOCH])).toBe('fail ProducerFencedError (fatal)');
    // Under Transactions V2 exactly v5, its topics by name.
    expect(handler.versions).toEqual({ min: 5, max: 5 });
    const request = handler.build();
    expect(request.topics[0]).toMatchObject({ name: 'in', topicId: ZERO_UUID });
    expect(request).toMatchObject({ producerId: 7n, producerEpoch: 3, generationIdOrMemberEpoch: -1, memberId: '' });
  });

  it('EndTxn: a fence and INVALID_TXN_STATE are fatal, with the producer id and epoch in the message', () => {
    const end = (code: number): Next =>
      new EndTxnHandler({ transactionalId: 'tx-1', producerId: 7n, producerEpoch: 3 }, true, true).handleResponse(EndTxnResponse.create({ errorCode: code }));
    expect(describeNext(end(0))).toBe('done');
    expect(describeNext(end(Errors.NOT_COORDINATOR))).toBe(`coordinator ${Errors.NOT_COORDINATOR}`);
    for (const code of [Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH]) {
      const next = end(code);
      expect(next.kind === 'fail' && next.error).toBeInstanceOf(ProducerFencedError);
      expect(next.kind === 'fail' && next.error.message).toMatch(/^EndTxn\(COMMIT\) for transactional id tx-1 \(producer id 7, epoch 3\)/);
    }
    const invalid = end(Errors.INVALID_TXN_STATE);
    expect(invalid.kind === 'fail' && invalid.error).toBeInstanceOf(InvalidTxnStateError);
    expect(describeNext(end(Errors.TRANSACTION_ABORTABLE))).toBe('fail TransactionAbortableError');
  });

  it('InitProducerId: two-phase commit refused by the broker says how to turn it on; an old epoch is a fence', () => {
    const init = (code: number, enable2Pc: boolean): Next =>
      new InitProducerIdHandler(txn, { bump: false, keepPreparedTxn: false, enable2Pc, transactionTimeoutMs: 60_000 }).handleResponse(
        InitProducerIdResponse.create({ errorCode: code }),
      );
    const refused = init(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, true);
    expect(refused.kind === 'fail' && refused.error).toBeInstanceOf(TransactionalIdAuthorizationError);
    expect(refused.kind === 'fail' && refused.error.message).toMatch(/transaction\.two\.phase\.commit\.enable is false/);
    const plain = init(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, false);
    expect(plain.kind === 'fail' && plain.error.message).not.toMatch(/two-phase/);
    expect(describeNext(init(Errors.INVALID_PRODUCER_EPOCH, false))).toBe('fail ProducerFencedError (fatal)');
    expect(describeNext(init(Errors.COORDINATOR_LOAD_IN_PROGRESS, false))).toBe(`coordinator ${Errors.COORDINATOR_LOAD_IN_PROGRESS}`);
    const unknown = init(Errors.UNKNOWN_SERVER_ERROR, false);
    expect(unknown.kind === 'fail' && unknown.error).toBeInstanceOf(ApiError);
  });
});
