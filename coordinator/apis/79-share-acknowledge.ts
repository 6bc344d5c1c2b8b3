/**
 * ShareAcknowledge (key 79, KIP-932): acknowledgements (accept, release, reject,
 * renew) of acquired records in an existing share session, without fetching.
 *
 * Kafka: KafkaApis.handleShareAcknowledgeRequest, SharePartitionManager
 * (acknowledgeSessionUpdate, acknowledge). Served while the registered share
 * coordinator offers its partition operations (coordinator/broker-context.ts); the
 * work is share/share-acknowledge.ts, which calls this file's answer when done.
 * - CurrentLeader and NodeEndpoints are filled for NOT_LEADER_OR_FOLLOWER only.
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED for the request), READ on each
 * topic (a denied topic's partitions TOPIC_AUTHORIZATION_FAILED).
 */
import { ShareAcknowledgeRequest, type AcknowledgeTopic } from '../../generated/ShareAcknowledgeRequest.js';
import {
  ShareAcknowledgeResponse,
  createPartitionData,
  createShareAcknowledgeTopicResponse,
  type ShareAcknowledgeTopicResponse,
} from '../../generated/ShareAcknowledgeResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission, splitEntries, topicAllowed } from '../auth/rule-kit.js';
import type { ClusterView, ShareAcknowledgeAnswer } from '../broker-context.js';
import { ErrorCode } from '../errors.js';
import { byTopic, currentLeader, nodeEndpoints } from '../share/partition-responses.js';
import { defineApi } from './define.js';

/** A topic of the request answered TOPIC_AUTHORIZATION_FAILED on each of its partitions. */
const deniedTopic = (t: AcknowledgeTopic): ShareAcknowledgeTopicResponse =>
  createShareAcknowledgeTopicResponse({
    topicId: t.topicId,
    partitions: t.partitions.map((p) => createPartitionData({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
  });

/** The wire answer of a ShareAcknowledge, built once per broker. */
function acknowledgeAnswer(cluster: ClusterView): ShareAcknowledgeAnswer<ShareAcknowledgeResponse> {
  return {
    failed: (errorCode, errorMessage, acquisitionLockTimeoutMs) => ShareAcknowledgeResponse.create({ errorCode, errorMessage, acquisitionLockTimeoutMs }),
    answered: (partitions, results, acquisitionLockTimeoutMs, ctx) => {
      const leaders: number[] = [];
      const indexed = partitions.map((ref, i) => ({ topicId: ref.topicId, partition: ref.partition, result: results[i]! }));
      return ShareAcknowledgeResponse.create({
        acquisitionLockTimeoutMs,
        responses: byTopic(indexed).map(({ topicId, items }) => ({
          topicId,
          partitions: items.map((item) => {
            const leader = currentLeader(cluster, item, item.result.errorCode);
            if (leader.leaderId >= 0) leaders.push(leader.leaderId);
            return { partitionIndex: item.partition, errorCode: item.result.errorCode, errorMessage: item.result.errorMessage, currentLeader: leader };
          }),
        })),
        nodeEndpoints: nodeEndpoints(cluster, leaders, ctx),
      });
    },
  };
}

export default defineApi({
  request: ShareAcknowledgeRequest,
  response: ShareAcknowledgeResponse,
  needsShare: 'partitions',
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId ?? '', Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => ShareAcknowledgeResponse.create(),
      answerDenied: (response, denied) => void response.responses.push(...denied.map(deniedTopic)),
    });
  },
  handler: ({ share, cluster }) => {
    const answer = acknowledgeAnswer(cluster);
    return (request, ctx) => {
      const partitions = share()?.partitions;
      if (partitions === undefined) return Promise.reject(new Error('ShareAcknowledge is served only with a share coordinator'));
      return partitions.shareAcknowledge(request, ctx, answer);
    };
  },
});
