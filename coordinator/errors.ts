/**
 * KafkaError, which handlers and logs throw to carry a Kafka error code
 * (runtime/error-codes.ts) to the reply.
 */
import { ErrorCode } from '../runtime/error-codes.js';

export { ErrorCode, errorCodeName } from '../runtime/error-codes.js';

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
