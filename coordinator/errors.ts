/**
 * BrokerError, which handlers and logs throw to carry a Kafka error code
 * (runtime/error-codes.ts) to the reply. The broker's own hierarchy, named
 * apart from the client's KafkaError (client/errors.ts): one error hierarchy
 * per layer, each with its own names.
 */
import { ErrorCode } from '../runtime/error-codes.js';

export { ErrorCode, errorCodeName } from '../runtime/error-codes.js';

/** An error the broker reports to the client as a Kafka error code; `message` says what was wrong. */
export class BrokerError extends Error {
  override name = 'BrokerError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A batch refused for what some of its records hold: Kafka's
 * RecordValidationException, whose record errors a Produce response (v8+)
 * carries as recordErrors (index in the batch, message).
 */
export class RecordValidationError extends BrokerError {
  override name = 'RecordValidationError';
  constructor(
    code: number,
    message: string,
    readonly recordErrors: readonly { batchIndex: number; batchIndexErrorMessage: string | null }[],
  ) {
    super(code, message);
  }
}

/** The error code to answer with for anything a handler threw. */
export function errorCodeOf(error: unknown): number {
  return error instanceof BrokerError ? error.code : ErrorCode.UNKNOWN_SERVER_ERROR;
}
