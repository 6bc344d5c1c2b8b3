/**
 * Kafka's CooperativeStickyAssignor (`cooperative-sticky`): the sticky
 * assignment of AbstractStickyAssignor with the cooperative rule on top — a
 * partition that moves from one member to another is left out of this
 * rebalance's assignment, so its owner revokes it first; the member that
 * revoked it rejoins at once and the next rebalance gives it to its new
 * owner (CooperativeStickyAssignor.adjustAssignment).
 *
 * The subscription's user data is the generation this member last got an
 * assignment in, as an INT32 (Kafka's COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0),
 * for consumer protocol versions below 2 that carry no generation field; the
 * leader takes the generation from the field when it is there (memberData).
 */
import { topicPartitionKey, compareTopicPartitions, type TopicPartition } from '../topic-partition.js';
import { DEFAULT_GENERATION, stickyAssign, type StickyMember, type StickyMemberData } from './abstract-sticky.js';
import type { MemberAssignment, MemberSubscription, PartitionAssignor, RebalanceProtocol } from './assignor.js';

export const COOPERATIVE_STICKY_ASSIGNOR_NAME = 'cooperative-sticky';

/** The user data: the generation as a big-endian INT32. */
export function encodeGenerationUserData(generation: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, generation);
  return out;
}

/** The generation in a subscription's user data: null without user data, DEFAULT_GENERATION when it cannot be read (as Kafka's memberData). */
export function decodeGenerationUserData(userData: Uint8Array | null): number | null {
  if (userData === null) return null;
  if (userData.byteLength < 4) return DEFAULT_GENERATION;
  return new DataView(userData.buffer, userData.byteOffset, userData.byteLength).getInt32(0);
}

export class CooperativeStickyAssignor implements PartitionAssignor {
  readonly name = COOPERATIVE_STICKY_ASSIGNOR_NAME;
  readonly supportedProtocols: readonly RebalanceProtocol[] = ['COOPERATIVE', 'EAGER'];
  private generation = DEFAULT_GENERATION;

  subscriptionUserData(): Uint8Array {
    return encodeGenerationUserData(this.generation);
  }

  onAssignment(_assignment: MemberAssignment, generationId: number): void {
    this.generation = generationId;
  }

  /** What a member owns and in which generation: the subscription's fields from v2, else its user data. */
  static memberData(subscription: MemberSubscription): StickyMemberData {
    if (subscription.generationId >= 0) return { partitions: subscription.ownedPartitions, generation: subscription.generationId };
    return { partitions: subscription.ownedPartitions, generation: decodeGenerationUserData(subscription.userData) };
  }

  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: ReadonlyMap<string, MemberSubscription>): Map<string, MemberAssignment> {
    if (subscriptions.size === 0) return new Map();
    const subscribed = new Set([...subscriptions.values()].flatMap((s) => s.topics));
    // Only topics someone subscribes to and the metadata knows with at least one partition (AbstractPartitionAssignor.assign).
    const topics = new Map([...partitionsPerTopic].filter(([topic, n]) => subscribed.has(topic) && n > 0));
    const members = new Map<string, StickyMember>(
      [...subscriptions].map(([id, s]) => [id, { topics: s.topics, data: CooperativeStickyAssignor.memberData(s) }]),
    );
    const { assignment, partitionsTransferringOwnership } = stickyAssign(topics, members);
    const transferring = partitionsTransferringOwnership ?? computePartitionsTransferringOwnership(subscriptions, assignment);
    // The cooperative rule: not to the new owner in this rebalance.
    for (const [key, member] of transferring) {
      const mine = assignment.get(member)!;
      const i = mine.findIndex((tp) => topicPartitionKey(tp) === key);
      if (i >= 0) mine.splice(i, 1);
    }
    return new Map([...subscriptions.keys()].map((id) => [id, { partitions: [...(assignment.get(id) ?? [])].sort(compareTopicPartitions), userData: null }]));
  }
}

/**
 * For the general builder: the partitions a member gets that another member
 * owned and gives up (CooperativeStickyAssignor.computePartitionsTransferringOwnership).
 */
function computePartitionsTransferringOwnership(
  subscriptions: ReadonlyMap<string, MemberSubscription>,
  assignment: ReadonlyMap<string, TopicPartition[]>,
): Map<string, string> {
  const added = new Map<string, string>();
  const revoked = new Set<string>();
  for (const [member, assigned] of assignment) {
    const owned = new Set(subscriptions.get(member)!.ownedPartitions.map(topicPartitionKey));
    const assignedKeys = new Set(assigned.map(topicPartitionKey));
    for (const key of assignedKeys) if (!owned.has(key)) added.set(key, member);
    for (const key of owned) if (!assignedKeys.has(key)) revoked.add(key);
  }
  return new Map([...added].filter(([key]) => revoked.has(key)));
}
