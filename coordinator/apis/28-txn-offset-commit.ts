/**
 * TxnOffsetCommit (key 28): a transactional producer commits a group's offsets
 * inside its transaction; they stay pending (invisible to RequireStable fetches)
 * until the transaction's COMMIT or ABORT marker. Served by the node leading the
 * group's offsets partition (NOT_COORDINATOR elsewhere).
 *
 * Kafka: KafkaApis.handleTxnOffsetCommitRequest, GroupCoordinator
 * commitTransactionalOffsets (OffsetMetadataManager.commitTransactionalOffset).
 * - The write is verified with the transaction coordinator first (the group's
 *   partition must be in the transaction); v5+ is a Transactions V2 client, whose
 *   leader adds the partition to the transaction itself (KIP-890 part 2).
 * - v6+ names topics by id (UNKNOWN_TOPIC_ID), before by name; an unknown topic
 *   fails only its own partitions.
 * - The member and its generation (classic) or epoch (KIP-848) are checked as
 *   for OffsetCommit, except that a commit naming neither (v0-2) is taken and
 *   a classic group between JoinGroup and SyncGroup is no error (Kafka's
 *   ClassicGroup.validateOffsetCommit with isTransactional): a zombie of an
 *   older generation is fenced with ILLEGAL_GENERATION (KIP-447).
 * Rule: WRITE on the transactional id, then READ on the group (each denial on every
 * partition), then READ on each topic (a denied topic's partitions
 * TOPIC_AUTHORIZATION_FAILED).
 */
import { TxnOffsetCommitRequest, type TxnOffsetCommitRequestTopic } from '../../generated/TxnOffsetCommitRequest.js';
import { TxnOffsetCommitResponse, type TxnOffsetCommitResponseTopic } from '../../generated/TxnOffsetCommitResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { CONSUMER_OFFSETS_TOPIC } from '../cluster.js';
import { BrokerError, ErrorCode, errorCodeOf } from '../errors.js';
import type { OffsetToCommit } from '../group/offset-store.js';
import { defineApi } from './define.js';

/** The first version that names topics by id. */
const FIRST_TOPIC_ID_VERSION = 6;
/** The first version only a Transactions V2 client sends. */
const FIRST_TV2_VERSION = 5;

/** A topic of the request answered with `code` on each of its partitions. */
const topicAnswer =
  (code: number) =>
  (t: TxnOffsetCommitRequestTopic): TxnOffsetCommitResponseTopic => ({
    name: t.name,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })),
  });

export default defineApi({
  request: TxnOffsetCommitRequest,
  response: TxnOffsetCommitResponse,
  authorize: async (request, check, _ctx, next) => {
    if (!check.allow(Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE))
      return TxnOffsetCommitResponse.create({ topics: request.topics.map(topicAnswer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)) });
    if (!check.allow(Res.GROUP, request.groupId, Op.READ))
      return TxnOffsetCommitResponse.create({ topics: request.topics.map(topicAnswer(ErrorCode.GROUP_AUTHORIZATION_FAILED)) });
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => TxnOffsetCommitResponse.create(),
      answerDenied: (response, denied) => void response.topics.push(...denied.map(topicAnswer(ErrorCode.TOPIC_AUTHORIZATION_FAILED))),
    });
  },
  handler:
    ({ cluster, logs, offsets: store, verifier, log, classicGroups, consumerGroups }) =>
    async (request, ctx) => {
      const byId = ctx.apiVersion >= FIRST_TOPIC_ID_VERSION;
      // Resolve every topic first: an unknown one fails only its own partitions.
      const topicNames = request.topics.map((t) => (byId ? cluster.topicById(t.topicId)?.name : cluster.topicByName(t.name)?.name));
      const respond = (code: (topicIndex: number) => number): TxnOffsetCommitResponse =>
        TxnOffsetCommitResponse.create({ topics: request.topics.map((t, i) => topicAnswer(code(i))(t)) });
      let groupError = store.coordinatorError(request.groupId);
      if (groupError === ErrorCode.NONE) {
        const { memberId, generationIdOrMemberEpoch: generation } = request;
        groupError =
          (memberId === '' && generation < 0 ? undefined : consumerGroups.validateCommit(request.groupId, memberId, generation)) ??
          classicGroups.validateCommit(request.groupId, memberId, generation, true);
      }
      if (groupError !== ErrorCode.NONE) return respond(() => groupError);
      const unknown = byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;

      const offsets: OffsetToCommit[] = [];
      request.topics.forEach((t, i) => {
        const name = topicNames[i];
        if (name === undefined) return;
        for (const p of t.partitions) {
          offsets.push({
            topic: name,
            partition: p.partitionIndex,
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata: p.committedMetadata,
          });
        }
      });
      let code: number = ErrorCode.NONE;
      if (offsets.length > 0) {
        try {
          const offsetsLog = logs.get(CONSUMER_OFFSETS_TOPIC, cluster.offsetsPartitionFor(request.groupId))!;
          await verifier.verifyWrite(offsetsLog, request.transactionalId, request.producerId, request.producerEpoch, ctx.apiVersion >= FIRST_TV2_VERSION);
          await store.commitTransactional(request.groupId, request.producerId, request.producerEpoch, offsets);
        } catch (error) {
          if (!(error instanceof BrokerError)) log(`TxnOffsetCommit for group ${request.groupId} failed: ${(error as Error).stack}`);
          code = errorCodeOf(error);
        }
      }
      return respond((i) => (topicNames[i] === undefined ? unknown : code));
    },
});
