import { assignPartitions, type AssignorTopic } from './assignor.js';
import type { Clock } from './clock.js';
import { ErrorCode, ShareError } from './share-error.js';

/**
 * Share-group membership (KIP-932's ShareGroupHeartbeat): members pick their
 * own ids, join with epoch 0, leave with −1, and otherwise send back the epoch
 * the coordinator gave them. Any change to the members, their subscriptions or
 * the subscribed topics' partition counts bumps the group epoch and
 * recomputes the target assignment; a member moves to it (and to the group's
 * epoch) on its next heartbeat, at once, since share groups have no revocation
 * handshake. A member silent for the session timeout is removed.
 *
 * Kept in memory only: after a restart members get UNKNOWN_MEMBER_ID and join
 * again (kipgen does not persist share-group metadata; Kafka keeps it in
 * `__consumer_offsets`).
 */

export interface TopicLookup {
  /** A subscribable (non-internal) topic by name. */
  topicByName(name: string): AssignorTopic | undefined;
}

export interface HeartbeatInput {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  subscribedTopicNames: readonly string[] | null;
  clientId: string;
  clientHost: string;
}

export interface TopicPartitions {
  topicId: string;
  partitions: number[];
}

export interface HeartbeatResult {
  memberEpoch: number;
  /** The member's assignment when it changed (or on joining), else null. */
  assignment: TopicPartitions[] | null;
  /** The member that left, whose locks the caller releases. */
  left: boolean;
}

export interface ShareGroupMember {
  readonly memberId: string;
  memberEpoch: number;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  assignment: TopicPartitions[];
  lastHeartbeat: number;
}

export interface ShareGroup {
  readonly groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  /** Subscribed topics and their partition counts, as of the last assignment. */
  metadataSignature: string;
  members: Map<string, ShareGroupMember>;
  target: Map<string, TopicPartitions[]>;
}

export class ShareGroups {
  private groups = new Map<string, ShareGroup>();

  constructor(
    private readonly clock: Clock,
    private readonly topics: TopicLookup,
    /** The session timeout of a group (its share.session.timeout.ms, else the coordinator's). */
    private readonly sessionTimeoutMs: number | ((groupId: string) => number),
  ) {}

  /** The session timeout in force for a group. */
  sessionTimeoutOf(groupId: string): number {
    return typeof this.sessionTimeoutMs === 'number' ? this.sessionTimeoutMs : this.sessionTimeoutMs(groupId);
  }

  group(groupId: string): ShareGroup | undefined {
    return this.groups.get(groupId);
  }

  allGroups(): ShareGroup[] {
    return [...this.groups.values()];
  }

  heartbeat(input: HeartbeatInput): HeartbeatResult {
    const { groupId, memberId, memberEpoch } = input;
    if (groupId === '') throw new ShareError(ErrorCode.INVALID_GROUP_ID, 'GroupId can not be empty');
    if (memberId === '') throw new ShareError(ErrorCode.INVALID_REQUEST, 'MemberId can not be empty');
    if (memberEpoch < -1) throw new ShareError(ErrorCode.INVALID_REQUEST, `MemberEpoch ${memberEpoch} is invalid`);
    const now = this.clock.now();

    if (memberEpoch === -1) {
      const group = this.groups.get(groupId);
      const left = group?.members.delete(memberId) ?? false;
      if (left) group!.groupEpoch += 1;
      return { memberEpoch: -1, assignment: null, left };
    }

    let group = this.groups.get(groupId);
    let member = group?.members.get(memberId);
    if (memberEpoch === 0) {
      if (input.subscribedTopicNames === null || input.subscribedTopicNames.length === 0) {
        throw new ShareError(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames must be set and non-empty when joining (MemberEpoch 0)');
      }
      if (group === undefined) {
        group = { groupId, groupEpoch: 0, assignmentEpoch: 0, metadataSignature: '', members: new Map(), target: new Map() };
        this.groups.set(groupId, group);
      }
      if (member === undefined) {
        member = {
          memberId,
          memberEpoch: 0,
          rackId: input.rackId,
          clientId: input.clientId,
          clientHost: input.clientHost,
          subscribedTopicNames: sortedUnique(input.subscribedTopicNames),
          assignment: [],
          lastHeartbeat: now,
        };
        group.members.set(memberId, member);
        group.groupEpoch += 1;
      }
      // A known member joining again (it restarted) starts over from the current assignment.
      member.memberEpoch = 0;
    } else {
      if (group === undefined || member === undefined) {
        throw new ShareError(ErrorCode.UNKNOWN_MEMBER_ID, `member ${memberId} is not in share group ${groupId}`);
      }
      if (memberEpoch !== member.memberEpoch) {
        throw new ShareError(ErrorCode.FENCED_MEMBER_EPOCH, `member ${memberId} sent epoch ${memberEpoch}, its epoch is ${member.memberEpoch}`);
      }
    }

    member.lastHeartbeat = now;
    member.clientId = input.clientId;
    member.clientHost = input.clientHost;
    if (input.rackId !== null) member.rackId = input.rackId;
    if (input.subscribedTopicNames !== null) {
      const names = sortedUnique(input.subscribedTopicNames);
      if (names.join('\u0000') !== member.subscribedTopicNames.join('\u0000')) {
        member.subscribedTopicNames = names;
        group.groupEpoch += 1;
      }
    }

    this.refreshAssignment(group);
    if (member.memberEpoch !== group.assignmentEpoch) {
      member.memberEpoch = group.assignmentEpoch;
      member.assignment = group.target.get(memberId) ?? [];
      return { memberEpoch: member.memberEpoch, assignment: member.assignment, left: false };
    }
    return { memberEpoch: member.memberEpoch, assignment: memberEpoch === 0 ? member.assignment : null, left: false };
  }

  /** The current epoch of a member, or undefined if the group or member is unknown here. */
  memberEpoch(groupId: string, memberId: string): number | undefined {
    return this.groups.get(groupId)?.members.get(memberId)?.memberEpoch;
  }

  /**
   * True when the group is known here and the member is not in it (it left, was
   * expired by the session timeout, or never joined). A group unknown here (none
   * of its members joined since this node started) says nothing about a member.
   */
  isUnknownMember(groupId: string, memberId: string): boolean {
    const group = this.groups.get(groupId);
    return group !== undefined && !group.members.has(memberId);
  }

  /** Removes members silent for the session timeout; returns them so that their locks can be released. */
  expireMembers(): { groupId: string; memberId: string }[] {
    const now = this.clock.now();
    const expired: { groupId: string; memberId: string }[] = [];
    for (const group of this.groups.values()) {
      const timeout = this.sessionTimeoutOf(group.groupId);
      for (const member of group.members.values()) {
        if (member.lastHeartbeat + timeout <= now) {
          group.members.delete(member.memberId);
          group.groupEpoch += 1;
          expired.push({ groupId: group.groupId, memberId: member.memberId });
        }
      }
    }
    return expired;
  }

  /** Recomputes the target assignment when the group epoch moved or the subscribed topics changed. */
  private refreshAssignment(group: ShareGroup): void {
    const subscribed = new Map<string, AssignorTopic>();
    for (const member of group.members.values()) {
      for (const name of member.subscribedTopicNames) {
        const topic = this.topics.topicByName(name);
        if (topic !== undefined) subscribed.set(name, topic);
      }
    }
    const signature = [...subscribed]
      .map(([name, t]) => `${name}:${t.topicId}:${t.partitions}`)
      .sort()
      .join(',');
    if (signature !== group.metadataSignature) {
      group.metadataSignature = signature;
      if (group.assignmentEpoch === group.groupEpoch) group.groupEpoch += 1;
    }
    if (group.assignmentEpoch === group.groupEpoch) return;
    const target = assignPartitions([...group.members.values()], subscribed);
    group.target = new Map([...target].map(([memberId, byTopic]) => [memberId, [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions }))]));
    group.assignmentEpoch = group.groupEpoch;
  }
}

function sortedUnique(names: readonly string[]): string[] {
  return [...new Set(names)].sort();
}
