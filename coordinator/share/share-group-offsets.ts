import type { SharePartitionRef, ShareOffsetResult, ShareOffsetsAnswer } from '../broker-context.js';
import { ErrorCode } from './share-error.js';
import type { ShareParts } from './share-parts.js';
import { sharePartitionKeyString, type SharePartitionKey } from './share-partition.js';

/**
 * DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets
 * (APIs 90-92, KIP-932; the wire answers are coordinator/apis/90-92-*.ts), on
 * the share partitions this node leads: their state lives with the data
 * partition's leader (DESIGN §6), so a partition led elsewhere is answered
 * NOT_LEADER_OR_FOLLOWER (deviation: Kafka's group coordinator asks the share
 * coordinator that owns it, wherever it is).
 *
 * A share group exists while it has members or share-partition state:
 * membership is not kept across restarts here, the state is.
 */

const NONE = { errorCode: ErrorCode.NONE, errorMessage: null };

/**
 * A share partition holding acknowledgements of an open KIP-1289 transaction is neither altered nor deleted
 * until the transaction ends (retriable): its marker must apply to the state they were staged on. Kafka has
 * no transactional acknowledgements, so no answer of its own here.
 */
const IN_TRANSACTION = {
  errorCode: ErrorCode.CONCURRENT_TRANSACTIONS,
  errorMessage: 'acknowledgements of an open transaction are pending on this share partition',
};

/**
 * Each partition's start offset, and its lag: the high watermark minus the start offset minus the offsets
 * from it on that finished (Kafka: GroupCoordinatorService.computeShareGroupLagAndBuildResponse). A partition
 * never initialized is -1, lag -1. Kafka reads the persisted summary; this reads the live share partition,
 * which differs from it only in records acquired since the last write (neither finished nor counted).
 */
export function describeShareGroupOffsets(rt: ShareParts, groupId: string, refs: readonly SharePartitionRef[] | null): ShareOffsetsAnswer {
  const notCoordinator = checkCoordinator(rt, groupId);
  if (notCoordinator !== null) return notCoordinator;
  const own = rt.partitions.describe().partitions.filter((p) => p.key.groupId === groupId);
  const live = new Map(own.map((p) => [sharePartitionKeyString(p.key), p.state]));
  // Kafka's describeShareGroupAllOffsets: the initialized share partitions of topics that still exist.
  const wanted = refs ?? own.map((p) => ({ topicId: p.key.topicId, partition: p.key.partition })).filter((r) => rt.cluster.topicById(r.topicId) !== undefined);
  const partitions = wanted.map((ref): ShareOffsetResult => {
    const located = rt.partitions.locate(ref);
    const state = live.get(sharePartitionKeyString({ groupId, ...ref }));
    // A partition the topic lacks has no state, as Kafka's share coordinator answers it: no offset, no error.
    if (state === undefined && ('reader' in located || located.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) {
      return { ...ref, ...NONE, startOffset: -1n, lag: -1n };
    }
    if (!('reader' in located) || state === undefined) return { ...ref, ...NONE, ...located, startOffset: -1n, lag: -1n };
    let finished = 0n;
    for (const r of state.ranges) if (r.state === 'ACKNOWLEDGED' || r.state === 'ARCHIVED') finished += r.lastOffset - r.firstOffset + 1n;
    return { ...ref, ...NONE, startOffset: state.startOffset, lag: located.reader.highWatermark() - state.startOffset - finished };
  });
  return { ...NONE, partitions };
}

/**
 * Re-initializes each share partition at its new start offset, nothing in flight, durably (Kafka:
 * GroupMetadataManager.alterShareGroupOffsets, then InitializeShareGroupState). The group must have no
 * members (NON_EMPTY_GROUP); an unknown group is fine, as Kafka creates it. A negative start offset is
 * INVALID_REQUEST (deviation: Kafka's share coordinator would store it and reset the partition on its next
 * fetch; here it is refused where it is named).
 */
export async function alterShareGroupOffsets(
  rt: ShareParts,
  groupId: string,
  requested: readonly (SharePartitionRef & { readonly startOffset: bigint })[],
): Promise<ShareOffsetsAnswer> {
  const refused = checkCoordinator(rt, groupId) ?? checkEmpty(rt, groupId);
  if (refused !== null) return refused;
  const partitions: ShareOffsetResult[] = [];
  const initialize: { key: SharePartitionKey; startOffset: bigint }[] = [];
  for (const ref of requested) {
    const located = rt.partitions.locate(ref);
    const error = !('reader' in located)
      ? located
      : ref.startOffset < 0n
        ? { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `start offset ${ref.startOffset} is negative` }
        : NONE;
    partitions.push({ topicId: ref.topicId, partition: ref.partition, ...error, startOffset: -1n, lag: -1n });
    if (error === NONE) initialize.push({ key: { groupId, topicId: ref.topicId, partition: ref.partition }, startOffset: ref.startOffset });
  }
  const { failure, pending } = await rt.partitions.initializeState(initialize);
  if (failure !== null) return { ...failure, partitions: [] };
  return {
    ...NONE,
    partitions: partitions.map((p) => (pending.some((k) => k.topicId === p.topicId && k.partition === p.partition) ? { ...p, ...IN_TRANSACTION } : p)),
  };
}

/**
 * Removes the group's share-partition state for each topic, so that the next consumer starts per
 * share.auto.offset.reset (Kafka: GroupCoordinatorShard.initiateDeleteShareGroupOffsets, then
 * DeleteShareGroupState). An unknown group is GROUP_ID_NOT_FOUND, one with members NON_EMPTY_GROUP; a topic
 * the group has no state for is UNKNOWN_TOPIC_OR_PARTITION (answered with partition -1).
 */
export async function deleteShareGroupOffsets(rt: ShareParts, groupId: string, topicIds: readonly string[]): Promise<ShareOffsetsAnswer> {
  const refused = checkCoordinator(rt, groupId) ?? checkEmpty(rt, groupId);
  if (refused !== null) return refused;
  const keys = rt.partitions
    .describe()
    .partitions.map((p) => p.key)
    .filter((k) => k.groupId === groupId);
  if (keys.length === 0 && rt.groups.group(groupId) === undefined) {
    return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `share group ${groupId} not found`, partitions: [] };
  }
  const partitions: ShareOffsetResult[] = [];
  const deleted: SharePartitionKey[] = [];
  for (const topicId of topicIds) {
    const ofTopic = keys.filter((k) => k.topicId === topicId);
    if (ofTopic.length === 0) {
      partitions.push({
        topicId,
        partition: -1,
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: 'There is no offset information to delete.',
        startOffset: -1n,
        lag: -1n,
      });
    }
    for (const key of ofTopic) partitions.push({ topicId, partition: key.partition, ...NONE, startOffset: -1n, lag: -1n });
    deleted.push(...ofTopic);
  }
  const { failure, pending } = await rt.partitions.deleteState(deleted);
  if (failure !== null) return { ...failure, partitions: [] };
  return {
    ...NONE,
    partitions: partitions.map((p) => (pending.some((k) => k.topicId === p.topicId && k.partition === p.partition) ? { ...p, ...IN_TRANSACTION } : p)),
  };
}

function checkCoordinator(rt: ShareParts, groupId: string): ShareOffsetsAnswer | null {
  if (rt.isGroupCoordinator(groupId)) return null;
  return { errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: `node ${rt.nodeId} does not coordinate ${groupId}`, partitions: [] };
}

/** Kafka: GroupMetadataManager.throwIfShareGroupIsNotEmpty, ShareGroup.validateDeleteGroup. */
function checkEmpty(rt: ShareParts, groupId: string): ShareOffsetsAnswer | null {
  const members = rt.groups.group(groupId)?.members.size ?? 0;
  if (members === 0) return null;
  return { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: `share group ${groupId} has ${members} member(s)`, partitions: [] };
}
