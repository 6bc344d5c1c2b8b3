/**
 * What one ConsumerGroupHeartbeat carries: every field when joining, then
 * only what changed since the last request sent (Kafka's
 * ConsumerHeartbeatRequestManager.HeartbeatState with its SentFields). The
 * coordinator reads a null field as "unchanged", so sending less is not only
 * smaller: TopicPartitions sent only after a reconciliation is what tells the
 * coordinator that the member now owns (or gave up) those partitions.
 * After a failed heartbeat the sent fields are forgotten, so the next
 * request carries everything again (AbstractHeartbeatRequestManager.onFailure
 * / onErrorResponse → resetHeartbeatState).
 */
import { ConsumerGroupHeartbeatRequest } from '../../generated/index.js';
import type { LocalAssignment } from './local-assignment.js';
import type { MemberState } from './member-state.js';

/** What the member is, as the heartbeat needs it. */
export interface HeartbeatSource {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  state: MemberState;
  groupInstanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
  subscribedTopicNames: readonly string[];
  /** The subscription's regular expression (KIP-848 SubscribedTopicRegex), or null. */
  subscribedTopicRegex: string | null;
  /** The assignment reconciled last. */
  currentAssignment: LocalAssignment;
}

export class ConsumerHeartbeatState {
  private rebalanceTimeoutMs = -1;
  private subscribedTopicNames: string | null = null;
  private pattern: string | null = null;
  private serverAssignor: string | null = null;
  private localAssignment: LocalAssignment | null = null;

  /** Forget what was sent: the next request carries every field. */
  reset(): void {
    this.rebalanceTimeoutMs = -1;
    this.subscribedTopicNames = null;
    this.pattern = null;
    this.serverAssignor = null;
    this.localAssignment = null;
  }

  build(m: HeartbeatSource): ConsumerGroupHeartbeatRequest {
    const request = ConsumerGroupHeartbeatRequest.create({
      groupId: m.groupId,
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      instanceId: m.groupInstanceId,
    });
    // A leave heartbeat (epoch −1 or −2) says who leaves and nothing else: the coordinator reads no other field of it
    // (Kafka's sends whatever changed, e.g. the emptied subscription, which the coordinator ignores).
    if (m.memberEpoch < 0) return request;
    const joining = m.state === 'JOINING';
    if (joining || this.rebalanceTimeoutMs !== m.rebalanceTimeoutMs) {
      request.rebalanceTimeoutMs = m.rebalanceTimeoutMs;
      this.rebalanceTimeoutMs = m.rebalanceTimeoutMs;
    }
    const names = [...m.subscribedTopicNames].sort();
    const namesKey = JSON.stringify(names);
    if (joining || namesKey !== this.subscribedTopicNames) {
      request.subscribedTopicNames = names;
      this.subscribedTopicNames = namesKey;
    }
    // '' removes a regex the member subscribed with before (ConsumerGroupHeartbeatRequest's SubscribedTopicRegex).
    if ((joining && m.subscribedTopicRegex !== null) || m.subscribedTopicRegex !== this.pattern) {
      request.subscribedTopicRegex = m.subscribedTopicRegex ?? '';
      this.pattern = m.subscribedTopicRegex;
    }
    if (m.serverAssignor !== null && (joining || m.serverAssignor !== this.serverAssignor)) {
      request.serverAssignor = m.serverAssignor;
      this.serverAssignor = m.serverAssignor;
    }
    if (joining || this.localAssignment === null || !m.currentAssignment.equals(this.localAssignment)) {
      request.topicPartitions = m.currentAssignment.toTopicPartitions();
      this.localAssignment = m.currentAssignment;
    }
    if (joining) request.rackId = m.rackId;
    return request;
  }
}
