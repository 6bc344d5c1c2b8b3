/**
 * Wire helpers for the share-coordinator API tests: one call per API with the
 * nested structures filled by the generated create functions, and decoding of
 * what a ShareFetch returned into (offset, value) pairs within the acquired
 * ranges, as a share consumer delivers them.
 */
import { createAcknowledgePartition, createAcknowledgeTopic } from '../../generated/ShareAcknowledgeRequest.js';
import {
  createAcknowledgementBatch,
  createFetchPartition,
  createFetchTopic,
  createForgottenTopic,
} from '../../generated/ShareFetchRequest.js';
import { createTxnShareAcknowledgePartition, createTxnShareAcknowledgeTopic } from '../../generated/TxnShareAcknowledgeRequest.js';
import { createAddShareAcksToTxnTopic } from '../../generated/AddShareAcksToTxnRequest.js';
import { decodeRecordBatches } from '../../runtime/index.js';
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
          partitions: parts.map((p) =>
            createFetchPartition({
              partitionIndex: p.partition,
              acknowledgementBatches: (p.acks ?? []).map((a) =>
                createAcknowledgementBatch({ firstOffset: a.first, lastOffset: a.last, acknowledgeTypes: a.types }),
              ),
            }),
          ),
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
          partitions: parts.map((p) =>
            createAcknowledgePartition({
              partitionIndex: p.partition,
              acknowledgementBatches: (p.acks ?? []).map((a) =>
                createAcknowledgementBatch({ firstOffset: a.first, lastOffset: a.last, acknowledgeTypes: a.types }),
              ),
            }),
          ),
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
  return c.call(
    95,
    { transactionalId, producerId, producerEpoch, groupId, topics: [createAddShareAcksToTxnTopic({ name: topic, partitions })] },
    0,
  );
}

export function txnShareAcknowledge(
  c: TestClient,
  args: {
    groupId: string;
    transactionalId: string;
    producerId: bigint;
    producerEpoch: number;
    memberId?: string;
    generationId?: number;
    partitions: { topicId: string; partition: number; batches: { first: bigint; last: bigint; type: number }[] }[];
  },
  version = 1,
): Promise<any> {
  return c.call(
    96,
    {
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
    },
    version,
  );
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

function byTopic<T extends { topicId: string }>(items: readonly T[]): [string, T[]][] {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(item.topicId, [...(map.get(item.topicId) ?? []), item]);
  return [...map];
}
