import type { ClassicGroups } from './classic-groups.js';
import type { ConsumerGroups } from './consumer-groups.js';
import type { OffsetStore } from './offset-store.js';

/**
 * Whether `groupId` is a classic or consumer group (members, or committed offsets), so not a share group:
 * Kafka keeps one group per id and its share-group operations answer another type GROUP_ID_NOT_FOUND
 * (GroupMetadataManager.getOrMaybeCreateShareGroup, shareGroup).
 */
export function isNonShareGroup(groupId: string, classic: ClassicGroups, consumer: ConsumerGroups, offsets: OffsetStore): boolean {
  const group = classic.get(groupId);
  return (group !== undefined && group.state !== 'Dead') || consumer.get(groupId) !== undefined || offsets.hasOffsets(groupId);
}
