/**
 * The `__consumer_offsets` records, in Kafka's layout, through the generated
 * codecs: OffsetCommitKey/Value (record type 1: a committed offset) and
 * GroupMetadataKey/Value (record type 2: a classic group's generation and
 * members). Values are written at version 3 (OffsetCommitValue: the highest
 * non-flexible one, as Kafka writes when no topic id is stored) and version 3
 * (GroupMetadataValue, as Kafka writes); any valid version is read. A null
 * value is a tombstone: the offset or the group is deleted.
 */
import { GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue as OffsetCommitValueCodec } from '../../generated/index.js';
import type { GroupMetadataValue as GroupMetadataValueType } from '../../generated/GroupMetadataValue.js';
import { decodeCoordinatorKey, decodeCoordinatorValue, encodeCoordinatorKey, encodeCoordinatorValue } from '../coordinator-record-layout.js';

export const OFFSET_COMMIT_RECORD_TYPE = 1;
export const GROUP_METADATA_RECORD_TYPE = 2;
const OFFSET_VALUE_VERSION = 3;
const GROUP_VALUE_VERSION = 3;

export interface OffsetCommitKeyFields {
  group: string;
  topic: string;
  partition: number;
}

export interface OffsetCommitValue {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: bigint;
}

export type GroupMetadata = GroupMetadataValueType;

export function encodeOffsetCommitKey(key: OffsetCommitKeyFields): Uint8Array {
  return encodeCoordinatorKey(OffsetCommitKey, OffsetCommitKey.create(key));
}

export function encodeOffsetCommitValue(value: OffsetCommitValue): Uint8Array {
  return encodeCoordinatorValue(OffsetCommitValueCodec, OffsetCommitValueCodec.create(value), OFFSET_VALUE_VERSION);
}

export function decodeOffsetCommitKey(bytes: Uint8Array): OffsetCommitKeyFields {
  const key = decodeCoordinatorKey(OffsetCommitKey, bytes);
  return { group: key.group, topic: key.topic, partition: key.partition };
}

export function decodeOffsetCommitValue(bytes: Uint8Array): OffsetCommitValue {
  const { value } = decodeCoordinatorValue(OffsetCommitValueCodec, bytes);
  return { offset: value.offset, leaderEpoch: value.leaderEpoch, metadata: value.metadata, commitTimestamp: value.commitTimestamp };
}

export function encodeGroupMetadataKey(group: string): Uint8Array {
  return encodeCoordinatorKey(GroupMetadataKey, GroupMetadataKey.create({ group }));
}

export function decodeGroupMetadataKey(bytes: Uint8Array): string {
  return decodeCoordinatorKey(GroupMetadataKey, bytes).group;
}

export function encodeGroupMetadataValue(value: GroupMetadata): Uint8Array {
  return encodeCoordinatorValue(GroupMetadataValue, value, GROUP_VALUE_VERSION);
}

export function decodeGroupMetadataValue(bytes: Uint8Array): GroupMetadata {
  return decodeCoordinatorValue(GroupMetadataValue, bytes).value;
}
