/**
 * One classic group and its members, as Kafka's ClassicGroup and
 * ClassicGroupMember (group-coordinator module) hold them; the protocol that
 * moves them between states is ClassicGroups (classic-groups.ts).
 */
export type ClassicState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export interface GroupTimings {
  /** group.initial.rebalance.delay.ms (Kafka: 3000). */
  initialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms (Kafka: 6000). */
  minSessionTimeoutMs: number;
  /** group.max.session.timeout.ms (Kafka: 1800000). */
  maxSessionTimeoutMs: number;
}

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Uint8Array }[];
  /** v4+: a member without an id first gets MEMBER_ID_REQUIRED. */
  requireKnownMemberId: boolean;
}

export interface JoinResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[];
}

export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Uint8Array;
}

export interface Member {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Uint8Array }[];
  assignment: Uint8Array;
  joinWaiter: ((result: JoinResult) => void) | null;
  syncWaiter: ((result: SyncResult) => void) | null;
  sessionTimer: NodeJS.Timeout | null;
}

/** An empty metadata or assignment. */
export const EMPTY = new Uint8Array(0);

export class ClassicGroup {
  state: ClassicState = 'Empty';
  generation = 0;
  protocolType: string | null = null;
  protocol: string | null = null;
  leader: string | null = null;
  readonly members = new Map<string, Member>();
  /** Ids handed out with MEMBER_ID_REQUIRED, not yet joined. */
  readonly pending = new Set<string>();
  rebalanceTimer: NodeJS.Timeout | null = null;
  /** A rebalance of an Empty group waits group.initial.rebalance.delay.ms even when every member has joined. */
  initialDelay = false;

  constructor(readonly groupId: string) {}

  /** The metadata a member gave for the group's protocol. */
  metadataOf(member: Member): Uint8Array {
    return member.protocols.find((p) => p.name === this.protocol)?.metadata ?? EMPTY;
  }

  describeMembers(): {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    metadata: Uint8Array;
    assignment: Uint8Array;
  }[] {
    return [...this.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      metadata: this.metadataOf(m),
      assignment: this.state === 'Stable' ? m.assignment : EMPTY,
    }));
  }
}

export function sameProtocols(a: { name: string; metadata: Uint8Array }[], b: { name: string; metadata: Uint8Array }[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && Buffer.from(p.metadata).equals(Buffer.from(b[i]!.metadata)));
}

/** Kafka's vote: among the protocols every member supports, each member votes for its most preferred one; the most votes win. */
export function selectProtocol(members: Member[]): string {
  const common = members[0]!.protocols.map((p) => p.name).filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
  const votes = new Map<string, number>();
  for (const m of members) {
    const choice = m.protocols.find((p) => common.includes(p.name))!.name;
    votes.set(choice, (votes.get(choice) ?? 0) + 1);
  }
  let best = common[0]!;
  for (const name of common) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name;
  return best;
}
