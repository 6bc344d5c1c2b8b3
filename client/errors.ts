/**
 * Typed client errors, mirroring Kafka's exceptions. Each says what to do next.
 * Error codes, their names and retriability come from runtime/error-codes.ts.
 */
import { ErrorCode, errorCodeName as kafkaErrorCodeName, errorName, isRetriableErrorCode } from '../runtime/error-codes.js';
import { UnsupportedVersionError as CodecUnsupportedVersionError } from '../runtime/errors.js';
export { NetworkError, RequestTimeoutError, TlsHandshakeError } from '../connection/connection.js';

/** Error codes by Kafka's name: `Errors.NOT_COORDINATOR` is 16, `Errors.NONE` 0. */
export const Errors = ErrorCode;

/** `NOT_COORDINATOR (16)`. */
export const errorCodeName = kafkaErrorCodeName;

export const isRetriableCode = isRetriableErrorCode;

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
    this.errorName = errorName(code);
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

/**
 * The share-group membership behind acknowledgements of the open transaction
 * was lost, or a record came back into it (Kafka's CommitFailedException from
 * sendOffsetsToTransaction with a stale generation). The transaction is
 * abortable: call abortTransaction(); the records are delivered again.
 */
export class CommitFailedError extends KafkaError {
  override name = 'CommitFailedError';
  constructor(message: string, code?: number) {
    super(message, { code, retriable: false });
  }
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

/**
 * Authentication failed: wrong credentials, an unknown user, an expired or
 * invalid token, a mechanism the broker does not enable, or a broker whose SCRAM
 * proof is wrong (Kafka's SaslAuthenticationException). Not retriable: fix the
 * `sasl` settings. `mechanism` names the mechanism that was tried.
 */
export class SaslAuthenticationError extends ApiError {
  override name = 'SaslAuthenticationError';
  override readonly retriable = false;
  constructor(
    readonly mechanism: string,
    message: string,
    cause?: unknown,
    code: number = ErrorCode.SASL_AUTHENTICATION_FAILED,
  ) {
    super(code, message, cause);
  }
}

/** The principal may not do this (Kafka's AuthorizationException family). Not retriable: an administrator must grant an ACL. */
export class AuthorizationError extends ApiError {
  override name = 'AuthorizationError';
}

/** TOPIC_AUTHORIZATION_FAILED: no WRITE (produce) / READ (fetch) / DESCRIBE on the topic. */
export class TopicAuthorizationError extends AuthorizationError {
  override name = 'TopicAuthorizationError';
}

/** GROUP_AUTHORIZATION_FAILED: no READ (or DESCRIBE) on the consumer or share group. */
export class GroupAuthorizationError extends AuthorizationError {
  override name = 'GroupAuthorizationError';
}

/** TRANSACTIONAL_ID_AUTHORIZATION_FAILED: no WRITE on the transactional id. Fatal for a transactional producer. */
export class TransactionalIdAuthorizationError extends AuthorizationError {
  override name = 'TransactionalIdAuthorizationError';
}

/** CLUSTER_AUTHORIZATION_FAILED: the operation needs a permission on the cluster (IDEMPOTENT_WRITE, ALTER, ...). */
export class ClusterAuthorizationError extends AuthorizationError {
  override name = 'ClusterAuthorizationError';
}

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

/** Codes with a class of their own, which callers catch by type (Kafka's exceptions of the same names). */
const TYPED_API_ERRORS: Partial<Record<number, new (code: number, message: string) => ApiError>> = {
  [Errors.TOPIC_ALREADY_EXISTS]: TopicExistsError,
  [Errors.UNKNOWN_TOPIC_OR_PARTITION]: UnknownTopicOrPartitionError,
  [Errors.UNKNOWN_TOPIC_ID]: UnknownTopicIdError,
  [Errors.INVALID_TOPIC_EXCEPTION]: InvalidTopicError,
  [Errors.INVALID_PARTITIONS]: InvalidPartitionsError,
  [Errors.INVALID_REPLICATION_FACTOR]: InvalidReplicationFactorError,
  [Errors.INVALID_CONFIG]: InvalidConfigurationError,
  [Errors.INVALID_REQUEST]: InvalidRequestError,
  [Errors.POLICY_VIOLATION]: PolicyViolationError,
  [Errors.SECURITY_DISABLED]: SecurityDisabledError,
};

/** A typed error for an error code, with `context` (what was being done) and the broker's message. */
export function errorFromCode(code: number, context: string, brokerMessage?: string | null): KafkaError | UnsupportedVersionError {
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
      return new TransactionAbortableError(code, `${base}. Call abortTransaction() and retry the work in a new transaction.`);
    case Errors.INVALID_TXN_STATE:
      return new InvalidTxnStateError(code, `${base}. The transaction coordinator's state differs from this producer's; close the producer.`);
    case Errors.INVALID_RECORD_STATE:
      return new InvalidRecordStateError(
        code,
        `${base}. The records are not acquired by this member any more (their lock expired, or another transaction holds them); abort the transaction — the records will be redelivered.`,
      );
    case Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
      return new OutOfOrderSequenceError(code, `${base}. The broker lost track of this producer's sequence numbers.`);
    case Errors.TOPIC_AUTHORIZATION_FAILED:
      return new TopicAuthorizationError(code, `${base}. The principal may not use this topic; ask an administrator for an ACL (kipgen/Kafka CreateAcls).`);
    case Errors.GROUP_AUTHORIZATION_FAILED:
      return new GroupAuthorizationError(code, `${base}. The principal may not use this group; ask an administrator for a READ ACL on it.`);
    case Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return new TransactionalIdAuthorizationError(
        code,
        `${base}. The principal may not use this transactional id; ask an administrator for a WRITE ACL on it. This producer cannot continue.`,
      );
    case Errors.CLUSTER_AUTHORIZATION_FAILED:
      return new ClusterAuthorizationError(
        code,
        `${base}. The principal lacks a cluster permission this needs; ask an administrator for an ACL on the cluster.`,
      );
    case Errors.SASL_AUTHENTICATION_FAILED:
      return new SaslAuthenticationError('unknown', `${base}. Check the sasl settings.`);
    case Errors.UNSUPPORTED_VERSION:
      return new UnsupportedVersionError(`${base}. The broker does not support this request; upgrade the broker.`);
    default: {
      const message = isRetriableCode(code) ? `${base} (retriable)` : base;
      const Typed = TYPED_API_ERRORS[code];
      return Typed === undefined ? new ApiError(code, message) : new Typed(code, message);
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
