/**
 * Share sessions, one per broker that leads partitions of the assignment
 * (Kafka's ShareSessionHandler): the session epoch each request carries and
 * moves on, the partitions the broker holds in the session (what a ShareFetch
 * adds or forgets), the reset after an error that ends the session, and one
 * request at a time per session, since each one moves its epoch.
 */
import type { ClusterClient } from '../cluster.js';
import { FINAL_SHARE_SESSION_EPOCH, INITIAL_SHARE_SESSION_EPOCH, MAX_SHARE_SESSION_EPOCH, SESSION_ENDING_ERRORS } from './protocol.js';
import type { TopicPartitionRef } from './types.js';

/** What leaderOf answers for a partition whose leader the metadata does not name (Kafka's leader id −1). */
export const NO_LEADER = -1;

/** The node whose share session serves `ref`: its leader, or NO_LEADER. */
export function leaderOf(cluster: ClusterClient, ref: TopicPartitionRef): number {
  return cluster.topicById(ref.topicId)?.partitions.find((p) => p.partition === ref.partition)?.leader ?? NO_LEADER;
}

export class ShareSession {
  epoch = INITIAL_SHARE_SESSION_EPOCH;
  /** `topicId:partition` of the partitions the broker holds in the session. */
  partitions = new Set<string>();
  /** The tail of the requests of this session, run one after the other. */
  lock: Promise<void> = Promise.resolve();

  /** The next request opens the session (a ShareFetch; a ShareAcknowledge cannot). */
  get isNew(): boolean {
    return this.epoch === INITIAL_SHARE_SESSION_EPOCH;
  }

  /** The partitions of the session that `wanted` leaves out: the next ShareFetch forgets them. */
  forgotten(wanted: ReadonlySet<string>): string[] {
    return [...this.partitions].filter((k) => !wanted.has(k));
  }

  /** A ShareFetch succeeded: the session holds exactly `wanted` now. */
  fetched(wanted: Set<string>): void {
    this.epoch = nextEpoch(this.epoch);
    this.partitions = wanted;
  }

  /** A ShareAcknowledge succeeded (with the final epoch when `closing`, which ends the session). */
  acknowledged(closing: boolean): void {
    this.epoch = closing ? INITIAL_SHARE_SESSION_EPOCH : nextEpoch(this.epoch);
  }

  /** The epoch of a ShareAcknowledge: the final one closes the session. */
  acknowledgeEpoch(closing: boolean): number {
    return closing ? FINAL_SHARE_SESSION_EPOCH : this.epoch;
  }

  /** The broker has no session for us any more (and with it went the acquisition locks): start over. */
  reset(): void {
    this.epoch = INITIAL_SHARE_SESSION_EPOCH;
    this.partitions.clear();
  }
}

/** The share sessions of one consumer, by node id. */
export class ShareSessions {
  private readonly byNode = new Map<number, ShareSession>();

  get(nodeId: number): ShareSession | undefined {
    return this.byNode.get(nodeId);
  }

  nodeIds(): IterableIterator<number> {
    return this.byNode.keys();
  }

  delete(nodeId: number): void {
    this.byNode.delete(nodeId);
  }

  /** An error answer to a request of the session: the errors that end it reset it. */
  onError(nodeId: number, code: number): void {
    if (SESSION_ENDING_ERRORS.has(code)) this.byNode.get(nodeId)?.reset();
  }

  /** Runs `fn` with the session of `nodeId` (opened if need be) after the session's earlier requests. */
  run<T>(nodeId: number, fn: (session: ShareSession) => Promise<T>): Promise<T> {
    let session = this.byNode.get(nodeId);
    if (!session) {
      session = new ShareSession();
      this.byNode.set(nodeId, session);
    }
    const s = session;
    const run = s.lock.then(() => fn(s));
    s.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** Kafka's ShareRequestMetadata.nextEpoch for the epochs we move on from (never the final one). */
function nextEpoch(epoch: number): number {
  return epoch >= MAX_SHARE_SESSION_EPOCH ? 1 : epoch + 1;
}
