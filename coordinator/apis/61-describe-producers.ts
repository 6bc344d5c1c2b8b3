/**
 * DescribeProducers (key 61, KIP-664): the producers a partition's leader
 * knows, with the first offset of each one's open transaction — how an
 * operator finds a hanging transaction (one whose coordinator has forgotten it
 * while the partition still holds it open, bounding the last stable offset) to
 * abort it with WriteTxnMarkers (Admin.abortTransaction). Also recovery
 * tooling for KIP-939 prepared transactions.
 *
 * Kafka: KafkaApis.handleDescribeProducersRequest, ReplicaManager.activeProducerState,
 * ProducerStateManager.activeProducers.
 * - An illegal topic name is INVALID_TOPIC_EXCEPTION, an unknown topic or partition
 *   UNKNOWN_TOPIC_OR_PARTITION, a partition this node does not lead NOT_LEADER_OR_FOLLOWER.
 * - Every producer id the partition's state holds is listed (an idle one goes after
 *   producer.id.expiration.ms, as in Kafka); CurrentTxnStartOffset -1 when it has no
 *   transaction open, CoordinatorEpoch that of its last marker (-1 before one).
 * Rule: READ on each topic; a denied topic's partitions are TOPIC_AUTHORIZATION_FAILED.
 */
import { DescribeProducersRequest, type TopicRequest } from '../../generated/DescribeProducersRequest.js';
import { DescribeProducersResponse, type TopicResponse } from '../../generated/DescribeProducersResponse.js';
import { isLegalTopicName } from '../admin/topic-admin.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const failed = (topic: TopicRequest, errorCode: number, errorMessage: string | null = null): TopicResponse => ({
  name: topic.name,
  partitions: topic.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode, errorMessage, activeProducers: [] })),
});

export default defineApi({
  request: DescribeProducersRequest,
  response: DescribeProducersResponse,
  authorize: (request, check, _ctx, next) =>
    splitEntries(request, next, {
      // An illegal name is answered as such before any ACL check, as Kafka's checkValidTopic comes first.
      entries: request.topics,
      allowed: (topic) => !isLegalTopicName(topic.name) || check.allow(Res.TOPIC, topic.name, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => DescribeProducersResponse.create(),
      answerDenied: (response, denied) => void response.topics.push(...denied.map((t) => failed(t, ErrorCode.TOPIC_AUTHORIZATION_FAILED))),
    }),
  handler:
    ({ cluster, logs }) =>
    async (request) => {
      const topics: TopicResponse[] = request.topics.map((topic) => {
        if (!isLegalTopicName(topic.name)) return failed(topic, ErrorCode.INVALID_TOPIC_EXCEPTION, `topic name ${JSON.stringify(topic.name)} is illegal`);
        const info = cluster.topicByName(topic.name);
        if (info === undefined) return failed(topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        return {
          name: topic.name,
          partitions: topic.partitionIndexes.map((partitionIndex) => {
            const none = { partitionIndex, errorMessage: null, activeProducers: [] };
            if (partitionIndex < 0 || partitionIndex >= info.partitions) return { ...none, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
            const log = cluster.isLocalLeader(topic.name, partitionIndex) ? logs.get(topic.name, partitionIndex) : undefined;
            if (log === undefined) return { ...none, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
            return {
              ...none,
              errorCode: ErrorCode.NONE,
              activeProducers: log.producers.describe().map((p) => ({
                producerId: p.producerId,
                producerEpoch: p.epoch,
                lastSequence: p.lastSequence,
                lastTimestamp: p.lastTimestamp,
                coordinatorEpoch: p.coordinatorEpoch,
                currentTxnStartOffset: p.txnFirstOffset ?? -1n,
              })),
            };
          }),
        };
      });
      return DescribeProducersResponse.create({ topics });
    },
});
