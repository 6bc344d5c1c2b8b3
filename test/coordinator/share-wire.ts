/**
 * Wire helpers for the share-coordinator API tests: one call per API with the
 * nested structures filled by the generated create functions, and decoding of
 * what a ShareFetch returned into (offset, value) pairs within the acquired
 * ranges, as a share consumer delivers them; raw frames (to send the very same
 * bytes twice) and what `__share_group_state` holds on disk.
 */
import * as net from 'node:net';
import * as path from 'node:path';
import { dumpLog } from '../../coordinator/tools/dump-log.js';
import { createAcknowledgePartition, createAcknowledgeTopic } from '../../generated/ShareAcknowledgeRequest.js';
import { createAcknowledgementBatch, createFetchPartition, createFetchTopic, createForgottenTopic } from '../../generated/ShareFetchRequest.js';
import { createTxnShareAcknowledgePartition, createTxnShareAcknowledgeTopic } from '../../generated/TxnShareAcknowledgeRequest.js';
import { createAddShareAcksToTxnTopic } from '../../generated/AddShareAcksToTxnRequest.js';
import { RequestHeader, ResponseHeader, TxnShareAcknowledgeRequest, TxnShareAcknowledgeResponse } from '../../generated/index.js';
import { Reader, decodeRecordBatches, encodeFrame } from '../../runtime/index.js';
import { DEC, type TestClient } from './support/broker-harness.js';

export interface Ack {
  first: bigint;
  last: bigint;
  types: number[];
}

export interface PartitionAcks {
  topicId: string;
  partition: number;
  acks?: Ack[];
}

export function shareFetch(
  c: TestClient,
  args: {
    groupId: string;
    memberId: string;
    epoch: number;
    partitions: PartitionAcks[];
    forget?: { topicId: string; partitions: number[] }[];
    maxRecords?: number;
    maxWaitMs?: number;
    isRenewAck?: boolean;
  },
  version = 2,
): Promise<any> {
  return c.call(
    78,
    {
      groupId: args.groupId,
      memberId: args.memberId,
      shareSessionEpoch: args.epoch,
      maxWaitMs: args.maxWaitMs ?? 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      maxRecords: args.maxRecords ?? 500,
      batchSize: 500,
      isRenewAck: args.isRenewAck ?? false,
      topics: byTopic(args.partitions).map(([topicId, parts]) =>
        createFetchTopic({
          topicId,
          partitions: parts.map((p) => createFetchPartition({ partitionIndex: p.partition, acknowledgementBatches: acknowledgementBatches(p) })),
        }),
      ),
      forgottenTopicsData: (args.forget ?? []).map((f) => createForgottenTopic(f)),
    },
    version,
  );
}

export function shareAcknowledge(
  c: TestClient,
  args: { groupId: string; memberId: string; epoch: number; partitions: PartitionAcks[] },
  version = 2,
): Promise<any> {
  return c.call(
    79,
    {
      groupId: args.groupId,
      memberId: args.memberId,
      shareSessionEpoch: args.epoch,
      topics: byTopic(args.partitions).map(([topicId, parts]) =>
        createAcknowledgeTopic({
          topicId,
          partitions: parts.map((p) => createAcknowledgePartition({ partitionIndex: p.partition, acknowledgementBatches: acknowledgementBatches(p) })),
        }),
      ),
    },
    version,
  );
}

export function heartbeat(c: TestClient, groupId: string, memberId: string, memberEpoch: number, topics: string[] | null): Promise<any> {
  return c.call(76, { groupId, memberId, memberEpoch, rackId: null, subscribedTopicNames: topics }, 1);
}

export function addShareAcksToTxn(
  c: TestClient,
  transactionalId: string,
  producerId: bigint,
  producerEpoch: number,
  groupId: string,
  topic: string,
  partitions: number[],
): Promise<any> {
  return c.call(95, { transactionalId, producerId, producerEpoch, groupId, topics: [createAddShareAcksToTxnTopic({ name: topic, partitions })] }, 0);
}

export interface TxnAckArgs {
  groupId: string;
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  memberId?: string;
  generationId?: number;
  partitions: { topicId: string; partition: number; batches: { first: bigint; last: bigint; type: number }[] }[];
}

/** The fields of a TxnShareAcknowledge request (for `version`). */
export function txnShareAcknowledgeBody(args: TxnAckArgs, version = 1): Record<string, unknown> {
  return {
    groupId: args.groupId,
    transactionalId: args.transactionalId,
    producerId: args.producerId,
    producerEpoch: args.producerEpoch,
    ...(version >= 1 ? { memberId: args.memberId ?? '', generationId: args.generationId ?? -1 } : {}),
    topics: byTopic(args.partitions).map(([topicId, parts]) =>
      createTxnShareAcknowledgeTopic({
        topicId,
        partitions: parts.map((p) =>
          createTxnShareAcknowledgePartition({
            partition: p.partition,
            acknowledgementBatches: p.batches.map((b) => ({ firstOffset: b.first, lastOffset: b.last, acknowledgeType: b.type })),
          }),
        ),
      }),
    ),
  };
}

export function txnShareAcknowledge(c: TestClient, args: TxnAckArgs, version = 1): Promise<any> {
  return c.call(96, txnShareAcknowledgeBody(args, version), version);
}

/** One whole TxnShareAcknowledge request frame (size, header, body), to send the very same bytes more than once. */
export function txnShareAcknowledgeFrame(args: TxnAckArgs, version = 1, correlationId = 7): Uint8Array {
  const body = TxnShareAcknowledgeRequest.create(txnShareAcknowledgeBody(args, version) as any);
  const header = RequestHeader.create({ requestApiKey: 96, requestApiVersion: version, correlationId, clientId: 'retry-test' });
  return encodeFrame(RequestHeader, header, TxnShareAcknowledgeRequest.headerVersion(version), TxnShareAcknowledgeRequest, body, version);
}

/**
 * Sends a request frame on a fresh connection to 127.0.0.1:`port` and returns
 * the decoded TxnShareAcknowledge response, or null when the broker closed the
 * connection without answering.
 */
export function sendTxnShareAcknowledgeFrame(port: number, frame: Uint8Array, version = 1): Promise<any | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let answered = false;
    socket.on('connect', () => socket.write(frame));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return;
      answered = true;
      const bytes = new Uint8Array(received.subarray(4, 4 + received.readInt32BE(0)));
      socket.destroy();
      try {
        const reader = new Reader(bytes);
        ResponseHeader.read(reader, TxnShareAcknowledgeResponse.headerVersion(version));
        resolve(TxnShareAcknowledgeResponse.decode(bytes.subarray(reader.pos), version));
      } catch (error) {
        reject(error as Error);
      }
    });
    socket.on('error', () => undefined); // a reset: 'close' follows
    socket.on('close', () => {
      if (!answered) resolve(null);
    });
  });
}

/**
 * The batch headers of a `__share_group_state` partition on disk (a broker's
 * data directory), as `kipgen dump-log` reads them: to count what was written.
 */
export function shareStateBatches(dataDir: string, partition: number): { producerId: bigint; transactional: boolean; control: boolean }[] {
  const text = dumpLog(path.join(dataDir, `__share_group_state-${partition}`), { records: false });
  return [...text.matchAll(/producerId: (-?\d+) .*isTransactional: (true|false) isControl: (true|false)/g)].map((m) => ({
    producerId: BigInt(m[1]!),
    transactional: m[2] === 'true',
    control: m[3] === 'true',
  }));
}

/** How many transactional ShareUpdate batches (TxnShareAcknowledge writes) a producer has in that partition. */
export function transactionalWrites(dataDir: string, partition: number, producerId: bigint): number {
  return shareStateBatches(dataDir, partition).filter((b) => b.producerId === producerId && b.transactional && !b.control).length;
}

/** The partition result of a ShareFetch/ShareAcknowledge response. */
export function partitionOf(response: any, topicId: string, partition: number): any {
  const topic = response.responses.find((t: any) => t.topicId === topicId);
  return topic?.partitions.find((p: any) => p.partitionIndex === partition);
}

/** The records a share consumer would deliver: those of the returned batches inside the acquired ranges. */
export function delivered(partitionData: any): { offset: bigint; value: string; deliveryCount: number }[] {
  if (partitionData === undefined) return [];
  const ranges: { firstOffset: bigint; lastOffset: bigint; deliveryCount: number }[] = partitionData.acquiredRecords;
  const out: { offset: bigint; value: string; deliveryCount: number }[] = [];
  for (const batch of decodeRecordBatches(partitionData.records ?? new Uint8Array(0)).batches) {
    if (batch.isControl) continue;
    for (const r of batch.records) {
      const range = ranges.find((a) => a.firstOffset <= r.offset && r.offset <= a.lastOffset);
      if (range !== undefined) out.push({ offset: r.offset, value: DEC.decode(r.value!), deliveryCount: range.deliveryCount });
    }
  }
  return out;
}

/** AcknowledgementBatches of a ShareFetch or ShareAcknowledge partition (the two share the batch layout). */
function acknowledgementBatches(p: PartitionAcks) {
  return (p.acks ?? []).map((a) => createAcknowledgementBatch({ firstOffset: a.first, lastOffset: a.last, acknowledgeTypes: a.types }));
}

function byTopic<T extends { topicId: string }>(items: readonly T[]): [string, T[]][] {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(item.topicId, [...(map.get(item.topicId) ?? []), item]);
  return [...map];
}
