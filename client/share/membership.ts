/**
 * Share-group membership (Kafka's ShareMembershipManager with the heartbeat
 * loop of ShareHeartbeatRequestManager): ShareGroupHeartbeat in the
 * background, the subscription sent when it changes, the member epoch, the
 * assignment resolved to topic names, rejoining after the member was fenced
 * or expired, and leaving the group on close.
 */
import { ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { CoordinatorType, type ClusterClient } from '../cluster.js';
import { errorCodeName, errorFromCode, Errors, KafkaError } from '../errors.js';
import { JOIN_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH, MEMBERSHIP_LOST_ERRORS } from './protocol.js';
import type { TopicPartitionRef } from './types.js';

export interface MembershipHooks {
  /** The group no longer has this member; called before the assignment is cleared. */
  onLost(reason: string, code: number): void;
  /** A heartbeat failed for good: the consumer cannot go on. */
  onFatal(error: Error): void;
}

/** Until the first answer sets it (Kafka's GroupCoordinatorConfig.SHARE_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT). */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 5000;

export class ShareMembership {
  private topics: string[] = [];
  private subscriptionChanged = false;
  private memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
  private heartbeatIntervalMs = DEFAULT_HEARTBEAT_INTERVAL_MS;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private leaving = false;
  private closed = false;
  private assigned: TopicPartitionRef[] = [];
  private assignmentWaiters: Array<() => void> = [];

  constructor(
    private readonly cluster: ClusterClient,
    readonly groupId: string,
    readonly memberId: string,
    private readonly rackId: string | null,
    private readonly hooks: MembershipHooks,
  ) {}

  /** The member epoch (the generation a transaction acknowledges for). */
  get epoch(): number {
    return this.memberEpoch;
  }

  get subscription(): readonly string[] {
    return this.topics;
  }

  /** The partitions the group assigned to this member. */
  get assignment(): readonly TopicPartitionRef[] {
    return this.assigned;
  }

  /** Replaces the subscription; the next heartbeat, sent at once, carries it. */
  subscribe(topics: string[]): void {
    this.topics = topics;
    this.subscriptionChanged = true;
    this.wake?.();
  }

  /** Starts the heartbeat loop (once). */
  start(): void {
    this.running ??= this.heartbeatLoop();
  }

  private async heartbeatLoop(): Promise<void> {
    let failures = 0;
    while (!this.closed && !this.leaving) {
      let wait: number;
      try {
        if (this.topics.length > 0 || this.memberEpoch > 0) {
          await this.heartbeat(false);
          failures = 0;
        }
        // Read after the response: it may have set a new interval, which times the very next heartbeat
        // (Kafka's AbstractHeartbeatRequestManager resets its timer to the response's heartbeatIntervalMs).
        wait = this.heartbeatIntervalMs;
      } catch (error) {
        failures++;
        if (error instanceof KafkaError && !error.retriable && !(error instanceof NetworkError)) {
          if (!this.closed) {
            this.hooks.onFatal(error);
            this.cluster.logger.error(`share consumer ${this.cluster.clientId}: heartbeat failed: ${error.message}`);
          }
          this.wakeAssignmentWaiters();
          return;
        }
        wait = this.cluster.backoff(failures);
      }
      if (this.subscriptionChanged) wait = 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = null;
    }
  }

  private async heartbeat(leave: boolean, deadline = Date.now() + this.cluster.requestTimeoutMs): Promise<void> {
    const sendSubscription = this.subscriptionChanged || this.memberEpoch === JOIN_GROUP_MEMBER_EPOCH;
    const subscription = this.topics;
    const epoch = leave ? LEAVE_GROUP_MEMBER_EPOCH : this.memberEpoch;
    const { response } = await this.cluster.coordinatorRequest(
      'ShareGroupHeartbeat',
      CoordinatorType.GROUP,
      this.groupId,
      ShareGroupHeartbeatRequest,
      ShareGroupHeartbeatResponse,
      () =>
        ShareGroupHeartbeatRequest.create({
          groupId: this.groupId,
          memberId: this.memberId,
          memberEpoch: epoch,
          rackId: this.rackId,
          subscribedTopicNames: leave ? null : sendSubscription ? subscription : null,
        }),
      (r) => r.errorCode,
      { deadline },
    );
    if (leave) return;
    if (sendSubscription && subscription === this.topics) this.subscriptionChanged = false;
    const code = response.errorCode;
    if (MEMBERSHIP_LOST_ERRORS.has(code)) {
      // Rejoin from scratch with the same member id.
      this.cluster.logger.warn(`share consumer ${this.cluster.clientId}: ${response.errorMessage ?? 'fenced'}; rejoining the group`);
      this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
      this.subscriptionChanged = true;
      this.hooks.onLost(errorCodeName(code), code);
      await this.setAssignment([]);
      return; // the loop rejoins at once (subscriptionChanged)
    }
    if (code !== 0) throw errorFromCode(code, `ShareGroupHeartbeat (group ${this.groupId})`, response.errorMessage);
    this.memberEpoch = response.memberEpoch;
    if (response.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = response.heartbeatIntervalMs;
    if (response.assignment) await this.setAssignment(response.assignment.topicPartitions);
  }

  private async setAssignment(topicPartitions: Array<{ topicId: string; partitions: number[] }>): Promise<void> {
    const assignmentIds = topicPartitions.map((t) => ({
      topicId: t.topicId,
      partitions: [...t.partitions].sort((a, b) => a - b),
    }));
    const topics = await this.cluster.topicsByIds(assignmentIds.map((t) => t.topicId)).catch(() => new Map());
    const refs: TopicPartitionRef[] = [];
    for (const t of assignmentIds) {
      const meta = topics.get(t.topicId);
      if (!meta) {
        this.cluster.logger.warn(`share consumer ${this.cluster.clientId}: assigned topic id ${t.topicId} is not in the metadata yet`);
        continue;
      }
      for (const partition of t.partitions) refs.push({ topicId: t.topicId, topic: meta.name, partition });
    }
    this.assigned = refs;
    this.wakeAssignmentWaiters();
  }

  private wakeAssignmentWaiters(): void {
    const waiters = this.assignmentWaiters;
    this.assignmentWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits until an assignment arrives, the heartbeat fails for good, the consumer closes, or `deadline`. */
  async waitForAssignment(deadline: number): Promise<void> {
    const wait = deadline - Date.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.assignmentWaiters = self.assignmentWaiters.filter((w) => w !== done);
        resolve();
      }
      this.assignmentWaiters.push(done);
    });
  }

  /**
   * A ShareFetch or ShareAcknowledge answered UNKNOWN_MEMBER_ID: the group
   * coordinator no longer has this member (session timeout), and the broker
   * acquires nothing for it until it joins again. Rejoin now (heartbeat with
   * epoch 0) rather than at the next heartbeat, and fetch nothing meanwhile:
   * with no assignment poll() waits for the rejoin's. `sentWithEpoch` is the
   * member epoch when the request was sent: if a heartbeat has moved it since
   * (already rejoined), nothing is done.
   */
  rejoinAfterUnknownMember(sentWithEpoch: number): void {
    if (this.closed || this.leaving || sentWithEpoch <= 0 || this.memberEpoch !== sentWithEpoch) return;
    this.cluster.logger.warn(
      `share consumer ${this.cluster.clientId}: member ${this.memberId} is not in group ${this.groupId} any more (UNKNOWN_MEMBER_ID on a share request); rejoining the group`,
    );
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH;
    this.subscriptionChanged = true;
    this.hooks.onLost('UNKNOWN_MEMBER_ID on a share request', Errors.UNKNOWN_MEMBER_ID);
    this.assigned = [];
    this.wake?.();
  }

  /** Closing: no more heartbeats (the loop ends at its next turn). */
  stopHeartbeats(): void {
    this.leaving = true;
    this.wake?.();
  }

  /** Leaves the group (member epoch −1), if it joined or is joining. */
  async leave(deadline: number): Promise<void> {
    if (this.memberEpoch > 0 || (this.memberEpoch === JOIN_GROUP_MEMBER_EPOCH && this.running)) {
      await this.heartbeat(true, deadline).catch((error: unknown) =>
        this.cluster.logger.debug(`leaving share group ${this.groupId} failed: ${(error as Error).message}`),
      );
    }
  }

  /** The consumer closed: waiters give up, and the loop ends. */
  close(): void {
    this.closed = true;
    this.wakeAssignmentWaiters();
  }

  /** Resolves when the heartbeat loop has ended. */
  async stopped(): Promise<void> {
    await this.running?.catch(() => {});
  }
}
