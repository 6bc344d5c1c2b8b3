import type { ShareGroupDescription, ShareHeartbeatResult } from '../broker-context.js';
import type { ShareGroupHeartbeatRequest } from '../../generated/ShareGroupHeartbeatRequest.js';
import { ErrorCode, ShareError } from './share-error.js';
import { dropMember, type ShareParts } from './share-parts.js';

/** The assignor share groups use (KIP-932's SimpleAssignor). */
const ASSIGNOR_NAME = 'simple';

/**
 * ShareGroupHeartbeat (API 76, v1; the wire answer is coordinator/apis/76-share-group-heartbeat.ts):
 * join, stay, leave; the answer carries the member epoch and, when it changed, the
 * assignment. A member that leaves has its share session here closed and its records released.
 */
export async function shareGroupHeartbeat(
  rt: ShareParts,
  request: ShareGroupHeartbeatRequest,
  client: { readonly clientId: string; readonly clientHost: string },
): Promise<ShareHeartbeatResult> {
  if (!rt.isGroupCoordinator(request.groupId)) {
    return {
      errorCode: ErrorCode.NOT_COORDINATOR,
      errorMessage: `node ${rt.nodeId} does not coordinate ${request.groupId}`,
      memberId: null,
      memberEpoch: 0,
      heartbeatIntervalMs: 0,
      assignment: null,
    };
  }
  try {
    const result = rt.groups.heartbeat({
      groupId: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      rackId: request.rackId,
      subscribedTopicNames: request.subscribedTopicNames,
      clientId: client.clientId,
      clientHost: client.clientHost,
    });
    if (result.left) await dropMember(rt, request.groupId, request.memberId);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: request.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: rt.heartbeatIntervalOf(request.groupId),
      assignment: result.assignment,
    };
  } catch (caught) {
    if (!(caught instanceof ShareError)) throw caught;
    return { errorCode: caught.code, errorMessage: caught.message, memberId: request.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
  }
}

/** ShareGroupDescribe (API 77, v1; the wire answer is coordinator/apis/77-share-group-describe.ts). */
export function describeShareGroups(rt: ShareParts, groupIds: readonly string[]): ShareGroupDescription[] {
  return groupIds.map((groupId): ShareGroupDescription => {
    if (!rt.isGroupCoordinator(groupId)) {
      return { groupId, errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: `node ${rt.nodeId} does not coordinate ${groupId}`, groupState: '' };
    }
    const group = rt.groups.group(groupId);
    if (group === undefined) return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `share group ${groupId} not found`, groupState: 'Dead' };
    return {
      groupId,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupState: group.members.size === 0 ? 'Empty' : 'Stable',
      detail: {
        groupEpoch: group.groupEpoch,
        assignmentEpoch: group.assignmentEpoch,
        assignorName: ASSIGNOR_NAME,
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          assignment: m.assignment.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })),
        })),
      },
    };
  });
}
