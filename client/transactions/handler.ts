/**
 * The shape every transaction RPC shares, after Kafka's
 * TransactionManager.TxnRequestHandler: a handler builds its request, reads
 * its response, and says what happens next. Sending, finding the coordinator
 * and retrying within the deadline are ClusterClient.coordinatorRequest's.
 */
import type { ApiMessageCodec } from '../../runtime/codec.js';
import type { ClusterClient, CoordinatorKeyType } from '../cluster.js';
import { Errors, errorFromCode, ProducerFencedError } from '../errors.js';
import { COORDINATOR_BUSY_CODES, COORDINATOR_MOVED_CODES } from '../transaction-protocol.js';

/**
 * What a response tells the transaction manager to do, as the branches of
 * Kafka's handleResponse: done; `coordinator` — a coordinator error the
 * plumbing handles (COORDINATOR_MOVED_CODES: find it again; COORDINATOR_BUSY_CODES:
 * wait), then send again; `retry` — send again after the backoff, failing
 * with `error` at the deadline; `fail` — no retry: `error` makes the
 * transaction abortable or the producer fatal (errors.ts
 * isFatalTransactionError tells which, as Kafka's abortableError / fatalError).
 */
export type Next =
  | { readonly kind: 'done' }
  | { readonly kind: 'coordinator'; readonly code: number }
  | { readonly kind: 'retry'; readonly error: Error }
  | { readonly kind: 'fail'; readonly error: Error };

export const DONE: Next = { kind: 'done' };

export interface TxnRequestHandler<Req, Res> {
  /** The request as named in messages and retry logs. */
  readonly what: string;
  readonly coordinatorType: CoordinatorKeyType;
  readonly coordinatorKey: string;
  readonly requestCodec: ApiMessageCodec<Req>;
  readonly responseCodec: ApiMessageCodec<Res>;
  /** The versions this request may go out at (the transaction protocol in use decides). */
  readonly versions: { readonly min?: number; readonly max?: number };
  build(version: number): Req;
  handleResponse(response: Res): Next;
}

/** The producer id and epoch a handler sends, read when the request is built. */
export interface ProducerIdAndEpoch {
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

/** What every transaction-coordinator handler needs of the manager. */
export interface TxnContext {
  readonly transactionalId: string;
  readonly identity: ProducerIdAndEpoch;
}

/**
 * The connection of their own the transaction's coordinator requests go on
 * (cluster/network-client.ts): on the producer's one they would wait, at the
 * broker, behind the transaction's Produce requests, whose answers wait for
 * acks=all; on their own, AddShareAcksToTxn and TxnShareAcknowledge are in
 * flight while the batches drain. What must come first still does: the
 * transaction manager sends TxnShareAcknowledge only after AddShareAcksToTxn
 * is answered, and EndTxn only after every batch and call of the transaction
 * is answered.
 */
export const TRANSACTION_LANE = 'transactions';

/**
 * Sends `handler`'s request to its coordinator until it answers with `done`
 * or `fail` (resolving to the answer and that outcome), or the deadline
 * passes (then KafkaTimeoutError with the last error). `backoffFor` sets a
 * backoff of its own for some errors (see ClusterClient.retry).
 */
export async function sendUntilAnswered<Req, Res>(
  cluster: ClusterClient,
  handler: TxnRequestHandler<Req, Res>,
  options: { deadline: number; backoffFor?: (error: unknown, attempt: number) => number | undefined },
): Promise<{ response: Res; next: Next }> {
  let next = DONE;
  const { response } = await cluster.coordinatorRequest(
    handler.what,
    handler.coordinatorType,
    handler.coordinatorKey,
    handler.requestCodec,
    handler.responseCodec,
    (version) => handler.build(version),
    (received) => {
      next = handler.handleResponse(received);
      if (next.kind === 'coordinator') return next.code;
      if (next.kind === 'retry') throw next.error;
      return 0;
    },
    { ...handler.versions, ...options, lane: TRANSACTION_LANE },
  );
  return { response, next };
}

/** sendUntilAnswered, throwing the error of a `fail`. */
export async function sendTxnRequest<Req, Res>(
  cluster: ClusterClient,
  handler: TxnRequestHandler<Req, Res>,
  options: { deadline: number; backoffFor?: (error: unknown, attempt: number) => number | undefined },
): Promise<Res> {
  const { response, next } = await sendUntilAnswered(cluster, handler, options);
  if (next.kind === 'fail') throw next.error;
  return response;
}

/** `coordinator` for a code the coordinator plumbing handles, else null. */
export function coordinatorNext(code: number): Next | null {
  return COORDINATOR_MOVED_CODES.has(code) || COORDINATOR_BUSY_CODES.has(code) ? { kind: 'coordinator', code } : null;
}

/** `fail` with `error`. */
export function fail(error: Error): Next {
  return { kind: 'fail', error };
}

/** `retry`, failing with `error` at the deadline. */
export function retry(error: Error): Next {
  return { kind: 'retry', error };
}

/**
 * The error for a code a transaction coordinator (or a group / share
 * coordinator acting for the transaction) answered: INVALID_PRODUCER_EPOCH is
 * a fence, as Kafka's handlers read it from an old coordinator.
 */
export function coordinatorError(transactionalId: string, code: number, what: string, message?: string | null): Error {
  if (code === Errors.INVALID_PRODUCER_EPOCH) {
    return new ProducerFencedError(
      code,
      `${what} for transactional id ${transactionalId} failed with INVALID_PRODUCER_EPOCH (47): the coordinator has a newer epoch — ` +
        'another producer with this transactional.id started, or the coordinator aborted the transaction after transaction.timeout.ms. ' +
        'This producer cannot be used any more: close() it.',
    );
  }
  return errorFromCode(code, `${what} for transactional id ${transactionalId}`, message);
}
