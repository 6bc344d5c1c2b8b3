import type { RequestContext, ShareAcknowledgeAnswer } from '../broker-context.js';
import type { ShareAcknowledgeRequest } from '../../generated/ShareAcknowledgeRequest.js';
import { ErrorCode, ShareError } from './share-error.js';
import type { AckRequestPartition } from './share-partition-manager.js';
import { closeSession, expelUnknownMember, missingIdError, type ShareParts } from './share-parts.js';
import { FINAL_EPOCH, INITIAL_EPOCH } from './share-sessions.js';

/**
 * ShareAcknowledge (API 79, v1–2; the wire answer is coordinator/apis/79-share-acknowledge.ts):
 * acknowledgements in an existing share
 * session. Epoch 0 cannot open a session here (INVALID_SHARE_SESSION_EPOCH);
 * −1 acknowledges, then closes the session and releases the member's other
 * records; any other epoch must match the session's and moves it on. A
 * member not in the group (when this node coordinates it) gets UNKNOWN_MEMBER_ID.
 */
export async function shareAcknowledge<R>(
  rt: ShareParts,
  request: ShareAcknowledgeRequest,
  ctx: RequestContext,
  answer: ShareAcknowledgeAnswer<R>,
): Promise<R> {
  const groupId = request.groupId ?? '';
  const memberId = request.memberId ?? '';
  const missing = missingIdError(groupId, memberId);
  if (missing !== null) return answer.failed(missing.code, missing.message, rt.config.recordLockDurationMs);
  const epoch = request.shareSessionEpoch;
  if (epoch === INITIAL_EPOCH)
    return answer.failed(ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'ShareAcknowledge cannot open a share session (epoch 0)', rt.config.recordLockDurationMs);

  // As ShareFetch: a member no longer in the group (this node coordinates it) acknowledges nothing.
  const notMember = await expelUnknownMember(rt, groupId, memberId);
  if (notMember !== null) return answer.failed(ErrorCode.UNKNOWN_MEMBER_ID, notMember, rt.config.recordLockDurationMs);

  let session;
  try {
    session = rt.sessions.find(groupId, memberId, epoch);
  } catch (caught) {
    if (caught instanceof ShareError) return answer.failed(caught.code, caught.message, rt.config.recordLockDurationMs);
    throw caught;
  }
  if (epoch !== FINAL_EPOCH) rt.sessions.advance(session);

  const acks: AckRequestPartition[] = request.topics.flatMap((topic) =>
    topic.partitions.map((p) => ({ topicId: topic.topicId, partition: p.partitionIndex, batches: p.acknowledgementBatches })),
  );
  const results = await rt.partitions.acknowledge(groupId, memberId, acks, request.isRenewAck);
  if (epoch === FINAL_EPOCH) await closeSession(rt, session);
  return answer.answered(acks, results, rt.partitions.settingsFor(groupId).recordLockDurationMs, ctx);
}
