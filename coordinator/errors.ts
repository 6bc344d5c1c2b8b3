/**
 * Kafka error codes the broker answers with (kafka-facts/error-codes.tsv), and
 * KafkaError, which handlers and logs throw to carry one of them to the reply.
 */

export const ErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  MESSAGE_TOO_LARGE: 10,
  NETWORK_EXCEPTION: 13,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  NOT_ENOUGH_REPLICAS: 19,
  INVALID_REQUIRED_ACKS: 21,
  INVALID_GROUP_ID: 24,
  UNSUPPORTED_VERSION: 35,
  INVALID_PARTITIONS: 37,
  INVALID_REQUEST: 42,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 43,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  CONCURRENT_TRANSACTIONS: 51,
  TRANSACTION_COORDINATOR_FENCED: 52,
  KAFKA_STORAGE_ERROR: 56,
  UNKNOWN_PRODUCER_ID: 59,
  OPERATION_NOT_ATTEMPTED: 55,
  FETCH_SESSION_ID_NOT_FOUND: 70,
  INVALID_FETCH_SESSION_EPOCH: 71,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  INVALID_RECORD: 87,
  UNSTABLE_OFFSET_COMMIT: 88,
  PRODUCER_FENCED: 90,
  UNKNOWN_TOPIC_ID: 100,
  INCONSISTENT_TOPIC_ID: 103,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  TRANSACTION_ABORTABLE: 120,
  INVALID_RECORD_STATE: 121,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** `INVALID_TXN_STATE (48)`, for logs and messages. */
export function errorName(code: number): string {
  return `${NAMES.get(code) ?? 'ERROR'} (${code})`;
}

/** An error the broker reports to the client as a Kafka error code; `message` says what was wrong. */
export class KafkaError extends Error {
  override name = 'KafkaError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The error code to answer with for anything a handler threw. */
export function errorCodeOf(error: unknown): number {
  return error instanceof KafkaError ? error.code : ErrorCode.UNKNOWN_SERVER_ERROR;
}
