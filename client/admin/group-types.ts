/**
 * The result types of Admin's group calls, as Kafka's GroupListing,
 * ConsumerGroupDescription, ShareGroupDescription and MemberDescription, in
 * TypeScript form; GroupState and GroupType by the names of Kafka's enums.
 */
import { authorizedOperations as aclOperationsOf, type AclOperation } from './acl-types.js';
import type { TopicPartition } from '../consumer/topic-partition.js';

/** Kafka's GroupType. */
export type GroupType = 'UNKNOWN' | 'CONSUMER' | 'CLASSIC' | 'SHARE' | 'STREAMS';

/** Kafka's GroupState (covering classic, consumer, share and streams groups). */
export type GroupState = 'UNKNOWN' | 'PREPARING_REBALANCE' | 'COMPLETING_REBALANCE' | 'STABLE' | 'DEAD' | 'EMPTY' | 'ASSIGNING' | 'RECONCILING' | 'NOT_READY';

/** The wire names of the states (Kafka's GroupState.toString), which ListGroups filters by. */
const STATE_NAMES: Record<GroupState, string> = {
  UNKNOWN: 'Unknown',
  PREPARING_REBALANCE: 'PreparingRebalance',
  COMPLETING_REBALANCE: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  NOT_READY: 'NotReady',
};

export function groupStateName(state: GroupState): string {
  return STATE_NAMES[state];
}

/** Kafka's GroupState.parse: case-insensitive, UNKNOWN for a name it does not know. */
export function parseGroupState(name: string): GroupState {
  const lower = name.toLowerCase();
  for (const [state, wire] of Object.entries(STATE_NAMES)) if (wire.toLowerCase() === lower) return state as GroupState;
  return 'UNKNOWN';
}

/** Kafka's GroupType.parse: case-insensitive, UNKNOWN for a name it does not know. */
export function parseGroupType(name: string): GroupType {
  const upper = name.toUpperCase();
  return (['CONSUMER', 'CLASSIC', 'SHARE', 'STREAMS'] as const).find((t) => t === upper) ?? 'UNKNOWN';
}

/** One group as ListGroups names it (Kafka's GroupListing). */
export interface GroupListing {
  groupId: string;
  /** Absent when the broker does not say (ListGroups before v5). */
  type: GroupType | undefined;
  /** The protocol type: `consumer` for consumer groups, `share`, '' for a group known only by its offsets. */
  protocol: string;
  /** Absent when the broker does not say (ListGroups before v4). */
  groupState: GroupState | undefined;
  /** True for a classic group without a protocol type: one that only commits offsets (Kafka's isSimpleConsumerGroup). */
  isSimpleConsumerGroup: boolean;
}

/** Kafka's MemberAssignment. */
export interface MemberAssignment {
  topicPartitions: TopicPartition[];
}

/** One member of a consumer group (Kafka's MemberDescription). */
export interface MemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  /** KIP-848 members only. */
  rackId: string | null;
  clientId: string;
  host: string;
  /** What the member owns: decoded from the consumer protocol's bytes for a classic member. */
  assignment: MemberAssignment;
  /** KIP-848 members only: what the coordinator wants it to own. */
  targetAssignment: MemberAssignment | undefined;
  /** KIP-848 members only. */
  memberEpoch: number | undefined;
  /** KIP-848 members only: whether it joined with the classic protocol (memberType 1); undefined when the broker does not say. */
  upgraded: boolean | undefined;
}

/** Kafka's ConsumerGroupDescription. */
export interface ConsumerGroupDescription {
  groupId: string;
  isSimpleConsumerGroup: boolean;
  members: MemberDescription[];
  /** The assignor (KIP-848) or the classic protocol's chosen assignor. */
  partitionAssignor: string;
  type: GroupType;
  groupState: GroupState;
  /** The id of the node that coordinates the group. Kafka gives a Node; its address is in describeCluster. */
  coordinatorId: number;
  /** Only when asked (includeAuthorizedOperations); Kafka's AclOperation names. */
  authorizedOperations: AclOperation[] | undefined;
  /** KIP-848 groups only. */
  groupEpoch: number | undefined;
  /** KIP-848 groups only. */
  targetAssignmentEpoch: number | undefined;
}

/** One member of a share group (Kafka's ShareMemberDescription). */
export interface ShareMemberDescription {
  memberId: string;
  rackId: string | null;
  clientId: string;
  host: string;
  assignment: MemberAssignment;
  memberEpoch: number;
}

/** Kafka's ShareGroupDescription. */
export interface ShareGroupDescription {
  groupId: string;
  members: ShareMemberDescription[];
  groupState: GroupState;
  coordinatorId: number;
  authorizedOperations: AclOperation[] | undefined;
  groupEpoch: number;
  targetAssignmentEpoch: number;
}

/** The operations of an authorizedOperations bit set, undefined when not asked (acl-types.ts reads the bits). */
export function authorizedOperations(bits: number): AclOperation[] | undefined {
  return aclOperationsOf(bits) ?? undefined;
}
