import { sharePartitionKey, type RequestContext, type ShareFetchAnswer } from '../broker-context.js';
import type { ShareFetchRequest } from '../../generated/ShareFetchRequest.js';
import { ErrorCode, ShareError } from './share-error.js';
import { closeSession, expelUnknownMember, missingIdError, unknownMemberMessage, type ShareParts } from './share-parts.js';
import { FINAL_EPOCH, INITIAL_EPOCH, partitionKey, type ShareSession } from './share-sessions.js';
import type { AckRequestPartition, FetchedPartition, PartitionError, PartitionRef } from './share-partition-manager.js';

/**
 * ShareFetch (API 78, v1–2; the wire answer is coordinator/apis/78-share-fetch.ts).
 * In order: session (epoch 0 opens, −1 closes, else must match and moves on),
 * piggybacked acknowledgements, forgotten partitions, then acquisition from every
 * partition of the session, read_committed.
 *
 * A member that the group coordinator (this node) does not have in the group
 * — left, or expired by the session timeout — gets a top-level
 * UNKNOWN_MEMBER_ID and acquires nothing (its session is removed); when
 * another node coordinates the group nothing is checked.
 *
 * Long poll: when nothing could be acquired the request waits up to MaxWaitMs
 * (capped by maxFetchWaitMs) for an append to one of its partitions or for
 * records to become available again (released, expired, aborted), then tries
 * once more per wake-up. MinBytes is treated as 1: any acquired record answers.
 */
/** A ShareFetch that only closes its session fetches nothing. */
const NOTHING_FETCHED: readonly FetchedPartition[] = [];

export async function shareFetch<R>(rt: ShareParts, request: ShareFetchRequest, ctx: RequestContext, answer: ShareFetchAnswer<R>): Promise<R> {
  const groupId = request.groupId ?? '';
  const memberId = request.memberId ?? '';
  const missing = missingIdError(groupId, memberId);
  if (missing !== null) return answer.failed(missing.code, missing.message, rt.config.recordLockDurationMs);

  const acks: AckRequestPartition[] = [];
  const requested: PartitionRef[] = [];
  for (const topic of request.topics) {
    for (const p of topic.partitions) {
      requested.push({ topicId: topic.topicId, partition: p.partitionIndex });
      if (p.acknowledgementBatches.length > 0) acks.push({ topicId: topic.topicId, partition: p.partitionIndex, batches: p.acknowledgementBatches });
    }
  }
  const epoch = request.shareSessionEpoch;

  // A member the group coordinator expired (or that left) must not acquire records until it joins again:
  // each acquisition would be a delivery it cannot acknowledge. Its session goes, with whatever it still held.
  const notMember = await expelUnknownMember(rt, groupId, memberId);
  if (notMember !== null) return answer.failed(ErrorCode.UNKNOWN_MEMBER_ID, notMember, rt.config.recordLockDurationMs);

  let session: ShareSession;
  try {
    if (epoch === INITIAL_EPOCH) {
      if (acks.length > 0)
        return answer.failed(
          ErrorCode.INVALID_REQUEST,
          'a request that opens a share session (epoch 0) cannot carry acknowledgements',
          rt.config.recordLockDurationMs,
        );
      const opened = rt.sessions.open(groupId, memberId, ctx.connectionId);
      session = opened.session;
      if (opened.replaced !== undefined) await rt.partitions.releaseMember(groupId, memberId);
      rt.watchConnection(ctx);
    } else {
      session = rt.sessions.find(groupId, memberId, epoch);
    }
  } catch (caught) {
    if (caught instanceof ShareError) return answer.failed(caught.code, caught.message, rt.config.recordLockDurationMs);
    throw caught;
  }

  const ackResults = new Map<string, PartitionError>();
  if (acks.length > 0) {
    const results = await rt.partitions.acknowledge(groupId, memberId, acks, request.isRenewAck);
    acks.forEach((a, i) => ackResults.set(sharePartitionKey(a), results[i]!));
  }

  if (epoch === FINAL_EPOCH) {
    await closeSession(rt, session);
    return answer.answered(requested, ackResults, NOTHING_FETCHED, rt.partitions.settingsFor(groupId).recordLockDurationMs, ctx);
  }

  for (const ref of requested) session.partitions.set(partitionKey(ref.topicId, ref.partition), ref);
  const forgotten: PartitionRef[] = [];
  for (const topic of request.forgottenTopicsData) {
    for (const partition of topic.partitions) {
      if (session.partitions.delete(partitionKey(topic.topicId, partition))) forgotten.push({ topicId: topic.topicId, partition });
    }
  }
  // The member will not acknowledge records of partitions it forgot: give them to others now rather than at lock expiry.
  if (forgotten.length > 0) await rt.partitions.releaseMember(groupId, memberId, forgotten);
  if (epoch !== INITIAL_EPOCH) rt.sessions.advance(session);

  let fetched: FetchedPartition[] = [];
  if (!request.isRenewAck) {
    const refs = [...session.partitions.values()];
    const maxRecords = request.maxRecords > 0 ? request.maxRecords : rt.config.defaultMaxRecords;
    const deadline = Date.now() + Math.min(Math.max(request.maxWaitMs, 0), rt.config.maxFetchWaitMs);
    // Before every acquisition: the session may have closed (its connection dropped, whose release
    // is what woke this poll), been replaced, or lost its member while this request waited.
    // Records acquired then would stay locked for a consumer that cannot acknowledge them.
    const live = (): boolean => rt.sessions.ofMember(groupId, memberId) === session && unknownMemberMessage(rt, groupId, memberId) === null;
    while (live()) {
      fetched = await rt.partitions.fetch(groupId, memberId, refs, maxRecords, request.maxBytes);
      const left = deadline - Date.now();
      if (fetched.some((f) => f.acquired.length > 0 || f.errorCode !== ErrorCode.NONE) || left <= 0 || refs.length === 0) break;
      await rt.waitForRecords(refs, left);
    }
  }
  return answer.answered(requested, ackResults, fetched, rt.partitions.settingsFor(groupId).recordLockDurationMs, ctx);
}
