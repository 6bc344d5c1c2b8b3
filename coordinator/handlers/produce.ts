/**
 * Produce: validate each partition's batch as a Kafka broker does, check a
 * transactional producer's first write to a partition with its transaction
 * coordinator, then append. acks=0 gets no response (the server drops it).
 */
import { ProduceResponse } from '../../generated/index.js';
import { DecodeError, decodeRecordBatch, readBatchHeader, verifyCrc, type RecordBatchHeader } from '../../runtime/index.js';
import type { Handler } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeOf } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { TransactionVerifier } from '../txn/verifier.js';
import { resolveTopic } from './topics.js';

export function produceHandler(cluster: Cluster, logs: LogManager, verifier: TransactionVerifier, log: (line: string) => void): Handler {
  return async (req, ctx) => {
    const v = ctx.apiVersion;
    const acksValid = req.acks === -1 || req.acks === 0 || req.acks === 1;
    const responses = [];
    for (const topicData of req.topicData) {
      const partitionResponses = [];
      for (const pd of topicData.partitionData) {
        const answer = (errorCode: number, baseOffset = -1n, logStartOffset = -1n, errorMessage: string | null = null) => ({
          index: pd.index,
          errorCode,
          baseOffset,
          logAppendTimeMs: -1n,
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
        try {
          const header = validateBatch(pd.records);
          if (header.isTransactional) await verifier.verifyWrite(partitionLog, req.transactionalId, header.producerId, header.producerEpoch, v >= 12);
          const info = await partitionLog.append(pd.records, header);
          partitionResponses.push(answer(ErrorCode.NONE, info.baseOffset, partitionLog.logStartOffset()));
        } catch (error) {
          if (!(error instanceof BrokerError)) log(`produce to ${topic.info.name}-${pd.index} failed: ${(error as Error).stack}`);
          partitionResponses.push(answer(errorCodeOf(error), -1n, -1n, (error as Error).message));
        }
      }
      responses.push({ name: topicData.name, topicId: topicData.topicId, partitionResponses });
    }
    return ProduceResponse.create({ responses, throttleTimeMs: 0 });
  };
}

/**
 * The checks Kafka makes before appending (LogValidator): exactly one v2
 * batch (Produce v3+), a good CRC, records that decode (when the codec is one
 * the runtime can read; other codecs are stored as sent), no control batch.
 */
function validateBatch(records: Uint8Array | null): RecordBatchHeader {
  if (records === null || records.length === 0) throw new BrokerError(ErrorCode.INVALID_RECORD, 'the partition data holds no record batch');
  let header: RecordBatchHeader;
  try {
    header = readBatchHeader(records);
  } catch (error) {
    const magic = records.length > 16 ? records[16] : undefined;
    if (magic !== undefined && magic !== 2) {
      throw new BrokerError(ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, `record batch magic ${magic}: only v2 batches are accepted`);
    }
    throw new BrokerError(ErrorCode.CORRUPT_MESSAGE, `unreadable record batch: ${(error as Error).message}`);
  }
  if (header.sizeInBytes !== records.length) {
    throw new BrokerError(
      ErrorCode.INVALID_RECORD,
      header.sizeInBytes < records.length
        ? 'Produce requests may hold exactly one record batch per partition; found more bytes after the first'
        : `the record batch declares ${header.sizeInBytes} bytes but ${records.length} were sent`,
    );
  }
  if (!verifyCrc(records, 0, header)) throw new BrokerError(ErrorCode.CORRUPT_MESSAGE, 'record batch CRC-32C does not match its bytes');
  if (header.isControl) throw new BrokerError(ErrorCode.INVALID_RECORD, 'clients may not produce control batches');
  if (header.isTransactional && header.producerId < 0n) throw new BrokerError(ErrorCode.INVALID_RECORD, 'a transactional batch needs a producer id');
  if (header.recordCount <= 0) throw new BrokerError(ErrorCode.INVALID_RECORD, 'the record batch holds no records');
  if (header.compression === 'none' || header.compression === 'gzip') {
    try {
      decodeRecordBatch(records, 0, { checkCrc: false });
    } catch (error) {
      throw new BrokerError(ErrorCode.CORRUPT_MESSAGE, error instanceof DecodeError ? error.message : String(error));
    }
  }
  return header;
}
