import { BrokerError } from '../errors.js';

export { ErrorCode } from '../../runtime/error-codes.js';

/**
 * A failure that maps to one Kafka error code; handlers turn it into a
 * response field. A BrokerError, so that one escaping a handler still becomes
 * an error response rather than a closed connection.
 */
export class ShareError extends BrokerError {
  override name = 'ShareError';
}
