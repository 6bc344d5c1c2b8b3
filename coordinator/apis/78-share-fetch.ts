/**
 * ShareFetch (key 78, KIP-932): a share group member's fetch in its share session:
 * the session opens, moves on or closes (ShareSessionEpoch), piggybacked
 * acknowledgements are applied, then records are acquired (locked for this member)
 * from the session's partitions, with a long poll.
 *
 * Kafka: KafkaApis.handleShareFetchRequest, SharePartitionManager (newContext,
 * acknowledge, fetchMessages). Served while the registered share coordinator offers
 * its partition operations (coordinator/broker-context.ts); the work is
 * share/share-fetch.ts, which calls this file's answer when done, so the hot path
 * has no second promise per request.
 * - Every requested partition is answered (with its acknowledgement result), and
 *   every session partition that acquired records or failed.
 * - CurrentLeader and NodeEndpoints are filled for NOT_LEADER_OR_FOLLOWER only, as
 *   Kafka fills them; the endpoints are the request's listener's ports.
 * Rule: READ on the group (GROUP_AUTHORIZATION_FAILED for the request), READ on each
 * topic (a denied topic's partitions TOPIC_AUTHORIZATION_FAILED).
 */
import { ShareFetchRequest, type FetchTopic } from '../../generated/ShareFetchRequest.js';
import {
  ShareFetchResponse,
  createPartitionData,
  createShareFetchableTopicResponse,
  type ShareFetchableTopicResponse,
} from '../../generated/ShareFetchResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission, splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { sharePartitionKey, type ClusterView, type ShareFetchAnswer, type SharePartitionRef } from '../broker-context.js';
import { ErrorCode } from '../errors.js';
import { byTopic, currentLeader, nodeEndpoints } from '../share/partition-responses.js';
import { defineApi } from './define.js';

/** A topic of the request answered TOPIC_AUTHORIZATION_FAILED on each of its partitions. */
const deniedTopic = (t: FetchTopic): ShareFetchableTopicResponse =>
  createShareFetchableTopicResponse({
    topicId: t.topicId,
    partitions: t.partitions.map((p) => createPartitionData({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
  });

/** The wire answer of a ShareFetch, built once per broker. */
function fetchAnswer(cluster: ClusterView): ShareFetchAnswer<ShareFetchResponse> {
  return {
    failed: (errorCode, errorMessage, acquisitionLockTimeoutMs) => ShareFetchResponse.create({ errorCode, errorMessage, acquisitionLockTimeoutMs }),
    answered: (requested, acks, fetched, acquisitionLockTimeoutMs, ctx) => {
      const fetchedByKey = new Map(fetched.map((f) => [sharePartitionKey(f), f]));
      const included = new Map<string, SharePartitionRef>();
      for (const ref of requested) included.set(sharePartitionKey(ref), ref);
      for (const f of fetched) if (f.acquired.length > 0 || f.errorCode !== ErrorCode.NONE) included.set(sharePartitionKey(f), f);

      const leaders: number[] = [];
      const responses = byTopic([...included.values()]).map(({ topicId, items }) => ({
        topicId,
        partitions: items.map((ref) => {
          const f = fetchedByKey.get(sharePartitionKey(ref));
          const ack = acks.get(sharePartitionKey(ref));
          const errorCode = f?.errorCode ?? ErrorCode.NONE;
          const leader = currentLeader(cluster, ref, errorCode !== ErrorCode.NONE ? errorCode : (ack?.errorCode ?? ErrorCode.NONE));
          if (leader.leaderId >= 0) leaders.push(leader.leaderId);
          return {
            partitionIndex: ref.partition,
            errorCode,
            errorMessage: f?.errorMessage ?? null,
            acknowledgeErrorCode: ack?.errorCode ?? ErrorCode.NONE,
            acknowledgeErrorMessage: ack?.errorMessage ?? null,
            currentLeader: leader,
            records: f?.records ?? new Uint8Array(0),
            acquiredRecords: (f?.acquired ?? []).map((r) => ({ firstOffset: r.firstOffset, lastOffset: r.lastOffset, deliveryCount: r.deliveryCount })),
          };
        }),
      }));
      return ShareFetchResponse.create({ acquisitionLockTimeoutMs, responses, nodeEndpoints: nodeEndpoints(cluster, leaders, ctx) });
    },
  };
}

export default defineApi({
  request: ShareFetchRequest,
  response: ShareFetchResponse,
  needsShare: 'partitions',
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId ?? '', Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => ShareFetchResponse.create(),
      answerDenied: (response, denied) => void response.responses.push(...denied.map(deniedTopic)),
    });
  },
  handler: ({ share, cluster }) => {
    const answer = fetchAnswer(cluster);
    return (request, ctx) => {
      const partitions = share()?.partitions;
      if (partitions === undefined) return Promise.reject(new Error('ShareFetch is served only with a share coordinator'));
      return partitions.shareFetch(request, ctx, answer);
    };
  },
});
