/**
 * WriteTxnMarkers (key 27, broker to broker): the transaction coordinator asks a
 * partition leader to append a COMMIT or ABORT marker to each listed partition it
 * leads and apply it (txn/marker-writer.ts).
 *
 * Kafka: KafkaApis.handleWriteTxnMarkersRequest, ReplicaManager.appendRecords of
 * control batches.
 * - A partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION; the writer
 *   answers NOT_LEADER_OR_FOLLOWER for one this node does not lead.
 * Rule: CLUSTER_ACTION on the cluster; without it every partition is answered
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import { WriteTxnMarkersRequest } from '../../generated/WriteTxnMarkersRequest.js';
import {
  WriteTxnMarkersResponse,
  type WritableTxnMarkerPartitionResultInit,
  type WritableTxnMarkerResultInit,
  type WritableTxnMarkerTopicResultInit,
} from '../../generated/WriteTxnMarkersResponse.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: WriteTxnMarkersRequest,
  response: WriteTxnMarkersResponse,
  authorize: async (request, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.CLUSTER_ACTION)) return next(request);
    return WriteTxnMarkersResponse.create({
      markers: request.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })),
        })),
      })),
    });
  },
  handler:
    ({ cluster, markerWriter }) =>
    async (request) => {
      const markers: WritableTxnMarkerResultInit[] = [];
      for (const marker of request.markers) {
        const topics: WritableTxnMarkerTopicResultInit[] = [];
        for (const topic of marker.topics) {
          const partitions: WritableTxnMarkerPartitionResultInit[] = [];
          const info = cluster.topicByName(topic.name);
          for (const partition of topic.partitionIndexes) {
            const errorCode =
              info === undefined || partition < 0 || partition >= info.partitions
                ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                : await markerWriter.write(topic.name, partition, {
                    producerId: marker.producerId,
                    producerEpoch: marker.producerEpoch,
                    commit: marker.transactionResult,
                    coordinatorEpoch: marker.coordinatorEpoch,
                  });
            partitions.push({ partitionIndex: partition, errorCode });
          }
          topics.push({ name: topic.name, partitions });
        }
        markers.push({ producerId: marker.producerId, topics });
      }
      return WriteTxnMarkersResponse.create({ markers });
    },
});
