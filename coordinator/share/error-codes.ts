import { KafkaError } from '../errors.js';

/**
 * The Kafka error codes the share coordinator answers with (from
 * shared/kafka-facts/error-codes.tsv; SHARE_SESSION_LIMIT_REACHED is Kafka's 133,
 * newer than that table).
 */
export const ErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  ILLEGAL_GENERATION: 22,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
  KAFKA_STORAGE_ERROR: 56,
  GROUP_ID_NOT_FOUND: 69,
  PRODUCER_FENCED: 90,
  UNKNOWN_TOPIC_ID: 100,
  FENCED_MEMBER_EPOCH: 110,
  INVALID_RECORD_STATE: 121,
  SHARE_SESSION_NOT_FOUND: 122,
  INVALID_SHARE_SESSION_EPOCH: 123,
  SHARE_SESSION_LIMIT_REACHED: 133,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** The name of a code this module uses, for messages and dumps. */
export function errorName(code: number): string {
  return NAMES.get(code) ?? `ERROR_${code}`;
}

/**
 * A failure that maps to one Kafka error code; handlers turn it into a
 * response field. A KafkaError, so that one escaping a handler still becomes
 * an error response rather than a closed connection.
 */
export class ShareError extends KafkaError {
  override name = 'ShareError';
}
