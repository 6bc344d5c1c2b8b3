/**
 * `kipgen dump-log`: prints the batches of a segment file, a partition
 * directory or a whole data directory, like kafka-dump-log.sh
 * --print-data-log: batch headers, records, transaction markers, and the
 * coordinator records of `__transaction_state`, `__consumer_offsets` and
 * `__share_group_state` decoded with the generated codecs. Read-only: a torn
 * or corrupt tail is reported, not repaired (the broker repairs it on start).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ShareSnapshotKey, ShareSnapshotValue, ShareUpdateKey, ShareUpdateValue, TransactionLogKey, TransactionLogValue } from '../../generated/index.js';
import type { MessageCodec } from '../../runtime/index.js';
import { decodeRecordBatch, readBatchHeader, readControlRecord, verifyCrc, type KafkaRecord } from '../../runtime/index.js';
import { CONSUMER_OFFSETS_TOPIC, SHARE_GROUP_STATE_TOPIC, TRANSACTION_STATE_TOPIC } from '../cluster.js';
import { coordinatorRecordType, decodeCoordinatorKey, decodeCoordinatorValue } from '../coordinator-record-layout.js';
import {
  GROUP_METADATA_RECORD_TYPE,
  OFFSET_COMMIT_RECORD_TYPE,
  decodeGroupMetadataKey,
  decodeGroupMetadataValue,
  decodeOffsetCommitKey,
  decodeOffsetCommitValue,
} from '../group/offset-records.js';
import { txnStateName } from '../txn/transaction-metadata.js';
import { SEGMENT_SUFFIX } from '../log/segment.js';

export interface DumpOptions {
  /** Print records, not only batch headers (default true). */
  records?: boolean;
}

/** Dumps `target` (segment file, partition dir or data dir) and returns the text. */
export function dumpLog(target: string, options: DumpOptions = {}): string {
  const out: string[] = [];
  const stat = fs.statSync(target);
  if (stat.isFile()) {
    dumpSegment(target, topicOfDir(path.basename(path.dirname(target))), options, out);
    return out.join('\n');
  }
  const segments = fs
    .readdirSync(target)
    .filter((f) => f.endsWith(SEGMENT_SUFFIX))
    .sort();
  if (segments.length > 0) {
    for (const f of segments) dumpSegment(path.join(target, f), topicOfDir(path.basename(target)), options, out);
    return out.join('\n');
  }
  const partitions = fs
    .readdirSync(target)
    .filter((d) => fs.statSync(path.join(target, d)).isDirectory() && /-\d+$/.test(d))
    .sort();
  for (const dir of partitions) {
    const files = fs
      .readdirSync(path.join(target, dir))
      .filter((f) => f.endsWith(SEGMENT_SUFFIX))
      .sort();
    const sizes = files.map((f) => fs.statSync(path.join(target, dir, f)).size);
    if (sizes.every((s) => s === 0)) continue;
    for (const f of files) dumpSegment(path.join(target, dir, f), topicOfDir(dir), options, out);
  }
  return out.join('\n');
}

function topicOfDir(dir: string): string {
  return dir.replace(/-\d+$/, '');
}

function dumpSegment(file: string, topic: string, options: DumpOptions, out: string[]): void {
  const bytes = fs.readFileSync(file);
  out.push(`Dumping ${file} (${bytes.length} bytes)`);
  let at = 0;
  while (at < bytes.length) {
    let header;
    try {
      header = readBatchHeader(bytes, at);
    } catch (error) {
      out.push(`  position ${at}: unreadable batch header, ${bytes.length - at} bytes to the end: ${(error as Error).message}`);
      return;
    }
    if (header.sizeInBytes > bytes.length - at) {
      out.push(`  position ${at}: torn batch (declares ${header.sizeInBytes} bytes, ${bytes.length - at} present)`);
      return;
    }
    const crcOk = verifyCrc(bytes, at, header);
    out.push(
      `baseOffset: ${header.baseOffset} lastOffset: ${header.lastOffset} count: ${header.recordCount} position: ${at} size: ${header.sizeInBytes}` +
        ` producerId: ${header.producerId} producerEpoch: ${header.producerEpoch} baseSequence: ${header.baseSequence}` +
        ` isTransactional: ${header.isTransactional} isControl: ${header.isControl} compression: ${header.compression}` +
        ` maxTimestamp: ${header.maxTimestamp} crc: ${header.crc} isValid: ${crcOk}`,
    );
    if (options.records !== false && crcOk) {
      try {
        const batch = decodeRecordBatch(bytes.subarray(at, at + header.sizeInBytes), 0, { checkCrc: false });
        for (const record of batch.records) out.push(`| offset: ${record.offset} ${describeRecord(topic, record, header.isControl)}`);
      } catch (error) {
        out.push(`| records not shown: ${(error as Error).message}`);
      }
    }
    at += header.sizeInBytes;
  }
}

function describeRecord(topic: string, record: KafkaRecord, isControl: boolean): string {
  try {
    if (isControl) {
      const control = readControlRecord(record);
      return 'coordinatorEpoch' in control ? `endTxnMarker: ${control.type} coordinatorEpoch: ${control.coordinatorEpoch}` : `control: ${control.type}`;
    }
    if (record.key !== null && topic === TRANSACTION_STATE_TOPIC) {
      const key = decodeCoordinatorKey(TransactionLogKey, record.key);
      if (record.value === null) return `transactionalId: ${key.transactionalId} <tombstone>`;
      const { version, value } = decodeCoordinatorValue(TransactionLogValue, record.value);
      return (
        `transactionalId: ${key.transactionalId} producerId: ${value.producerId} producerEpoch: ${value.producerEpoch}` +
        ` state: ${txnStateName(value.transactionStatus)} partitions: [${(value.transactionPartitions ?? []).map((p) => `${p.topic}-${p.partitionIds.join(',')}`).join(' ')}]` +
        ` timeoutMs: ${value.transactionTimeoutMs} lastUpdate: ${value.transactionLastUpdateTimestampMs} start: ${value.transactionStartTimestampMs} (v${version})`
      );
    }
    if (record.key !== null && topic === CONSUMER_OFFSETS_TOPIC && coordinatorRecordType(record.key) === OFFSET_COMMIT_RECORD_TYPE) {
      const key = decodeOffsetCommitKey(record.key);
      if (record.value === null) return `offsetCommit: ${key.group} ${key.topic}-${key.partition} <tombstone>`;
      const value = decodeOffsetCommitValue(record.value);
      return `offsetCommit: group ${key.group} ${key.topic}-${key.partition} offset ${value.offset} leaderEpoch ${value.leaderEpoch} metadata ${JSON.stringify(value.metadata)}`;
    }
    if (record.key !== null && topic === CONSUMER_OFFSETS_TOPIC && coordinatorRecordType(record.key) === GROUP_METADATA_RECORD_TYPE) {
      const group = decodeGroupMetadataKey(record.key);
      if (record.value === null) return `groupMetadata: ${group} <tombstone>`;
      const value = decodeGroupMetadataValue(record.value);
      return (
        `groupMetadata: ${group} protocolType ${JSON.stringify(value.protocolType)} generation ${value.generation} protocol ${JSON.stringify(value.protocol)}` +
        ` leader ${JSON.stringify(value.leader)} members [${value.members.map((m) => `${m.memberId} (${m.clientId}, ${m.assignment.length}-byte assignment)`).join(', ')}]`
      );
    }
    if (record.key !== null && topic === SHARE_GROUP_STATE_TOPIC) {
      const type = coordinatorRecordType(record.key);
      const [name, keyCodec, valueCodec] = (
        type === 0
          ? ['shareSnapshot', ShareSnapshotKey, ShareSnapshotValue]
          : type === 1
            ? ['shareUpdate', ShareUpdateKey, ShareUpdateValue]
            : [null, null, null]
      ) as [string | null, MessageCodec<unknown, never> | null, MessageCodec<unknown, never> | null];
      if (name !== null) {
        const key = decodeCoordinatorKey(keyCodec!, record.key);
        if (record.value === null) return `${name}: ${JSON.stringify(keyCodec!.toJson(key, 0))} <tombstone>`;
        const { version, value } = decodeCoordinatorValue(valueCodec!, record.value);
        return `${name}: ${JSON.stringify(keyCodec!.toJson(key, 0))} ${JSON.stringify(valueCodec!.toJson(value, version))}`;
      }
    }
  } catch (error) {
    return `undecodable coordinator record (${(error as Error).message}) key: ${show(record.key)} value: ${show(record.value)}`;
  }
  const headers = record.headers.length > 0 ? ` headers: ${record.headers.map((h) => `${h.key}=${show(h.value)}`).join(',')}` : '';
  return `timestamp: ${record.timestamp} key: ${show(record.key)} payload: ${show(record.value)}${headers}`;
}

/** Printable UTF-8 as a JSON string, anything else as hex (cut at 64 bytes). */
function show(bytes: Uint8Array | null): string {
  if (bytes === null) return 'null';
  const text = Buffer.from(bytes).toString('utf8');
  if (!/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) return JSON.stringify(text);
  const hex = Buffer.from(bytes.subarray(0, 64)).toString('hex');
  return `0x${hex}${bytes.length > 64 ? `… (${bytes.length} bytes)` : ''}`;
}
