/**
 * The checks Kafka's LogValidator makes on a producer's batch before it is
 * appended, and the rebuild it does when a batch cannot be stored as sent.
 *
 * Every batch is decompressed and its records decoded, whatever the codec:
 * a corrupt payload is CORRUPT_MESSAGE, a codec whose library is not
 * installed is UNSUPPORTED_COMPRESSION_TYPE. The batch is rebuilt (recompressed)
 * when the topic's compression.type names another codec, and when its inner
 * offsets are not 0, 1, 2, ... (Kafka rewrites such batches from old clients
 * rather than refusing them). Otherwise it is stored as sent, with its
 * maxTimestamp set from its records as Kafka sets it.
 *
 * On a LogAppendTime topic the log, not this module, stamps the batch with the
 * append time (PartitionLog.append, as LogValidator does while assigning offsets).
 *
 * A batch that decodes but cannot be rebuilt: records with a negative
 * timestamp (other than -1, "none"). Kafka stores them as sent when it need
 * not rebuild the batch, as we do; when it must, its MemoryRecordsBuilder
 * throws IllegalArgumentException ("Invalid negative timestamp") and the
 * producer gets UNKNOWN_SERVER_ERROR. We answer INVALID_TIMESTAMP instead,
 * with a record error per such record (LogValidator.processRecordErrors'
 * form), and any other refusal of the rebuild as INVALID_RECORD: never an
 * internal error.
 *
 * Not checked: the message.timestamp.before/after.max.ms range of CreateTime
 * timestamps (accepted as topic configs but not enforced; Kafka's
 * LogValidator.validateTimestamp applies it to CreateTime topics only, so a
 * LogAppendTime topic takes any producer timestamp), and keys on compacted topics.
 */
import {
  CompressionUnavailableError,
  DecodeError,
  EncodeError,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  setBatchMaxTimestamp,
  verifyCrc,
  type CompressionType,
  type RecordBatch,
  type RecordBatchHeader,
} from '../../runtime/index.js';
import type { TopicInfo } from '../broker-context.js';
import { ErrorCode, BrokerError, RecordValidationError } from '../errors.js';

export interface ValidatedBatch {
  /** The batch to append: the request's bytes, or the rebuilt batch. */
  bytes: Uint8Array;
  header: RecordBatchHeader;
  /** True when the batch was rebuilt (another codec, or renumbered inner offsets). */
  rebuilt: boolean;
}

/** Produce v7 brought zstd (KIP-110); older requests may not use it. */
const ZSTD_MIN_PRODUCE_VERSION = 7;

export function validateProducedBatch(
  records: Uint8Array | null,
  produceVersion: number,
  topic: Pick<TopicInfo, 'compressionType' | 'compressionLevel' | 'maxMessageBytes'>,
  maxRecords = Infinity,
): ValidatedBatch {
  const header = checkFraming(records);
  const bytes = records!;
  // Kafka's UnifiedLog.analyzeAndValidateRecords: a batch, as the producer sent it, larger than the topic's
  // max.message.bytes is refused with RecordTooLargeException (MESSAGE_TOO_LARGE), before any recompression.
  if (header.sizeInBytes > topic.maxMessageBytes) {
    throw new BrokerError(
      ErrorCode.MESSAGE_TOO_LARGE,
      `the record batch is ${header.sizeInBytes} bytes, more than the topic's max.message.bytes (${topic.maxMessageBytes})`,
    );
  }
  // Every record is decoded below, some 150 bytes of objects each: a compressed
  // batch of minimal records (8 bytes each, 64 MiB inflated) would be 8 million
  // of them. Kafka's LogValidator streams records and needs no bound; this is
  // the broker's element budget (request-budget.ts) applied to one batch.
  if (header.recordCount > maxRecords) {
    throw new BrokerError(
      ErrorCode.RECORD_LIST_TOO_LARGE,
      `the record batch holds ${header.recordCount} records, more than the ${maxRecords} the broker decodes in one batch (maxRequestElements)`,
    );
  }
  if (header.compression === 'zstd' && produceVersion < ZSTD_MIN_PRODUCE_VERSION) {
    throw new BrokerError(
      ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      `zstd batches need Produce v${ZSTD_MIN_PRODUCE_VERSION} or later, this request is v${produceVersion}`,
    );
  }
  if (header.timestampType === 'LogAppendTime') {
    throw new BrokerError(ErrorCode.INVALID_TIMESTAMP, 'producers may not set the LogAppendTime timestamp type; the broker sets it');
  }
  const batch = decodeRecords(bytes, header);

  let sequential = true;
  let maxTimestamp = -1n;
  for (let i = 0; i < batch.records.length; i++) {
    const record = batch.records[i]!;
    if (record.offset - header.baseOffset !== BigInt(i)) sequential = false;
    if (record.timestamp > maxTimestamp) maxTimestamp = record.timestamp;
  }
  const target = targetCodec(topic, header.compression);
  if (target !== header.compression || !sequential) {
    refuseNegativeTimestamps(batch);
    const rebuilt = rebuild(batch, target, target === topic.compressionType ? topic.compressionLevel : undefined);
    return { bytes: rebuilt, header: readBatchHeader(rebuilt), rebuilt: true };
  }
  if (maxTimestamp !== header.maxTimestamp) {
    setBatchMaxTimestamp(bytes, 0, 'CreateTime', maxTimestamp);
    return { bytes, header: readBatchHeader(bytes), rebuilt: false };
  }
  return { bytes, header, rebuilt: false };
}

/** One v2 batch exactly, with a good CRC and a header a client may send (LogValidator.validateBatch). */
function checkFraming(records: Uint8Array | null): RecordBatchHeader {
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
  if (header.lastOffsetDelta + 1 !== header.recordCount) {
    throw new BrokerError(
      ErrorCode.INVALID_RECORD,
      `inconsistent batch: its offset range [0, ${header.lastOffsetDelta}] and its count of ${header.recordCount} records disagree`,
    );
  }
  if (header.producerId >= 0n && header.baseSequence < 0) {
    throw new BrokerError(ErrorCode.INVALID_RECORD, `invalid sequence number ${header.baseSequence} in a batch with producer id ${header.producerId}`);
  }
  return header;
}

function decodeRecords(bytes: Uint8Array, header: RecordBatchHeader): RecordBatch {
  try {
    return decodeRecordBatch(bytes, 0, { checkCrc: false });
  } catch (error) {
    if (error instanceof CompressionUnavailableError) throw new BrokerError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, error.message);
    const reason = error instanceof DecodeError ? error.message : String(error);
    throw new BrokerError(ErrorCode.CORRUPT_MESSAGE, header.compression === 'none' ? reason : `${header.compression} batch: ${reason}`);
  }
}

function targetCodec(topic: Pick<TopicInfo, 'compressionType'>, sent: CompressionType): CompressionType {
  switch (topic.compressionType) {
    case 'producer':
      return sent;
    case 'uncompressed':
      return 'none';
    default:
      return topic.compressionType;
  }
}

/** No timestamp below -1 in a batch about to be rebuilt (see the module comment). */
function refuseNegativeTimestamps(batch: RecordBatch): void {
  const recordErrors: { batchIndex: number; batchIndexErrorMessage: string }[] = [];
  batch.records.forEach((record, i) => {
    if (record.timestamp < -1n) {
      recordErrors.push({
        batchIndex: i,
        batchIndexErrorMessage: `Timestamp ${record.timestamp} of message with offset ${record.offset} is negative; the batch must be rebuilt (recompressed or renumbered) and cannot carry it`,
      });
    }
  });
  if (recordErrors.length > 0) {
    throw new RecordValidationError(ErrorCode.INVALID_TIMESTAMP, 'One or more records have been rejected due to invalid timestamp', recordErrors);
  }
}

/**
 * The batch again, in `codec`, with inner offsets 0..n-1 and every producer
 * field kept (MemoryRecordsBuilder in LogValidator.buildRecordsAndAssignOffsets).
 */
function rebuild(batch: RecordBatch, codec: CompressionType, level: number | undefined): Uint8Array {
  try {
    return encodeRecordBatch({
      baseOffset: 0n,
      partitionLeaderEpoch: batch.partitionLeaderEpoch,
      compression: codec,
      compressionLevel: level,
      isTransactional: batch.isTransactional,
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: batch.baseSequence,
      records: batch.records.map((record, i) => ({
        offset: BigInt(i),
        timestamp: record.timestamp,
        key: record.key,
        value: record.value,
        headers: record.headers,
      })),
    });
  } catch (error) {
    if (error instanceof CompressionUnavailableError)
      throw new BrokerError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `the topic's compression.type: ${error.message}`);
    // A decoded batch the encoder still refuses (e.g. timestamps whose delta from the first exceeds int64).
    if (error instanceof EncodeError) throw new BrokerError(ErrorCode.INVALID_RECORD, `the batch cannot be rebuilt: ${error.message}`);
    throw error;
  }
}
