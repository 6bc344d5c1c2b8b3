/**
 * Produce: validate each partition's batch as a Kafka broker does, check a
 * transactional producer's first write to a partition with its transaction
 * coordinator, then append. acks=0 gets no response (the server drops it).
 */
import { ProduceResponse } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeOf } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { TransactionVerifier } from '../txn/verifier.js';
import { validateProducedBatch } from './produce-validation.js';
import { resolveTopic } from './topics.js';

export function produceHandler(cluster: Cluster, logs: LogManager, verifier: TransactionVerifier, log: (line: string) => void): Handler {
  return async (req, ctx) => {
    const v = ctx.apiVersion;
    const acksValid = req.acks === -1 || req.acks === 0 || req.acks === 1;
    const responses = [];
    for (const topicData of req.topicData) {
      const partitionResponses = [];
      for (const pd of topicData.partitionData) {
        const answer = (errorCode: number, baseOffset = -1n, logStartOffset = -1n, errorMessage: string | null = null, logAppendTimeMs = -1n) => ({
          index: pd.index,
          errorCode,
          baseOffset,
          logAppendTimeMs,
          logStartOffset,
          recordErrors: [],
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
          const { bytes, header } = validateProducedBatch(pd.records, v, topic.info);
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
          partitionResponses.push(answer(errorCodeOf(error), -1n, logStartOffset, (error as Error).message));
        }
      }
      responses.push({ name: topicData.name, topicId: topicData.topicId, partitionResponses });
    }
    return ProduceResponse.create({ responses, throttleTimeMs: 0 });
  };
}
