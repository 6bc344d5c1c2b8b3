/**
 * An assignment as a `group.protocol=consumer` member holds it: partitions by
 * topic id, with a local epoch that goes up with every different target the
 * coordinator sends (Kafka's AbstractMembershipManager.LocalAssignment). The
 * local epoch never goes on the wire; it tells the heartbeat that an
 * assignment is new to report even when its partitions equal the last one
 * reported (ConsumerHeartbeatRequestManager.HeartbeatState resends
 * TopicPartitions whenever the local assignment changed).
 */
export class LocalAssignment {
  /** Not in a group, or nothing reconciled yet. */
  static readonly NONE = new LocalAssignment(-1, new Map());

  private constructor(
    readonly localEpoch: number,
    /** Topic id → partitions, sorted. */
    readonly partitions: ReadonlyMap<string, readonly number[]>,
  ) {}

  static of(localEpoch: number, partitions: ReadonlyMap<string, Iterable<number>>): LocalAssignment {
    const sorted = new Map<string, number[]>();
    for (const topicId of [...partitions.keys()].sort()) {
      const ps = [...new Set(partitions.get(topicId)!)].sort((a, b) => a - b);
      if (ps.length > 0) sorted.set(topicId, ps);
    }
    return new LocalAssignment(localEpoch, sorted);
  }

  isNone(): boolean {
    return this === LocalAssignment.NONE;
  }

  /** The same partitions, whatever the epochs. */
  samePartitions(other: LocalAssignment): boolean {
    if (this.partitions.size !== other.partitions.size) return false;
    for (const [topicId, ps] of this.partitions) {
      const theirs = other.partitions.get(topicId);
      if (theirs === undefined || theirs.length !== ps.length || ps.some((p, i) => theirs[i] !== p)) return false;
    }
    return true;
  }

  equals(other: LocalAssignment): boolean {
    return this.localEpoch === other.localEpoch && this.samePartitions(other);
  }

  /** The assignment with `target`'s partitions and the next local epoch, or null when the partitions are the same (LocalAssignment.updateWith). */
  updateWith(target: ReadonlyMap<string, Iterable<number>>): LocalAssignment | null {
    const next = LocalAssignment.of(this.localEpoch + 1, target);
    return this.isNone() || !this.samePartitions(next) ? next : null;
  }

  /** As ConsumerGroupHeartbeat's TopicPartitions. */
  toTopicPartitions(): { topicId: string; partitions: number[] }[] {
    return [...this.partitions].map(([topicId, ps]) => ({ topicId, partitions: [...ps] }));
  }

  toString(): string {
    return `LocalAssignment(${this.localEpoch}, {${[...this.partitions].map(([t, ps]) => `${t}: [${ps.join(', ')}]`).join(', ')}})`;
  }
}
