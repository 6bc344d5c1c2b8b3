/**
 * KIP-848 consumer groups (ConsumerGroupHeartbeat): the broker assigns.
 *
 * - A member joins with epoch 0 (v1: with the member id it generated; v0:
 *   the broker makes one), heartbeats with its epoch, reports the partitions
 *   it owns when they change, and leaves with epoch −1.
 * - A change of membership or subscriptions bumps the group epoch; the
 *   target assignment is then recomputed by the server-side assignor
 *   (`uniform`: every subscribed partition to the least loaded subscriber,
 *   previous owners kept while under their share — Kafka's uniform assignor
 *   for homogeneous subscriptions; `range` per topic) and its epoch becomes
 *   the group epoch.
 * - Reconciliation, as Kafka's: a member that owns partitions its target no
 *   longer holds is first told to keep only the rest (it revokes, its epoch
 *   stays); once it has, it moves to the target epoch and is given the new
 *   partitions that no other member still owns or was given (those follow in
 *   later heartbeats, once released). A partition is never owned by two.
 * - Stale epochs get FENCED_MEMBER_EPOCH (the previous epoch is accepted while
 *   the member owns only what it was given), unknown members UNKNOWN_MEMBER_ID;
 *   a member silent for consumer.session.timeout.ms is removed.
 *
 * Left out: static members (instance ids are recorded
 * only), rack-aware assignment, the rebalance timeout for revocation, and
 * persistence of the group's membership records (a restarted coordinator
 * starts consumer groups empty; members get UNKNOWN_MEMBER_ID and rejoin;
 * committed offsets are kept).
 */
import { randomBytes } from 'node:crypto';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';

export type Assignment = Map<string, Set<number>>; // topicId → partitions

interface Member {
  memberId: string;
  memberEpoch: number;
  previousEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  /** The SubscribedTopicNames the member last sent. */
  names: string[];
  /** Its SubscribedTopicRegex (KIP-848), or null. */
  regex: string | null;
  /** What it is subscribed to: the names and the topics the regex matches, sorted. */
  subscribed: string[];
  /** What the member last reported owning. */
  owned: Assignment;
  /** What it was last told to own. */
  sent: Assignment;
  sessionTimer: NodeJS.Timeout | null;
}

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  assignor = 'uniform';
  readonly members = new Map<string, Member>();
  target = new Map<string, Assignment>();

  constructor(readonly groupId: string) {}

  get state(): 'Empty' | 'Stable' | 'Reconciling' {
    if (this.members.size === 0) return 'Empty';
    for (const m of this.members.values()) {
      if (m.memberEpoch !== this.assignmentEpoch || !sameAssignment(m.sent, this.target.get(m.memberId) ?? new Map())) return 'Reconciling';
    }
    return 'Stable';
  }
}

export interface HeartbeatInput {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  /** null: unchanged; '': no regex any more. */
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: { topicId: string; partitions: number[] }[] | null;
  clientId: string;
  clientHost: string;
  /** v0: the broker makes the member id. */
  brokerMakesMemberId: boolean;
}

export interface HeartbeatOutput {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

export const ASSIGNORS = ['uniform', 'range'];

export class ConsumerGroups {
  private readonly groups = new Map<string, ConsumerGroup>();

  constructor(
    private readonly cluster: Cluster,
    /** consumer.session.timeout.ms and consumer.heartbeat.interval.ms of a group (its config or the broker's). */
    private readonly timing: (groupId: string) => { sessionTimeoutMs: number; heartbeatIntervalMs: number },
    private readonly log: (line: string) => void,
  ) {}

  get(groupId: string): ConsumerGroup | undefined {
    return this.groups.get(groupId);
  }

  all(): ConsumerGroup[] {
    return [...this.groups.values()];
  }

  heartbeat(req: HeartbeatInput): HeartbeatOutput {
    const { heartbeatIntervalMs } = this.timing(req.groupId);
    // Kafka's error answer (ConsumerGroupHeartbeatRequest.getErrorResponse) carries the code and message only: member epoch
    // and heartbeat interval at 0.
    const fail = (errorCode: number, errorMessage: string): HeartbeatOutput => ({
      errorCode,
      errorMessage,
      memberId: null,
      memberEpoch: 0,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (req.serverAssignor !== null && !ASSIGNORS.includes(req.serverAssignor))
      return fail(ErrorCode.UNSUPPORTED_ASSIGNOR, `assignor ${req.serverAssignor} is not one of ${ASSIGNORS.join(', ')}`);
    if (req.subscribedTopicRegex) {
      const problem = regexProblem(req.subscribedTopicRegex);
      if (problem !== null)
        return fail(
          ErrorCode.INVALID_REGULAR_EXPRESSION,
          `SubscribedTopicRegex ${JSON.stringify(req.subscribedTopicRegex)} is not a valid regular expression: ${problem}`,
        );
    }
    let group = this.groups.get(req.groupId);

    if (req.memberEpoch === -1 || req.memberEpoch === -2) {
      const member = group?.members.get(req.memberId);
      if (group === undefined || member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in group ${req.groupId}`);
      this.remove(group, member, 'left');
      // No further heartbeat is due: Kafka's leave answer (GroupMetadataManager.consumerGroupLeave) sets no interval.
      return { errorCode: 0, errorMessage: null, memberId: req.memberId, memberEpoch: req.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
    }

    let member: Member | undefined;
    if (req.memberEpoch === 0) {
      if ((req.subscribedTopicNames === null || req.subscribedTopicNames.length === 0) && !req.subscribedTopicRegex) {
        return fail(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames or SubscribedTopicRegex must be set when joining');
      }
      const memberId = req.brokerMakesMemberId && req.memberId === '' ? randomBytes(16).toString('base64url') : req.memberId;
      if (memberId === '') return fail(ErrorCode.INVALID_REQUEST, 'MemberId must be set (v1: the client generates it)');
      if (group === undefined) this.groups.set(req.groupId, (group = new ConsumerGroup(req.groupId)));
      member = group.members.get(memberId);
      if (member === undefined) {
        member = {
          memberId,
          memberEpoch: 0,
          previousEpoch: 0,
          instanceId: req.instanceId,
          rackId: req.rackId,
          clientId: req.clientId,
          clientHost: req.clientHost,
          rebalanceTimeoutMs: req.rebalanceTimeoutMs,
          names: [...(req.subscribedTopicNames ?? [])].sort(),
          regex: req.subscribedTopicRegex || null,
          subscribed: [],
          owned: new Map(),
          sent: new Map(),
          sessionTimer: null,
        };
        member.subscribed = this.resolve(member);
        group.members.set(memberId, member);
        group.groupEpoch++;
        this.log(`consumer group ${group.groupId}: member ${memberId} joined; group epoch ${group.groupEpoch}`);
      }
    } else {
      member = group?.members.get(req.memberId);
      if (group === undefined || member === undefined) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in group ${req.groupId}`);
      const owned = req.topicPartitions === null ? member.owned : toAssignment(req.topicPartitions);
      const previousOk = req.memberEpoch === member.previousEpoch && isSubset(owned, member.sent);
      if (req.memberEpoch !== member.memberEpoch && !previousOk) {
        return fail(ErrorCode.FENCED_MEMBER_EPOCH, `epoch ${req.memberEpoch} is not member ${req.memberId}'s current epoch ${member.memberEpoch}`);
      }
    }
    group = group!;
    this.touch(group, member);
    if (req.topicPartitions !== null) member.owned = toAssignment(req.topicPartitions);
    if (req.subscribedTopicNames !== null) member.names = [...req.subscribedTopicNames].sort();
    if (req.subscribedTopicRegex !== null) member.regex = req.subscribedTopicRegex || null;
    // Resolved again at every heartbeat, so a topic created since that the regex matches is picked up (Kafka's
    // coordinator refreshes regex subscriptions in the background; GroupMetadataManager.maybeUpdateRegularExpressions).
    const subscribed = this.resolve(member);
    if (!sameList(subscribed, member.subscribed)) {
      member.subscribed = subscribed;
      group.groupEpoch++;
    }
    if (req.serverAssignor !== null && req.serverAssignor !== group.assignor) {
      group.assignor = req.serverAssignor;
      group.groupEpoch++;
    }
    if (req.rebalanceTimeoutMs > 0) member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    if (group.groupEpoch > group.assignmentEpoch) this.assign(group);
    const before = member.sent;
    this.reconcile(group, member);
    return {
      errorCode: 0,
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs,
      assignment: req.memberEpoch === 0 || !sameAssignment(before, member.sent) ? { topicPartitions: fromAssignment(member.sent) } : null,
    };
  }

  /** Why an OffsetCommit with this member and epoch is refused, or NONE; undefined when the group is not a consumer group. */
  validateCommit(groupId: string, memberId: string, memberEpoch: number): number | undefined {
    const group = this.groups.get(groupId);
    if (group === undefined || group.members.size === 0) return undefined;
    const member = group.members.get(memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch !== member.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
    return ErrorCode.NONE;
  }

  /** DeleteGroups: an Empty consumer group may go. */
  delete(groupId: string): number | undefined {
    const group = this.groups.get(groupId);
    if (group === undefined) return undefined;
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    this.groups.delete(groupId);
    return ErrorCode.NONE;
  }

  close(): void {
    for (const g of this.groups.values()) for (const m of g.members.values()) if (m.sessionTimer) clearTimeout(m.sessionTimer);
  }

  // ---------------------------------------------------------------------------

  /** The member's names and the non-internal topics its regex matches as a whole (Kafka: RE2J's Pattern.matches), sorted. */
  private resolve(member: Member): string[] {
    const out = new Set(member.names);
    if (member.regex !== null) {
      const re = new RegExp(`^(?:${member.regex})$`);
      for (const t of this.cluster.topics()) if (!t.internal && re.test(t.name)) out.add(t.name);
    }
    return [...out].sort();
  }

  private touch(group: ConsumerGroup, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    const { sessionTimeoutMs } = this.timing(group.groupId);
    member.sessionTimer = setTimeout(() => {
      if (group.members.get(member.memberId) === member) this.remove(group, member, `expired (no heartbeat for ${sessionTimeoutMs} ms)`);
    }, sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  private remove(group: ConsumerGroup, member: Member, why: string): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    group.members.delete(member.memberId);
    group.groupEpoch++;
    this.log(`consumer group ${group.groupId}: member ${member.memberId} ${why}; group epoch ${group.groupEpoch}`);
  }

  /** Recomputes the target assignment at the group epoch. */
  private assign(group: ConsumerGroup): void {
    const members = [...group.members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
    const target = new Map<string, Assignment>(members.map((m) => [m.memberId, new Map()]));
    const topics = [...new Set(members.flatMap((m) => m.subscribed))].sort();
    const give = (memberId: string, topicId: string, p: number) => {
      const a = target.get(memberId)!;
      if (!a.has(topicId)) a.set(topicId, new Set());
      a.get(topicId)!.add(p);
    };
    const count = (memberId: string) => [...target.get(memberId)!.values()].reduce((n, s) => n + s.size, 0);
    if (group.assignor === 'range') {
      for (const name of topics) {
        const topic = this.cluster.topicByName(name);
        if (topic === undefined) continue;
        const subs = members.filter((m) => m.subscribed.includes(name));
        const per = Math.floor(topic.partitions / subs.length);
        const extra = topic.partitions % subs.length;
        let p = 0;
        subs.forEach((m, i) => {
          for (let k = 0; k < per + (i < extra ? 1 : 0); k++) give(m.memberId, topic.topicId, p++);
        });
      }
    } else {
      const all: { topicId: string; p: number; subs: Member[] }[] = [];
      for (const name of topics) {
        const topic = this.cluster.topicByName(name);
        if (topic === undefined) continue;
        const subs = members.filter((m) => m.subscribed.includes(name));
        for (let p = 0; p < topic.partitions; p++) all.push({ topicId: topic.topicId, p, subs });
      }
      const quota = (subs: Member[]) => Math.ceil(all.filter((x) => x.subs === subs || sameMembers(x.subs, subs)).length / subs.length);
      const left: typeof all = [];
      // Stickiness: a partition stays with its previous target owner while that owner is under its share.
      for (const x of all) {
        const previous = x.subs.find((m) => group.target.get(m.memberId)?.get(x.topicId)?.has(x.p));
        if (previous !== undefined && count(previous.memberId) < quota(x.subs)) give(previous.memberId, x.topicId, x.p);
        else left.push(x);
      }
      for (const x of left) {
        const least = x.subs.reduce((best, m) => (count(m.memberId) < count(best.memberId) ? m : best));
        give(least.memberId, x.topicId, x.p);
      }
    }
    group.target = target;
    group.assignmentEpoch = group.groupEpoch;
    this.log(
      `consumer group ${group.groupId}: target assignment at epoch ${group.assignmentEpoch} (${group.assignor}): ${members.map((m) => `${m.memberId}=${count(m.memberId)}`).join(', ')}`,
    );
  }

  private reconcile(group: ConsumerGroup, member: Member): void {
    const target = group.target.get(member.memberId) ?? new Map<string, Set<number>>();
    // What it still holds that is no longer its own: keep only the rest, at the same epoch, until it reports the revocation.
    const holding = union(member.owned, member.sent);
    const revoke = minus(holding, target);
    if (size(revoke) > 0 && member.memberEpoch !== 0) {
      member.sent = intersect(holding, target);
      return;
    }
    if (member.memberEpoch !== group.assignmentEpoch) {
      member.previousEpoch = member.memberEpoch;
      member.memberEpoch = group.assignmentEpoch;
    }
    // Its target partitions that no other member still owns or was given.
    const taken = new Map<string, Set<number>>();
    for (const other of group.members.values())
      if (other !== member) for (const a of [other.owned, other.sent]) for (const [t, ps] of a) for (const p of ps) addTo(taken, t, p);
    const next = new Map<string, Set<number>>();
    for (const [t, ps] of target) for (const p of ps) if (!taken.get(t)?.has(p)) addTo(next, t, p);
    member.sent = next;
  }
}

function toAssignment(tps: { topicId: string; partitions: number[] }[]): Assignment {
  const out: Assignment = new Map();
  for (const tp of tps) for (const p of tp.partitions) addTo(out, tp.topicId, p);
  return out;
}

export function fromAssignment(a: Assignment): { topicId: string; partitions: number[] }[] {
  return [...a].filter(([, ps]) => ps.size > 0).map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((x, y) => x - y) }));
}

function addTo(a: Assignment, topicId: string, p: number): void {
  if (!a.has(topicId)) a.set(topicId, new Set());
  a.get(topicId)!.add(p);
}
function size(a: Assignment): number {
  let n = 0;
  for (const ps of a.values()) n += ps.size;
  return n;
}
function union(a: Assignment, b: Assignment): Assignment {
  const out: Assignment = new Map();
  for (const x of [a, b]) for (const [t, ps] of x) for (const p of ps) addTo(out, t, p);
  return out;
}
function minus(a: Assignment, b: Assignment): Assignment {
  const out: Assignment = new Map();
  for (const [t, ps] of a) for (const p of ps) if (!b.get(t)?.has(p)) addTo(out, t, p);
  return out;
}
function intersect(a: Assignment, b: Assignment): Assignment {
  const out: Assignment = new Map();
  for (const [t, ps] of a) for (const p of ps) if (b.get(t)?.has(p)) addTo(out, t, p);
  return out;
}
function isSubset(a: Assignment, b: Assignment): boolean {
  return size(minus(a, b)) === 0;
}
function sameAssignment(a: Assignment, b: Assignment): boolean {
  return size(a) === size(b) && isSubset(a, b);
}
function sameList(a: string[], b: string[]): boolean {
  const x = [...a].sort();
  return x.length === b.length && x.every((v, i) => v === b[i]);
}
function sameMembers(a: Member[], b: Member[]): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i]);
}

/**
 * Why a SubscribedTopicRegex does not compile, or null. Kafka compiles it with
 * RE2J; JavaScript's syntax is a superset for the patterns RE2J takes
 * (deviation: JS also takes lookaround and backreferences, RE2J refuses them).
 */
function regexProblem(regex: string): string | null {
  try {
    new RegExp(regex);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
