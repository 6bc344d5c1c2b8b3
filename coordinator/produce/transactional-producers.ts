/**
 * What a Produce request's batches say about transactions, read before any
 * partition is handled: whether any batch is transactional (Kafka's
 * RequestUtils.hasTransactionalRecords) and which producers wrote them
 * (ReplicaManager.handleProduceAppend's transactionalProducerInfo).
 *
 * Only the v2 batch header is read, batch after batch, without checking the
 * CRC: the per-partition validation that follows refuses bad batches anyway,
 * and a request-wide decision must not depend on which partition fails first.
 */
import { LOG_OVERHEAD, RECORD_BATCH_OVERHEAD } from '../../runtime/record-batch.js';
import { ErrorCode } from '../errors.js';

/** The v2 batch header fields read here (DefaultRecordBatch); the sizes come from runtime/record-batch.ts. */
const BATCH_LENGTH_AT = 8;
const MAGIC_AT = 16;
const ATTRIBUTES_AT = 21;
const PRODUCER_ID_AT = 43;
const PRODUCER_EPOCH_AT = 51;
const TRANSACTIONAL_FLAG = 0x10;

/**
 * A request's answer, kept while its topic list lives: Produce's rule and its handler
 * both ask, and the headers of every batch are read once per request, not twice.
 */
const scanned = new WeakMap<readonly ProduceTopicData[], TransactionalProducers>();

export interface TransactionalProducers {
  /** Some batch of the request is transactional. */
  any: boolean;
  /** The distinct `producerId:epoch` of the transactional batches. */
  producers: Set<string>;
}

interface ProduceTopicData {
  partitionData: readonly { records: Uint8Array | null }[];
}

export function transactionalProducers(topicData: readonly ProduceTopicData[]): TransactionalProducers {
  const known = scanned.get(topicData);
  if (known !== undefined) return known;
  const result: TransactionalProducers = { any: false, producers: new Set() };
  scanned.set(topicData, result);
  for (const topic of topicData) {
    for (const partition of topic.partitionData) {
      const records = partition.records;
      if (records === null) continue;
      const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
      for (let at = 0; at + RECORD_BATCH_OVERHEAD <= records.length;) {
        if (records[at + MAGIC_AT] !== 2) break;
        if ((view.getInt16(at + ATTRIBUTES_AT) & TRANSACTIONAL_FLAG) !== 0) {
          result.any = true;
          const producerId = view.getBigInt64(at + PRODUCER_ID_AT);
          // Kafka counts only batches that carry a producer id (RecordBatch.hasProducerId).
          if (producerId >= 0n) result.producers.add(`${producerId}:${view.getInt16(at + PRODUCER_EPOCH_AT)}`);
        }
        const length = view.getInt32(at + BATCH_LENGTH_AT);
        if (length <= 0) break;
        at += LOG_OVERHEAD + length;
      }
    }
  }
  return result;
}

/**
 * Why a Produce request's transactional batches cannot be taken at all, or null.
 * They bind the request to one transaction: they need the request's transactional
 * id (KafkaApis.handleProduceRequest answers the whole request
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one, authorizer or not; WRITE on the
 * id is checked by Produce's rule, apis/00-produce.ts) and one producer
 * (ReplicaManager.handleProduceAppend refuses transactional batches of several
 * producer ids or epochs with INVALID_PRODUCER_ID_MAPPING). Which producer owns the
 * transactional id is checked by the coordinator when the partition joins the
 * transaction (TransactionVerifier).
 */
export function transactionalRefusal(transactionalId: string | null, topicData: readonly ProduceTopicData[]): { code: number; message: string } | null {
  const txn = transactionalProducers(topicData);
  if (!txn.any) return null;
  if (transactionalId === null || transactionalId === '') {
    return { code: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message: 'transactional records need the transactional id they belong to' };
  }
  if (txn.producers.size > 1) {
    return {
      code: ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      message: `transactional records of more than one producer id and epoch (${[...txn.producers].join(', ')})`,
    };
  }
  return null;
}
