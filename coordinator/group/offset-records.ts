/**
 * OffsetCommitKey / OffsetCommitValue (record type 1 of `__consumer_offsets`),
 * in Kafka's layout. Our message-schemas/ ship no codec for them (the group
 * coordinator's records are not part of kipgen's schema set), so these two
 * small, fixed, non-flexible layouts are written by hand here with the
 * runtime's Reader and Writer:
 *
 *   key   = int16 1 | group string | topic string | partition int32
 *   value = int16 3 | offset int64 | leaderEpoch int32 | metadata string | commitTimestamp int64
 *
 * Values of versions 0–3 are read (v1 adds expireTimestamp, v3 leaderEpoch);
 * version 4 (flexible) is refused, since kipgen never writes it.
 */
import { DecodeError, Reader, Writer, utf8Length } from '../../runtime/index.js';

export const OFFSET_COMMIT_RECORD_TYPE = 1;
const VALUE_VERSION = 3;

export interface OffsetCommitKey {
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

export function encodeOffsetCommitKey(key: OffsetCommitKey): Uint8Array {
  const size = 2 + 2 + utf8Length(key.group) + 2 + utf8Length(key.topic) + 4;
  const writer = new Writer(size);
  writer.int16(OFFSET_COMMIT_RECORD_TYPE);
  writer.string(key.group, false);
  writer.string(key.topic, false);
  writer.int32(key.partition);
  return writer.finish();
}

export function encodeOffsetCommitValue(value: OffsetCommitValue): Uint8Array {
  const size = 2 + 8 + 4 + 2 + utf8Length(value.metadata) + 8;
  const writer = new Writer(size);
  writer.int16(VALUE_VERSION);
  writer.int64(value.offset);
  writer.int32(value.leaderEpoch);
  writer.string(value.metadata, false);
  writer.int64(value.commitTimestamp);
  return writer.finish();
}

export function decodeOffsetCommitKey(bytes: Uint8Array): OffsetCommitKey {
  const reader = new Reader(bytes);
  const type = reader.int16();
  if (type !== OFFSET_COMMIT_RECORD_TYPE) throw new DecodeError(`record type ${type} is not OffsetCommitKey (1)`);
  const group = reader.string(false)!;
  const topic = reader.string(false)!;
  const partition = reader.int32();
  reader.expectEnd();
  return { group, topic, partition };
}

export function decodeOffsetCommitValue(bytes: Uint8Array): OffsetCommitValue {
  const reader = new Reader(bytes);
  const version = reader.int16();
  if (version < 0 || version > 3) throw new DecodeError(`OffsetCommitValue version ${version} is not supported (0-3)`);
  const offset = reader.int64();
  const leaderEpoch = version >= 3 ? reader.int32() : -1;
  const metadata = reader.string(false)!;
  const commitTimestamp = reader.int64();
  if (version === 1) reader.int64(); // expireTimestamp
  reader.expectEnd();
  return { offset, leaderEpoch, metadata, commitTimestamp };
}
