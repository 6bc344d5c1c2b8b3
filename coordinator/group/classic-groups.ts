/**
 * Classic consumer groups (the JoinGroup/SyncGroup protocol), as Kafka's
 * group coordinator runs them (ClassicGroup in the group-coordinator module):
 *
 *   Empty → PreparingRebalance → CompletingRebalance → Stable → (join, leave,
 *   expiry) → PreparingRebalance … ; a group whose last member leaves is Empty.
 *
 * - A first JoinGroup with no member id (v4+) gets MEMBER_ID_REQUIRED and an
 *   id to rejoin with (KIP-394). The join of a rebalance completes once every
 *   member has rejoined, or when the rebalance timeout (the members' longest)
 *   runs out, which drops those that did not; a rebalance of an Empty group
 *   first waits group.initial.rebalance.delay.ms for more members.
 * - The leader (the first member, kept while it stays) gets every member's
 *   metadata and hands the assignments in with SyncGroup; the broker relays
 *   them and never looks inside (range, cooperative-sticky … are the
 *   clients' business). Once the leader has synced the group is Stable and
 *   its metadata is written to `__consumer_offsets` (GroupMetadata record).
 * - A member silent for its session timeout is removed, as is one that
 *   leaves; either starts a rebalance.
 * - Stale generations get ILLEGAL_GENERATION, unknown members
 *   UNKNOWN_MEMBER_ID, and heartbeats during a rebalance REBALANCE_IN_PROGRESS.
 *
 * Left out on purpose: static membership (group.instance.id is recorded and
 * reported, but a static member rejoining is handled as a dynamic one),
 * group.max.size, and restoring members after a restart: a restarted
 * coordinator loads each group's generation and protocol from its last
 * GroupMetadata record with no members, so members get UNKNOWN_MEMBER_ID on
 * their next heartbeat and rejoin (Kafka keeps them).
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../errors.js';
import type { OffsetStore } from './offset-store.js';
import {
  ClassicGroup,
  EMPTY,
  sameProtocols,
  selectProtocol,
  type GroupTimings,
  type JoinRequest,
  type JoinResult,
  type Member,
  type SyncResult,
} from './classic-group.js';

export { ClassicGroup, type ClassicState, type GroupTimings, type JoinRequest, type JoinResult, type SyncResult } from './classic-group.js';

export class ClassicGroups {
  private readonly groups = new Map<string, ClassicGroup>();

  constructor(
    private readonly offsets: OffsetStore,
    private readonly timings: GroupTimings,
    private readonly log: (line: string) => void,
  ) {}

  /** Loads each group's generation and protocol from its last GroupMetadata record (see the module comment). */
  recover(): void {
    for (const groupId of this.offsets.groupIds()) {
      const meta = this.offsets.groupMetadata(groupId);
      if (meta === undefined) continue;
      const group = new ClassicGroup(groupId);
      group.generation = meta.generation;
      group.protocolType = meta.protocolType;
      this.groups.set(groupId, group);
    }
  }

  get(groupId: string): ClassicGroup | undefined {
    return this.groups.get(groupId);
  }

  all(): ClassicGroup[] {
    return [...this.groups.values()];
  }

  private getOrCreate(groupId: string): ClassicGroup {
    let group = this.groups.get(groupId);
    if (group === undefined) this.groups.set(groupId, (group = new ClassicGroup(groupId)));
    return group;
  }

  join(req: JoinRequest): Promise<JoinResult> {
    const fail = (errorCode: number, memberId = req.memberId): Promise<JoinResult> =>
      Promise.resolve({ errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [] });
    if (req.sessionTimeoutMs < this.timings.minSessionTimeoutMs || req.sessionTimeoutMs > this.timings.maxSessionTimeoutMs)
      return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    if (req.protocolType === '' || req.protocols.length === 0) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const existing = this.groups.get(req.groupId);
    if (existing !== undefined && existing.members.size > 0) {
      const compatible =
        existing.protocolType === req.protocolType &&
        req.protocols.some((p) => [...existing.members.values()].every((m) => m.protocols.some((q) => q.name === p.name)));
      if (!compatible && !(existing.members.size === 1 && existing.members.has(req.memberId))) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    const group = this.getOrCreate(req.groupId);
    if (group.state === 'Dead') return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);

    let member: Member | undefined;
    if (req.memberId === '') {
      const memberId = `${req.clientId}-${randomUUID()}`;
      if (req.requireKnownMemberId) {
        group.pending.add(memberId);
        return fail(ErrorCode.MEMBER_ID_REQUIRED, memberId);
      }
      member = this.addMember(group, memberId, req);
    } else {
      member = group.members.get(req.memberId);
      if (member === undefined) {
        if (!group.pending.delete(req.memberId)) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
        member = this.addMember(group, req.memberId, req);
      } else {
        const same = member.protocolType === req.protocolType && sameProtocols(member.protocols, req.protocols);
        member.protocols = req.protocols;
        member.sessionTimeoutMs = req.sessionTimeoutMs;
        member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
        // A follower rejoining unchanged while nothing moves gets the current generation back at once (as Kafka).
        if (same && group.state === 'Stable' && group.leader !== member.memberId) {
          this.touch(group, member);
          return Promise.resolve(this.joinResult(group, member));
        }
        if (same && group.state === 'CompletingRebalance') {
          this.touch(group, member);
          return Promise.resolve(this.joinResult(group, member));
        }
      }
    }
    const joined = new Promise<JoinResult>((resolve) => {
      // An earlier join of the same member still waiting is superseded (Kafka answers it UNKNOWN_MEMBER_ID).
      member!.joinWaiter?.({
        errorCode: ErrorCode.UNKNOWN_MEMBER_ID,
        generationId: -1,
        protocolType: null,
        protocolName: null,
        leader: '',
        memberId: member!.memberId,
        members: [],
      });
      member!.joinWaiter = resolve;
    });
    this.touch(group, member);
    if (group.state !== 'PreparingRebalance') this.prepareRebalance(group, `member ${member.memberId} joined`);
    this.tryCompleteJoin(group);
    return joined;
  }

  sync(
    groupId: string,
    memberId: string,
    generationId: number,
    protocolType: string | null,
    protocolName: string | null,
    assignments: { memberId: string; assignment: Uint8Array }[],
  ): Promise<SyncResult> {
    const group = this.groups.get(groupId);
    const fail = (errorCode: number): Promise<SyncResult> => Promise.resolve({ errorCode, protocolType: null, protocolName: null, assignment: EMPTY });
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (generationId !== group.generation) return fail(ErrorCode.ILLEGAL_GENERATION);
    if ((protocolType !== null && protocolType !== group.protocolType) || (protocolName !== null && protocolName !== group.protocol))
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    this.touch(group, member);
    if (group.state === 'PreparingRebalance') return fail(ErrorCode.REBALANCE_IN_PROGRESS);
    if (group.state === 'Stable')
      return Promise.resolve({ errorCode: 0, protocolType: group.protocolType, protocolName: group.protocol, assignment: member.assignment });
    if (group.state !== 'CompletingRebalance') return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    const synced = new Promise<SyncResult>((resolve) => (member.syncWaiter = resolve));
    if (memberId === group.leader) void this.completeSync(group, assignments);
    return synced;
  }

  heartbeat(groupId: string, memberId: string, generationId: number): number {
    const group = this.groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generation) return ErrorCode.ILLEGAL_GENERATION;
    this.touch(group, member);
    // A member may heartbeat between its join and sync responses: that is not a rebalance for it.
    return group.state === 'PreparingRebalance' ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** LeaveGroup for one member (by member id, or by instance id when the member id is empty). */
  leave(groupId: string, memberId: string, groupInstanceId: string | null, reason: string | null): number {
    const group = this.groups.get(groupId);
    if (group === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    const member =
      memberId !== ''
        ? group.members.get(memberId)
        : [...group.members.values()].find((m) => groupInstanceId !== null && m.groupInstanceId === groupInstanceId);
    if (member === undefined) return group.pending.delete(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMember(group, member, `member ${member.memberId} left${reason ? ` (${reason})` : ''}`);
    return ErrorCode.NONE;
  }

  /**
   * Why an OffsetCommit or TxnOffsetCommit of this member and generation is refused, or NONE. The member check (Kafka's
   * ClassicGroup.validateOffsetCommit): a transactional commit that names no
   * member and no generation (TxnOffsetCommit v0-2, sendOffsetsToTransaction
   * with a bare group id) is taken in any state; one that names them must be
   * of the current generation, so a zombie's is fenced (KIP-447); only a plain
   * commit is refused between JoinGroup and SyncGroup.
   */
  validateCommit(groupId: string, memberId: string, generationId: number, transactional = false): number {
    const group = this.groups.get(groupId);
    if (group === undefined || group.state === 'Empty') {
      // Commits from outside the group (generation -1) are what an Empty or unknown group takes.
      return generationId < 0 ? ErrorCode.NONE : group === undefined || !group.members.has(memberId) ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.NONE;
    }
    if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (transactional && generationId < 0 && memberId === '') return ErrorCode.NONE;
    const member = group.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generation) return ErrorCode.ILLEGAL_GENERATION;
    if (!transactional && group.state === 'CompletingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
    this.touch(group, member);
    return ErrorCode.NONE;
  }

  /** Marks a group committed to without membership (an Empty group in Kafka: it shows in ListGroups). */
  ensure(groupId: string): void {
    this.getOrCreate(groupId);
  }

  /** DeleteGroups: only an Empty group (or one known only by its offsets) may go. */
  async delete(groupId: string): Promise<number> {
    const group = this.groups.get(groupId);
    if (group === undefined && !this.offsets.hasOffsets(groupId) && this.offsets.groupMetadata(groupId) === undefined) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (group !== undefined && group.state !== 'Empty') return ErrorCode.NON_EMPTY_GROUP;
    await this.offsets.deleteGroup(groupId);
    this.groups.delete(groupId);
    return ErrorCode.NONE;
  }

  close(): void {
    for (const group of this.groups.values()) {
      if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
      for (const m of group.members.values()) if (m.sessionTimer) clearTimeout(m.sessionTimer);
    }
  }

  // ---------------------------------------------------------------------------

  private addMember(group: ClassicGroup, memberId: string, req: JoinRequest): Member {
    const member: Member = {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols,
      assignment: EMPTY,
      joinWaiter: null,
      syncWaiter: null,
      sessionTimer: null,
    };
    if (group.members.size === 0) {
      group.protocolType = req.protocolType;
      group.leader = memberId;
    }
    group.members.set(memberId, member);
    return member;
  }

  /** Restarts the member's session timer: it is alive. */
  private touch(group: ClassicGroup, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => {
      member.sessionTimer = null;
      if (group.members.get(member.memberId) === member)
        this.removeMember(group, member, `member ${member.memberId} expired (no heartbeat for ${member.sessionTimeoutMs} ms)`);
    }, member.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  private removeMember(group: ClassicGroup, member: Member, why: string): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = null;
    group.members.delete(member.memberId);
    member.joinWaiter?.({
      errorCode: ErrorCode.UNKNOWN_MEMBER_ID,
      generationId: -1,
      protocolType: null,
      protocolName: null,
      leader: '',
      memberId: member.memberId,
      members: [],
    });
    member.joinWaiter = null;
    member.syncWaiter?.({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, protocolType: null, protocolName: null, assignment: EMPTY });
    member.syncWaiter = null;
    if (group.leader === member.memberId) group.leader = group.members.keys().next().value ?? null;
    switch (group.state) {
      case 'Stable':
      case 'CompletingRebalance':
        this.prepareRebalance(group, why);
        // As Kafka's GroupMetadataManager.prepareRebalance (maybeCompleteJoinElseSchedule): when every remaining
        // member has rejoined — none at all after the last one left — the join completes now, so the group is
        // Empty before the LeaveGroup is answered, not one timer tick later.
        this.tryCompleteJoin(group);
        break;
      case 'PreparingRebalance':
        this.log(`group ${group.groupId}: ${why}`);
        this.tryCompleteJoin(group);
        break;
      default:
        break;
    }
  }

  private prepareRebalance(group: ClassicGroup, why: string): void {
    // Syncs waiting for the leader's assignment will not get one: they rejoin.
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        m.syncWaiter?.({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS, protocolType: null, protocolName: null, assignment: EMPTY });
        m.syncWaiter = null;
      }
    }
    for (const m of group.members.values()) m.assignment = EMPTY;
    const wasEmpty = group.state === 'Empty';
    group.state = 'PreparingRebalance';
    this.log(`group ${group.groupId}: preparing a rebalance of generation ${group.generation} (${why})`);
    const rebalanceTimeout = Math.max(0, ...[...group.members.values()].map((m) => m.rebalanceTimeoutMs));
    const delay = wasEmpty ? Math.min(this.timings.initialRebalanceDelayMs, rebalanceTimeout) : rebalanceTimeout;
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    // An Empty group waits the initial delay for more members, even if all it knows have joined.
    group.initialDelay = wasEmpty && delay > 0;
    group.rebalanceTimer = setTimeout(() => {
      group.rebalanceTimer = null;
      this.completeJoin(group);
    }, delay);
    group.rebalanceTimer.unref();
  }

  private tryCompleteJoin(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance' || group.initialDelay) return;
    if ([...group.members.values()].every((m) => m.joinWaiter !== null)) this.completeJoin(group);
  }

  private completeJoin(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance') return;
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    group.rebalanceTimer = null;
    group.initialDelay = false;
    // Members that did not rejoin within the rebalance timeout are out.
    for (const m of [...group.members.values()]) {
      if (m.joinWaiter === null) {
        if (m.sessionTimer) clearTimeout(m.sessionTimer);
        group.members.delete(m.memberId);
        this.log(`group ${group.groupId}: member ${m.memberId} did not rejoin in time; removed`);
      }
    }
    group.generation++;
    if (group.members.size === 0) {
      group.state = 'Empty';
      group.protocol = null;
      group.leader = null;
      this.log(`group ${group.groupId}: generation ${group.generation} is empty`);
      void this.persist(group);
      return;
    }
    if (group.leader === null || !group.members.has(group.leader)) group.leader = group.members.keys().next().value!;
    group.protocol = selectProtocol([...group.members.values()]);
    group.state = 'CompletingRebalance';
    this.log(`group ${group.groupId}: generation ${group.generation} with ${group.members.size} member(s), protocol ${group.protocol}, leader ${group.leader}`);
    for (const m of group.members.values()) {
      const waiter = m.joinWaiter!;
      m.joinWaiter = null;
      this.touch(group, m);
      waiter(this.joinResult(group, m));
    }
  }

  private joinResult(group: ClassicGroup, member: Member): JoinResult {
    const isLeader = group.leader === member.memberId;
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generation,
      protocolType: group.protocolType,
      protocolName: group.protocol,
      leader: group.leader ?? '',
      memberId: member.memberId,
      members: isLeader
        ? [...group.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: group.metadataOf(m) }))
        : [],
    };
  }

  private async completeSync(group: ClassicGroup, assignments: { memberId: string; assignment: Uint8Array }[]): Promise<void> {
    const generation = group.generation;
    for (const m of group.members.values()) m.assignment = assignments.find((a) => a.memberId === m.memberId)?.assignment ?? EMPTY;
    try {
      await this.persist(group);
    } catch (error) {
      this.log(`group ${group.groupId}: storing generation ${generation} failed: ${(error as Error).message}; rebalancing`);
      if (group.generation === generation && group.state === 'CompletingRebalance') {
        for (const m of group.members.values()) {
          m.syncWaiter?.({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, protocolType: null, protocolName: null, assignment: EMPTY });
          m.syncWaiter = null;
        }
        this.prepareRebalance(group, 'metadata write failed');
      }
      return;
    }
    if (group.generation !== generation || group.state !== 'CompletingRebalance') return;
    group.state = 'Stable';
    for (const m of group.members.values()) {
      m.syncWaiter?.({ errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocol, assignment: m.assignment });
      m.syncWaiter = null;
    }
  }

  private persist(group: ClassicGroup): Promise<void> {
    return this.offsets.writeGroupMetadata(group.groupId, {
      protocolType: group.protocolType ?? '',
      generation: group.generation,
      protocol: group.protocol,
      leader: group.leader,
      currentStateTimestamp: BigInt(Date.now()),
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: group.metadataOf(m),
        assignment: m.assignment,
      })),
    });
  }
}
