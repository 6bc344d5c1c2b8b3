import { ShareAcknowledgeRequest, ShareAcknowledgeResponse } from '../../../generated/index.js';
import type { Handler, RequestContext } from '../../broker-context.js';
import { ErrorCode, ShareError } from '../error-codes.js';
import type { AckRequestPartition } from '../share-partitions.js';
import { closeSession, expelUnknownMember, missingIdError, type ShareRuntime } from '../share-runtime.js';
import { FINAL_EPOCH, INITIAL_EPOCH } from '../share-sessions.js';
import { byTopic, currentLeader, nodeEndpoints } from './partition-responses.js';

/**
 * ShareAcknowledge (API 79, v1–2): acknowledgements in an existing share
 * session. Epoch 0 cannot open a session here (INVALID_SHARE_SESSION_EPOCH);
 * −1 acknowledges, then closes the session and releases the member's other
 * records; any other epoch must match the session's and moves it on. A
 * member not in the group (when this node coordinates it) gets UNKNOWN_MEMBER_ID.
 */
export function shareAcknowledgeHandler(rt: ShareRuntime): Handler {
  return async (request: ShareAcknowledgeRequest, ctx: RequestContext): Promise<ShareAcknowledgeResponse> => {
    const fail = (code: number, message: string): ShareAcknowledgeResponse =>
      ShareAcknowledgeResponse.create({ errorCode: code, errorMessage: message, acquisitionLockTimeoutMs: rt.config.recordLockDurationMs });
    const groupId = request.groupId ?? '';
    const memberId = request.memberId ?? '';
    const missing = missingIdError(groupId, memberId);
    if (missing !== null) return fail(missing.code, missing.message);
    const epoch = request.shareSessionEpoch;
    if (epoch === INITIAL_EPOCH)
      return fail(ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'ShareAcknowledge cannot open a share session (epoch 0)');

    // As ShareFetch: a member no longer in the group (this node coordinates it) acknowledges nothing.
    const notMember = await expelUnknownMember(rt, groupId, memberId);
    if (notMember !== null) return fail(ErrorCode.UNKNOWN_MEMBER_ID, notMember);

    let session;
    try {
      session = rt.sessions.find(groupId, memberId, epoch);
    } catch (caught) {
      if (caught instanceof ShareError) return fail(caught.code, caught.message);
      throw caught;
    }
    if (epoch !== FINAL_EPOCH) rt.sessions.advance(session);

    const acks: AckRequestPartition[] = request.topics.flatMap((topic) =>
      topic.partitions.map((p) => ({ topicId: topic.topicId, partition: p.partitionIndex, batches: p.acknowledgementBatches })),
    );
    const results = await rt.partitions.acknowledge(groupId, memberId, acks, request.isRenewAck);
    if (epoch === FINAL_EPOCH) await closeSession(rt, session);

    const leaders: number[] = [];
    const indexed = acks.map((ack, i) => ({ ...ack, result: results[i]! }));
    return ShareAcknowledgeResponse.create({
      acquisitionLockTimeoutMs: rt.config.recordLockDurationMs,
      responses: byTopic(indexed).map(({ topicId, items }) => ({
        topicId,
        partitions: items.map((item) => {
          const leader = currentLeader(rt, item, item.result.errorCode);
          if (leader.leaderId >= 0) leaders.push(leader.leaderId);
          return {
            partitionIndex: item.partition,
            errorCode: item.result.errorCode,
            errorMessage: item.result.errorMessage,
            currentLeader: leader,
          };
        }),
      })),
      nodeEndpoints: nodeEndpoints(rt, leaders, ctx),
    });
  };
}
