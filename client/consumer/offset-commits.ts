/**
 * OffsetCommit and OffsetFetch to the group coordinator (Kafka's
 * ConsumerCoordinator.sendOffsetCommitRequest / OffsetCommitResponseHandler
 * and fetchCommittedOffsets / OffsetFetchResponseHandler). A commit carries
 * the member's generation (classic) or epoch (KIP-848), so that the
 * coordinator refuses one from a member it has moved on from.
 *
 * Versions: OffsetCommit up to v9 and OffsetFetch v8-v9, which name topics
 * (v10 names them by id only; nothing here needs it).
 */
import { OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse } from '../../generated/index.js';
import { CoordinatorType, groupBy, type ClusterClient } from '../cluster.js';
import { CommitFailedError, errorFromCode, Errors, KafkaError } from '../errors.js';
import { COORDINATOR_BUSY_CODES, COORDINATOR_MOVED_CODES } from '../transaction-protocol.js';
import type { ConsumerGroupMetadata } from '../transactions/offsets.js';
import { topicPartitionKey, type TopicPartition } from './topic-partition.js';

/** Kafka's OffsetAndMetadata. */
export interface OffsetAndMetadata {
  offset: bigint;
  metadata?: string | null;
  leaderEpoch?: number | null;
}

export interface PartitionOffset extends OffsetAndMetadata {
  topic: string;
  partition: number;
}

/** The codes that mean this member's generation is over: its commit is refused (Kafka's CommitFailedException). */
const GENERATION_OVER_CODES: ReadonlySet<number> = new Set([
  Errors.UNKNOWN_MEMBER_ID,
  Errors.ILLEGAL_GENERATION,
  Errors.FENCED_INSTANCE_ID,
  Errors.STALE_MEMBER_EPOCH,
]);

/** A code the coordinator layer acts on (moved, busy), picked out of the per-partition answers. */
function coordinatorCode(codes: Iterable<number>): number {
  for (const code of codes) if (COORDINATOR_MOVED_CODES.has(code) || COORDINATOR_BUSY_CODES.has(code)) return code;
  return Errors.NONE;
}

export async function commitOffsets(
  cluster: ClusterClient,
  group: Required<ConsumerGroupMetadata>,
  offsets: readonly PartitionOffset[],
  deadline: number,
): Promise<void> {
  if (offsets.length === 0) return;
  const { response } = await cluster.coordinatorRequest(
    `OffsetCommit (group ${group.groupId})`,
    CoordinatorType.GROUP,
    group.groupId,
    OffsetCommitRequest,
    OffsetCommitResponse,
    () =>
      OffsetCommitRequest.create({
        groupId: group.groupId,
        generationIdOrMemberEpoch: group.generationId,
        memberId: group.memberId,
        groupInstanceId: group.groupInstanceId,
        topics: [...groupBy(offsets, (o) => o.topic)].map(([name, list]) => ({
          name,
          partitions: list.map((o) => ({
            partitionIndex: o.partition,
            committedOffset: o.offset,
            committedLeaderEpoch: o.leaderEpoch ?? -1,
            committedMetadata: o.metadata ?? '',
          })),
        })),
      }),
    (r) => coordinatorCode(r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))),
    { deadline, max: 9 },
  );
  for (const topic of response.topics) {
    for (const part of topic.partitions) {
      const code = part.errorCode;
      if (code === Errors.NONE) continue;
      const where = `OffsetCommit ${topic.name}-${part.partitionIndex} (group ${group.groupId}, generation ${group.generationId})`;
      if (GENERATION_OVER_CODES.has(code) || code === Errors.REBALANCE_IN_PROGRESS) {
        throw new CommitFailedError(
          `${where}: ${errorFromCode(code, where).message} — the group has rebalanced since these records were polled; they may be consumed again by the partition's new owner`,
          code,
        );
      }
      throw errorFromCode(code, where);
    }
  }
}

/** The committed offsets of `partitions` (absent: none committed), waiting out unstable offsets (require_stable, KIP-447). */
export async function fetchCommittedOffsets(
  cluster: ClusterClient,
  groupId: string,
  partitions: readonly TopicPartition[],
  deadline: number,
): Promise<Map<string, OffsetAndMetadata>> {
  const out = new Map<string, OffsetAndMetadata>();
  if (partitions.length === 0) return out;
  const { response } = await cluster.coordinatorRequest(
    `OffsetFetch (group ${groupId})`,
    CoordinatorType.GROUP,
    groupId,
    OffsetFetchRequest,
    OffsetFetchResponse,
    () =>
      OffsetFetchRequest.create({
        requireStable: true,
        groups: [
          {
            groupId,
            memberId: null,
            memberEpoch: -1,
            topics: [...groupBy(partitions, (p) => p.topic)].map(([name, list]) => ({ name, partitionIndexes: list.map((p) => p.partition) })),
          },
        ],
      }),
    (r) => {
      const group = r.groups[0];
      if (!group) return Errors.NONE;
      const codes = [group.errorCode, ...group.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))];
      const code = coordinatorCode(codes);
      if (code !== Errors.NONE) return code;
      // A transaction holds offsets of these partitions: Kafka's consumer retries until it ends.
      if (codes.includes(Errors.UNSTABLE_OFFSET_COMMIT)) throw errorFromCode(Errors.UNSTABLE_OFFSET_COMMIT, `OffsetFetch (group ${groupId})`);
      return Errors.NONE;
    },
    { deadline, min: 8, max: 9 },
  );
  const group = response.groups[0];
  if (!group) throw new KafkaError(`OffsetFetch (group ${groupId}) answered without the group`);
  if (group.errorCode !== Errors.NONE) throw errorFromCode(group.errorCode, `OffsetFetch (group ${groupId})`);
  for (const topic of group.topics) {
    for (const part of topic.partitions) {
      const key = topicPartitionKey({ topic: topic.name, partition: part.partitionIndex });
      if (part.errorCode !== Errors.NONE) throw errorFromCode(part.errorCode, `OffsetFetch ${key} (group ${groupId})`);
      if (part.committedOffset < 0n) continue;
      out.set(key, {
        offset: part.committedOffset,
        metadata: part.metadata,
        leaderEpoch: part.committedLeaderEpoch >= 0 ? part.committedLeaderEpoch : null,
      });
    }
  }
  return out;
}
