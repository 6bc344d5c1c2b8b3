/**
 * The classic member's background heartbeat (Kafka's
 * AbstractCoordinator.HeartbeatThread): a Heartbeat every
 * heartbeat.interval.ms while the member is in a stable generation.
 * REBALANCE_IN_PROGRESS asks the next poll() to rejoin; UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION and FENCED_INSTANCE_ID end the generation (its
 * partitions are lost); a consumer that has not polled for
 * max.poll.interval.ms leaves the group, as Kafka's does.
 */
import { HeartbeatRequest, HeartbeatResponse } from '../../generated/index.js';
import { CoordinatorType } from '../cluster.js';
import { errorCodeName, Errors } from '../errors.js';
import type { ConsumerGroupMetadata } from '../transactions/offsets.js';
import type { MembershipContext } from './membership-factory.js';

/**
 * The connection of its own the classic group's JoinGroup, SyncGroup and
 * Heartbeat go on, as Kafka's AbstractCoordinator talks to its coordinator on
 * a separate socket (node id Integer.MAX_VALUE - id): a broker handles one
 * connection's requests in order, and Kafka holds a JoinGroup until every
 * member rejoined, so on the fetch connection it would stall this member's
 * fetches and offset lookups for the whole rebalance.
 */
export const GROUP_COORDINATOR_LANE = 'group-coordinator';

export interface HeartbeatEvents {
  rejoin(): void;
  lost(reason: string): void;
  pollTimeout(): void;
}

export class ClassicHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  private lastPoll = Date.now();
  private inFlight = false;
  private closed = false;

  constructor(
    private readonly context: MembershipContext,
    private readonly groupId: string,
    private readonly metadata: () => Required<ConsumerGroupMetadata>,
    private readonly events: HeartbeatEvents,
  ) {}

  pollCalled(): void {
    this.lastPoll = Date.now();
  }

  start(): void {
    if (this.closed) return;
    this.stop();
    this.timer = setInterval(() => void this.beat(), this.context.config.heartbeatIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  close(): void {
    this.closed = true;
    this.stop();
  }

  private async beat(): Promise<void> {
    const { cluster, config } = this.context;
    if (this.inFlight || this.timer === null) return;
    if (Date.now() - this.lastPoll > config.maxPollIntervalMs) {
      cluster.logger.warn(
        `consumer group ${this.groupId}: poll() was not called for more than maxPollIntervalMs (${config.maxPollIntervalMs} ms); leaving the group so that its partitions are reassigned`,
      );
      this.stop();
      this.events.pollTimeout();
      return;
    }
    const member = this.metadata();
    this.inFlight = true;
    try {
      const { response } = await cluster.coordinatorRequest(
        `Heartbeat (group ${this.groupId})`,
        CoordinatorType.GROUP,
        this.groupId,
        HeartbeatRequest,
        HeartbeatResponse,
        () =>
          HeartbeatRequest.create({
            groupId: this.groupId,
            generationId: member.generationId,
            memberId: member.memberId,
            groupInstanceId: member.groupInstanceId,
          }),
        (r) => r.errorCode,
        { deadline: Date.now() + Math.min(cluster.requestTimeoutMs, config.sessionTimeoutMs), lane: GROUP_COORDINATOR_LANE },
      );
      // A heartbeat of a generation that has since ended says nothing about the current one.
      if (this.timer === null || member.generationId !== this.metadata().generationId) return;
      const code = response.errorCode;
      if (code === Errors.NONE) return;
      if (code === Errors.REBALANCE_IN_PROGRESS) this.events.rejoin();
      else if (code === Errors.UNKNOWN_MEMBER_ID || code === Errors.ILLEGAL_GENERATION || code === Errors.FENCED_INSTANCE_ID) {
        this.stop();
        this.events.lost(`Heartbeat answered ${errorCodeName(code)}`);
      } else cluster.logger.warn(`consumer group ${this.groupId}: Heartbeat answered ${errorCodeName(code)}`);
    } catch (error) {
      cluster.logger.debug(`consumer group ${this.groupId}: Heartbeat failed: ${(error as Error).message}`);
    } finally {
      this.inFlight = false;
    }
  }
}
