import type { ShareAcknowledgeRequest } from '../../generated/ShareAcknowledgeRequest.js';
import type { ShareFetchRequest } from '../../generated/ShareFetchRequest.js';
import type { ShareGroupHeartbeatRequest } from '../../generated/ShareGroupHeartbeatRequest.js';
import type { TxnShareAcknowledgeRequest } from '../../generated/TxnShareAcknowledgeRequest.js';
import type {
  BrokerContext,
  RequestContext,
  ShareAcknowledgeAnswer,
  ShareCoordinator,
  ShareFetchAnswer,
  ShareGroupDescription,
  ShareGroupOperations,
  ShareHeartbeatResult,
  ShareOffsetOperations,
  ShareOffsetsAnswer,
  SharePartitionOperations,
  SharePartitionRef,
  TxnShareAcknowledgeResult,
} from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, partitionForKey } from '../cluster.js';
import { systemClock, type Clock } from './clock.js';
import { shareConfig, type ShareConfig } from './share-config.js';
import { formatShareDump } from './dump.js';
import { shareAcknowledge } from './share-acknowledge.js';
import { shareFetch } from './share-fetch.js';
import { alterShareGroupOffsets, deleteShareGroupOffsets, describeShareGroupOffsets } from './share-group-offsets.js';
import { describeShareGroups, shareGroupHeartbeat } from './share-group-requests.js';
import { ShareGroups } from './share-groups.js';
import { SharePartitionManager } from './share-partition-manager.js';
import { closeSession, dropMember, type ShareParts } from './share-parts.js';
import { ShareSessions } from './share-sessions.js';
import type { StateLog } from './state-log.js';
import { txnShareAcknowledge } from './txn-share-acknowledge.js';

export interface ShareCoordinatorOptions {
  /** Overrides of the settings; the broker's ShareGroupSettings come first. */
  config?: Partial<ShareConfig>;
  /** Time for locks and session timeouts (tests pass a ManualClock). */
  clock?: Clock;
  /** The `__share_group_state` log; default the broker's. */
  stateLog?: StateLog;
  /** Run lock expiry and member expiry every housekeepingIntervalMs (default true; tests call housekeeping()). */
  housekeeping?: boolean;
}

/**
 * The share coordinator of one node: share groups (membership and
 * assignment), share sessions, and the share partitions this node leads with
 * their durable state, behind the five APIs of KIP-932 and KIP-1289.
 */
export class KipgenShareCoordinator implements ShareCoordinator, ShareGroupOperations, SharePartitionOperations, ShareOffsetOperations {
  /** Every set of operations is this object's own methods. */
  readonly groups: ShareGroupOperations = this;
  readonly partitions: SharePartitionOperations = this;
  readonly offsets: ShareOffsetOperations = this;
  readonly config: ShareConfig;
  private readonly runtime: ShareParts;
  private readonly partitionState: SharePartitionManager;
  private readonly groupState: ShareGroups;
  private readonly sessions: ShareSessions;
  private readonly clock: Clock;
  private readonly watchedConnections = new Set<number>();
  private readonly wakeOnClose = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly broker: BrokerContext,
    options: ShareCoordinatorOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    const settings = broker.shareGroup;
    this.config = shareConfig({
      recordLockDurationMs: settings.recordLockDurationMs,
      deliveryCountLimit: settings.deliveryCountLimit,
      sessionTimeoutMs: settings.sessionTimeoutMs,
      heartbeatIntervalMs: settings.heartbeatIntervalMs,
      maxRecordLocks: settings.maxRecordLocks,
      ...(settings.isolationLevel !== undefined ? { isolationLevel: settings.isolationLevel } : {}),
      ...(settings.autoOffsetReset !== undefined ? { autoOffsetReset: settings.autoOffsetReset } : {}),
      ...options.config,
    });
    this.partitionState = new SharePartitionManager({
      broker,
      stateLog: options.stateLog ?? broker.shareStateLog,
      clock: this.clock,
      config: this.config,
      groupSettings: (groupId) => broker.shareGroupConfig?.(groupId) ?? {},
    });
    this.groupState = new ShareGroups(
      this.clock,
      { topicByName: (name) => subscribableTopic(broker, name) },
      (groupId) => broker.shareGroupConfig?.(groupId).sessionTimeoutMs ?? this.config.sessionTimeoutMs,
    );
    this.sessions = new ShareSessions(this.config.maxShareSessions);
    this.runtime = {
      nodeId: broker.nodeId,
      cluster: broker.cluster,
      config: this.config,
      clock: this.clock,
      partitions: this.partitionState,
      groups: this.groupState,
      sessions: this.sessions,
      isGroupCoordinator: (groupId) => this.isGroupCoordinator(groupId),
      watchConnection: (ctx) => this.watchConnection(ctx),
      waitForRecords: (refs, ms) => this.waitForRecords(refs, ms),
      heartbeatIntervalOf: (groupId) => broker.shareGroupConfig?.(groupId).heartbeatIntervalMs ?? this.config.heartbeatIntervalMs,
    };
    if (options.housekeeping !== false) {
      this.timer = setInterval(() => void this.housekeeping(), this.config.housekeepingIntervalMs);
      this.timer.unref();
    }
  }

  heartbeat(request: ShareGroupHeartbeatRequest, client: { readonly clientId: string; readonly clientHost: string }): Promise<ShareHeartbeatResult> {
    return shareGroupHeartbeat(this.runtime, request, client);
  }

  describeGroups(groupIds: readonly string[]): ShareGroupDescription[] {
    return describeShareGroups(this.runtime, groupIds);
  }

  async describeOffsets(groupId: string, partitions: readonly SharePartitionRef[] | null): Promise<ShareOffsetsAnswer> {
    await this.partitionState.drain();
    return describeShareGroupOffsets(this.runtime, groupId, partitions);
  }

  alterOffsets(groupId: string, partitions: readonly (SharePartitionRef & { readonly startOffset: bigint })[]): Promise<ShareOffsetsAnswer> {
    return alterShareGroupOffsets(this.runtime, groupId, partitions);
  }

  deleteOffsets(groupId: string, topicIds: readonly string[]): Promise<ShareOffsetsAnswer> {
    return deleteShareGroupOffsets(this.runtime, groupId, topicIds);
  }

  shareFetch<R>(request: ShareFetchRequest, ctx: RequestContext, answer: ShareFetchAnswer<R>): Promise<R> {
    return shareFetch(this.runtime, request, ctx, answer);
  }

  shareAcknowledge<R>(request: ShareAcknowledgeRequest, ctx: RequestContext, answer: ShareAcknowledgeAnswer<R>): Promise<R> {
    return shareAcknowledge(this.runtime, request, ctx, answer);
  }

  txnShareAcknowledge(request: TxnShareAcknowledgeRequest, memberId: string | null): Promise<TxnShareAcknowledgeResult> {
    return txnShareAcknowledge(this.runtime, request, memberId);
  }

  async recover(): Promise<void> {
    await this.partitionState.recover();
  }

  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): Promise<void> {
    return this.partitionState.completeTransaction(producerId, producerEpoch, commit);
  }

  /** Expires record locks and silent members (closing their share sessions here, releasing their records). Runs on a timer; tests call it after moving their clock. */
  async housekeeping(): Promise<void> {
    try {
      await this.partitionState.expireLocks();
      for (const { groupId, memberId } of this.groupState.expireMembers()) {
        this.broker.log(`share group ${groupId}: member ${memberId} timed out after ${this.groupState.sessionTimeoutOf(groupId)} ms`);
        await dropMember(this.runtime, groupId, memberId);
      }
    } catch (error) {
      this.broker.log(`share coordinator housekeeping failed: ${(error as Error).message}`);
    }
  }

  dump(): string {
    return formatShareDump({
      nodeId: this.broker.nodeId,
      now: this.clock.now(),
      cluster: this.broker.cluster,
      groups: this.groupState.allGroups(),
      sessions: this.sessions.all(),
      partitions: this.partitionState.describe(),
    });
  }

  /** The share groups this node coordinates, for ListGroups (Kafka's share group states: Empty, Stable). */
  listGroups(): { groupId: string; state: string }[] {
    return this.groupState
      .allGroups()
      .filter((g) => this.isGroupCoordinator(g.groupId))
      .map((g) => ({ groupId: g.groupId, state: g.members.size > 0 ? 'Stable' : 'Empty' }));
  }

  /** The structured state behind dump(), for tests. */
  describe(): ReturnType<SharePartitionManager['describe']> {
    return this.partitionState.describe();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    for (const wake of this.wakeOnClose) wake();
    await this.partitionState.drain();
  }

  // -------------------------------------------------------------------------

  /** Share groups are coordinated, as consumer groups are, by the leader of the group's `__consumer_offsets` partition. */
  private isGroupCoordinator(groupId: string): boolean {
    const offsets = this.broker.cluster.topicByName(CONSUMER_OFFSETS_TOPIC);
    if (offsets === undefined) return true;
    return this.broker.cluster.leaderOf(CONSUMER_OFFSETS_TOPIC, partitionForKey(groupId, offsets.partitions)) === this.broker.nodeId;
  }

  private watchConnection(ctx: RequestContext): void {
    if (this.watchedConnections.has(ctx.connectionId)) return;
    this.watchedConnections.add(ctx.connectionId);
    ctx.onClose(() => {
      this.watchedConnections.delete(ctx.connectionId);
      for (const session of this.sessions.onConnection(ctx.connectionId)) {
        closeSession(this.runtime, session).catch((error: Error) =>
          this.broker.log(`share coordinator: releasing the records of ${session.memberId} failed: ${error.message}`),
        );
      }
    });
  }

  private waitForRecords(refs: readonly { topicId: string; partition: number }[], ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const unsubscribe: (() => void)[] = [];
      const done = (): void => {
        clearTimeout(timer);
        for (const u of unsubscribe) u();
        this.wakeOnClose.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const ref of refs) {
        const reader = this.broker.partition(ref.topicId, ref.partition);
        if (reader !== undefined) unsubscribe.push(reader.onAppend(done));
      }
      unsubscribe.push(this.partitionState.onAvailable(done));
      this.wakeOnClose.add(done);
    });
  }
}

function subscribableTopic(broker: BrokerContext, name: string): { topicId: string; partitions: number } | undefined {
  const topic = broker.cluster.topicByName(name);
  return topic === undefined || topic.internal ? undefined : { topicId: topic.topicId, partitions: topic.partitions };
}
