/**
 * Members of a `group.protocol=consumer` group for the membership tests, run
 * against our broker (test/client/consumer-membership.test.ts) and Kafka 4.4
 * (test/kafka/consumer-membership.test.ts): each a ConsumerMembershipManager
 * polled in a loop as a KafkaConsumer's poll() would, recording every hook
 * call in one sequence shared by the group, and checking at each
 * onPartitionsAssigned that no other member still owns what was added.
 */
import { ClusterClient, CoordinatorType } from '../../../client/cluster.js';
import { ConsumerMembershipManager, type ConsumerMembershipConfig } from '../../../client/consumer/consumer-membership.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from '../../../client/consumer/topic-partition.js';
import { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../../generated/index.js';

export interface HookEvent {
  seq: number;
  member: string;
  hook: 'revoked' | 'assigned' | 'lost';
  partitions: string[];
}

export interface Member {
  name: string;
  membership: ConsumerMembershipManager;
  keys(): string[];
}

export class TestGroup {
  readonly events: HookEvent[] = [];
  /** Partitions given to a member while another still owned them: must stay empty unless the owner was removed behind its back. */
  readonly doubleOwned: { partition: string; to: string; owner: string; seq: number }[] = [];
  readonly members = new Map<string, Member>();
  /** What poll() threw while the member was polling: must stay empty. */
  readonly errors: string[] = [];
  private readonly loops: Promise<void>[] = [];
  private readonly clients: ClusterClient[] = [];
  private readonly stopped = new Set<string>();

  constructor(
    private readonly bootstrap: string,
    readonly groupId: string,
    private readonly topic: string,
  ) {}

  /** A member subscribed to the group's topic, polling every 100 ms from now on. */
  join(name: string, config: Partial<ConsumerMembershipConfig> = {}): Member {
    const cluster = new ClusterClient({ bootstrapServers: this.bootstrap, clientId: name, logger: null });
    this.clients.push(cluster);
    const record = (hook: HookEvent['hook']) => async (partitions: readonly TopicPartition[]) => {
      const keys = [...partitions].sort(compareTopicPartitions).map(topicPartitionKey);
      this.events.push({ seq: this.events.length, member: name, hook, partitions: keys });
      if (hook !== 'assigned') return;
      for (const [other, m] of this.members) {
        if (other === name || this.stopped.has(other)) continue;
        for (const key of m.keys()) if (keys.includes(key)) this.doubleOwned.push({ partition: key, to: name, owner: other, seq: this.events.length - 1 });
      }
    };
    const membership = new ConsumerMembershipManager(
      cluster,
      { groupId: this.groupId, rebalanceTimeoutMs: 60_000, ...config },
      { onPartitionsRevoked: record('revoked'), onPartitionsAssigned: record('assigned'), onPartitionsLost: record('lost') },
    );
    const member: Member = { name, membership, keys: () => [...membership.assignment()].sort(compareTopicPartitions).map(topicPartitionKey) };
    this.members.set(name, member);
    membership.subscribe([this.topic]);
    this.loops.push(
      (async () => {
        while (!this.stopped.has(name)) {
          try {
            await membership.poll(Date.now() + 100);
            // The consumer's fetch would wait here; without it a member with partitions would poll in a microtask loop.
            await new Promise((r) => setTimeout(r, 20));
          } catch (error) {
            if (!this.stopped.has(name)) this.errors.push(`${name}: ${(error as Error).message}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      })(),
    );
    return member;
  }

  /** Stops polling `name` and closes its membership (it leaves the group). */
  async leave(name: string): Promise<void> {
    this.stopped.add(name);
    await this.members.get(name)!.membership.close(Date.now() + 10_000);
  }

  /** Waits until `check` holds, polling every 50 ms; fails with `what` and the members' assignments after `timeoutMs`. */
  async until(what: string, check: () => boolean, timeoutMs = 45_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; assignments: ${JSON.stringify(this.assignments())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Each polling member's partitions. */
  assignments(): Record<string, string[]> {
    return Object.fromEntries([...this.members].filter(([name]) => !this.stopped.has(name)).map(([name, m]) => [name, m.keys()]));
  }

  /** True when the polling members own every one of `partitions` partitions exactly once, `perMember` (sorted counts) each. */
  covers(partitions: number, perMember: number[]): boolean {
    const owned = Object.values(this.assignments());
    const all = owned.flat();
    const counts = owned.map((ks) => ks.length).sort((a, b) => a - b);
    const expected = [...perMember].sort((a, b) => a - b);
    return all.length === partitions && new Set(all).size === partitions && counts.length === expected.length && counts.every((c, i) => c === expected[i]);
  }

  /**
   * Removes `name` from the group behind its back: a leave heartbeat (epoch −1) with its member id, as an
   * administrator's removeMembersFromConsumerGroup would. Its next heartbeat is answered UNKNOWN_MEMBER_ID.
   */
  async removeBehindItsBack(name: string): Promise<void> {
    const cluster = this.clients[0]!;
    const { response } = await cluster.coordinatorRequest(
      'ConsumerGroupHeartbeat',
      CoordinatorType.GROUP,
      this.groupId,
      ConsumerGroupHeartbeatRequest,
      ConsumerGroupHeartbeatResponse,
      () => ConsumerGroupHeartbeatRequest.create({ groupId: this.groupId, memberId: this.members.get(name)!.membership.memberId, memberEpoch: -1 }),
      (r) => r.errorCode,
      { deadline: Date.now() + 10_000, min: 1 },
    );
    if (response.errorCode !== 0) throw new Error(`removing ${name} failed with error ${response.errorCode}: ${response.errorMessage}`);
  }

  async close(): Promise<void> {
    for (const name of this.members.keys()) this.stopped.add(name);
    await Promise.all([...this.members.values()].map((m) => m.membership.close(Date.now() + 5_000).catch(() => undefined)));
    await Promise.all(this.loops.map((l) => l.catch(() => undefined)));
    await Promise.all(this.clients.map((c) => c.close()));
  }
}
