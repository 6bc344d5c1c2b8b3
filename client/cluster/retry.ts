/**
 * Retries within a deadline with exponential backoff (Kafka's
 * ExponentialBackoff: doubling from the base, capped, ±20% jitter), and the
 * rule of what is worth retrying.
 */
import { NetworkError } from '../../connection/connection.js';
import { KafkaError, KafkaTimeoutError } from '../errors.js';
import type { Logger } from './config.js';
import type { ClientLifecycle } from './lifecycle.js';

/** Kafka's ExponentialBackoff jitter: each wait is the computed one ±20%. */
const BACKOFF_JITTER = 0.2;

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Is this error worth retrying (network failure, timeout of one request, retriable error code)? */
export function isRetriable(error: unknown): boolean {
  if (error instanceof NetworkError) return error.retriable; // false for TLS handshake failures
  if (error instanceof KafkaError) return error.retriable;
  return false;
}

export class Retrier {
  constructor(
    private readonly lifecycle: ClientLifecycle,
    private readonly logger: Logger,
    private readonly settings: { retryBackoffMs: number; retryBackoffMaxMs: number },
  ) {}

  /** Backoff before attempt `attempt` (1-based): exponential with ±20% jitter, as Kafka's ExponentialBackoff. */
  backoff(attempt: number, base = this.settings.retryBackoffMs, max = this.settings.retryBackoffMaxMs): number {
    const value = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
    return Math.round(value * (1 - BACKOFF_JITTER + Math.random() * 2 * BACKOFF_JITTER));
  }

  /**
   * Runs `fn` until it succeeds, retrying retriable errors with backoff until
   * `deadline` (epoch ms). Then throws KafkaTimeoutError with the last error as
   * its cause; a non-retriable error is thrown at once.
   */
  async retry<T>(
    what: string,
    deadline: number,
    fn: (attempt: number) => Promise<T>,
    /** A backoff of its own for some errors (else undefined: the exponential one). */
    backoffFor?: (error: unknown, attempt: number) => number | undefined,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.lifecycle.checkOpen();
      try {
        return await fn(attempt);
      } catch (error) {
        if (this.lifecycle.closed) throw this.lifecycle.closedError();
        if (!isRetriable(error)) throw error;
        const wait = backoffFor?.(error, attempt) ?? this.backoff(attempt);
        if (Date.now() + wait >= deadline) {
          throw new KafkaTimeoutError(
            `${what} did not complete within its deadline after ${attempt} attempt(s); last error: ${(error as Error).message}`,
            error,
          );
        }
        this.logger.debug(`${what}: attempt ${attempt} failed (${(error as Error).message}); retrying in ${wait} ms`);
        await sleep(wait, this.lifecycle.signal);
      }
    }
  }
}
