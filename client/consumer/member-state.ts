/**
 * The states of a `group.protocol=consumer` member and the transitions
 * between them, as Kafka's MemberState (clients/.../consumer/internals/
 * MemberState.java). A transition that Kafka does not allow throws, so a
 * reconciliation bug shows up where it happens instead of as a wrong
 * assignment later.
 */
import { IllegalStateError } from '../errors.js';

export type MemberState =
  /** Not subscribed: no heartbeats. */
  | 'UNSUBSCRIBED'
  /** Heartbeating with epoch 0 until the coordinator answers with an epoch. */
  | 'JOINING'
  /** A target assignment differs from what the member owns; the next poll() reconciles it. */
  | 'RECONCILING'
  /** Reconciled: the next heartbeat, sent at once, reports what it owns now. */
  | 'ACKNOWLEDGING'
  /** Owns its target assignment; heartbeats at the interval. */
  | 'STABLE'
  /** UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH: the next poll() gives the partitions up as lost, then the member rejoins. */
  | 'FENCED'
  /** Releasing its partitions before the leave heartbeat. */
  | 'PREPARE_LEAVING'
  /** The leave heartbeat (epoch −1, or −2 for a static member) is due. */
  | 'LEAVING'
  /** An error no retry fixes: no more heartbeats, poll() throws it. */
  | 'FATAL'
  /** Left the group because poll() was not called within max.poll.interval.ms; rejoins at the next poll(). */
  | 'STALE';

/** The states each state may be entered from (MemberState's previousValidStates). */
const PREVIOUS: Record<MemberState, readonly MemberState[]> = {
  STABLE: ['JOINING', 'ACKNOWLEDGING', 'RECONCILING'],
  RECONCILING: ['STABLE', 'JOINING', 'ACKNOWLEDGING', 'RECONCILING'],
  ACKNOWLEDGING: ['RECONCILING'],
  FATAL: ['JOINING', 'STABLE', 'RECONCILING', 'ACKNOWLEDGING', 'PREPARE_LEAVING', 'LEAVING', 'UNSUBSCRIBED'],
  FENCED: ['JOINING', 'STABLE', 'RECONCILING', 'ACKNOWLEDGING', 'PREPARE_LEAVING', 'LEAVING'],
  JOINING: ['FENCED', 'UNSUBSCRIBED', 'STALE'],
  PREPARE_LEAVING: ['JOINING', 'STABLE', 'RECONCILING', 'ACKNOWLEDGING', 'UNSUBSCRIBED'],
  LEAVING: ['PREPARE_LEAVING'],
  UNSUBSCRIBED: ['PREPARE_LEAVING', 'LEAVING', 'FENCED'],
  STALE: ['LEAVING'],
};

/** Throws unless `next` may follow `current` (staying in a state is always allowed). */
export function checkTransition(current: MemberState, next: MemberState): void {
  if (current !== next && !PREVIOUS[next].includes(current)) {
    throw new IllegalStateError(`invalid member state transition from ${current} to ${next}`);
  }
}

/** A member in these states takes a new target assignment (MemberState.canHandleNewAssignment). */
export function canHandleNewAssignment(state: MemberState): boolean {
  return PREVIOUS.RECONCILING.includes(state);
}

/** Not a member of the group from its own point of view (AbstractMembershipManager.isNotInGroup). */
export function isNotInGroup(state: MemberState): boolean {
  return state === 'UNSUBSCRIBED' || state === 'FENCED' || state === 'FATAL' || state === 'STALE';
}

/** No heartbeats in these states (AbstractMembershipManager.shouldSkipHeartbeat). */
export function shouldSkipHeartbeat(state: MemberState): boolean {
  return isNotInGroup(state);
}

/** A heartbeat goes out without waiting for the interval (AbstractMembershipManager.shouldHeartbeatNow). */
export function shouldHeartbeatNow(state: MemberState): boolean {
  return state === 'ACKNOWLEDGING' || state === 'LEAVING' || state === 'JOINING';
}
