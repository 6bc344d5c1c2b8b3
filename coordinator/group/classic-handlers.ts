/**
 * ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69) for KIP-848
 * consumer groups are here too: the listing APIs cover both kinds.
 *
 * The classic group APIs — JoinGroup (11), Heartbeat (12), LeaveGroup (13),
 * SyncGroup (14), OffsetCommit (8) — and the group listing APIs ListGroups
 * (16), DescribeGroups (15), DeleteGroups (42), served by the node leading the
 * group's `__consumer_offsets` partition (NOT_COORDINATOR elsewhere).
 */
import {
  ConsumerGroupDescribeResponse,
  ConsumerGroupHeartbeatResponse,
  DeleteGroupsResponse,
  DescribeGroupsResponse,
  HeartbeatResponse,
  JoinGroupResponse,
  LeaveGroupResponse,
  ListGroupsResponse,
  OffsetCommitResponse,
  SyncGroupResponse,
} from '../../generated/index.js';
import type { Handler, ShareCoordinator } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeOf } from '../errors.js';
import type { ClassicGroups } from './classic-groups.js';
import { fromAssignment, type Assignment, type ConsumerGroups } from './consumer-groups.js';
import type { OffsetStore, OffsetToCommit } from './offset-store.js';

/** offset.metadata.max.bytes (Kafka: 4096). */
const OFFSET_METADATA_MAX_BYTES = 4096;
const NO_OPERATIONS = -2147483648;

export function classicGroupHandlers(
  cluster: Cluster,
  store: OffsetStore,
  groups: ClassicGroups,
  consumerGroups: ConsumerGroups,
  share: () => ShareCoordinator | null,
  log: (line: string) => void,
): Map<number, Handler> {
  const handlers = new Map<number, Handler>();
  /** NONE, or why this node cannot serve the group. */
  const groupError = (groupId: string): number => (groupId === '' ? ErrorCode.INVALID_GROUP_ID : store.isCoordinatorFor(groupId) ? ErrorCode.NONE : ErrorCode.NOT_COORDINATOR);

  handlers.set(11, async (req, ctx) => {
    const v = ctx.apiVersion;
    const respond = (r: { errorCode: number; generationId: number; protocolType: string | null; protocolName: string | null; leader: string; memberId: string; members: { memberId: string; groupInstanceId: string | null; metadata: Uint8Array }[] }) =>
      JoinGroupResponse.create({
        errorCode: r.errorCode,
        generationId: r.generationId,
        protocolType: r.protocolType,
        // Not nullable before v7.
        protocolName: v >= 7 ? r.protocolName : (r.protocolName ?? ''),
        leader: r.leader,
        skipAssignment: false,
        memberId: r.memberId,
        members: r.members,
      });
    const error = groupError(req.groupId);
    if (error !== ErrorCode.NONE) return respond({ errorCode: error, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: req.memberId, members: [] });
    const result = await groups.join({
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: v >= 5 ? req.groupInstanceId : null,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.clientHost ?? ''}`, // Kafka's form: a slash, then the address
      sessionTimeoutMs: req.sessionTimeoutMs,
      // v0 has no rebalance timeout: Kafka uses the session timeout.
      rebalanceTimeoutMs: v >= 1 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols,
      requireKnownMemberId: v >= 4,
    });
    return respond(result);
  });

  handlers.set(14, async (req, ctx) => {
    const v = ctx.apiVersion;
    const error = groupError(req.groupId);
    const result =
      error !== ErrorCode.NONE
        ? { errorCode: error, protocolType: null, protocolName: null, assignment: new Uint8Array(0) }
        : await groups.sync(req.groupId, req.memberId, req.generationId, v >= 5 ? req.protocolType : null, v >= 5 ? req.protocolName : null, req.assignments);
    return SyncGroupResponse.create(result);
  });

  handlers.set(12, async (req) => {
    const error = groupError(req.groupId);
    return HeartbeatResponse.create({ errorCode: error !== ErrorCode.NONE ? error : groups.heartbeat(req.groupId, req.memberId, req.generationId) });
  });

  handlers.set(13, async (req, ctx) => {
    const v = ctx.apiVersion;
    const error = groupError(req.groupId);
    if (v < 3) {
      return LeaveGroupResponse.create({ errorCode: error !== ErrorCode.NONE ? error : groups.leave(req.groupId, req.memberId, null, null) });
    }
    if (error !== ErrorCode.NONE) return LeaveGroupResponse.create({ errorCode: error, members: [] });
    const members = (req.members as { memberId: string; groupInstanceId: string | null; reason?: string | null }[]).map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      errorCode: groups.leave(req.groupId, m.memberId, m.groupInstanceId, m.reason ?? null),
    }));
    return LeaveGroupResponse.create({ errorCode: ErrorCode.NONE, members });
  });

  handlers.set(8, async (req, ctx) => {
    const v = ctx.apiVersion;
    const byId = v >= 10;
    const respond = (code: (topicIndex: number, partition: any) => number) =>
      OffsetCommitResponse.create({
        topics: (req.topics as any[]).map((t, i) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p: any) => ({ partitionIndex: p.partitionIndex, errorCode: code(i, p) })),
        })),
      });
    let error = groupError(req.groupId);
    if (error === ErrorCode.NONE) error = consumerGroups.validateCommit(req.groupId, req.memberId, req.generationIdOrMemberEpoch) ?? groups.validateCommit(req.groupId, req.memberId, req.generationIdOrMemberEpoch);
    if (error !== ErrorCode.NONE) return respond(() => error);
    const names = (req.topics as any[]).map((t) => (byId ? cluster.topicById(t.topicId)?.name : cluster.topicByName(t.name)?.name));
    const offsets: OffsetToCommit[] = [];
    const partitionError = (i: number, p: any): number => {
      const topic = names[i] === undefined ? undefined : cluster.topicByName(names[i]!);
      if (topic === undefined) return byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      if (p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata) > OFFSET_METADATA_MAX_BYTES) return ErrorCode.OFFSET_METADATA_TOO_LARGE;
      return ErrorCode.NONE;
    };
    (req.topics as any[]).forEach((t, i) => {
      for (const p of t.partitions) {
        if (partitionError(i, p) !== ErrorCode.NONE) continue;
        offsets.push({ topic: names[i]!, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata });
      }
    });
    let writeError: number = ErrorCode.NONE;
    if (offsets.length > 0) {
      try {
        await store.commit(req.groupId, offsets);
        // A commit makes an Empty classic group of a group id no group has yet, as Kafka's OffsetMetadataManager
        // does for simple commits (getOrMaybeCreateGroup); a KIP-848 consumer group stays one, even once empty.
        if (consumerGroups.get(req.groupId) === undefined) groups.ensure(req.groupId);
      } catch (caught) {
        if (!(caught instanceof BrokerError)) log(`OffsetCommit for group ${req.groupId} failed: ${(caught as Error).stack}`);
        writeError = errorCodeOf(caught);
      }
    }
    return respond((i, p) => partitionError(i, p) || writeError);
  });

  handlers.set(16, async (req, ctx) => {
    const v = ctx.apiVersion;
    const states: string[] = v >= 4 ? req.statesFilter : [];
    const types: string[] = v >= 5 ? req.typesFilter : [];
    const listed: { groupId: string; protocolType: string; groupState: string; groupType: string }[] = [];
    const seen = new Set<string>();
    for (const g of consumerGroups.all()) {
      if (!store.isCoordinatorFor(g.groupId) || (g.members.size === 0 && groups.get(g.groupId) !== undefined)) continue;
      seen.add(g.groupId);
      listed.push({ groupId: g.groupId, protocolType: 'consumer', groupState: g.state, groupType: 'consumer' });
    }
    for (const g of groups.all()) {
      if (!store.isCoordinatorFor(g.groupId) || seen.has(g.groupId)) continue;
      seen.add(g.groupId);
      listed.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
    }
    // Groups known only by their committed offsets are Empty classic groups, as in Kafka.
    for (const groupId of store.groupIds()) {
      if (seen.has(groupId)) continue;
      seen.add(groupId);
      listed.push({ groupId, protocolType: '', groupState: 'Empty', groupType: 'classic' });
    }
    for (const g of share()?.listGroups?.() ?? []) {
      if (seen.has(g.groupId)) continue;
      listed.push({ groupId: g.groupId, protocolType: 'share', groupState: g.state, groupType: 'share' });
    }
    // Kafka compares the filters case-insensitively.
    const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());
    const groupsOut = listed.filter((g) => (states.length === 0 || lower(states).includes(g.groupState.toLowerCase())) && (types.length === 0 || lower(types).includes(g.groupType)));
    return ListGroupsResponse.create({ errorCode: ErrorCode.NONE, groups: groupsOut });
  });

  handlers.set(15, async (req, ctx) => {
    const v = ctx.apiVersion;
    const shareGroups = share()?.listGroups?.() ?? [];
    const described = (req.groups as string[]).map((groupId) => {
      const base = { groupId, groupState: '', protocolType: '', protocolData: '', members: [] as any[], authorizedOperations: NO_OPERATIONS, errorMessage: null as string | null };
      const error = groupError(groupId);
      if (error !== ErrorCode.NONE) return { ...base, errorCode: error };
      const g = groups.get(groupId);
      if (consumerGroups.get(groupId)?.members.size) {
        return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: v >= 6 ? `${groupId} is a consumer group (KIP-848): describe it with ConsumerGroupDescribe` : null };
      }
      if (g === undefined) {
        if (shareGroups.some((s) => s.groupId === groupId)) {
          return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: v >= 6 ? `${groupId} is a share group: describe it with ShareGroupDescribe` : null };
        }
        if (store.hasOffsets(groupId)) return { ...base, errorCode: ErrorCode.NONE, groupState: 'Empty' };
        // Kafka: an unknown group is Dead with no error before v6, GROUP_ID_NOT_FOUND from v6.
        return v >= 6 ? { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupState: 'Dead', errorMessage: `Group ${groupId} not found.` } : { ...base, errorCode: ErrorCode.NONE, groupState: 'Dead' };
      }
      return {
        ...base,
        errorCode: ErrorCode.NONE,
        groupState: g.state,
        protocolType: g.protocolType ?? '',
        protocolData: g.state === 'Stable' || g.state === 'CompletingRebalance' ? (g.protocol ?? '') : '',
        members: g.describeMembers().map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
      };
    });
    return DescribeGroupsResponse.create({ groups: described });
  });

  handlers.set(42, async (req) => {
    const shareGroups = share()?.listGroups?.() ?? [];
    const results = [];
    for (const groupId of req.groupsNames as string[]) {
      let errorCode = groupError(groupId);
      let errorMessage: string | null = null;
      if (errorCode === ErrorCode.NONE) {
        const shareGroup = shareGroups.find((s) => s.groupId === groupId);
        if (shareGroup !== undefined && groups.get(groupId) === undefined && !store.hasOffsets(groupId)) {
          // Deviation: kipgen does not delete share groups (their share-partition state stays); a live one is NON_EMPTY_GROUP as in Kafka.
          errorCode = shareGroup.state === 'Empty' ? ErrorCode.INVALID_REQUEST : ErrorCode.NON_EMPTY_GROUP;
          errorMessage = shareGroup.state === 'Empty' ? `${groupId} is a share group; kipgen does not delete share groups` : `share group ${groupId} has members`;
        } else if (consumerGroups.get(groupId)?.members.size) {
          errorCode = ErrorCode.NON_EMPTY_GROUP;
        } else {
          // An Empty consumer group goes even when it has no offsets (and so no classic side): Kafka deletes it.
          const wasConsumerGroup = consumerGroups.delete(groupId) === ErrorCode.NONE;
          try {
            errorCode = await groups.delete(groupId);
            if (wasConsumerGroup && errorCode === ErrorCode.GROUP_ID_NOT_FOUND) errorCode = ErrorCode.NONE;
          } catch (caught) {
            errorCode = errorCodeOf(caught);
            errorMessage = (caught as Error).message;
          }
        }
      }
      results.push({ groupId, errorCode, errorMessage });
    }
    return DeleteGroupsResponse.create({ results });
  });

  handlers.set(68, async (req, ctx) => {
    const error = req.groupId === '' ? ErrorCode.INVALID_REQUEST : groupError(req.groupId);
    if (error !== ErrorCode.NONE) return ConsumerGroupHeartbeatResponse.create({ errorCode: error, errorMessage: req.groupId === '' ? 'GroupId can not be empty' : null, memberId: null, memberEpoch: -1 });
    if ((groups.get(req.groupId)?.members.size ?? 0) > 0) {
      return ConsumerGroupHeartbeatResponse.create({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `${req.groupId} is a classic group with members; kipgen does not convert groups between protocols`, memberId: null, memberEpoch: -1 });
    }
    const out = consumerGroups.heartbeat({
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      instanceId: req.instanceId,
      rackId: req.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: req.subscribedTopicNames,
      subscribedTopicRegex: req.subscribedTopicRegex ?? null,
      serverAssignor: req.serverAssignor,
      topicPartitions: req.topicPartitions,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.clientHost ?? ''}`, // Kafka's form: a slash, then the address
      brokerMakesMemberId: ctx.apiVersion === 0,
    });
    return ConsumerGroupHeartbeatResponse.create(out);
  });

  handlers.set(69, async (req) => {
    const named = (a: Assignment) => ({
      topicPartitions: fromAssignment(a).map((tp) => ({ topicId: tp.topicId, topicName: cluster.topicById(tp.topicId)?.name ?? '', partitions: tp.partitions })),
    });
    const described = (req.groupIds as string[]).map((groupId) => {
      // An unknown group's epochs are 0, the defaults Kafka leaves in its DescribedGroup error entry.
      const base = { groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] as any[], authorizedOperations: NO_OPERATIONS };
      const error = groupError(groupId);
      if (error !== ErrorCode.NONE) return { ...base, errorCode: error, errorMessage: null };
      const g = consumerGroups.get(groupId);
      if (g === undefined) return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.` };
      return {
        ...base,
        errorCode: 0,
        errorMessage: null,
        groupState: g.state,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: g.assignor,
        members: [...g.members.values()].map((m) => ({
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: m.names,
          // Without a regex: an empty string, as Kafka's ConsumerGroupMember stores and describes it.
          subscribedTopicRegex: m.regex ?? '',
          assignment: named(m.sent),
          targetAssignment: named(g.target.get(m.memberId) ?? new Map()),
          memberType: 1,
        })),
      };
    });
    return ConsumerGroupDescribeResponse.create({ groups: described });
  });

  return handlers;
}
