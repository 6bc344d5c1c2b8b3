/**
 * AbstractStickyAssignor.GeneralAssignmentBuilder without racks, for members
 * whose subscriptions differ: owned partitions are kept while the owner is
 * still subscribed, the rest go to the least loaded eligible member, then
 * partitions move from members with at least two more than an eligible
 * other until no move improves the balance; a move that leaves the balance
 * no better is undone. PartitionMovements keeps moves from chaining
 * (A→B then B→C becomes A→C, and a partition going back where it came from is
 * preferred over moving a new one), so the result stays sticky.
 */
import { topicPartitionKey, type TopicPartition } from '../topic-partition.js';
import { allTopicPartitions, DEFAULT_GENERATION, removePartition, type StickyMember } from './sticky-common.js';

interface ConsumerGenerationPair {
  consumer: string;
  generation: number;
}

/** Partition moves made while balancing, by topic and (source, destination) member pair (AbstractStickyAssignor.PartitionMovements). */
class PartitionMovements {
  private readonly byTopic = new Map<string, Map<string, Set<string>>>(); // topic → "src\0dst" → partition keys
  private readonly moves = new Map<string, { src: string; dst: string }>();

  constructor(private readonly partitionOf: (key: string) => TopicPartition) {}

  private remove(key: string): { src: string; dst: string } {
    const pair = this.moves.get(key)!;
    this.moves.delete(key);
    const topic = this.partitionOf(key).topic;
    const forTopic = this.byTopic.get(topic)!;
    const pairKey = `${pair.src}\0${pair.dst}`;
    forTopic.get(pairKey)!.delete(key);
    if (forTopic.get(pairKey)!.size === 0) forTopic.delete(pairKey);
    if (forTopic.size === 0) this.byTopic.delete(topic);
    return pair;
  }

  private add(key: string, src: string, dst: string): void {
    this.moves.set(key, { src, dst });
    const topic = this.partitionOf(key).topic;
    if (!this.byTopic.has(topic)) this.byTopic.set(topic, new Map());
    const forTopic = this.byTopic.get(topic)!;
    const pairKey = `${src}\0${dst}`;
    if (!forTopic.has(pairKey)) forTopic.set(pairKey, new Set());
    forTopic.get(pairKey)!.add(key);
  }

  movePartition(key: string, oldConsumer: string, newConsumer: string): void {
    if (this.moves.has(key)) {
      const existing = this.remove(key);
      // Back where it came from: no move at all.
      if (existing.src !== newConsumer) this.add(key, existing.src, newConsumer);
    } else {
      this.add(key, oldConsumer, newConsumer);
    }
  }

  /** The partition to move from `oldConsumer` to `newConsumer` instead of `key`: one that came the other way, if any. */
  actualPartitionToBeMoved(key: string, oldConsumer: string, newConsumer: string): string {
    const forTopic = this.byTopic.get(this.partitionOf(key).topic);
    if (forTopic === undefined) return key;
    const origin = this.moves.get(key)?.src ?? oldConsumer;
    const reverse = forTopic.get(`${newConsumer}\0${origin}`);
    return reverse === undefined ? key : reverse.values().next().value!;
  }
}

export class GeneralAssignmentBuilder {
  private readonly topic2AllPotentialConsumers = new Map<string, string[]>();
  private readonly consumer2AllPotentialTopics = new Map<string, string[]>();
  private readonly currentPartitionConsumer = new Map<string, string>();
  private readonly partitions = new Map<string, TopicPartition>();
  private sortedAllPartitions: TopicPartition[];
  /** Members that take part in balancing (Kafka's sortedCurrentSubscriptions, sorted on demand). */
  private readonly balancing = new Set<string>();
  private revocationRequired = false;
  private readonly movements: PartitionMovements;

  constructor(
    private readonly partitionsPerTopic: ReadonlyMap<string, number>,
    private readonly currentAssignment: Map<string, TopicPartition[]>,
    private readonly members: ReadonlyMap<string, StickyMember>,
    private readonly maxGeneration: number,
  ) {
    for (const topic of partitionsPerTopic.keys()) this.topic2AllPotentialConsumers.set(topic, []);
    for (const [member, { topics }] of members) {
      const mine = topics.filter((t) => partitionsPerTopic.has(t));
      this.consumer2AllPotentialTopics.set(member, mine);
      for (const t of mine) this.topic2AllPotentialConsumers.get(t)!.push(member);
      if (!currentAssignment.has(member)) currentAssignment.set(member, []);
    }
    for (const [member, tps] of currentAssignment) for (const tp of tps) this.currentPartitionConsumer.set(topicPartitionKey(tp), member);
    const sortedTopics = [...this.topic2AllPotentialConsumers.keys()].sort(
      (a, b) => this.topic2AllPotentialConsumers.get(a)!.length - this.topic2AllPotentialConsumers.get(b)!.length || (a < b ? -1 : a > b ? 1 : 0),
    );
    this.sortedAllPartitions = allTopicPartitions(partitionsPerTopic, sortedTopics);
    for (const tp of this.sortedAllPartitions) this.partitions.set(topicPartitionKey(tp), tp);
    this.movements = new PartitionMovements((key) => this.partitions.get(key)!);
  }

  build(): Map<string, TopicPartition[]> {
    const prevAssignment = this.prepopulateCurrentAssignments();
    const assigned = this.assignOwnedPartitions();
    const unassigned = this.sortedAllPartitions.filter((tp) => !assigned.has(topicPartitionKey(tp)));
    for (const member of this.currentAssignment.keys()) this.balancing.add(member);
    this.balance(prevAssignment, unassigned);
    return this.currentAssignment;
  }

  /** Who owned each partition in an older generation than the newest, to move it back there first. */
  private prepopulateCurrentAssignments(): Map<string, ConsumerGenerationPair> {
    const prev = new Map<string, ConsumerGenerationPair>();
    const update = (tps: readonly TopicPartition[], consumer: string, generation: number): void => {
      for (const tp of tps) {
        const key = topicPartitionKey(tp);
        const seen = prev.get(key);
        if (seen === undefined || generation > seen.generation) prev.set(key, { consumer, generation });
      }
    };
    for (const [member, { data }] of this.members) {
      if (data.generation !== null && data.generation < this.maxGeneration) update(data.partitions, member, data.generation);
      else if (data.generation === null && this.maxGeneration > DEFAULT_GENERATION) update(data.partitions, member, DEFAULT_GENERATION);
    }
    return prev;
  }

  /** Keeps what each member owns of topics it still subscribes to; drops the rest. */
  private assignOwnedPartitions(): Set<string> {
    const assigned = new Set<string>();
    for (const [member, tps] of this.currentAssignment) {
      const topics = this.members.get(member)!.topics;
      for (const tp of [...tps]) {
        const key = topicPartitionKey(tp);
        if (!this.topic2AllPotentialConsumers.has(tp.topic)) {
          removePartition(tps, key);
          this.currentPartitionConsumer.delete(key);
        } else if (!topics.includes(tp.topic)) {
          removePartition(tps, key);
          this.revocationRequired = true;
        } else {
          assigned.add(key);
        }
      }
    }
    return assigned;
  }

  private size(member: string): number {
    return this.currentAssignment.get(member)!.length;
  }

  /** The balancing members by partition count, then id. */
  private sortedMembers(): string[] {
    return [...this.balancing].sort((a, b) => this.size(a) - this.size(b) || (a < b ? -1 : a > b ? 1 : 0));
  }

  private maxAssignmentSize(member: string): number {
    return this.consumer2AllPotentialTopics.get(member)!.reduce((n, t) => n + this.partitionsPerTopic.get(t)!, 0);
  }

  private isBalanced(): boolean {
    const sorted = this.sortedMembers();
    if (sorted.length === 0 || this.size(sorted[0]!) >= this.size(sorted.at(-1)!) - 1) return true;
    const owner = new Map<string, string>();
    for (const [member, tps] of this.currentAssignment) for (const tp of tps) owner.set(topicPartitionKey(tp), member);
    for (const member of sorted) {
      const count = this.size(member);
      if (count === this.maxAssignmentSize(member)) continue;
      const mine = new Set(this.currentAssignment.get(member)!.map(topicPartitionKey));
      for (const topic of this.consumer2AllPotentialTopics.get(member)!) {
        for (let p = 0; p < this.partitionsPerTopic.get(topic)!; p++) {
          const key = topicPartitionKey({ topic, partition: p });
          const other = owner.get(key);
          if (!mine.has(key) && other !== undefined && count + 1 < this.size(other)) return false;
        }
      }
    }
    return true;
  }

  private balanceScore(assignment: ReadonlyMap<string, TopicPartition[]>): number {
    const sizes = [...assignment.values()].map((tps) => tps.length);
    let score = 0;
    for (let i = 0; i < sizes.length; i++) for (let j = i + 1; j < sizes.length; j++) score += Math.abs(sizes[i]! - sizes[j]!);
    return score;
  }

  private canTopicParticipateInReassignment(topic: string): boolean {
    return this.topic2AllPotentialConsumers.get(topic)!.length >= 2;
  }

  private canConsumerParticipateInReassignment(member: string): boolean {
    if (this.size(member) < this.maxAssignmentSize(member)) return true;
    return this.currentAssignment.get(member)!.some((tp) => this.canTopicParticipateInReassignment(tp.topic));
  }

  private balance(prevAssignment: Map<string, ConsumerGenerationPair>, unassigned: TopicPartition[]): void {
    const sorted = this.sortedMembers();
    const initializing = sorted.length === 0 || this.size(sorted.at(-1)!) === 0;
    for (const tp of unassigned) {
      if (this.topic2AllPotentialConsumers.get(tp.topic)!.length === 0) continue;
      const member = this.sortedMembers().find((m) => this.consumer2AllPotentialTopics.get(m)!.includes(tp.topic));
      if (member === undefined) continue;
      this.currentAssignment.get(member)!.push(tp);
      this.currentPartitionConsumer.set(topicPartitionKey(tp), member);
    }
    // Only partitions with two or more possible owners, and members that could give or take one, are balanced.
    const movable = (tp: TopicPartition): boolean => this.canTopicParticipateInReassignment(tp.topic);
    this.sortedAllPartitions = this.sortedAllPartitions.filter(movable);
    const movableUnassigned = unassigned.filter(movable);
    const fixed = new Map<string, TopicPartition[]>();
    for (const member of this.consumer2AllPotentialTopics.keys()) {
      if (!this.canConsumerParticipateInReassignment(member)) {
        this.balancing.delete(member);
        fixed.set(member, this.currentAssignment.get(member)!);
        this.currentAssignment.delete(member);
      }
    }
    const preBalanceAssignment = copy(this.currentAssignment);
    const preBalancePartitionConsumers = new Map(this.currentPartitionConsumer);
    if (!this.revocationRequired) this.performReassignments(movableUnassigned, prevAssignment);
    const performed = this.performReassignments(this.sortedAllPartitions, prevAssignment);
    if (!initializing && performed && this.balanceScore(this.currentAssignment) >= this.balanceScore(preBalanceAssignment)) {
      this.currentAssignment.clear();
      for (const [m, tps] of preBalanceAssignment) this.currentAssignment.set(m, tps);
      this.currentPartitionConsumer.clear();
      for (const [k, m] of preBalancePartitionConsumers) this.currentPartitionConsumer.set(k, m);
    }
    for (const [member, tps] of fixed) {
      this.currentAssignment.set(member, tps);
      this.balancing.add(member);
    }
  }

  private performReassignments(reassignable: readonly TopicPartition[], prevAssignment: Map<string, ConsumerGenerationPair>): boolean {
    let performed = false;
    let modified: boolean;
    do {
      modified = false;
      for (const tp of reassignable) {
        if (this.isBalanced()) break;
        const key = topicPartitionKey(tp);
        const consumer = this.currentPartitionConsumer.get(key);
        if (consumer === undefined || !this.currentAssignment.has(consumer)) continue;
        const prev = prevAssignment.get(key);
        // Deviation: Kafka does not check that the previous owner still takes part and still subscribes to the
        // topic; a partition must never go to a member not subscribed to it, so that move is skipped here.
        if (
          prev !== undefined &&
          this.currentAssignment.has(prev.consumer) &&
          this.consumer2AllPotentialTopics.get(prev.consumer)!.includes(tp.topic) &&
          this.size(consumer) > this.size(prev.consumer) + 1
        ) {
          this.reassignPartition(key, prev.consumer);
          performed = modified = true;
          continue;
        }
        for (const other of this.topic2AllPotentialConsumers.get(tp.topic)!) {
          if (this.currentAssignment.has(other) && this.size(consumer) > this.size(other) + 1) {
            const target = this.sortedMembers().find((m) => this.consumer2AllPotentialTopics.get(m)!.includes(tp.topic))!;
            this.reassignPartition(key, target);
            performed = modified = true;
            break;
          }
        }
      }
    } while (modified);
    return performed;
  }

  private reassignPartition(key: string, newConsumer: string): void {
    const consumer = this.currentPartitionConsumer.get(key)!;
    let actual = this.movements.actualPartitionToBeMoved(key, consumer, newConsumer);
    // The partition that came the other way must still be with a member being balanced; else move `key` itself.
    if (!this.currentAssignment.has(this.currentPartitionConsumer.get(actual) ?? '')) actual = key;
    const oldConsumer = this.currentPartitionConsumer.get(actual)!;
    this.movements.movePartition(actual, oldConsumer, newConsumer);
    removePartition(this.currentAssignment.get(oldConsumer)!, actual);
    this.currentAssignment.get(newConsumer)!.push(this.partitions.get(actual)!);
    this.currentPartitionConsumer.set(actual, newConsumer);
  }
}

function copy(assignment: ReadonlyMap<string, TopicPartition[]>): Map<string, TopicPartition[]> {
  return new Map([...assignment].map(([m, tps]) => [m, [...tps]]));
}
