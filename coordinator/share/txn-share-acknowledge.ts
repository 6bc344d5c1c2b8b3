import type { SharePartitionResult, TxnShareAcknowledgeResult } from '../broker-context.js';
import type { TxnShareAcknowledgeRequest } from '../../generated/TxnShareAcknowledgeRequest.js';
import { ErrorCode } from './share-error.js';
import type { TxnAckRequestPartition } from './share-partition-manager.js';
import type { ShareParts } from './share-parts.js';

/**
 * TxnShareAcknowledge (API 96, KIP-1289, v0–1; the wire answer is
 * coordinator/apis/96-txn-share-acknowledge.ts): stores acknowledgements as
 * pending in the producer's transaction (DESIGN §5). A request-level error
 * (bad ids, unknown member, fenced producer, a transaction that does not hold
 * this partition) is set at the top and on every partition it concerns, as
 * TxnOffsetCommit reports errors per partition.
 *
 * v1 names the member (`memberId`; null for v0 or an empty MemberId): only records ACQUIRED by it may be acknowledged, and
 * when this node coordinates the group the member must be known
 * (UNKNOWN_MEMBER_ID) and its GenerationId not ahead of the member's epoch
 * (ILLEGAL_GENERATION). An older epoch is accepted: share groups have no
 * revocation, so a member keeps its acquired records across assignment
 * changes, and record ownership is checked anyway. v0 (or an empty MemberId)
 * checks only that the records are ACQUIRED.
 *
 * Idempotent retry: acknowledgements already pending for the same producer id
 * and epoch with the same types succeed again without a second write (the
 * first request was stored but its response lost), also after a restart of
 * this node, when the member checks above are skipped for such a pure retry.
 * A different type, or another producer or epoch, is INVALID_RECORD_STATE.
 *
 * A partition whose data partition this node does not lead is
 * NOT_COORDINATOR: the request is routed by FindCoordinator(SHARE), as
 * TxnOffsetCommit by FindCoordinator(GROUP), so the client looks the
 * coordinator up again and retries (see ../README.md for why not
 * NOT_LEADER_OR_FOLLOWER).
 */
export function txnShareAcknowledge(rt: ShareParts, request: TxnShareAcknowledgeRequest, memberId: string | null): Promise<TxnShareAcknowledgeResult> {
  const partitions: TxnAckRequestPartition[] = request.topics.flatMap((topic) =>
    topic.partitions.map((p) => ({ topicId: topic.topicId, partition: p.partition, batches: p.acknowledgementBatches })),
  );
  const failAll = (errorCode: number, errorMessage: string): Promise<TxnShareAcknowledgeResult> => {
    const result: SharePartitionResult = { errorCode, errorMessage };
    return Promise.resolve({ errorCode, partitions: partitions.map(() => result) });
  };

  if (request.groupId === '') return failAll(ErrorCode.INVALID_GROUP_ID, 'GroupId can not be empty');
  if (request.transactionalId === '') return failAll(ErrorCode.INVALID_REQUEST, 'TransactionalId can not be empty');
  if (request.producerId < 0n || request.producerEpoch < 0) {
    return failAll(ErrorCode.INVALID_REQUEST, `producer id ${request.producerId} epoch ${request.producerEpoch} is not a transactional producer`);
  }

  // Checked here, answered by stageTransactional: a retry of acks already pending for this producer
  // (stored, response lost) succeeds even when the member is gone, e.g. after a restart of this node.
  let memberError: { errorCode: number; errorMessage: string } | null = null;
  if (memberId !== null && rt.isGroupCoordinator(request.groupId)) {
    const memberEpoch = rt.groups.memberEpoch(request.groupId, memberId);
    if (memberEpoch === undefined) {
      memberError = { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: `member ${memberId} is not in share group ${request.groupId}` };
    } else if (request.generationId !== -1 && request.generationId > memberEpoch) {
      memberError = {
        errorCode: ErrorCode.ILLEGAL_GENERATION,
        errorMessage: `generation ${request.generationId} is ahead of member ${memberId}'s epoch ${memberEpoch}`,
      };
    }
  }

  // Returned as it is (no await here): the API definition awaits it once.
  return rt.partitions.stageTransactional(
    { transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch, groupId: request.groupId },
    request.groupId,
    memberId,
    partitions,
    memberError,
  );
}
