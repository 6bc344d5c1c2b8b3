/**
 * TxnShareAcknowledge (key 96, KIP-1289): a transactional producer stores a share
 * group's acknowledgements as pending in its transaction; they apply at the COMMIT
 * marker and are dropped at ABORT (DESIGN §5).
 *
 * Kafka has no such API (KIP-1289 is kipgen's); it follows TxnOffsetCommit
 * (KafkaApis.handleTxnOffsetCommitRequest). Served with kip1289 on and while the
 * registered share coordinator offers its partition operations; the work is
 * share/txn-share-acknowledge.ts.
 * - A request-level error is set at the top and on every partition it concerns,
 *   as TxnOffsetCommit reports errors per partition.
 * - v1 names the member (MemberId, GenerationId); v0, or an empty MemberId, does not.
 * Rule: WRITE on the transactional id, READ on the share group and on each topic
 * (as TxnOffsetCommit for consumer offsets).
 */
import { TxnShareAcknowledgeRequest, type TxnShareAcknowledgeTopic } from '../../generated/TxnShareAcknowledgeRequest.js';
import {
  TxnShareAcknowledgeResponse,
  createTxnShareAcknowledgePartitionResponse,
  createTxnShareAcknowledgeTopicResponse,
  type TxnShareAcknowledgeTopicResponse,
} from '../../generated/TxnShareAcknowledgeResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission, splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The first version that names the member. */
const FIRST_MEMBER_VERSION = 1;

/** A topic of the request answered TOPIC_AUTHORIZATION_FAILED on each of its partitions. */
const deniedTopic = (t: TxnShareAcknowledgeTopic): TxnShareAcknowledgeTopicResponse =>
  createTxnShareAcknowledgeTopicResponse({
    topicId: t.topicId,
    partitions: t.partitions.map((p) =>
      createTxnShareAcknowledgePartitionResponse({
        partition: p.partition,
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        errorMessage: 'not authorized to read the topic',
      }),
    ),
  });

export default defineApi({
  request: TxnShareAcknowledgeRequest,
  response: TxnShareAcknowledgeResponse,
  servedWhen: (config) => config.kip1289,
  needsShare: 'partitions',
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => TxnShareAcknowledgeResponse.create(),
      answerDenied: (response, denied) => void response.topics.push(...denied.map(deniedTopic)),
    });
  },
  handler:
    ({ share }) =>
    async (request, ctx) => {
      const partitions = share()?.partitions;
      if (partitions === undefined) throw new Error('TxnShareAcknowledge is served only with a share coordinator');
      const memberId = ctx.apiVersion >= FIRST_MEMBER_VERSION && request.memberId !== '' ? request.memberId : null;
      const result = await partitions.txnShareAcknowledge(request, memberId);
      let i = 0;
      return TxnShareAcknowledgeResponse.create({
        errorCode: result.errorCode,
        topics: request.topics.map((topic) => ({
          topicId: topic.topicId,
          partitions: topic.partitions.map((p) => ({ partition: p.partition, ...result.partitions[i++]! })),
        })),
      });
    },
});
