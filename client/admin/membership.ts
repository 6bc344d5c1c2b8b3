/**
 * Admin's calls on a classic group's membership: removeMembersFromConsumerGroup
 * (LeaveGroup on the members' behalf) and describeClassicGroups
 * (DescribeGroups, for any classic group whatever its protocol type).
 *
 * Kafka: KafkaAdminClient.removeMembersFromConsumerGroup and getMembersFromGroup,
 * RemoveMembersFromConsumerGroupHandler, RemoveMembersFromConsumerGroupResult,
 * DescribeClassicGroupsHandler.
 * - Members are named by group.instance.id (static members: Kafka's MemberToRemove),
 *   so LeaveGroup v3+ is needed. With none named, every member of the group is
 *   removed: describeConsumerGroups lists them, and each goes by its instance id
 *   when it has one, else by its member id.
 * - A group-level error of LeaveGroup (GROUP_AUTHORIZATION_FAILED, ...) or of the
 *   describe that lists the members fails the call, as it fails Kafka's whole
 *   result; each member's own error (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) is that
 *   member's entry.
 */
import { DescribeGroupsRequest, DescribeGroupsResponse, LeaveGroupRequest, LeaveGroupResponse, type MemberIdentity } from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import type { TopicPartition } from '../consumer/topic-partition.js';
import { ConfigError, Errors, errorFromCode, KafkaError } from '../errors.js';
import { authorizedOperations, parseGroupState, type GroupState } from './group-types.js';
import { assignedPartitions, describeConsumerGroups, type DescribeGroupsOptions } from './groups.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { perEntry, toCoordinator } from './per-entry.js';
import { AdminResult, type EntryOutcome } from './result.js';

/** Kafka's RemoveMembersFromConsumerGroupOptions. */
export interface RemoveMembersFromConsumerGroupOptions extends AdminCallOptions {
  /** The static members to remove, by group.instance.id; none (or an empty list) removes every member. */
  members?: readonly { groupInstanceId: string }[];
  /** Why, for the broker's log; at most 255 characters are sent (Kafka truncates the same way). */
  reason?: string;
}

/** Kafka's KafkaAdminClient.DEFAULT_LEAVE_GROUP_REASON. */
const DEFAULT_REASON = 'member was removed by an admin';
const MAX_REASON_LENGTH = 255;
/** LeaveGroup v3 (KIP-345) is the first that names members, by member id or group.instance.id. */
const FIRST_BATCH_VERSION = 3;

/**
 * Removes members from a classic group; one outcome per member, keyed by its
 * group.instance.id (or, when removing every member, by its member id when it
 * has no instance id).
 */
export async function removeMembersFromConsumerGroup(
  admin: Admin,
  groupId: string,
  options: RemoveMembersFromConsumerGroupOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const reason = options.reason === undefined || options.reason === '' ? DEFAULT_REASON : options.reason.slice(0, MAX_REASON_LENGTH);
  const named = options.members ?? [];
  for (const [i, m] of named.entries()) {
    if (typeof m?.groupInstanceId !== 'string' || m.groupInstanceId === '') {
      throw new ConfigError(`removeMembersFromConsumerGroup(${groupId}): members[${i}] needs a non-empty groupInstanceId`);
    }
  }
  const members: MemberIdentity[] =
    named.length > 0
      ? [...new Set(named.map((m) => m.groupInstanceId))].map((groupInstanceId) => ({ memberId: '', groupInstanceId, reason }))
      : await everyMember(admin, groupId, deadline, reason);
  const keyOf = (m: { memberId: string; groupInstanceId: string | null }): string => m.groupInstanceId ?? m.memberId;
  // Deviation: removing every member of a group that has none fails in Kafka (LeaveGroupRequest.Builder
  // refuses an empty member list with an IllegalArgumentException); here there is nothing to do, and the
  // result has no entries.
  if (members.length === 0) return new AdminResult(new Map());

  const what = `LeaveGroup (group ${groupId})`;
  const { response } = await toCoordinator(
    admin,
    what,
    CoordinatorType.GROUP,
    groupId,
    { request: LeaveGroupRequest, response: LeaveGroupResponse },
    () => LeaveGroupRequest.create({ groupId, members }),
    (r) => ({ code: r.errorCode }),
    { deadline, min: FIRST_BATCH_VERSION },
  );
  const answered = new Map(response.members.map((m) => [keyOf(m), m.errorCode]));
  const entries = new Map<string, EntryOutcome<void>>();
  for (const member of members) {
    const key = keyOf(member);
    const code = answered.get(key);
    if (code === undefined) {
      entries.set(key, { ok: false, error: new KafkaError(`${what}: the answer does not name member ${key}`, { code: Errors.UNKNOWN_SERVER_ERROR }) });
    } else if (code !== Errors.NONE) {
      entries.set(key, { ok: false, error: errorFromCode(code, `${what}, member ${key}`) });
    } else {
      entries.set(key, { ok: true, value: undefined });
    }
  }
  return new AdminResult(entries);
}

/** Every member of the group, as Kafka's getMembersFromGroup finds them: by instance id when static, else by member id. */
async function everyMember(admin: Admin, groupId: string, deadline: number, reason: string): Promise<MemberIdentity[]> {
  const described = await describeConsumerGroups(admin, [groupId], { timeoutMs: Math.max(0, deadline - Date.now()) });
  const outcome = described.entries.get(groupId)!;
  if (!outcome.ok) {
    throw new KafkaError(`removeMembersFromConsumerGroup(${groupId}): could not list the group's members: ${outcome.error.message}`, {
      code: outcome.error instanceof KafkaError ? outcome.error.code : undefined,
      cause: outcome.error,
    });
  }
  return outcome.value.members.map((m) =>
    m.groupInstanceId !== null ? { memberId: '', groupInstanceId: m.groupInstanceId, reason } : { memberId: m.memberId, groupInstanceId: null, reason },
  );
}

/** One member of a classic group (Kafka's MemberDescription as DescribeClassicGroupsHandler fills it). */
export interface ClassicMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  host: string;
  /** Decoded from the consumer protocol's bytes when the group's protocol type is `consumer` or ''; empty otherwise. */
  assignment: { topicPartitions: TopicPartition[] };
}

/** Kafka's ClassicGroupDescription. */
export interface ClassicGroupDescription {
  groupId: string;
  /** The protocol type (`consumer`, `connect`, '' for a simple group ...). */
  protocol: string;
  /** The protocol the group chose (a consumer group's assignor). */
  protocolData: string;
  isSimpleConsumerGroup: boolean;
  members: ClassicMemberDescription[];
  /** Kafka's ClassicGroupState: one of PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD, EMPTY or UNKNOWN. */
  state: GroupState;
  coordinatorId: number;
  /** Only when asked (includeAuthorizedOperations). */
  authorizedOperations: string[] | undefined;
}

/** Describes classic groups by DescribeGroups (Kafka 4's describeClassicGroups); one outcome per group. */
export async function describeClassicGroups(
  admin: Admin,
  groupIds: readonly string[],
  options: DescribeGroupsOptions = {},
): Promise<AdminResult<string, ClassicGroupDescription>> {
  const deadline = deadlineOf(admin, options);
  return new AdminResult(
    await perEntry(groupIds, async (groupId): Promise<ClassicGroupDescription> => {
      const what = `DescribeGroups (group ${groupId})`;
      const { response, nodeId } = await toCoordinator(
        admin,
        what,
        CoordinatorType.GROUP,
        groupId,
        { request: DescribeGroupsRequest, response: DescribeGroupsResponse },
        () => DescribeGroupsRequest.create({ groups: [groupId], includeAuthorizedOperations: options.includeAuthorizedOperations ?? false }),
        (r) => ({ code: r.groups[0]?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR, message: r.groups[0]?.errorMessage ?? 'no group in the answer' }),
        { deadline },
      );
      const g = response.groups[0]!;
      // Only a consumer group's assignment bytes are ConsumerProtocol's; another protocol's are opaque (as in Kafka's handler).
      const consumer = g.protocolType === 'consumer' || g.protocolType === '';
      return {
        groupId,
        protocol: g.protocolType,
        protocolData: g.protocolData,
        isSimpleConsumerGroup: g.protocolType === '',
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          host: m.clientHost,
          assignment: { topicPartitions: consumer ? assignedPartitions(m.memberAssignment, `${what}, member ${m.memberId}`) : [] },
        })),
        state: parseGroupState(g.groupState),
        coordinatorId: nodeId,
        authorizedOperations: authorizedOperations(g.authorizedOperations),
      };
    }),
  );
}
