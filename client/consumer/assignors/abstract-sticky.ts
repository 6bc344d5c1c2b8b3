/**
 * The balanced, sticky assignment of Kafka's AbstractStickyAssignor (shared
 * by StickyAssignor and CooperativeStickyAssignor): every partition of the
 * subscribed topics to one member, the counts as even as the subscriptions
 * allow, and as many partitions as possible left with the member that owned
 * them.
 *
 * - The owned partitions come from each member's subscription; when two
 *   members claim one, the higher generation keeps it, and two claims in the
 *   same generation are both dropped (allSubscriptionsEqual).
 * - All subscriptions equal: the constrained builder here (quotas: floor and
 *   ceil of partitions / members; owned partitions kept up to the quota, the
 *   rest handed out round-robin), which also says which partitions change
 *   owner. Otherwise the general builder (sticky-general.ts).
 *
 * Deviation: no rack awareness. Kafka matches client.rack with the racks of
 * a partition's replicas; PartitionAssignor.assign gets partition counts
 * only, so every rack is taken to match (Kafka's behaviour when no member
 * sets a rack).
 */
import { IllegalStateError } from '../../errors.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from '../topic-partition.js';
import { allTopicPartitions, DEFAULT_GENERATION, removePartition, type StickyMember } from './sticky-common.js';
import { GeneralAssignmentBuilder } from './sticky-general.js';

export { DEFAULT_GENERATION, type StickyMember, type StickyMemberData } from './sticky-common.js';

export interface StickyAssignment {
  /** Member id → partitions. */
  assignment: Map<string, TopicPartition[]>;
  /** Partition key → its new owner, for partitions another member owned; null when the general builder ran (the caller computes it). */
  partitionsTransferringOwnership: Map<string, string> | null;
}

/** AbstractStickyAssignor.assignPartitions. */
export function stickyAssign(partitionsPerTopic: ReadonlyMap<string, number>, members: ReadonlyMap<string, StickyMember>): StickyAssignment {
  const owned = ownedPartitionsByMember(partitionsPerTopic, members);
  if (owned.allSubscriptionsEqual) {
    const builder = new ConstrainedAssignmentBuilder(partitionsPerTopic, owned.consumerToOwnedPartitions, owned.partitionsWithMultiplePreviousOwners);
    const assignment = builder.build();
    return { assignment, partitionsTransferringOwnership: builder.partitionsTransferringOwnership };
  }
  const general = new GeneralAssignmentBuilder(partitionsPerTopic, owned.consumerToOwnedPartitions, members, owned.maxGeneration);
  return { assignment: general.build(), partitionsTransferringOwnership: null };
}

interface OwnedPartitions {
  allSubscriptionsEqual: boolean;
  /** Each member's owned partitions of topics still in the metadata, conflicts resolved. */
  consumerToOwnedPartitions: Map<string, TopicPartition[]>;
  partitionsWithMultiplePreviousOwners: Set<string>;
  maxGeneration: number;
}

/** AbstractStickyAssignor.allSubscriptionsEqual, which also collects the owned partitions. */
function ownedPartitionsByMember(partitionsPerTopic: ReadonlyMap<string, number>, members: ReadonlyMap<string, StickyMember>): OwnedPartitions {
  let allSubscriptionsEqual = true;
  let first: Set<string> | null = null;
  let maxGeneration = DEFAULT_GENERATION;
  const consumerToOwnedPartitions = new Map<string, TopicPartition[]>();
  const partitionsWithMultiplePreviousOwners = new Set<string>();
  const previousOwner = new Map<string, string>();
  const generationOf = (member: string): number => members.get(member)!.data.generation ?? DEFAULT_GENERATION;
  for (const [member, { topics, data }] of members) {
    if (first === null) first = new Set(topics);
    else if (allSubscriptionsEqual && !(topics.length === first.size && topics.every((t) => first!.has(t)))) allSubscriptionsEqual = false;
    const generation = data.generation ?? DEFAULT_GENERATION;
    maxGeneration = Math.max(maxGeneration, generation);
    const mine: TopicPartition[] = [];
    consumerToOwnedPartitions.set(member, mine);
    for (const tp of data.partitions) {
      if (!partitionsPerTopic.has(tp.topic) || tp.partition < 0 || tp.partition >= partitionsPerTopic.get(tp.topic)!) continue;
      const key = topicPartitionKey(tp);
      const other = previousOwner.get(key);
      if (other === undefined) {
        mine.push(tp);
        previousOwner.set(key, member);
        continue;
      }
      // Deviation: Kafka reads the other member's generation from its subscription's generationId field only; the
      // generation from its userData counts here too (the same whenever the subscription has that field, v2+).
      const otherGeneration = generationOf(other);
      if (generation === otherGeneration) {
        // Two owners in one generation: neither keeps it.
        partitionsWithMultiplePreviousOwners.add(key);
        removePartition(consumerToOwnedPartitions.get(other)!, key);
        previousOwner.set(key, member);
      } else if (generation > otherGeneration) {
        mine.push(tp);
        removePartition(consumerToOwnedPartitions.get(other)!, key);
        previousOwner.set(key, member);
      }
    }
  }
  return { allSubscriptionsEqual, consumerToOwnedPartitions, partitionsWithMultiplePreviousOwners, maxGeneration };
}

/**
 * AbstractStickyAssignor.ConstrainedAssignmentBuilder without racks: every
 * member keeps its owned partitions up to the quota (maxQuota for as many
 * members as the remainder allows, minQuota for the rest), and the
 * partitions left go round-robin to the members under their quota.
 */
class ConstrainedAssignmentBuilder {
  readonly partitionsTransferringOwnership = new Map<string, string>();
  private readonly maybeRevokedPartitions = new Map<string, string>();
  private unfilledMembersWithUnderMinQuotaPartitions: string[] = [];
  private unfilledMembersWithExactlyMinQuotaPartitions: string[] = [];
  private readonly minQuota: number;
  private readonly maxQuota: number;
  private readonly expectedNumMembersWithOverMinQuotaPartitions: number;
  private currentNumMembersWithOverMinQuotaPartitions = 0;
  private readonly assignment = new Map<string, TopicPartition[]>();
  private readonly assignedPartitions = new Set<string>();
  private readonly totalPartitionsCount: number;

  constructor(
    private readonly partitionsPerTopic: ReadonlyMap<string, number>,
    private readonly currentAssignment: ReadonlyMap<string, TopicPartition[]>,
    private readonly partitionsWithMultiplePreviousOwners: ReadonlySet<string>,
  ) {
    this.totalPartitionsCount = [...partitionsPerTopic.values()].reduce((a, b) => a + b, 0);
    const members = currentAssignment.size;
    this.minQuota = Math.floor(this.totalPartitionsCount / members);
    this.maxQuota = Math.ceil(this.totalPartitionsCount / members);
    this.expectedNumMembersWithOverMinQuotaPartitions = this.totalPartitionsCount % members;
    for (const member of currentAssignment.keys()) this.assignment.set(member, []);
  }

  build(): Map<string, TopicPartition[]> {
    this.assignOwnedPartitions();
    const sortedTopics = [...this.partitionsPerTopic.keys()].sort();
    const unassigned = allTopicPartitions(this.partitionsPerTopic, sortedTopics).filter((tp) => !this.assignedPartitions.has(topicPartitionKey(tp)));
    this.unfilledMembersWithUnderMinQuotaPartitions.sort();
    this.unfilledMembersWithExactlyMinQuotaPartitions.sort();
    this.assignRoundRobin(unassigned);
    this.verifyUnfilledMembers();
    return this.assignment;
  }

  private assignOwnedPartitions(): void {
    for (const [member, ownedAll] of this.currentAssignment) {
      // Kafka sorts the owned partitions by partition, then topic, before cutting at the quota.
      const owned = ownedAll
        .filter((tp) => !this.partitionsWithMultiplePreviousOwners.has(topicPartitionKey(tp)))
        .sort((a, b) => a.partition - b.partition || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
      const mine = this.assignment.get(member)!;
      const keep = (n: number): void => {
        for (const tp of owned.slice(0, n)) {
          mine.push(tp);
          this.assignedPartitions.add(topicPartitionKey(tp));
        }
        for (const tp of owned.slice(n)) this.maybeRevokedPartitions.set(topicPartitionKey(tp), member);
      };
      if (owned.length < this.minQuota) {
        keep(owned.length);
        this.unfilledMembersWithUnderMinQuotaPartitions.push(member);
      } else if (owned.length >= this.maxQuota && this.currentNumMembersWithOverMinQuotaPartitions < this.expectedNumMembersWithOverMinQuotaPartitions) {
        this.currentNumMembersWithOverMinQuotaPartitions++;
        if (this.currentNumMembersWithOverMinQuotaPartitions === this.expectedNumMembersWithOverMinQuotaPartitions)
          this.unfilledMembersWithExactlyMinQuotaPartitions = [];
        keep(this.maxQuota);
      } else {
        keep(this.minQuota);
        if (this.currentNumMembersWithOverMinQuotaPartitions < this.expectedNumMembersWithOverMinQuotaPartitions)
          this.unfilledMembersWithExactlyMinQuotaPartitions.push(member);
      }
    }
  }

  private assignRoundRobin(unassigned: readonly TopicPartition[]): void {
    const under = this.unfilledMembersWithUnderMinQuotaPartitions;
    let next = 0; // the position of Kafka's iterator over the members under minQuota
    for (const tp of unassigned) {
      let member: string;
      if (next < under.length) {
        member = under[next++]!;
      } else if (under.length === 0 && this.unfilledMembersWithExactlyMinQuotaPartitions.length === 0) {
        throw new IllegalStateError(`cooperative-sticky: no member left under its quota for ${topicPartitionKey(tp)}`);
      } else if (under.length === 0) {
        member = this.unfilledMembersWithExactlyMinQuotaPartitions.shift()!;
      } else {
        next = 0;
        member = under[next++]!;
      }
      const count = this.assignNewPartition(tp, member);
      if (count === this.minQuota) {
        // Kafka's iterator.remove(): only a member taken from the "under" list can be at minQuota here.
        under.splice(--next, 1);
        this.unfilledMembersWithExactlyMinQuotaPartitions.push(member);
      } else if (count === this.maxQuota) {
        this.currentNumMembersWithOverMinQuotaPartitions++;
      }
    }
  }

  private assignNewPartition(tp: TopicPartition, member: string): number {
    const mine = this.assignment.get(member)!;
    mine.push(tp);
    const key = topicPartitionKey(tp);
    const revokedFrom = this.maybeRevokedPartitions.get(key);
    if ((revokedFrom !== undefined && revokedFrom !== member) || this.partitionsWithMultiplePreviousOwners.has(key))
      this.partitionsTransferringOwnership.set(key, member);
    return mine.length;
  }

  /** What must hold once every partition is out (verifyUnfilledMembers): a bug in the above if not. */
  private verifyUnfilledMembers(): void {
    const under = this.unfilledMembersWithUnderMinQuotaPartitions;
    if (under.length === 0) return;
    if (this.currentNumMembersWithOverMinQuotaPartitions !== this.expectedNumMembersWithOverMinQuotaPartitions)
      throw new IllegalStateError('cooperative-sticky: fewer members over minQuota than expected, and no partitions left');
    for (const member of under) {
      if (this.assignment.get(member)!.length !== this.minQuota)
        throw new IllegalStateError(`cooperative-sticky: member ${member} has fewer than minQuota (${this.minQuota}) partitions`);
    }
  }
}

/** A copy of each member's partitions sorted as Kafka's logs and our tests read them. */
export function sortedAssignment(assignment: ReadonlyMap<string, TopicPartition[]>): Map<string, TopicPartition[]> {
  return new Map([...assignment].map(([m, tps]) => [m, [...tps].sort(compareTopicPartitions)]));
}
