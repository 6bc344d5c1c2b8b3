/**
 * KIP-1289's two requests that bind share acknowledgements to a transaction:
 * AddShareAcksToTxn (API 95) adds the share-group partitions to the
 * transaction at the transaction coordinator, as AddPartitionsToTxn does for
 * output partitions; TxnShareAcknowledge (API 96) stages the acks, pending,
 * at the share coordinator of each share-partition, as TxnOffsetCommit stages
 * offsets (KIP-1289 §3; coordinator/share/README.md). Kafka has neither: the
 * handlers follow its AddPartitionsToTxnHandler and TxnOffsetCommitHandler.
 */
import { AddShareAcksToTxnRequest, AddShareAcksToTxnResponse, TxnShareAcknowledgeRequest, TxnShareAcknowledgeResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { type ClusterClient, CoordinatorType, groupBy } from '../cluster.js';
import { CommitFailedError, Errors, errorCodeName, errorFromCode, IllegalStateError, isRetriableCode, UnsupportedVersionError } from '../errors.js';
import { acknowledgeTypeCode, type ShareAcknowledgements, ShareGroupMetadata } from '../share/acknowledgements.js';
import {
  ADD_RETRIABLE_PARTITION_CODES,
  COORDINATOR_MOVED_CODES,
  SHARE_COORDINATOR_MOVED_CODES,
  TXN_SHARE_ACKNOWLEDGE_MEMBER_VERSION,
} from '../transaction-protocol.js';
import { coordinatorError, coordinatorNext, DONE, fail, retry, TRANSACTION_LANE, type Next, type TxnContext, type TxnRequestHandler } from './handler.js';

/** One share-partition's acks, its topic id resolved, in wire form. */
export interface ShareAckPartition {
  topic: string;
  topicId: string;
  partition: number;
  batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeType: number }[];
}

/** The acks by share-partition, with topic ids from metadata where the acks lack them. */
export async function resolveShareAckPartitions(cluster: ClusterClient, acks: ShareAcknowledgements, deadline: number): Promise<ShareAckPartition[]> {
  const out: ShareAckPartition[] = [];
  for (const p of acks.partitions()) {
    const topicId = p.topicId ?? (await cluster.topic(p.topic, deadline)).topicId;
    out.push({
      topic: p.topic,
      topicId,
      partition: p.partition,
      batches: p.batches.map((b) => ({
        firstOffset: b.firstOffset,
        lastOffset: b.lastOffset,
        acknowledgeType: acknowledgeTypeCode(b.acknowledgeType),
      })),
    });
  }
  return out;
}

/** sendShareAcksToTransaction() takes the consumer's groupMetadata(), or an object with its groupId. */
export function requireShareGroupMetadata(group: unknown): asserts group is ShareGroupMetadata {
  if (group instanceof ShareGroupMetadata) return;
  if (typeof group === 'object' && group !== null && typeof (group as ShareGroupMetadata).groupId === 'string') return;
  throw new IllegalStateError('sendShareAcksToTransaction() needs the ShareGroupMetadata of the consumer (consumer.groupMetadata())');
}

/** Fails with UnsupportedVersionError, before anything is sent, when the transaction coordinator lacks AddShareAcksToTxn. */
export async function requireAddShareAcksToTxn(cluster: ClusterClient, transactionalId: string, deadline: number): Promise<void> {
  const tc = await cluster.findCoordinator(CoordinatorType.TRANSACTION, transactionalId, deadline);
  if (!(await cluster.supports(tc, AddShareAcksToTxnRequest.apiKey, 0, deadline))) {
    throw new UnsupportedVersionError(
      `the transaction coordinator ${cluster.describeMissingApi(tc, AddShareAcksToTxnRequest, 'KIP-1289')}. ` +
        'Transactional share acknowledgements need a broker with KIP-1289; nothing was acknowledged. Abort this transaction.',
    );
  }
}

const ADD_WHAT = 'AddShareAcksToTxn';

export class AddShareAcksToTxnHandler implements TxnRequestHandler<AddShareAcksToTxnRequest, AddShareAcksToTxnResponse> {
  readonly what = ADD_WHAT;
  readonly coordinatorType = CoordinatorType.TRANSACTION;
  readonly requestCodec = AddShareAcksToTxnRequest;
  readonly responseCodec = AddShareAcksToTxnResponse;
  readonly versions = {};
  readonly coordinatorKey: string;
  private readonly topics: { name: string; partitions: number[] }[];

  constructor(
    private readonly txn: TxnContext,
    private readonly groupId: string,
    partitions: readonly ShareAckPartition[],
  ) {
    this.coordinatorKey = txn.transactionalId;
    this.topics = [...groupBy(partitions, (p) => p.topic)].map(([name, list]) => ({
      name,
      partitions: list.map((p) => p.partition),
    }));
  }

  build(): AddShareAcksToTxnRequest {
    return AddShareAcksToTxnRequest.create({
      transactionalId: this.txn.transactionalId,
      producerId: this.txn.identity.producerId,
      producerEpoch: this.txn.identity.producerEpoch,
      groupId: this.groupId,
      topics: this.topics,
    });
  }

  /** A retriable or coordinator error of any partition resends the whole request; else the first failed partition decides. */
  handleResponse(response: AddShareAcksToTxnResponse): Next {
    const tid = this.txn.transactionalId;
    if (response.errorCode !== Errors.NONE) return coordinatorNext(response.errorCode) ?? fail(coordinatorError(tid, response.errorCode, ADD_WHAT));
    let failure: Error | null = null;
    for (const t of response.results) {
      for (const p of t.partitions) {
        const code = p.partitionErrorCode;
        if (code === Errors.NONE) continue;
        const where = `${ADD_WHAT} (${t.name}-${p.partitionIndex})`;
        if (ADD_RETRIABLE_PARTITION_CODES.has(code)) return retry(errorFromCode(code, where));
        if (COORDINATOR_MOVED_CODES.has(code)) return { kind: 'coordinator', code };
        failure ??= coordinatorError(tid, code, where);
      }
    }
    return failure ? fail(failure) : DONE;
  }
}

/**
 * The share group no longer has the member whose records these acks are for:
 * the records went back to the group. Kafka's TxnOffsetCommitHandler wraps
 * UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION in CommitFailedException for the same
 * reason; the transaction is abortable, and the records are delivered again
 * after the abort. The consumer reports the same loss from its own heartbeat
 * (share/transactional-deliveries.ts), with the same error type, when it sees
 * it first.
 */
const MEMBERSHIP_LOST_CODES: ReadonlySet<number> = new Set([Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_MEMBER_EPOCH]);

function membershipLost(transactionalId: string, code: number, where: string, message: string | null): CommitFailedError {
  return new CommitFailedError(
    `${where} for transactional id ${transactionalId}: the share group lost this member (${errorCodeName(code)}${message ? `: ${message}` : ''}). ` +
      'Abort the transaction (abortTransaction()); its records are delivered again after the abort.',
    code,
  );
}

/**
 * One TxnShareAcknowledge to one share coordinator, for the partitions it
 * serves: v1 (member id and generation) when the member is known, else v0.
 */
class TxnShareAcknowledgeHandler {
  readonly max: number;

  constructor(
    private readonly txn: TxnContext,
    private readonly group: ShareGroupMetadata,
    private readonly partitions: readonly ShareAckPartition[],
  ) {
    this.max = group.memberId !== '' ? TXN_SHARE_ACKNOWLEDGE_MEMBER_VERSION : 0;
  }

  build(version: number): TxnShareAcknowledgeRequest {
    const withMember = version >= TXN_SHARE_ACKNOWLEDGE_MEMBER_VERSION;
    return TxnShareAcknowledgeRequest.create({
      groupId: this.group.groupId,
      transactionalId: this.txn.transactionalId,
      producerId: this.txn.identity.producerId,
      producerEpoch: this.txn.identity.producerEpoch,
      memberId: withMember ? this.group.memberId : '',
      generationId: withMember ? this.group.generationId : -1,
      topics: [...groupBy(this.partitions, (p) => p.topicId)].map(([topicId, ps]) => ({
        topicId,
        partitions: ps.map((p) => ({ partition: p.partition, acknowledgementBatches: p.batches })),
      })),
    });
  }

  /** Each partition's code: the top-level one when set, else its own. */
  *results(response: TxnShareAcknowledgeResponse): Generator<{ partition: ShareAckPartition; code: number; message: string | null }> {
    for (const p of this.partitions) {
      const result = response.topics.find((t) => t.topicId === p.topicId)?.partitions.find((x) => x.partition === p.partition);
      const code = response.errorCode !== Errors.NONE ? response.errorCode : (result?.errorCode ?? Errors.NONE);
      yield { partition: p, code, message: result?.errorMessage ?? null };
    }
  }
}

/**
 * Stages the acks at the share coordinator of every share-partition (key
 * `groupId:topicId:partition`), each coordinator's partitions in one request,
 * retrying within the deadline only the partitions that failed with a
 * retriable error (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * CONCURRENT_TRANSACTIONS, KAFKA_STORAGE_ERROR, NOT_ENOUGH_REPLICAS, …) or
 * whose coordinator could not be reached. Retrying acks the broker already
 * stored is safe: a repeat from the same producer id and epoch with the same
 * types succeeds without a second write (coordinator/share/README.md).
 */
export async function txnShareAcknowledge(
  cluster: ClusterClient,
  txn: TxnContext,
  group: ShareGroupMetadata,
  partitions: ShareAckPartition[],
  deadline: number,
): Promise<void> {
  let remaining = partitions;
  const key = (p: ShareAckPartition): string => `${group.groupId}:${p.topicId}:${p.partition}`;
  await cluster.retry('TxnShareAcknowledge', deadline, async () => {
    const byNode = new Map<number, ShareAckPartition[]>();
    for (const p of remaining) {
      const node = await cluster.findCoordinator(CoordinatorType.SHARE, key(p), deadline);
      const list = byNode.get(node);
      if (list) list.push(p);
      else byNode.set(node, [p]);
    }
    const again: ShareAckPartition[] = [];
    let retryError: Error | null = null;
    let failure: Error | null = null;
    await Promise.all(
      [...byNode].map(async ([nodeId, list]) => {
        try {
          if (!(await cluster.supports(nodeId, TxnShareAcknowledgeRequest.apiKey, 0, deadline))) {
            throw new UnsupportedVersionError(
              `the share coordinator ${cluster.describeMissingApi(nodeId, TxnShareAcknowledgeRequest, 'KIP-1289')}; abort this transaction`,
            );
          }
          const handler = new TxnShareAcknowledgeHandler(txn, group, list);
          const { response } = await cluster.send(nodeId, TxnShareAcknowledgeRequest, TxnShareAcknowledgeResponse, (v) => handler.build(v), {
            deadline,
            max: handler.max,
            lane: TRANSACTION_LANE,
          });
          for (const { partition: p, code, message } of handler.results(response)) {
            if (code === Errors.NONE) continue;
            const where = `TxnShareAcknowledge (${p.topic}-${p.partition}) to ${cluster.describeNode(nodeId)}`;
            if (SHARE_COORDINATOR_MOVED_CODES.has(code)) cluster.invalidateCoordinator(CoordinatorType.SHARE, key(p));
            if (isRetriableCode(code)) {
              again.push(p);
              retryError = errorFromCode(code, where, message);
              continue;
            }
            failure ??= MEMBERSHIP_LOST_CODES.has(code)
              ? membershipLost(txn.transactionalId, code, where, message)
              : coordinatorError(txn.transactionalId, code, where, message);
          }
        } catch (error) {
          if (error instanceof NetworkError) {
            for (const p of list) cluster.invalidateCoordinator(CoordinatorType.SHARE, key(p));
            again.push(...list);
            retryError = error;
          } else {
            failure ??= error as Error;
          }
        }
      }),
    );
    if (failure) throw failure;
    remaining = again;
    if (retryError) throw retryError;
  });
}
