/**
 * Produce: validate each partition's batch as a Kafka broker does, check a
 * transactional producer's first write to a partition with its transaction
 * coordinator, then append. acks=0 gets no response (the server drops it).
 */
import { ProduceResponse } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, RecordValidationError, errorCodeOf } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { TransactionVerifier } from '../txn/verifier.js';
import { transactionalProducers } from './produce-transactional.js';
import { validateProducedBatch } from './produce-validation.js';
import { resolveTopic } from './topics.js';

/** `maxBatchRecords`: the most records one batch may hold (the broker's maxRequestElements). */
export function produceHandler(cluster: Cluster, logs: LogManager, verifier: TransactionVerifier, log: (line: string) => void, maxBatchRecords = Infinity): Handler {
  return async (req, ctx) => {
    const v = ctx.apiVersion;
    const acksValid = req.acks === -1 || req.acks === 0 || req.acks === 1;
    const refusal = transactionalRefusal(req);
    if (refusal !== null) {
      // The whole request, every partition, as Kafka's ProduceRequest.getErrorResponse.
      const errorMessage = v >= 8 ? refusal.message : null;
      return ProduceResponse.create({
        responses: req.topicData.map((t: any) => ({
          name: t.name,
          topicId: t.topicId,
          partitionResponses: t.partitionData.map((pd: any) => ({ index: pd.index, errorCode: refusal.code, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage, currentLeader: { leaderId: -1, leaderEpoch: -1 } })),
        })),
        throttleTimeMs: 0,
      });
    }
    const responses = [];
    for (const topicData of req.topicData) {
      const partitionResponses = [];
      for (const pd of topicData.partitionData) {
        const answer = (
          errorCode: number,
          baseOffset = -1n,
          logStartOffset = -1n,
          errorMessage: string | null = null,
          logAppendTimeMs = -1n,
          recordErrors: RecordValidationError['recordErrors'] = [],
        ) => ({
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
          partitionResponses.push(answer(ErrorCode.INVALID_REQUIRED_ACKS, -1n, -1n, `acks must be -1, 0 or 1, got ${req.acks}`));
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
          if (header.isTransactional) await verifier.verifyWrite(partitionLog, req.transactionalId, header.producerId, header.producerEpoch, v >= 12);
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
}

/**
 * Transactional batches bind the request to one transaction: they need the
 * request's transactional id (KafkaApis.handleProduceRequest answers the whole
 * request TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one, authorizer or
 * not; WRITE on the id is checked by the ACL rule, coordinator/auth/api-acls.ts)
 * and one producer (ReplicaManager.handleProduceAppend refuses transactional
 * batches of several producer ids or epochs with INVALID_PRODUCER_ID_MAPPING).
 * Which producer owns the transactional id is checked by the coordinator when
 * the partition joins the transaction (TransactionVerifier).
 */
function transactionalRefusal(req: { transactionalId: string | null; topicData: any[] }): { code: number; message: string } | null {
  const txn = transactionalProducers(req.topicData);
  if (!txn.any) return null;
  if (req.transactionalId === null || req.transactionalId === '') {
    return { code: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message: 'transactional records need the transactional id they belong to' };
  }
  if (txn.producers.size > 1) {
    return { code: ErrorCode.INVALID_PRODUCER_ID_MAPPING, message: `transactional records of more than one producer id and epoch (${[...txn.producers].join(', ')})` };
  }
  return null;
}
