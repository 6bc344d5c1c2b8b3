/**
 * The classic group protocol for KafkaConsumer (Kafka's ConsumerCoordinator
 * over AbstractCoordinator): JoinGroup (retried with the member id the
 * coordinator hands out, KIP-394), the leader's assignment through SyncGroup,
 * a background Heartbeat, rejoining on REBALANCE_IN_PROGRESS, LeaveGroup on
 * close. EAGER revokes everything before joining; COOPERATIVE (every assignor
 * supports it) revokes only what the new assignment moved away and rejoins
 * once more so that the partitions reach their new owner (KIP-429). The
 * heartbeats, the rebalance and the listener run from the consumer's poll();
 * see heartbeat.ts for what runs between polls.
 *
 * As in Kafka, a rebalance outlives the poll() that started it: JoinGroup and
 * SyncGroup go on in the background and a later poll() runs the listener
 * with their outcome, so one consumer's poll never waits for the others of
 * its group to join.
 */
import { JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, SyncGroupRequest, SyncGroupResponse } from '../../generated/index.js';
import { CoordinatorType } from '../cluster.js';
import { errorFromCode, Errors, KafkaError } from '../errors.js';
import type { ConsumerGroupMetadata } from '../transactions/offsets.js';
import type { MemberSubscription, PartitionAssignor, RebalanceProtocol } from './assignors/assignor.js';
import { CONSUMER_PROTOCOL_TYPE, deserializeAssignment, deserializeSubscription, serializeAssignment, serializeSubscription } from './consumer-protocol.js';
import { ClassicHeartbeat, GROUP_COORDINATOR_LANE } from './heartbeat.js';
import type { ConsumerMembership } from './membership.js';
import type { MembershipContext } from './membership-factory.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from './topic-partition.js';

/** Errors that end this member's generation: it rejoins as a new member (Kafka's resetGenerationOnResponseError). */
const MEMBER_RESET_CODES: ReadonlySet<number> = new Set([Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION]);

function sleepUntil(deadline: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now())).unref());
}

/** Thrown inside a join attempt: start it again (a rebalance under way, a new member id). */
class RejoinNow extends KafkaError {
  constructor(reason: string) {
    super(reason, { retriable: true });
  }
}

export class ClassicMembership implements ConsumerMembership {
  readonly protocol = 'classic' as const;
  private readonly groupId: string;
  private topics: readonly string[] = [];
  private owned: TopicPartition[] = [];
  private memberId = '';
  private generationId = -1;
  private rejoinNeeded = true;
  /** Set when the generation ended outside a rebalance (heartbeat errors, poll timeout): the owned partitions are lost, not revoked. */
  private generationLost = false;
  private joined = false;
  /** The JoinGroup + SyncGroup under way, started by a poll and finished (listener included) by a later one. */
  private joining: Promise<TopicPartition[]> | null = null;
  /** Bumped when a join is abandoned, so that its late answer changes nothing. */
  private joinSeq = 0;
  private readonly rebalanceProtocol: RebalanceProtocol;
  private readonly heartbeat: ClassicHeartbeat;

  constructor(
    private readonly context: MembershipContext,
    private readonly assignors: readonly PartitionAssignor[],
  ) {
    this.groupId = context.config.groupId!;
    if (assignors.length === 0) throw new KafkaError('the classic group protocol needs at least one assignor (partitionAssignmentStrategy)');
    // Kafka's ConsumerCoordinator: the highest protocol every configured assignor supports.
    this.rebalanceProtocol = assignors.every((a) => a.supportedProtocols.includes('COOPERATIVE')) ? 'COOPERATIVE' : 'EAGER';
    this.heartbeat = new ClassicHeartbeat(context, this.groupId, () => this.groupMetadata(), {
      rejoin: () => {
        this.rejoinNeeded = true;
      },
      lost: (reason) => this.resetGeneration(reason),
      pollTimeout: () => void this.leaveGroup('consumer poll timeout has expired').catch(() => {}),
    });
  }

  subscribe(topics: readonly string[]): void {
    if (topics.join('\0') !== this.topics.join('\0')) this.rejoinNeeded = true;
    this.topics = [...topics];
  }

  /** Kafka's AbstractCoordinator.requestRejoin: the next poll joins again (revoking first as the protocol says). */
  requestRejoin(reason: string): void {
    this.context.cluster.logger.info(`consumer group ${this.groupId}: member ${this.memberId} asks to rejoin (${reason})`);
    this.rejoinNeeded = true;
  }

  assignment(): readonly TopicPartition[] {
    return this.owned;
  }

  groupMetadata(): Required<ConsumerGroupMetadata> {
    return { groupId: this.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.context.config.groupInstanceId };
  }

  private resetGeneration(reason: string): void {
    this.context.cluster.logger.info(`consumer group ${this.groupId}: member ${this.memberId} rejoins (${reason})`);
    this.generationId = -1;
    this.memberId = '';
    this.generationLost = true;
    this.rejoinNeeded = true;
    this.heartbeat.stop();
  }

  async poll(deadline: number): Promise<readonly TopicPartition[]> {
    this.heartbeat.pollCalled();
    if (this.topics.length === 0) {
      if (this.joined || this.joining) await this.leave();
      return this.owned;
    }
    for (;;) {
      if (this.joining === null) {
        if (!this.rejoinNeeded) return this.owned;
        await this.onJoinPrepare();
        const joinDeadline = Date.now() + this.context.config.maxPollIntervalMs + this.context.cluster.requestTimeoutMs;
        const started = this.joinAndSync(joinDeadline);
        started.catch(() => {});
        this.joining = started;
      }
      // Kafka's ensureActiveGroup with the poll's timer: the join goes on in the background past this poll.
      const joining = this.joining;
      const outcome = await Promise.race([joining.then((assigned) => ({ assigned })), sleepUntil(deadline)]).catch((error: unknown) => {
        // A join that failed for good fails this poll; the next one starts again.
        if (this.joining === joining) this.joining = null;
        throw error;
      });
      if (outcome === undefined) return this.owned;
      this.joining = null;
      await this.onJoinComplete(outcome.assigned);
    }
  }

  /** Kafka's ConsumerCoordinator.onJoinPrepare: what is given up before joining. */
  private async onJoinPrepare(): Promise<void> {
    const { hooks } = this.context;
    if (this.generationLost) {
      const lost = this.owned;
      this.owned = [];
      this.generationLost = false;
      if (lost.length > 0) await hooks.onPartitionsLost(lost);
      return;
    }
    const revoked = this.rebalanceProtocol === 'EAGER' ? this.owned : this.owned.filter((tp) => !this.topics.includes(tp.topic));
    if (revoked.length === 0) return;
    this.owned = this.owned.filter((tp) => !revoked.includes(tp));
    await hooks.onPartitionsRevoked(revoked);
  }

  /** Kafka's onJoinComplete: the new assignment against what is owned; COOPERATIVE revokes what moved and rejoins. */
  private async onJoinComplete(assigned: TopicPartition[]): Promise<void> {
    const { hooks } = this.context;
    const ownedKeys = new Set(this.owned.map(topicPartitionKey));
    const assignedKeys = new Set(assigned.map(topicPartitionKey));
    const revoked = this.owned.filter((tp) => !assignedKeys.has(topicPartitionKey(tp)));
    const added = assigned.filter((tp) => !ownedKeys.has(topicPartitionKey(tp)));
    this.rejoinNeeded = false;
    if (revoked.length > 0) {
      this.owned = this.owned.filter((tp) => assignedKeys.has(topicPartitionKey(tp)));
      await hooks.onPartitionsRevoked(revoked);
      // KIP-429: the revoked partitions reach their new owner in a second rebalance.
      this.rejoinNeeded = true;
    }
    this.owned = [...assigned].sort(compareTopicPartitions);
    await hooks.onPartitionsAssigned(added);
    this.heartbeat.start();
  }

  private subscriptionBytes(assignor: PartitionAssignor): Uint8Array {
    return serializeSubscription({
      topics: this.topics,
      userData: assignor.subscriptionUserData(new Set(this.topics)),
      ownedPartitions: this.owned,
      generationId: this.generationId,
      rackId: this.context.config.clientRack,
    });
  }

  /** JoinGroup then SyncGroup, started again while the coordinator says to (new member id, rebalance under way). */
  private async joinAndSync(deadline: number): Promise<TopicPartition[]> {
    const { cluster, config } = this.context;
    this.heartbeat.stop();
    const seq = this.joinSeq;
    const abandoned = () => {
      if (seq !== this.joinSeq) throw new KafkaError(`consumer group ${this.groupId}: the join was abandoned (the consumer left)`);
    };
    return cluster.retry(
      `joining consumer group ${this.groupId}`,
      deadline,
      async () => {
        abandoned();
        const joinTimeoutMs = Math.max(cluster.requestTimeoutMs, config.maxPollIntervalMs + 5_000);
        const { response: join } = await cluster.coordinatorRequest(
          `JoinGroup (group ${this.groupId})`,
          CoordinatorType.GROUP,
          this.groupId,
          JoinGroupRequest,
          JoinGroupResponse,
          () =>
            JoinGroupRequest.create({
              groupId: this.groupId,
              sessionTimeoutMs: config.sessionTimeoutMs,
              rebalanceTimeoutMs: config.maxPollIntervalMs,
              memberId: this.memberId,
              groupInstanceId: config.groupInstanceId,
              protocolType: CONSUMER_PROTOCOL_TYPE,
              protocols: this.assignors.map((a) => ({ name: a.name, metadata: this.subscriptionBytes(a) })),
              reason: null,
            }),
          (r) => r.errorCode,
          { deadline, timeoutMs: joinTimeoutMs, lane: GROUP_COORDINATOR_LANE },
        );
        abandoned();
        this.checkJoinError(join.errorCode, join.memberId);
        this.memberId = join.memberId;
        this.generationId = join.generationId;
        const assignor = this.assignors.find((a) => a.name === join.protocolName);
        if (!assignor) throw new KafkaError(`consumer group ${this.groupId} chose assignor '${join.protocolName}', which this consumer does not have`);
        const assignments = join.leader === join.memberId && !join.skipAssignment ? await this.runAssignor(assignor, join.members, deadline) : [];
        const { response: sync } = await cluster.coordinatorRequest(
          `SyncGroup (group ${this.groupId})`,
          CoordinatorType.GROUP,
          this.groupId,
          SyncGroupRequest,
          SyncGroupResponse,
          () =>
            SyncGroupRequest.create({
              groupId: this.groupId,
              generationId: this.generationId,
              memberId: this.memberId,
              groupInstanceId: config.groupInstanceId,
              protocolType: CONSUMER_PROTOCOL_TYPE,
              protocolName: assignor.name,
              assignments,
            }),
          (r) => r.errorCode,
          { deadline, timeoutMs: joinTimeoutMs, lane: GROUP_COORDINATOR_LANE },
        );
        abandoned();
        this.checkJoinError(sync.errorCode, this.memberId);
        this.joined = true;
        const assignment = deserializeAssignment(sync.assignment);
        assignor.onAssignment?.(assignment, this.generationId);
        return assignment.partitions;
        // Kafka rejoins at once after MEMBER_ID_REQUIRED or REBALANCE_IN_PROGRESS; other errors back off.
      },
      (error) => (error instanceof RejoinNow ? 0 : undefined),
    );
  }

  /** JoinGroup / SyncGroup errors (Kafka's JoinGroupResponseHandler, SyncGroupResponseHandler). */
  private checkJoinError(code: number, memberId: string): void {
    if (code === Errors.NONE) return;
    const what = `consumer group ${this.groupId}`;
    if (code === Errors.MEMBER_ID_REQUIRED) {
      // KIP-394: the coordinator gave us our member id; join again with it at once.
      this.memberId = memberId;
      throw new RejoinNow(`${what}: member id required`);
    }
    if (code === Errors.REBALANCE_IN_PROGRESS) throw new RejoinNow(`${what}: a rebalance is under way`);
    if (MEMBER_RESET_CODES.has(code)) {
      this.memberId = '';
      this.generationId = -1;
      throw new RejoinNow(`${what}: ${errorFromCode(code, what).message}`);
    }
    throw errorFromCode(code, what);
  }

  /** The leader's work (Kafka's ConsumerCoordinator.onLeaderElected): every member's subscription, the topics' partition counts, the assignor. */
  private async runAssignor(
    assignor: PartitionAssignor,
    members: ReadonlyArray<{ memberId: string; groupInstanceId: string | null; metadata: Uint8Array }>,
    deadline: number,
  ): Promise<Array<{ memberId: string; assignment: Uint8Array }>> {
    const { cluster } = this.context;
    const subscriptions = new Map<string, MemberSubscription>();
    for (const member of members) subscriptions.set(member.memberId, deserializeSubscription(member.metadata, member.groupInstanceId));
    const topics = [...new Set([...subscriptions.values()].flatMap((s) => s.topics))].sort();
    await cluster.refreshMetadata(topics, deadline);
    const partitionsPerTopic = new Map<string, number>();
    for (const topic of topics) {
      const meta = cluster.cachedTopic(topic);
      if (meta && meta.partitions.length > 0) partitionsPerTopic.set(topic, meta.partitions.length);
    }
    const result = assignor.assign(partitionsPerTopic, subscriptions);
    return [...subscriptions.keys()].map((memberId) => ({
      memberId,
      assignment: serializeAssignment(result.get(memberId) ?? { partitions: [], userData: null }),
    }));
  }

  private async leaveGroup(reason: string): Promise<void> {
    const { cluster, config } = this.context;
    const memberId = this.memberId;
    this.heartbeat.stop();
    this.resetGeneration(reason);
    this.joined = false;
    // Kafka's maybeLeaveGroup: a static member does not leave; its session timeout decides (KIP-345).
    if (memberId === '' || config.groupInstanceId !== null) return;
    await cluster.coordinatorRequest(
      `LeaveGroup (group ${this.groupId})`,
      CoordinatorType.GROUP,
      this.groupId,
      LeaveGroupRequest,
      LeaveGroupResponse,
      // v3+ (KIP-345) names the leaving members in a list; before, one member id.
      (version) =>
        version >= 3
          ? LeaveGroupRequest.create({ groupId: this.groupId, members: [{ memberId, groupInstanceId: null, reason }] })
          : LeaveGroupRequest.create({ groupId: this.groupId, memberId }),
      (r) => r.errorCode,
      { deadline: Date.now() + cluster.requestTimeoutMs },
    );
  }

  /** Unsubscribe or close: revoke everything, then leave (a join under way is abandoned). */
  private async leave(): Promise<void> {
    // A join under way is abandoned: its answer, when it comes, is dropped (joinSeq).
    this.joining = null;
    this.joinSeq++;
    await this.revokeAll();
    await this.leaveGroup('the consumer unsubscribed').catch((e: Error) => this.context.cluster.logger.debug(`LeaveGroup: ${e.message}`));
  }

  /** Kafka's onLeavePrepare: revoked (or lost, when the generation is gone) before leaving. */
  private async revokeAll(): Promise<void> {
    const owned = this.owned;
    this.owned = [];
    if (owned.length === 0) return;
    if (this.generationLost || this.generationId < 0) await this.context.hooks.onPartitionsLost(owned);
    else await this.context.hooks.onPartitionsRevoked(owned);
  }

  async close(deadline: number): Promise<void> {
    this.heartbeat.stop();
    try {
      if (this.joined || this.joining) await this.leave();
      void deadline;
    } finally {
      this.heartbeat.close();
    }
  }
}
