/**
 * Typed client errors, mirroring Kafka's exceptions. Each says what to do next.
 *
 * The Kafka error codes the client handles are listed by hand below, copied
 * from kafka-facts/error-codes.tsv (code, name, retriable); nothing is read or
 * generated from that file at run time.
 */
import { UnsupportedVersionError as CodecUnsupportedVersionError } from '../runtime/errors.js';
export { NetworkError, RequestTimeoutError } from '../runtime/connection.js';

/** [name, retriable] of the error codes this client meets. */
const CODES: ReadonlyMap<number, readonly [string, boolean]> = new Map<number, readonly [string, boolean]>([
  [-1, ['UNKNOWN_SERVER_ERROR', false]],
  [2, ['CORRUPT_MESSAGE', true]],
  [3, ['UNKNOWN_TOPIC_OR_PARTITION', true]],
  [5, ['LEADER_NOT_AVAILABLE', true]],
  [6, ['NOT_LEADER_OR_FOLLOWER', true]],
  [7, ['REQUEST_TIMED_OUT', true]],
  [10, ['MESSAGE_TOO_LARGE', false]],
  [13, ['NETWORK_EXCEPTION', true]],
  [14, ['COORDINATOR_LOAD_IN_PROGRESS', true]],
  [15, ['COORDINATOR_NOT_AVAILABLE', true]],
  [16, ['NOT_COORDINATOR', true]],
  [17, ['INVALID_TOPIC_EXCEPTION', false]],
  [18, ['RECORD_LIST_TOO_LARGE', false]],
  [19, ['NOT_ENOUGH_REPLICAS', true]],
  [20, ['NOT_ENOUGH_REPLICAS_AFTER_APPEND', true]],
  [22, ['ILLEGAL_GENERATION', false]],
  [24, ['INVALID_GROUP_ID', false]],
  [25, ['UNKNOWN_MEMBER_ID', false]],
  [29, ['TOPIC_AUTHORIZATION_FAILED', false]],
  [30, ['GROUP_AUTHORIZATION_FAILED', false]],
  [35, ['UNSUPPORTED_VERSION', false]],
  [42, ['INVALID_REQUEST', false]],
  [45, ['OUT_OF_ORDER_SEQUENCE_NUMBER', false]],
  [46, ['DUPLICATE_SEQUENCE_NUMBER', false]],
  [47, ['INVALID_PRODUCER_EPOCH', false]],
  [48, ['INVALID_TXN_STATE', false]],
  [49, ['INVALID_PRODUCER_ID_MAPPING', false]],
  [50, ['INVALID_TRANSACTION_TIMEOUT', false]],
  [51, ['CONCURRENT_TRANSACTIONS', true]],
  [52, ['TRANSACTION_COORDINATOR_FENCED', false]],
  [53, ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', false]],
  [56, ['KAFKA_STORAGE_ERROR', true]],
  [59, ['UNKNOWN_PRODUCER_ID', false]],
  [69, ['GROUP_ID_NOT_FOUND', false]],
  [87, ['INVALID_RECORD', false]],
  [89, ['THROTTLING_QUOTA_EXCEEDED', true]],
  [90, ['PRODUCER_FENCED', false]],
  [100, ['UNKNOWN_TOPIC_ID', true]],
  [103, ['INCONSISTENT_TOPIC_ID', true]],
  [110, ['FENCED_MEMBER_EPOCH', false]],
  [113, ['STALE_MEMBER_EPOCH', false]],
  [120, ['TRANSACTION_ABORTABLE', false]],
  [121, ['INVALID_RECORD_STATE', false]],
  [122, ['SHARE_SESSION_NOT_FOUND', true]],
  [123, ['INVALID_SHARE_SESSION_EPOCH', true]],
  [124, ['FENCED_STATE_EPOCH', false]],
]);

export const Errors = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  ILLEGAL_GENERATION: 22,
  UNKNOWN_MEMBER_ID: 25,
  GROUP_AUTHORIZATION_FAILED: 30,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  CONCURRENT_TRANSACTIONS: 51,
  TRANSACTION_COORDINATOR_FENCED: 52,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  UNKNOWN_PRODUCER_ID: 59,
  PRODUCER_FENCED: 90,
  UNKNOWN_TOPIC_ID: 100,
  FENCED_MEMBER_EPOCH: 110,
  STALE_MEMBER_EPOCH: 113,
  TRANSACTION_ABORTABLE: 120,
  INVALID_RECORD_STATE: 121,
  SHARE_SESSION_NOT_FOUND: 122,
  INVALID_SHARE_SESSION_EPOCH: 123,
} as const;

/** `NOT_COORDINATOR (16)`. */
export function errorCodeName(code: number): string {
  return `${CODES.get(code)?.[0] ?? 'UNKNOWN_ERROR_CODE'} (${code})`;
}

export function isRetriableCode(code: number): boolean {
  return CODES.get(code)?.[1] ?? false;
}

/** The base of every error this client raises. */
export class KafkaError extends Error {
  override name = 'KafkaError';
  /** The Kafka error code behind this error, when the broker sent one. */
  readonly code: number | undefined;
  /** True when retrying the same operation may succeed. */
  readonly retriable: boolean;
  constructor(message: string, options: { code?: number; retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.retriable = options.retriable ?? (options.code !== undefined && isRetriableCode(options.code));
  }
}

/** An error code from the broker (Kafka's ApiException); `errorName` is Kafka's name of the code. */
export class ApiError extends KafkaError {
  override name = 'ApiError';
  readonly errorName: string;
  constructor(code: number, message: string, cause?: unknown) {
    super(message, { code, cause });
    this.errorName = CODES.get(code)?.[0] ?? 'UNKNOWN_ERROR_CODE';
  }
}

/** Another producer with the same transactional id has started (or the broker fenced this one). Fatal: close this producer. */
export class ProducerFencedError extends ApiError {
  override name = 'ProducerFencedError';
}

/** The producer epoch is stale (Kafka's InvalidProducerEpochException); the transaction was aborted by the coordinator. Fatal for this producer. */
export class InvalidProducerEpochError extends ApiError {
  override name = 'InvalidProducerEpochError';
}

/** The coordinator thinks the transaction is in another state. Fatal: close the producer and create a new one. */
export class InvalidTxnStateError extends ApiError {
  override name = 'InvalidTxnStateError';
}

/** The current transaction cannot commit: call abortTransaction(), then retry the work in a new transaction. */
export class TransactionAbortableError extends ApiError {
  override name = 'TransactionAbortableError';
}

/** Some acknowledged records are not (or no longer) acquired by this member; abort the transaction. */
export class InvalidRecordStateError extends ApiError {
  override name = 'InvalidRecordStateError';
}

/** Sequence numbers are out of order on the broker (Kafka's OutOfOrderSequenceException). */
export class OutOfOrderSequenceError extends ApiError {
  override name = 'OutOfOrderSequenceError';
}

/** The broker lacks the API or version this needs (Kafka's UnsupportedVersionException). */
export class UnsupportedVersionError extends CodecUnsupportedVersionError {
  override name = 'UnsupportedVersionError';
  readonly code = 35;
  readonly retriable = false;
}

/** An operation did not complete within its deadline (Kafka's TimeoutException). May be retried. */
export class KafkaTimeoutError extends KafkaError {
  override name = 'KafkaTimeoutError';
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: true, cause });
  }
}

/** A method was called in a state that does not allow it (Kafka's IllegalStateException); the message says what is allowed. */
export class IllegalStateError extends KafkaError {
  override name = 'IllegalStateError';
  constructor(message: string) {
    super(message, { retriable: false });
  }
}

/** The client was closed. */
export class ClientClosedError extends KafkaError {
  override name = 'ClientClosedError';
  constructor(what: string) {
    super(`${what} is closed`, { retriable: false });
  }
}

/** A bad setting or argument (Kafka's ConfigException / IllegalArgumentException). */
export class ConfigError extends KafkaError {
  override name = 'ConfigError';
}

/** A typed error for an error code, with `context` (what was being done) and the broker's message. */
export function errorFromCode(
  code: number,
  context: string,
  brokerMessage?: string | null,
): KafkaError | UnsupportedVersionError {
  const name = errorCodeName(code);
  const detail = brokerMessage ? `: ${brokerMessage}` : '';
  const base = `${context} failed with ${name}${detail}`;
  switch (code) {
    case Errors.PRODUCER_FENCED:
      return new ProducerFencedError(
        code,
        `${base}. Another producer with the same transactional.id has started, or the transaction coordinator fenced this one; ` +
          'this producer cannot be used any more: close() it (do not call abortTransaction()).',
      );
    case Errors.INVALID_PRODUCER_EPOCH:
      return new InvalidProducerEpochError(
        code,
        `${base}. The producer epoch is stale: the coordinator aborted the transaction (it timed out or a newer producer started). Close this producer and create a new one.`,
      );
    case Errors.TRANSACTION_ABORTABLE:
      return new TransactionAbortableError(
        code,
        `${base}. Call abortTransaction() and retry the work in a new transaction.`,
      );
    case Errors.INVALID_TXN_STATE:
      return new InvalidTxnStateError(
        code,
        `${base}. The transaction coordinator's state differs from this producer's; close the producer.`,
      );
    case Errors.INVALID_RECORD_STATE:
      return new InvalidRecordStateError(
        code,
        `${base}. The records are not acquired by this member any more (their lock expired, or another transaction holds them); abort the transaction — the records will be redelivered.`,
      );
    case Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
      return new OutOfOrderSequenceError(code, `${base}. The broker lost track of this producer's sequence numbers.`);
    case Errors.UNSUPPORTED_VERSION:
      return new UnsupportedVersionError(`${base}. The broker does not support this request; upgrade the broker.`);
    default: {
      const retriable = isRetriableCode(code);
      return new ApiError(code, retriable ? `${base} (retriable)` : base);
    }
  }
}

/** Errors a producer cannot recover from (Kafka's fatal transaction errors). */
export function isFatalTransactionError(error: unknown): boolean {
  return (
    error instanceof ProducerFencedError ||
    error instanceof InvalidProducerEpochError ||
    error instanceof InvalidTxnStateError ||
    (error instanceof ApiError &&
      (error.code === Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
        error.code === Errors.INVALID_PRODUCER_ID_MAPPING ||
        error.code === Errors.INVALID_TRANSACTION_TIMEOUT ||
        error.code === Errors.TRANSACTION_COORDINATOR_FENCED ||
        error.code === Errors.UNKNOWN_SERVER_ERROR))
  );
}
