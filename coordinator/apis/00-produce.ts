/**
 * Produce (key 0): validate each partition's batch as a Kafka broker does, check a
 * transactional producer's first write to a partition with its transaction
 * coordinator, then append. acks=0 gets no response (the server drops it).
 *
 * Kafka: KafkaApis.handleProduceRequest, ReplicaManager.appendRecords /
 * handleProduceAppend, LogValidator (produce/batch-validation.ts).
 * - One batch per partition (Kafka's v2-only broker path too); the checks and the
 *   rebuild are in produce/batch-validation.ts, with where they deviate.
 * - Transactional batches without a transactional id, or of several producers,
 *   refuse the whole request (produce/transactional-producers.ts).
 * - v8+ carries the error message and record errors; v12+ is a Transactions V2
 *   producer (the leader adds the partition to the transaction itself); v13+
 *   names topics by id.
 * Rule: transactional records need a transactional id and WRITE on it, else the
 * whole request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (KafkaApis
 * .handleProduceRequest, with RequestUtils.hasTransactionalRecords): without it, a
 * principal with topic WRITE alone could append into another producer's open
 * transaction. Then WRITE on each topic, a denied one answered per partition. A
 * transactional id on a request without transactional records is checked too
 * (stricter than Kafka, which ignores it there; our clients set it only on
 * transactional requests).
 */
import { ProduceRequest, type TopicProduceData } from '../../generated/ProduceRequest.js';
import {
  createTopicProduceResponse,
  ProduceResponse,
  type PartitionProduceResponseInit,
  type TopicProduceResponseInit,
} from '../../generated/ProduceResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode, RecordValidationError, errorCodeOf } from '../errors.js';
import { validateProducedBatch } from '../produce/batch-validation.js';
import { transactionalProducers, transactionalRefusal } from '../produce/transactional-producers.js';
import { resolveTopic } from '../resolve-topic.js';
import { defineApi } from './define.js';

/** A topic's partitions all answered with `code` (a denial). */
const deniedTopic =
  (code: number) =>
  (t: TopicProduceData): TopicProduceResponseInit => ({
    name: t.name,
    topicId: t.topicId,
    partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: code, baseOffset: -1n, logStartOffset: -1n })),
  });

export default defineApi({
  request: ProduceRequest,
  response: ProduceResponse,
  authorize: async (request, check, _ctx, next) => {
    const transactional = transactionalProducers(request.topicData).any;
    const txnIdAllowed = request.transactionalId ? check.allow(Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE) : !transactional;
    if (!txnIdAllowed) return ProduceResponse.create({ responses: request.topicData.map(deniedTopic(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)) });
    return splitEntries(request, next, {
      entries: request.topicData,
      allowed: (t) => topicAllowed(check, t, Op.WRITE),
      keep: (topicData) => ({ ...request, topicData }),
      empty: () => ProduceResponse.create(),
      answerDenied: (response, denied) =>
        response.responses.push(...denied.map((t) => createTopicProduceResponse(deniedTopic(ErrorCode.TOPIC_AUTHORIZATION_FAILED)(t)))),
    });
  },
  handler: ({ cluster, logs, verifier, log, config }) => {
    // The most records one batch may hold: the broker's element budget (batch-validation.ts says why).
    const maxBatchRecords = config.maxRequestElements;
    return async (request, ctx) => {
      const v = ctx.apiVersion;
      const acksValid = request.acks === -1 || request.acks === 0 || request.acks === 1;
      const refusal = transactionalRefusal(request.transactionalId, request.topicData);
      if (refusal !== null) {
        // The whole request, every partition, as Kafka's ProduceRequest.getErrorResponse.
        const errorMessage = v >= 8 ? refusal.message : null;
        return ProduceResponse.create({
          responses: request.topicData.map((t) => ({
            name: t.name,
            topicId: t.topicId,
            partitionResponses: t.partitionData.map((pd) => ({
              index: pd.index,
              errorCode: refusal.code,
              baseOffset: -1n,
              logAppendTimeMs: -1n,
              logStartOffset: -1n,
              recordErrors: [],
              errorMessage,
              currentLeader: { leaderId: -1, leaderEpoch: -1 },
            })),
          })),
          throttleTimeMs: 0,
        });
      }
      const responses: TopicProduceResponseInit[] = [];
      for (const topicData of request.topicData) {
        const partitionResponses: PartitionProduceResponseInit[] = [];
        for (const pd of topicData.partitionData) {
          const answer = (
            errorCode: number,
            baseOffset = -1n,
            logStartOffset = -1n,
            errorMessage: string | null = null,
            logAppendTimeMs = -1n,
            recordErrors: RecordValidationError['recordErrors'] = [],
          ): PartitionProduceResponseInit => ({
            index: pd.index,
            errorCode,
            baseOffset,
            logAppendTimeMs,
            logStartOffset,
            recordErrors: v >= 8 ? [...recordErrors] : [],
            errorMessage: v >= 8 ? errorMessage : null,
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
          });
          if (!acksValid) {
            partitionResponses.push(answer(ErrorCode.INVALID_REQUIRED_ACKS, -1n, -1n, `acks must be -1, 0 or 1, got ${request.acks}`));
            continue;
          }
          const topic = resolveTopic(cluster, v >= 13 ? { topicId: topicData.topicId } : { name: topicData.name }, pd.index);
          if ('error' in topic) {
            partitionResponses.push(answer(topic.error, -1n, -1n, topic.message));
            continue;
          }
          if (topic.info.internal) {
            partitionResponses.push(answer(ErrorCode.INVALID_TOPIC_EXCEPTION, -1n, -1n, `cannot produce to internal topic ${topic.info.name}`));
            continue;
          }
          const partitionLog = logs.get(topic.info.name, pd.index);
          if (partitionLog === undefined) {
            partitionResponses.push(answer(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1n, -1n, `node ${cluster.nodeId} does not lead ${topic.info.name}-${pd.index}`));
            continue;
          }
          let appending = false;
          try {
            const { bytes, header } = validateProducedBatch(pd.records, v, topic.info, maxBatchRecords);
            if (header.isTransactional) await verifier.verifyWrite(partitionLog, request.transactionalId, header.producerId, header.producerEpoch, v >= 12);
            appending = true;
            const info = await partitionLog.append(bytes, header);
            // The log's append time on a LogAppendTime topic, -1 otherwise (Kafka's LogAppendInfo.logAppendTime).
            partitionResponses.push(answer(ErrorCode.NONE, info.baseOffset, partitionLog.logStartOffset(), null, info.logAppendTime));
          } catch (error) {
            if (!(error instanceof BrokerError)) log(`produce to ${topic.info.name}-${pd.index} failed: ${(error as Error).stack}`);
            // The log refusing the batch (sequence, epoch) still reports its start offset, as Kafka's
            // ReplicaManager.appendToLocalLog does for append errors; a batch refused before the log
            // (corrupt, invalid, failed verification) reports -1.
            const logStartOffset = appending ? partitionLog.logStartOffset() : -1n;
            const recordErrors = error instanceof RecordValidationError ? error.recordErrors : [];
            partitionResponses.push(answer(errorCodeOf(error), -1n, logStartOffset, (error as Error).message, -1n, recordErrors));
          }
        }
        responses.push({ name: topicData.name, topicId: topicData.topicId, partitionResponses });
      }
      return ProduceResponse.create({ responses, throttleTimeMs: 0 });
    };
  },
});
