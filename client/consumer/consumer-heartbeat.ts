/**
 * The background heartbeat of a `group.protocol=consumer` member (Kafka's
 * ConsumerHeartbeatRequestManager over AbstractHeartbeatRequestManager):
 * one ConsumerGroupHeartbeat in flight at a time, at the interval the
 * coordinator last returned, or at once when the member is joining,
 * acknowledging a reconciliation or leaving; errors handled as
 * AbstractHeartbeatRequestManager.onErrorResponse does. The membership's
 * state lives in ConsumerMembershipManager; this module only decides when to
 * send and what an answer means for it.
 */
import { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { CoordinatorType, type ClusterClient } from '../cluster.js';
import { ClientClosedError, errorCodeName, errorFromCode, Errors, KafkaError } from '../errors.js';
import { ConsumerHeartbeatState, type HeartbeatSource } from './consumer-heartbeat-state.js';
import { shouldHeartbeatNow, shouldSkipHeartbeat, type MemberState } from './member-state.js';

/** Until the first answer sets it (Kafka's GroupCoordinatorConfig.CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT). */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 5000;

/**
 * v1 is the first version in which the client makes its member id (KIP-1082) and the one that has
 * SubscribedTopicRegex; Kafka's own consumer sends nothing older.
 */
export const CONSUMER_GROUP_HEARTBEAT_MIN_VERSION = 1;

/** What the heartbeat asks of and tells the membership. */
export interface HeartbeatMember {
  readonly state: MemberState;
  heartbeatSource(): HeartbeatSource;
  /** A heartbeat is about to go out (AbstractMembershipManager.onHeartbeatRequestGenerated). */
  onHeartbeatRequestGenerated(): void;
  onHeartbeatSuccess(response: ConsumerGroupHeartbeatResponse): void;
  /** UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH. */
  transitionToFenced(reason: string): void;
  transitionToFatal(error: Error): void;
  /** An error for the application's next poll() that does not end the membership (TOPIC_AUTHORIZATION_FAILED). */
  reportError(error: Error): void;
  /** The leave heartbeat was answered, failed, or could not be sent. */
  onLeaveHeartbeatDone(): void;
  /** poll() was not called within max.poll.interval.ms: leave now and wait for the next poll() (transitionToSendingLeaveGroup(true)). */
  maybeLeaveOnExpiredPollTimer(now: number): boolean;
  /** When the poll timer expires, for the loop's sleep. */
  pollTimerExpiresAt(): number;
}

export class ConsumerHeartbeatRequestManager {
  private readonly sentFields = new ConsumerHeartbeatState();
  private intervalMs = DEFAULT_HEARTBEAT_INTERVAL_MS;
  private nextHeartbeatAt = 0;
  private failures = 0;
  private running: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly cluster: ClusterClient,
    private readonly member: HeartbeatMember,
  ) {}

  /** Starts the loop (once); it sleeps while the member is not in the group. */
  start(): void {
    this.running ??= this.loop();
  }

  /** Re-evaluate now: the member's state changed (joining, acknowledging, leaving). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Ends the loop after the request in flight; resolves when it has. */
  async stop(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      const now = Date.now();
      const state = this.member.state;
      if (shouldSkipHeartbeat(state)) {
        await this.sleep(Infinity);
        continue;
      }
      const expired = this.member.maybeLeaveOnExpiredPollTimer(now);
      // After a failure even a heartbeat that is due now waits for its backoff (Kafka's heartbeatNow skips it, which
      // against an unreachable coordinator would send JOINING heartbeats back to back).
      const urgent = !expired && shouldHeartbeatNow(state) && this.failures === 0;
      if (!expired && !urgent && now < this.nextHeartbeatAt) {
        // Half the poll timer's remainder at most, as AbstractHeartbeatRequestManager.maximumTimeToWait, so an
        // expired poll timer is noticed without a heartbeat to carry it.
        await this.sleep(Math.min(this.nextHeartbeatAt, this.member.pollTimerExpiresAt()) - now);
        continue;
      }
      await this.heartbeat();
    }
  }

  private async heartbeat(): Promise<void> {
    const source = this.member.heartbeatSource();
    const leaving = source.memberEpoch < 0;
    let request: ConsumerGroupHeartbeatRequest;
    try {
      request = this.sentFields.build(source);
    } catch (error) {
      this.member.transitionToFatal(error as Error);
      return;
    }
    this.member.onHeartbeatRequestGenerated();
    this.nextHeartbeatAt = Date.now() + this.intervalMs;
    let response: ConsumerGroupHeartbeatResponse;
    try {
      ({ response } = await this.cluster.coordinatorRequest(
        'ConsumerGroupHeartbeat',
        CoordinatorType.GROUP,
        source.groupId,
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupHeartbeatResponse,
        () => request,
        (r) => r.errorCode,
        { deadline: Date.now() + this.cluster.requestTimeoutMs, min: CONSUMER_GROUP_HEARTBEAT_MIN_VERSION },
      ));
    } catch (error) {
      this.onFailure(error, leaving);
      return;
    }
    if (leaving) {
      // Sent once, not retried, whatever the answer (AbstractMembershipManager.onHeartbeatFailure on a leave).
      if (response.errorCode !== Errors.NONE)
        this.cluster.logger.debug(`consumer ${this.cluster.clientId}: leave heartbeat answered ${errorCodeName(response.errorCode)}`);
      this.member.onLeaveHeartbeatDone();
      return;
    }
    if (response.errorCode === Errors.NONE) {
      this.failures = 0;
      if (response.heartbeatIntervalMs > 0) {
        this.intervalMs = response.heartbeatIntervalMs;
        this.nextHeartbeatAt = Date.now() + this.intervalMs;
      }
      this.member.onHeartbeatSuccess(response);
      return;
    }
    this.onErrorResponse(response);
  }

  /** No answer: a retriable failure backs off and sends every field again; anything else is fatal (onFailure). */
  private onFailure(error: unknown, leaving: boolean): void {
    this.sentFields.reset();
    if (leaving) {
      this.cluster.logger.debug(`consumer ${this.cluster.clientId}: leave heartbeat failed: ${(error as Error).message}`);
      this.member.onLeaveHeartbeatDone();
      return;
    }
    if (error instanceof ClientClosedError || this.closed) return;
    const retriable = error instanceof NetworkError || (error instanceof KafkaError && error.retriable);
    if (!retriable) {
      this.cluster.logger.error(`consumer ${this.cluster.clientId}: ConsumerGroupHeartbeat failed: ${(error as Error).message}`);
      this.member.transitionToFatal(error as Error);
      return;
    }
    this.failures++;
    this.nextHeartbeatAt = Date.now() + this.cluster.backoff(this.failures);
    this.cluster.logger.debug(`consumer ${this.cluster.clientId}: ConsumerGroupHeartbeat failed, retrying: ${(error as Error).message}`);
  }

  /** AbstractHeartbeatRequestManager.onErrorResponse for the codes the coordinator request did not handle itself. */
  private onErrorResponse(response: ConsumerGroupHeartbeatResponse): void {
    this.sentFields.reset();
    this.failures++;
    const code = response.errorCode;
    const groupId = this.member.heartbeatSource().groupId;
    const error = errorFromCode(code, `ConsumerGroupHeartbeat (group ${groupId})`, response.errorMessage);
    switch (code) {
      case Errors.FENCED_MEMBER_EPOCH:
      case Errors.UNKNOWN_MEMBER_ID:
        // Rejoin as soon as the partitions are given up: no backoff.
        this.nextHeartbeatAt = 0;
        this.member.transitionToFenced(`${errorCodeName(code)}${response.errorMessage ? `: ${response.errorMessage}` : ''}`);
        return;
      case Errors.TOPIC_AUTHORIZATION_FAILED:
        // The member stays as it is, so it recovers once the ACLs are there; the error goes to poll().
        this.nextHeartbeatAt = Date.now() + this.cluster.backoff(this.failures);
        this.member.reportError(error);
        return;
      default:
        if (error instanceof KafkaError && error.retriable) {
          this.nextHeartbeatAt = Date.now() + this.cluster.backoff(this.failures);
          return;
        }
        // GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
        // INVALID_REGULAR_EXPRESSION, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID and codes it does not know.
        this.cluster.logger.error(`consumer ${this.cluster.clientId}: ${error.message}`);
        this.member.transitionToFatal(error);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const done = (): void => {
        if (timer !== null) clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(0, ms));
      this.wakeUp = done;
    });
  }
}
