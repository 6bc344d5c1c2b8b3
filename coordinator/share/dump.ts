import type { ClusterView } from '../broker-context.js';
import type { ShareGroup } from './share-groups.js';
import type { SharePartitionManager } from './share-partition-manager.js';
import type { ShareSession } from './share-sessions.js';

/**
 * The share coordinator's state as text, for `kipgen dump-log --share`,
 * `broker.dump()` and test failures: groups and members, share sessions,
 * every share partition's in-flight ranges, and transactions with pending acks.
 */
export function formatShareDump(input: {
  nodeId: number;
  now: number;
  cluster: ClusterView;
  groups: readonly ShareGroup[];
  sessions: readonly ShareSession[];
  partitions: ReturnType<SharePartitionManager['describe']>;
}): string {
  const { cluster, now } = input;
  const topicName = (topicId: string): string => cluster.topicById(topicId)?.name ?? topicId;
  const lines: string[] = [`share coordinator, node ${input.nodeId}`];

  lines.push(`share groups (${input.groups.length}):`);
  for (const group of input.groups) {
    lines.push(
      `  ${group.groupId}: ${group.members.size === 0 ? 'Empty' : 'Stable'}, group epoch ${group.groupEpoch}, assignment epoch ${group.assignmentEpoch}`,
    );
    for (const m of group.members.values()) {
      const assignment = m.assignment.map((t) => `${topicName(t.topicId)}[${t.partitions.join(',')}]`).join(' ') || '-';
      lines.push(
        `    member ${m.memberId} epoch ${m.memberEpoch} topics ${m.subscribedTopicNames.join(',')} assigned ${assignment}` +
          ` (last heartbeat ${ago(now, m.lastHeartbeat)})`,
      );
    }
  }

  lines.push(`share sessions (${input.sessions.length}):`);
  for (const s of input.sessions) {
    const partitions = [...s.partitions.values()].map((p) => `${topicName(p.topicId)}-${p.partition}`).join(',') || '-';
    lines.push(`  ${s.groupId}/${s.memberId} connection ${s.connectionId} next epoch ${s.epoch} partitions ${partitions}`);
  }

  lines.push(`share partitions (${input.partitions.partitions.length}):`);
  for (const { key, state } of input.partitions.partitions) {
    lines.push(
      `  ${key.groupId}:${key.topicId}:${key.partition} (${topicName(key.topicId)}-${key.partition}) start ${state.startOffset} end ${state.endOffset}`,
    );
    for (const r of state.ranges) {
      const offsets = r.firstOffset === r.lastOffset ? `${r.firstOffset}` : `${r.firstOffset}-${r.lastOffset}`;
      let line = `    ${offsets} ${r.state} deliveries ${r.deliveryCount}`;
      if (r.memberId !== undefined) line += ` member ${r.memberId}`;
      if (r.lockDeadline !== undefined) line += ` lock ${r.lockDeadline > now ? `${Math.ceil((r.lockDeadline - now) / 1000)}s left` : 'expired'}`;
      if (r.pending !== undefined) line += ` pending ${r.pending.ackType} in producer ${r.pending.producerId} epoch ${r.pending.producerEpoch}`;
      lines.push(line);
    }
  }

  const pending = input.partitions.pendingTransactions;
  lines.push(`transactions with pending acknowledgements (${pending.length}):`);
  for (const t of pending) lines.push(`  producer ${t.producerId} epoch ${t.producerEpoch}: ${t.records} records`);
  return lines.join('\n');
}

function ago(now: number, then: number): string {
  return `${Math.max(0, Math.round((now - then) / 1000))}s ago`;
}
