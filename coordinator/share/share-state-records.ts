import { ShareSnapshotKey, ShareSnapshotValue, ShareUpdateKey, ShareUpdateValue } from '../../generated/index.js';
import type { CoordinatorRecord } from '../broker-context.js';
import {
  coordinatorRecordType,
  decodeCoordinatorKey,
  decodeCoordinatorValue,
  encodeCoordinatorKey,
  encodeCoordinatorValue,
} from '../coordinator-record-layout.js';
import type { SharePartitionKey } from './share-partition.js';

/**
 * The share coordinator's records in `__share_group_state`, in Kafka's
 * coordinator-record layout (../coordinator-record-layout.ts): key = int16 record
 * type (0 ShareSnapshot, 1 ShareUpdate) + key body v0; value = int16 version +
 * value body; a null value is a tombstone.
 */

export const SHARE_SNAPSHOT_RECORD_TYPE = 0;
export const SHARE_UPDATE_RECORD_TYPE = 1;
const VALUE_VERSION = 0;

export type ShareRecord =
  | { type: 'snapshot'; key: SharePartitionKey; value: ShareSnapshotValue }
  | { type: 'update'; key: SharePartitionKey; value: ShareUpdateValue }
  | { type: 'tombstone'; key: SharePartitionKey }
  /** Another coordinator's record type: skipped on replay, as Kafka's shard skips what it does not own. */
  | { type: 'other'; recordType: number };

export function encodeSnapshotRecord(key: SharePartitionKey, value: ShareSnapshotValue): CoordinatorRecord {
  return {
    key: encodeCoordinatorKey(ShareSnapshotKey, ShareSnapshotKey.create(key)),
    value: encodeCoordinatorValue(ShareSnapshotValue, value, VALUE_VERSION),
  };
}

export function encodeUpdateRecord(key: SharePartitionKey, value: ShareUpdateValue): CoordinatorRecord {
  return {
    key: encodeCoordinatorKey(ShareUpdateKey, ShareUpdateKey.create(key)),
    value: encodeCoordinatorValue(ShareUpdateValue, value, VALUE_VERSION),
  };
}

/** A tombstone for a share partition's state: a null-valued ShareSnapshot. */
export function encodeTombstone(key: SharePartitionKey): CoordinatorRecord {
  return { key: encodeCoordinatorKey(ShareSnapshotKey, ShareSnapshotKey.create(key)), value: null };
}

/** Decodes one record of the log; throws DecodeError for a malformed share record. */
export function decodeShareRecord(record: { key: Uint8Array | null; value: Uint8Array | null }): ShareRecord {
  if (record.key === null) return { type: 'other', recordType: -1 };
  const recordType = coordinatorRecordType(record.key);
  if (recordType !== SHARE_SNAPSHOT_RECORD_TYPE && recordType !== SHARE_UPDATE_RECORD_TYPE) return { type: 'other', recordType };
  const isSnapshot = recordType === SHARE_SNAPSHOT_RECORD_TYPE;
  const { groupId, topicId, partition } = isSnapshot ? decodeCoordinatorKey(ShareSnapshotKey, record.key) : decodeCoordinatorKey(ShareUpdateKey, record.key);
  const key = { groupId, topicId, partition };
  if (record.value === null) return { type: 'tombstone', key };
  return isSnapshot
    ? { type: 'snapshot', key, value: decodeCoordinatorValue(ShareSnapshotValue, record.value).value }
    : { type: 'update', key, value: decodeCoordinatorValue(ShareUpdateValue, record.value).value };
}
