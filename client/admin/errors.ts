/**
 * The typed errors of Admin calls that Kafka users catch by class
 * (org.apache.kafka.common.errors: TopicExistsException, UnknownTopicOrPartitionException,
 * ...), and the error of one entry of a response. Codes without a class of their
 * own here get client/errors.ts's (authorization, UNSUPPORTED_VERSION, ...).
 */
import { ErrorCode } from '../../runtime/error-codes.js';
import { ApiError, errorFromCode } from '../errors.js';
import type { EntryError } from './result.js';

/** TOPIC_ALREADY_EXISTS (Kafka's TopicExistsException). */
export class TopicExistsError extends ApiError {
  override name = 'TopicExistsError';
}

/** UNKNOWN_TOPIC_OR_PARTITION (Kafka's UnknownTopicOrPartitionException). */
export class UnknownTopicOrPartitionError extends ApiError {
  override name = 'UnknownTopicOrPartitionError';
}

/** UNKNOWN_TOPIC_ID (Kafka's UnknownTopicIdException). */
export class UnknownTopicIdError extends ApiError {
  override name = 'UnknownTopicIdError';
}

/** INVALID_TOPIC_EXCEPTION (Kafka's InvalidTopicException): a name or id that cannot be a topic's. */
export class InvalidTopicError extends ApiError {
  override name = 'InvalidTopicError';
}

/** INVALID_PARTITIONS (Kafka's InvalidPartitionsException). */
export class InvalidPartitionsError extends ApiError {
  override name = 'InvalidPartitionsError';
}

/** INVALID_REPLICATION_FACTOR (Kafka's InvalidReplicationFactorException). */
export class InvalidReplicationFactorError extends ApiError {
  override name = 'InvalidReplicationFactorError';
}

/** INVALID_CONFIG (Kafka's InvalidConfigurationException). */
export class InvalidConfigurationError extends ApiError {
  override name = 'InvalidConfigurationError';
}

/** INVALID_REQUEST (Kafka's InvalidRequestException). */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
}

/** POLICY_VIOLATION (Kafka's PolicyViolationException). */
export class PolicyViolationError extends ApiError {
  override name = 'PolicyViolationError';
}

/** SECURITY_DISABLED (Kafka's SecurityDisabledException): the broker has no authorizer. */
export class SecurityDisabledError extends ApiError {
  override name = 'SecurityDisabledError';
}

const TYPED: Partial<Record<number, new (code: number, message: string) => ApiError>> = {
  [ErrorCode.TOPIC_ALREADY_EXISTS]: TopicExistsError,
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: UnknownTopicOrPartitionError,
  [ErrorCode.UNKNOWN_TOPIC_ID]: UnknownTopicIdError,
  [ErrorCode.INVALID_TOPIC_EXCEPTION]: InvalidTopicError,
  [ErrorCode.INVALID_PARTITIONS]: InvalidPartitionsError,
  [ErrorCode.INVALID_REPLICATION_FACTOR]: InvalidReplicationFactorError,
  [ErrorCode.INVALID_CONFIG]: InvalidConfigurationError,
  [ErrorCode.INVALID_REQUEST]: InvalidRequestError,
  [ErrorCode.POLICY_VIOLATION]: PolicyViolationError,
  [ErrorCode.SECURITY_DISABLED]: SecurityDisabledError,
};

/** The error of one entry: `context` says which (e.g. "createTopics of topic orders"), with the broker's message. */
export function entryError(code: number, context: string, brokerMessage?: string | null): EntryError {
  const Typed = TYPED[code];
  if (Typed === undefined) return errorFromCode(code, context, brokerMessage);
  const name = errorFromCode(code, context, brokerMessage).message;
  return new Typed(code, name);
}

/** InvalidTopicError for a name or id the client will not send (Kafka's topicNameIsUnrepresentable), without asking the broker. */
export function unrepresentable(what: string, value: string): EntryError {
  return new InvalidTopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, `The given ${what} '${value}' cannot be represented in a request.`);
}
