import { ErrorCode, ShareError } from '../../../coordinator/share/share-error.js';

/** The code of the ShareError that `fn` throws, or NONE when it returns; any other error is rethrown. */
export function shareErrorCode(fn: () => unknown): number {
  try {
    fn();
  } catch (error) {
    if (error instanceof ShareError) return error.code;
    throw error;
  }
  return ErrorCode.NONE;
}
