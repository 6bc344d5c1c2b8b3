import { ErrorCode, ShareError } from './share-error.js';

/**
 * Share sessions (KIP-932): one per (group, member) on this broker, bound to
 * the connection that opened it. Epoch 0 opens (or re-opens) a session, −1
 * closes it, any other epoch must equal the session's and moves it on by one,
 * wrapping from INT32_MAX to 1. The session remembers the partitions the
 * member fetches from, so incremental requests name only what changes.
 */

export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;

export interface SessionPartition {
  topicId: string;
  partition: number;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  readonly connectionId: number;
  /** The epoch the next request must carry. */
  epoch: number;
  /** topicId:partition → partition, in the order they were added. */
  readonly partitions: Map<string, SessionPartition>;
}

export function partitionKey(topicId: string, partition: number): string {
  return `${topicId}:${partition}`;
}

export class ShareSessions {
  private sessions = new Map<string, ShareSession>();

  constructor(private readonly maxSessions: number) {}

  all(): ShareSession[] {
    return [...this.sessions.values()];
  }

  /**
   * Opens a session for an epoch-0 request. A session the member already had
   * is replaced and returned, so that the caller can release its locks (the
   * consumer started over and no longer knows what it held).
   */
  open(groupId: string, memberId: string, connectionId: number): { session: ShareSession; replaced: ShareSession | undefined } {
    const key = sessionKey(groupId, memberId);
    const replaced = this.sessions.get(key);
    if (replaced === undefined && this.sessions.size >= this.maxSessions) {
      throw new ShareError(ErrorCode.SHARE_SESSION_LIMIT_REACHED, `this broker already has ${this.maxSessions} share sessions`);
    }
    const session: ShareSession = { groupId, memberId, connectionId, epoch: 1, partitions: new Map() };
    this.sessions.set(key, session);
    return { session, replaced };
  }

  /**
   * The session a request with `epoch` (not 0) continues or closes; throws
   * SHARE_SESSION_NOT_FOUND or INVALID_SHARE_SESSION_EPOCH.
   */
  find(groupId: string, memberId: string, epoch: number): ShareSession {
    const session = this.sessions.get(sessionKey(groupId, memberId));
    if (session === undefined) throw new ShareError(ErrorCode.SHARE_SESSION_NOT_FOUND, `no share session for member ${memberId} of group ${groupId}`);
    if (epoch !== FINAL_EPOCH && epoch !== session.epoch) {
      throw new ShareError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, `share session epoch ${epoch} does not match the expected ${session.epoch}`);
    }
    return session;
  }

  /** A request succeeded in the session: the next one carries the following epoch. */
  advance(session: ShareSession): void {
    session.epoch = session.epoch === 0x7fffffff ? 1 : session.epoch + 1;
  }

  remove(session: ShareSession): void {
    const key = sessionKey(session.groupId, session.memberId);
    if (this.sessions.get(key) === session) this.sessions.delete(key);
  }

  /** Sessions opened on a connection (to close them when it drops). */
  onConnection(connectionId: number): ShareSession[] {
    return this.all().filter((s) => s.connectionId === connectionId);
  }

  ofMember(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(sessionKey(groupId, memberId));
  }
}

function sessionKey(groupId: string, memberId: string): string {
  return `${groupId}\u0000${memberId}`;
}
