/**
 * Admin's group calls: listGroups, describeConsumerGroups,
 * describeShareGroups, deleteConsumerGroups.
 *
 * Kafka: KafkaAdminClient.listGroups (ListGroups to every broker, the
 * state and type filters of KIP-1043), DescribeConsumerGroupsHandler,
 * DescribeShareGroupsHandler, DeleteConsumerGroupsHandler.
 * - describeConsumerGroups asks ConsumerGroupDescribe first and falls back to
 *   DescribeGroups for a group it answers GROUP_ID_NOT_FOUND (a classic group)
 *   or when the broker lacks the API, as Kafka's handler chooses; a classic
 *   group whose protocol type is neither `consumer` nor '' is an error of its
 *   entry; GROUP_ID_NOT_FOUND from both keeps ConsumerGroupDescribe's message.
 * - Per group: GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED (KIP-848 groups
 *   assigned topics the caller may not describe), GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP.
 */
import {
  ConsumerGroupDescribeRequest,
  ConsumerGroupDescribeResponse,
  DeleteGroupsRequest,
  DeleteGroupsResponse,
  DescribeGroupsRequest,
  DescribeGroupsResponse,
  ListGroupsRequest,
  ListGroupsResponse,
  ShareGroupDescribeRequest,
  ShareGroupDescribeResponse,
} from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import { Errors, errorFromCode, KafkaError, UnsupportedVersionError } from '../errors.js';
import type { TopicPartition } from '../consumer/topic-partition.js';
import { deserializeAssignment } from '../consumer/consumer-protocol.js';
import {
  authorizedOperations,
  groupStateName,
  parseGroupState,
  parseGroupType,
  type ConsumerGroupDescription,
  type GroupListing,
  type GroupState,
  type GroupType,
  type ShareGroupDescription,
} from './group-types.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { AllBrokersResult, perEntry, toAllBrokers, toCoordinator } from './per-entry.js';
import { AdminResult } from './result.js';

export interface ListGroupsOptions extends AdminCallOptions {
  /** Only groups of these types (ListGroups v5+). */
  types?: GroupType[];
  /** Only groups in these states (ListGroups v4+). */
  groupStates?: GroupState[];
  /** Only groups of these protocol types (`consumer`, `share`, '' ...), filtered here as Kafka's client does. */
  protocolTypes?: string[];
}

export interface DescribeGroupsOptions extends AdminCallOptions {
  includeAuthorizedOperations?: boolean;
}

const FIRST_STATES_FILTER_VERSION = 4;
const FIRST_TYPES_FILTER_VERSION = 5;

export async function listGroups(admin: Admin, options: ListGroupsOptions = {}): Promise<AllBrokersResult<GroupListing>> {
  const deadline = deadlineOf(admin, options);
  const types = (options.types ?? []).map((t) => t.toLowerCase());
  const states = (options.groupStates ?? []).map(groupStateName);
  return toAllBrokers(admin, deadline, (nodeId) =>
    admin.cluster.retry(`ListGroups to node ${nodeId}`, deadline, async () => {
      const { response, version } = await admin.cluster.send(
        nodeId,
        ListGroupsRequest,
        ListGroupsResponse,
        () => ListGroupsRequest.create({ statesFilter: states, typesFilter: types }),
        {
          deadline,
          min: types.length > 0 ? FIRST_TYPES_FILTER_VERSION : states.length > 0 ? FIRST_STATES_FILTER_VERSION : undefined,
        },
      );
      // COORDINATOR_LOAD_IN_PROGRESS and COORDINATOR_NOT_AVAILABLE are retriable codes: the retry sends it again.
      if (response.errorCode !== Errors.NONE) throw errorFromCode(response.errorCode, `ListGroups to node ${nodeId}`);
      return response.groups
        .filter((g) => options.protocolTypes === undefined || options.protocolTypes.length === 0 || options.protocolTypes.includes(g.protocolType))
        .map((g): GroupListing => ({
          groupId: g.groupId,
          type: version >= FIRST_TYPES_FILTER_VERSION && g.groupType !== '' ? parseGroupType(g.groupType) : undefined,
          protocol: g.protocolType,
          groupState: version >= FIRST_STATES_FILTER_VERSION && g.groupState !== '' ? parseGroupState(g.groupState) : undefined,
          isSimpleConsumerGroup: g.protocolType === '' && (g.groupType === '' || g.groupType.toLowerCase() === 'classic'),
        }));
    }),
  );
}

const partitionsOf = (assignment: { topicPartitions: { topicName: string; partitions: number[] }[] }): TopicPartition[] =>
  assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition })));

/** ConsumerGroupDescribe; null when the group is not a KIP-848 group (or the broker lacks the API): ask DescribeGroups. */
async function describeModern(
  admin: Admin,
  groupId: string,
  include: boolean,
  deadline: number,
  notFound: { message: string | null },
): Promise<ConsumerGroupDescription | null> {
  let result;
  try {
    result = await toCoordinator(
      admin,
      `ConsumerGroupDescribe (group ${groupId})`,
      CoordinatorType.GROUP,
      groupId,
      { request: ConsumerGroupDescribeRequest, response: ConsumerGroupDescribeResponse },
      () => ConsumerGroupDescribeRequest.create({ groupIds: [groupId], includeAuthorizedOperations: include }),
      (r) => {
        const g = r.groups[0];
        if (g?.errorCode === Errors.GROUP_ID_NOT_FOUND || g?.errorCode === Errors.UNSUPPORTED_VERSION) return { code: Errors.NONE };
        return { code: g?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR, message: g?.errorMessage ?? 'no group in the answer' };
      },
      { deadline },
    );
  } catch (error) {
    if (error instanceof UnsupportedVersionError) return null;
    throw error;
  }
  const g = result.response.groups[0]!;
  if (g.errorCode !== Errors.NONE) {
    notFound.message = g.errorMessage;
    return null;
  }
  return {
    groupId,
    isSimpleConsumerGroup: false,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      host: m.clientHost,
      assignment: { topicPartitions: partitionsOf(m.assignment) },
      targetAssignment: { topicPartitions: partitionsOf(m.targetAssignment) },
      memberEpoch: m.memberEpoch,
      upgraded: m.memberType === -1 ? undefined : m.memberType === 1,
    })),
    partitionAssignor: g.assignorName,
    type: 'CONSUMER',
    groupState: parseGroupState(g.groupState),
    coordinatorId: result.nodeId,
    authorizedOperations: authorizedOperations(g.authorizedOperations),
    groupEpoch: g.groupEpoch,
    targetAssignmentEpoch: g.assignmentEpoch,
  };
}

async function describeClassic(
  admin: Admin,
  groupId: string,
  include: boolean,
  deadline: number,
  notFoundMessage: string | null,
): Promise<ConsumerGroupDescription> {
  const what = `DescribeGroups (group ${groupId})`;
  const result = await toCoordinator(
    admin,
    what,
    CoordinatorType.GROUP,
    groupId,
    { request: DescribeGroupsRequest, response: DescribeGroupsResponse },
    () => DescribeGroupsRequest.create({ groups: [groupId], includeAuthorizedOperations: include }),
    (r) => {
      const g = r.groups[0];
      const code = g?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR;
      return { code, message: code === Errors.GROUP_ID_NOT_FOUND ? (notFoundMessage ?? g?.errorMessage) : (g?.errorMessage ?? 'no group in the answer') };
    },
    { deadline },
  );
  const g = result.response.groups[0]!;
  if (g.protocolType !== 'consumer' && g.protocolType !== '') {
    throw new KafkaError(`group ${groupId} is not a consumer group (its protocol type is ${g.protocolType})`, { code: Errors.INVALID_GROUP_ID });
  }
  return {
    groupId,
    isSimpleConsumerGroup: g.protocolType === '',
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      rackId: null,
      clientId: m.clientId,
      host: m.clientHost,
      assignment: { topicPartitions: assignedPartitions(m.memberAssignment, `${what}, member ${m.memberId}`) },
      targetAssignment: undefined,
      memberEpoch: undefined,
      upgraded: undefined,
    })),
    partitionAssignor: g.protocolData,
    type: 'CLASSIC',
    groupState: parseGroupState(g.groupState),
    coordinatorId: result.nodeId,
    authorizedOperations: authorizedOperations(g.authorizedOperations),
    groupEpoch: undefined,
    targetAssignmentEpoch: undefined,
  };
}

export async function describeConsumerGroups(
  admin: Admin,
  groupIds: readonly string[],
  options: DescribeGroupsOptions = {},
): Promise<AdminResult<string, ConsumerGroupDescription>> {
  const deadline = deadlineOf(admin, options);
  const include = options.includeAuthorizedOperations ?? false;
  return new AdminResult(
    await perEntry(groupIds, async (groupId) => {
      const notFound = { message: null as string | null };
      const modern = await describeModern(admin, groupId, include, deadline, notFound);
      return modern ?? describeClassic(admin, groupId, include, deadline, notFound.message);
    }),
  );
}

export async function describeShareGroups(
  admin: Admin,
  groupIds: readonly string[],
  options: DescribeGroupsOptions = {},
): Promise<AdminResult<string, ShareGroupDescription>> {
  const deadline = deadlineOf(admin, options);
  return new AdminResult(
    await perEntry(groupIds, async (groupId): Promise<ShareGroupDescription> => {
      const result = await toCoordinator(
        admin,
        `ShareGroupDescribe (group ${groupId})`,
        CoordinatorType.GROUP,
        groupId,
        { request: ShareGroupDescribeRequest, response: ShareGroupDescribeResponse },
        () => ShareGroupDescribeRequest.create({ groupIds: [groupId], includeAuthorizedOperations: options.includeAuthorizedOperations ?? false }),
        (r) => ({ code: r.groups[0]?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR, message: r.groups[0]?.errorMessage ?? 'no group in the answer' }),
        { deadline },
      );
      const g = result.response.groups[0]!;
      return {
        groupId,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          clientId: m.clientId,
          host: m.clientHost,
          assignment: { topicPartitions: partitionsOf(m.assignment) },
          memberEpoch: m.memberEpoch,
        })),
        groupState: parseGroupState(g.groupState),
        coordinatorId: result.nodeId,
        authorizedOperations: authorizedOperations(g.authorizedOperations),
        groupEpoch: g.groupEpoch,
        targetAssignmentEpoch: g.assignmentEpoch,
      };
    }),
  );
}

export async function deleteConsumerGroups(admin: Admin, groupIds: readonly string[], options: AdminCallOptions = {}): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  return new AdminResult(
    await perEntry(groupIds, async (groupId) => {
      await toCoordinator(
        admin,
        `DeleteGroups (group ${groupId})`,
        CoordinatorType.GROUP,
        groupId,
        { request: DeleteGroupsRequest, response: DeleteGroupsResponse },
        () => DeleteGroupsRequest.create({ groupsNames: [groupId] }),
        (r) => {
          const g = r.results.find((x) => x.groupId === groupId);
          return { code: g?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR, message: g?.errorMessage ?? null };
        },
        { deadline },
      );
    }),
  );
}

/**
 * The partitions of a classic member's assignment, the consumer protocol bytes
 * SyncGroup handed out, read with the consumer's own decoder as Kafka's
 * DescribeConsumerGroupsHandler reads them with ConsumerProtocol; bytes that
 * are not one fail naming the group and member they came from.
 */
export function assignedPartitions(bytes: Uint8Array, where: string): TopicPartition[] {
  try {
    return deserializeAssignment(bytes).partitions;
  } catch (error) {
    throw new KafkaError(`${where}: the member's assignment is not a consumer protocol Assignment (${(error as Error).message})`, { cause: error });
  }
}
