/**
 * Group membership with `group.protocol=consumer` (KIP-848): the broker
 * assigns, the member reconciles. Kafka's ConsumerMembershipManager over
 * AbstractMembershipManager, with the heartbeat in consumer-heartbeat.ts.
 *
 * - The heartbeat runs in the background; what involves the application
 *   (onPartitionsRevoked / onPartitionsAssigned / onPartitionsLost, which
 *   commit offsets and call the user's listener) runs inside poll(), as
 *   Kafka runs the listener on the application thread.
 * - Reconciliation (AbstractMembershipManager.maybeReconcile): the target's
 *   topic ids are resolved to names through the metadata (ids it cannot
 *   resolve wait for a later poll); what is owned and no longer assigned is
 *   revoked, then the new partitions are assigned, then the next heartbeat,
 *   sent at once, reports what the member owns (ACKNOWLEDGING).
 * - UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH: the partitions are lost
 *   (onPartitionsLost, no commit) and the member joins again with epoch 0
 *   and the same member id (transitionToFenced).
 * - Leaving: epoch −1, or −2 for a static member (leaveGroupEpoch), after
 *   the partitions were revoked.
 * - max.poll.interval.ms without poll(): the member leaves, and rejoins at
 *   the next poll() after giving its partitions up as lost (STALE).
 */
import { ConsumerGroupHeartbeatResponse } from '../../generated/index.js';
import { randomUuid, type ClusterClient } from '../cluster.js';
import { IllegalStateError } from '../errors.js';
import type { ConsumerGroupMetadata } from '../transactions/offsets.js';
import { ConsumerHeartbeatRequestManager, type HeartbeatMember } from './consumer-heartbeat.js';
import type { HeartbeatSource } from './consumer-heartbeat-state.js';
import { AssignedTopicNames } from './assigned-topic-names.js';
import { LocalAssignment } from './local-assignment.js';
import { canHandleNewAssignment, checkTransition, isNotInGroup, type MemberState } from './member-state.js';
import type { ConsumerMembership, MembershipHooks } from './membership.js';
import { compareTopicPartitions, topicPartitionKey, type TopicPartition } from './topic-partition.js';

export interface ConsumerMembershipConfig {
  groupId: string;
  /** group.instance.id: a static member. */
  groupInstanceId?: string | null;
  /** client.rack. */
  rackId?: string | null;
  /** group.remote.assignor: the broker's assignor to use (`uniform`, `range`), or null for the broker's choice. */
  serverAssignor?: string | null;
  /** max.poll.interval.ms: sent as the rebalance timeout, and the longest time between poll() calls before the member leaves. */
  rebalanceTimeoutMs: number;
}

/** ConsumerGroupHeartbeatRequest's epochs with a meaning. */
const JOIN_GROUP_MEMBER_EPOCH = 0;
const LEAVE_GROUP_MEMBER_EPOCH = -1;
const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

interface OwnedPartition extends TopicPartition {
  topicId: string;
}

export class ConsumerMembershipManager implements ConsumerMembership, HeartbeatMember {
  readonly protocol = 'consumer' as const;
  /** Made once per consumer and kept across rejoins (AbstractMembershipManager.memberId). */
  readonly memberId = randomUuid();
  readonly groupId: string;
  private readonly groupInstanceId: string | null;
  private readonly rackId: string | null;
  private readonly serverAssignor: string | null;
  private readonly rebalanceTimeoutMs: number;

  private currentState: MemberState = 'UNSUBSCRIBED';
  private memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
  /** The generation and member id groupMetadata() reports: the last epoch the coordinator gave, until the member leaves. */
  private metadataEpoch = -1;
  private metadataMemberId = '';
  private topics: string[] = [];
  private pattern: string | null = null;
  private subscriptionUpdated = false;
  private leaveRequested = false;
  private currentAssignment = LocalAssignment.NONE;
  private targetAssignment = LocalAssignment.NONE;
  private owned: OwnedPartition[] = [];
  private readonly topicNames: AssignedTopicNames;
  private reconciliationInProgress = false;
  private rejoinedWhileReconciliationInProgress = false;
  private pollTimerExpired = false;
  private lastPollAt = Infinity;
  private fatalError: Error | null = null;
  private pendingErrors: Error[] = [];
  private leaveDone: (() => void) | null = null;
  private changeWaiters: Array<() => void> = [];
  private closed = false;
  private readonly heartbeat: ConsumerHeartbeatRequestManager;

  constructor(
    private readonly cluster: ClusterClient,
    config: ConsumerMembershipConfig,
    private readonly hooks: MembershipHooks,
  ) {
    if (config.groupId.trim() === '') throw new IllegalStateError('group.id must not be empty or whitespace for a consumer that subscribes');
    if (config.groupInstanceId !== undefined && config.groupInstanceId !== null && config.groupInstanceId.trim() === '')
      throw new IllegalStateError('group.instance.id must not be empty or whitespace when set');
    if (!Number.isInteger(config.rebalanceTimeoutMs) || config.rebalanceTimeoutMs < 1)
      throw new IllegalStateError(`max.poll.interval.ms must be a positive integer, got ${config.rebalanceTimeoutMs}`);
    this.groupId = config.groupId;
    this.groupInstanceId = config.groupInstanceId ?? null;
    this.rackId = config.rackId ?? null;
    this.serverAssignor = config.serverAssignor ?? null;
    this.rebalanceTimeoutMs = config.rebalanceTimeoutMs;
    this.heartbeat = new ConsumerHeartbeatRequestManager(cluster, this);
    this.topicNames = new AssignedTopicNames(cluster, this.groupId);
  }

  get state(): MemberState {
    return this.currentState;
  }

  /** The member epoch the coordinator gave (0 while joining, negative while leaving). */
  get epoch(): number {
    return this.memberEpoch;
  }

  subscribe(topics: readonly string[]): void {
    this.setSubscription([...new Set(topics)].sort(), null);
  }

  /** Subscribes with a regular expression the broker resolves (KIP-848 SubscribedTopicRegex; Kafka's subscribe(SubscriptionPattern)). */
  subscribePattern(regex: string): void {
    if (regex === '') throw new IllegalStateError('the subscription pattern must not be empty');
    this.setSubscription([], regex);
  }

  private setSubscription(topics: string[], pattern: string | null): void {
    if (this.closed) throw new IllegalStateError(`consumer of group ${this.groupId} is closed`);
    this.topics = topics;
    this.pattern = pattern;
    const empty = topics.length === 0 && pattern === null;
    this.leaveRequested = empty;
    this.subscriptionUpdated = !empty;
    // A member already in the group sends the new subscription now rather than at the next interval.
    if (!empty && !isNotInGroup(this.currentState)) this.heartbeat.wake();
  }

  assignment(): readonly TopicPartition[] {
    return this.owned.map(({ topic, partition }) => ({ topic, partition }));
  }

  groupMetadata(): Required<ConsumerGroupMetadata> {
    return { groupId: this.groupId, generationId: this.metadataEpoch, memberId: this.metadataMemberId, groupInstanceId: this.groupInstanceId };
  }

  async poll(deadline: number): Promise<readonly TopicPartition[]> {
    if (this.closed) throw new IllegalStateError(`consumer of group ${this.groupId} is closed`);
    this.resetPollTimer();
    if (this.leaveRequested) {
      this.leaveRequested = false;
      await this.leaveGroup(true, deadline);
    }
    // Joining happens only inside poll() (AbstractMembershipManager.onConsumerPoll).
    if (this.subscriptionUpdated && this.currentState === 'UNSUBSCRIBED') {
      this.subscriptionUpdated = false;
      this.transitionToJoining();
    }
    this.heartbeat.start();
    for (;;) {
      // Inside poll() the application is responsive: the poll timer runs from the last round (as Kafka's classic
      // consumer updates it at each coordinator poll within one poll() call).
      this.lastPollAt = Date.now();
      await this.runPendingWork(deadline);
      const pending = this.pendingErrors.shift();
      if (pending !== undefined) throw pending;
      if (this.fatalError !== null) throw this.fatalError;
      if (this.owned.length > 0 || this.currentState === 'UNSUBSCRIBED' || Date.now() >= deadline) break;
      // Nothing to fetch from yet: wait for the coordinator's answer instead of returning at once.
      await this.waitForChange(deadline);
    }
    return this.assignment();
  }

  async close(deadline: number): Promise<void> {
    if (this.closed) return;
    try {
      await this.leaveGroup(true, deadline);
    } finally {
      this.closed = true;
      this.wakeWaiters();
      await untilDeadline(this.heartbeat.stop(), deadline);
    }
  }

  // ---------------------------------------------------------------------------
  // The work poll() does: what the heartbeat left for the application's side.

  private async runPendingWork(deadline: number): Promise<void> {
    switch (this.currentState) {
      case 'FENCED':
      case 'STALE':
        await this.releaseLostPartitions();
        if (this.currentState === 'FENCED' || this.currentState === 'STALE') this.transitionToJoining();
        return;
      case 'FATAL':
        await this.releaseLostPartitions();
        return;
      case 'RECONCILING':
        await this.maybeReconcile(deadline);
        return;
      default:
        return;
    }
  }

  /** onPartitionsLost for what the member owned, then nothing is owned (transitionToFenced / transitionToStale / transitionToFatal). */
  private async releaseLostPartitions(): Promise<void> {
    const lost = this.assignment();
    this.clearAssignment();
    if (lost.length === 0) return;
    try {
      await this.hooks.onPartitionsLost(lost);
    } catch (error) {
      this.cluster.logger.error(`consumer group ${this.groupId}: onPartitionsLost failed: ${(error as Error).message}`);
      this.pendingErrors.push(error as Error);
    }
  }

  /** AbstractMembershipManager.maybeReconcile, revokeAndAssign and assignPartitions. */
  private async maybeReconcile(deadline: number): Promise<void> {
    if (this.reconciliationInProgress) return;
    let target: LocalAssignment;
    let names: Map<string, string>;
    do {
      target = this.targetAssignment;
      if (target.equals(this.currentAssignment)) return;
      names = await this.topicNames.resolve([...target.partitions.keys()], deadline);
      if (this.currentState !== 'RECONCILING') return;
    } while (this.targetAssignment !== target); // a newer target came while resolving: resolve that one
    const resolvable = new Map([...target.partitions].filter(([topicId]) => names.has(topicId)));
    const resolved = LocalAssignment.of(target.localEpoch, resolvable);
    if (!this.currentAssignment.isNone() && resolved.samePartitions(this.currentAssignment)) {
      // Only unresolved topics differ: acknowledge what is reconciled, with the new local epoch.
      this.currentAssignment = resolved;
      this.transitionTo('ACKNOWLEDGING');
      this.heartbeat.wake();
      return;
    }
    this.reconciliationInProgress = true;
    this.rejoinedWhileReconciliationInProgress = false;
    try {
      const assigned: OwnedPartition[] = [];
      for (const [topicId, ps] of resolved.partitions) for (const p of ps) assigned.push({ topicId, topic: names.get(topicId)!, partition: p });
      assigned.sort(compareTopicPartitions);
      const assignedKeys = new Set(assigned.map(topicPartitionKey));
      const ownedKeys = new Set(this.owned.map(topicPartitionKey));
      const revoked = this.owned.filter((tp) => !assignedKeys.has(topicPartitionKey(tp)));
      const added = assigned.filter((tp) => !ownedKeys.has(topicPartitionKey(tp)));
      this.cluster.logger.info(
        `consumer group ${this.groupId}: member ${this.memberId} reconciling local epoch ${resolved.localEpoch}: ` +
          `assigned [${assigned.map(topicPartitionKey).join(', ')}], revoking [${revoked.map(topicPartitionKey).join(', ')}], adding [${added.map(topicPartitionKey).join(', ')}]`,
      );
      if (revoked.length > 0) {
        await this.hooks.onPartitionsRevoked(revoked.map(plain));
        const gone = new Set(revoked.map(topicPartitionKey));
        this.owned = this.owned.filter((tp) => !gone.has(topicPartitionKey(tp)));
      }
      if (this.maybeAbortReconciliation()) return;
      this.owned = assigned;
      this.topicNames.keepOnly(new Map(assigned.map((tp) => [tp.topicId, tp.topic])));
      // Called even when nothing was added, as Kafka calls the listener's onPartitionsAssigned after every reconciliation.
      await this.hooks.onPartitionsAssigned(added.map(plain));
      if (this.maybeAbortReconciliation()) return;
      this.currentAssignment = resolved;
      this.transitionTo('ACKNOWLEDGING');
      this.heartbeat.wake();
    } catch (error) {
      // The member stays RECONCILING and sends no acknowledgement; the next poll() tries again (revokeAndAssign's
      // failure path), and the error reaches the application as Kafka's poll() throws the listener's exception.
      this.cluster.logger.error(`consumer group ${this.groupId}: reconciliation failed: ${(error as Error).message}`);
      this.pendingErrors.push(error as Error);
    } finally {
      this.reconciliationInProgress = false;
      this.rejoinedWhileReconciliationInProgress = false;
    }
  }

  /** True when the reconciliation under way no longer applies (fenced, leaving, rejoined meanwhile). */
  private maybeAbortReconciliation(): boolean {
    return this.currentState !== 'RECONCILING' || this.rejoinedWhileReconciliationInProgress;
  }

  // ---------------------------------------------------------------------------
  // Transitions

  private transitionTo(next: MemberState): void {
    checkTransition(this.currentState, next);
    if (next !== this.currentState) this.cluster.logger.debug(`consumer group ${this.groupId}: member ${this.memberId} ${this.currentState} → ${next}`);
    this.currentState = next;
    this.wakeWaiters();
  }

  private transitionToJoining(): void {
    if (this.currentState === 'FATAL') return;
    if (this.reconciliationInProgress) this.rejoinedWhileReconciliationInProgress = true;
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
    this.transitionTo('JOINING');
    this.targetAssignment = LocalAssignment.NONE;
    this.topicNames.clear();
    this.heartbeat.wake();
  }

  transitionToFenced(reason: string): void {
    const state = this.currentState;
    if (state === 'PREPARE_LEAVING' || state === 'LEAVING') {
      // Out of the group already: no leave heartbeat needed, and no rejoin.
      this.cluster.logger.info(`consumer group ${this.groupId}: member ${this.memberId} fenced while leaving (${reason})`);
      if (state === 'PREPARE_LEAVING') this.transitionToSendingLeaveGroup(false);
      this.transitionTo('UNSUBSCRIBED');
      this.completeLeave();
      return;
    }
    if (state === 'UNSUBSCRIBED') return;
    this.cluster.logger.warn(`consumer group ${this.groupId}: member ${this.memberId} with epoch ${this.memberEpoch} is fenced (${reason}); rejoining`);
    this.transitionTo('FENCED');
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
  }

  transitionToFatal(error: Error): void {
    if (this.currentState === 'FATAL') return;
    const wasLeaving = this.currentState === 'PREPARE_LEAVING' || this.currentState === 'LEAVING' || this.currentState === 'UNSUBSCRIBED';
    this.fatalError = error;
    this.transitionTo('FATAL');
    if (wasLeaving) this.completeLeave();
  }

  reportError(error: Error): void {
    // Once per poll() however many heartbeats repeat it.
    if (!this.pendingErrors.some((e) => e.message === error.message)) this.pendingErrors.push(error);
    this.wakeWaiters();
  }

  /** Epoch −1 or −2 and LEAVING, so that the heartbeat loop sends the leave now (transitionToSendingLeaveGroup). */
  private transitionToSendingLeaveGroup(dueToExpiredPollTimer: boolean): void {
    if (this.currentState === 'FATAL' || this.currentState === 'UNSUBSCRIBED') return;
    if (dueToExpiredPollTimer) {
      this.pollTimerExpired = true;
      this.transitionTo('PREPARE_LEAVING');
    }
    // The coordinator has no way yet for a static member to leave for good: −2 says it comes back within the
    // session timeout, as ConsumerMembershipManager.leaveGroupEpoch sends for the default close.
    this.memberEpoch = this.groupInstanceId !== null ? LEAVE_GROUP_STATIC_MEMBER_EPOCH : LEAVE_GROUP_MEMBER_EPOCH;
    this.currentAssignment = LocalAssignment.NONE;
    this.transitionTo('LEAVING');
    this.heartbeat.wake();
  }

  /** Revokes (or, out of the group, loses) what it owns, then sends the leave heartbeat and waits for it (leaveGroup). */
  private async leaveGroup(runCallbacks: boolean, deadline: number): Promise<void> {
    if (isNotInGroup(this.currentState)) {
      if (this.currentState === 'FENCED' || this.currentState === 'STALE') await this.releaseLostPartitions();
      if (this.currentState === 'FENCED') this.transitionTo('UNSUBSCRIBED');
      this.resetGroupMetadata();
      return;
    }
    if (this.currentState === 'PREPARE_LEAVING' || this.currentState === 'LEAVING') return;
    this.transitionTo('PREPARE_LEAVING');
    const left = new Promise<void>((resolve) => (this.leaveDone = resolve));
    const dropped = this.assignment();
    if (runCallbacks && dropped.length > 0) {
      try {
        if (this.memberEpoch > 0) await this.hooks.onPartitionsRevoked(dropped);
        else await this.hooks.onPartitionsLost(dropped);
      } catch (error) {
        this.cluster.logger.error(`consumer group ${this.groupId}: releasing the assignment before leaving failed: ${(error as Error).message}`);
      }
    }
    this.clearAssignment();
    this.transitionToSendingLeaveGroup(false);
    this.heartbeat.start();
    await untilDeadline(left, deadline);
    this.resetGroupMetadata();
  }

  onLeaveHeartbeatDone(): void {
    this.completeLeave();
  }

  private completeLeave(): void {
    const done = this.leaveDone;
    this.leaveDone = null;
    done?.();
  }

  private clearAssignment(): void {
    this.owned = [];
    this.currentAssignment = LocalAssignment.NONE;
    this.targetAssignment = LocalAssignment.NONE;
    this.topicNames.clear();
  }

  private resetGroupMetadata(): void {
    this.metadataEpoch = -1;
    this.metadataMemberId = '';
  }

  // ---------------------------------------------------------------------------
  // The heartbeat's side (HeartbeatMember)

  heartbeatSource(): HeartbeatSource {
    return {
      groupId: this.groupId,
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      state: this.currentState,
      groupInstanceId: this.groupInstanceId,
      rackId: this.rackId,
      rebalanceTimeoutMs: this.rebalanceTimeoutMs,
      serverAssignor: this.serverAssignor,
      subscribedTopicNames: this.topics,
      subscribedTopicRegex: this.pattern,
      currentAssignment: this.currentAssignment,
    };
  }

  onHeartbeatRequestGenerated(): void {
    if (this.currentState === 'ACKNOWLEDGING') {
      this.transitionTo(this.targetAssignment.equals(this.currentAssignment) ? 'STABLE' : 'RECONCILING');
    } else if (this.currentState === 'LEAVING') {
      if (this.pollTimerExpired) this.transitionTo('STALE');
      else this.transitionTo('UNSUBSCRIBED');
    }
  }

  /** ConsumerMembershipManager.onHeartbeatSuccess and processAssignmentReceived. */
  onHeartbeatSuccess(response: ConsumerGroupHeartbeatResponse): void {
    this.wakeWaiters();
    if (isNotInGroup(this.currentState) || this.currentState === 'LEAVING' || response.memberEpoch < 0) return;
    this.memberEpoch = response.memberEpoch;
    if (response.memberEpoch > 0) {
      this.metadataEpoch = response.memberEpoch;
      this.metadataMemberId = this.memberId;
    }
    if (response.assignment === null || !canHandleNewAssignment(this.currentState)) return;
    const target = new Map(response.assignment.topicPartitions.map((tp) => [tp.topicId, tp.partitions]));
    this.targetAssignment = this.targetAssignment.updateWith(target) ?? this.targetAssignment;
    if (!this.targetAssignment.equals(this.currentAssignment)) this.transitionTo('RECONCILING');
    else if (this.currentState === 'RECONCILING' || this.currentState === 'JOINING') this.transitionTo('STABLE');
  }

  maybeLeaveOnExpiredPollTimer(now: number): boolean {
    const state = this.currentState;
    if (now - this.lastPollAt <= this.rebalanceTimeoutMs || state === 'PREPARE_LEAVING' || state === 'LEAVING' || isNotInGroup(state)) return false;
    this.cluster.logger.warn(
      `consumer group ${this.groupId}: poll() was not called for more than max.poll.interval.ms (${this.rebalanceTimeoutMs} ms); ` +
        `member ${this.memberId} leaves the group and rejoins at the next poll()`,
    );
    this.transitionToSendingLeaveGroup(true);
    return true;
  }

  pollTimerExpiresAt(): number {
    return this.lastPollAt + this.rebalanceTimeoutMs;
  }

  /** A poll() call: the poll timer starts again, and a member that left for want of one rejoins (maybeRejoinStaleMember). */
  private resetPollTimer(): void {
    this.lastPollAt = Date.now();
    this.pollTimerExpired = false;
  }

  // ---------------------------------------------------------------------------

  private wakeWaiters(): void {
    const waiters = this.changeWaiters;
    this.changeWaiters = [];
    for (const wake of waiters) wake();
  }

  private waitForChange(deadline: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.changeWaiters = self.changeWaiters.filter((w) => w !== done);
        resolve();
      }
      this.changeWaiters.push(done);
    });
  }
}

function plain({ topic, partition }: TopicPartition): TopicPartition {
  return { topic, partition };
}

/** Resolves when `work` does or at `deadline`, whichever comes first. */
async function untilDeadline(work: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  } finally {
    clearTimeout(timer);
  }
}
