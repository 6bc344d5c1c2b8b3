import type { ClusterView, RequestContext } from '../broker-context.js';
import type { Clock } from './clock.js';
import type { ShareConfig } from './share-config.js';
import { ErrorCode } from './share-error.js';
import type { ShareGroups } from './share-groups.js';
import type { SharePartitionManager } from './share-partition-manager.js';
import type { ShareSession, ShareSessions } from './share-sessions.js';

/**
 * ShareFetch and ShareAcknowledge from a member the group coordinator does not
 * have (left, expired by the session timeout): when this node coordinates the
 * group and knows it, the request gets UNKNOWN_MEMBER_ID and acquires nothing.
 * Elsewhere (another node coordinates the group) there is no check.
 */
export function unknownMemberMessage(rt: ShareParts, groupId: string, memberId: string): string | null {
  if (!rt.isGroupCoordinator(groupId) || !rt.groups.isUnknownMember(groupId, memberId)) return null;
  return `member ${memberId} is not in share group ${groupId}; it must join again (ShareGroupHeartbeat with MemberEpoch 0)`;
}

/** ShareFetch and ShareAcknowledge: the error for an empty GroupId or MemberId, or null. */
export function missingIdError(groupId: string, memberId: string): { code: number; message: string } | null {
  if (groupId === '') return { code: ErrorCode.INVALID_GROUP_ID, message: 'GroupId can not be empty' };
  if (memberId === '') return { code: ErrorCode.INVALID_REQUEST, message: 'MemberId can not be empty' };
  return null;
}

/**
 * ShareFetch and ShareAcknowledge from a member not in the group (see
 * unknownMemberMessage): its share session goes, with whatever records it
 * still held. Returns the UNKNOWN_MEMBER_ID message, or null for a member in
 * good standing.
 */
export async function expelUnknownMember(rt: ShareParts, groupId: string, memberId: string): Promise<string | null> {
  const notMember = unknownMemberMessage(rt, groupId, memberId);
  if (notMember === null) return null;
  await dropMember(rt, groupId, memberId);
  return notMember;
}

/**
 * Ends a share session (epoch −1, its connection dropped, its member gone):
 * the records its member still held are released. A session replaced
 * meanwhile by an epoch-0 open is left alone: the open released them, and the
 * member's records now belong to the new session.
 */
export async function closeSession(rt: ShareParts, session: ShareSession): Promise<void> {
  if (rt.sessions.ofMember(session.groupId, session.memberId) !== session) return;
  rt.sessions.remove(session);
  await rt.partitions.releaseMember(session.groupId, session.memberId);
}

/**
 * A member gone from the group (it left, or the session timeout expired it):
 * its share session on this node closes at once, so that it holds no place
 * under the session limit, and the records it still held are released.
 * Without a session here it holds nothing here: records are acquired only in
 * a session, and every way a session ends releases them.
 */
export async function dropMember(rt: ShareParts, groupId: string, memberId: string): Promise<void> {
  const session = rt.sessions.ofMember(groupId, memberId);
  if (session !== undefined) await closeSession(rt, session);
}

/** What the API handlers share: the state holders and a few facts about the node. */
export interface ShareParts {
  readonly nodeId: number;
  readonly cluster: ClusterView;
  readonly config: ShareConfig;
  readonly clock: Clock;
  readonly partitions: SharePartitionManager;
  readonly groups: ShareGroups;
  readonly sessions: ShareSessions;
  /** True when this node coordinates the share group (FindCoordinator GROUP answers this node). */
  isGroupCoordinator(groupId: string): boolean;
  /** Arranges for the connection's share sessions to close, and their locks to be released, when it drops. */
  watchConnection(ctx: RequestContext): void;
  /** Resolves after `ms` of real time, or earlier when records may have arrived or become available, or on close. */
  waitForRecords(refs: readonly { topicId: string; partition: number }[], ms: number): Promise<void>;
  /** The heartbeat interval of a group (its share.heartbeat.interval.ms, else the coordinator's). */
  heartbeatIntervalOf(groupId: string): number;
}
