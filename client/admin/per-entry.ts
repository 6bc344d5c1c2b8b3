/**
 * What the Admin calls of groups, offsets and transactions share: one
 * request per entry to the entry's coordinator (Kafka's CoordinatorStrategy:
 * FindCoordinator, and NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE look the
 * coordinator up again, COORDINATOR_LOAD_IN_PROGRESS waits —
 * client/cluster/coordinators.ts), a request to every broker (Kafka's
 * AllBrokersStrategy / listGroups), and the rule that turns a failure into an
 * entry's outcome unless the call as a whole failed. The deadline and the
 * options are call.ts's, as for every Admin call. The coordinator's retry loop
 * is not call.ts's sendWithRetries: it routes by group or transactional id, not
 * to a node, and both already share the cluster's Retrier (backoff, deadline).
 *
 * Deviation: Kafka's AdminApiDriver batches the entries that share a
 * coordinator into one request; here each entry is its own request (in
 * parallel), which costs requests but not semantics: the broker answers each
 * entry alone either way.
 */
import type { ApiMessageCodec } from '../../runtime/codec.js';
import type { Admin } from '../admin.js';
import type { CoordinatorKeyType } from '../cluster.js';
import { ClientClosedError, Errors, errorFromCode, KafkaError, SaslAuthenticationError, UnsupportedVersionError } from '../errors.js';
import type { EntryOutcome } from './result.js';

/** Errors that fail the whole call, not one entry: the client closed, or authentication failed. */
function failsTheCall(error: unknown): boolean {
  return error instanceof ClientClosedError || error instanceof SaslAuthenticationError;
}

/** The outcome of one entry's work; rethrows what fails the whole call. */
export async function settle<V>(work: Promise<V>): Promise<EntryOutcome<V>> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    if (failsTheCall(error) || !(error instanceof Error)) throw error;
    // UnsupportedVersionError (the broker lacks the API) is kept as it is: callers catch it by its class.
    const typed = error instanceof KafkaError || error instanceof UnsupportedVersionError ? error : new KafkaError(error.message, { cause: error });
    return { ok: false, error: typed as KafkaError };
  }
}

/** Runs `work` for each key in parallel; one outcome per key, in the caller's order (duplicates once). */
export async function perEntry<K, V>(keys: Iterable<K>, work: (key: K) => Promise<V>): Promise<Map<K, EntryOutcome<V>>> {
  const unique = [...new Set(keys)];
  const outcomes = await Promise.all(unique.map((key) => settle(work(key))));
  return new Map(unique.map((key, i) => [key, outcomes[i]!]));
}

/**
 * One request to the coordinator of `key`, retried through coordinator moves
 * and loads within the deadline; `codeOf` picks the entry's error code from
 * the answer. Another non-zero code is thrown as the entry's typed error.
 */
export async function toCoordinator<Req, Res>(
  admin: Admin,
  what: string,
  keyType: CoordinatorKeyType,
  key: string,
  codecs: { request: ApiMessageCodec<Req>; response: ApiMessageCodec<Res> },
  build: (version: number) => Req,
  codeOf: (response: Res, version: number) => { code: number; message?: string | null },
  options: { deadline: number; min?: number; max?: number },
): Promise<{ response: Res; version: number; nodeId: number }> {
  let message: string | null | undefined;
  const result = await admin.cluster.coordinatorRequest(
    what,
    keyType,
    key,
    codecs.request,
    codecs.response,
    build,
    (response, version) => {
      const found = codeOf(response, version);
      message = found.message;
      return found.code;
    },
    options,
  );
  const { code } = codeOf(result.response, result.version);
  if (code !== Errors.NONE) throw errorFromCode(code, what, message);
  return result;
}

/** The brokers of the cluster, from a Metadata request (Kafka's listGroups and AllBrokersStrategy ask the same). */
export async function allBrokers(admin: Admin, deadline: number): Promise<number[]> {
  await admin.cluster.refreshMetadata([], deadline);
  const brokers = admin.cluster.brokerIds();
  if (brokers.length === 0) throw new KafkaError('Metadata named no broker to send the request to', { retriable: false });
  return brokers.sort((a, b) => a - b);
}

/**
 * What a call sent to every broker gives back (Kafka's ListGroupsResult,
 * ListTransactionsResult): the listings of the brokers that answered, and the
 * errors of those that did not.
 */
export class AllBrokersResult<T> {
  constructor(
    /** The listings of every broker that answered. */
    readonly valid: readonly T[],
    /** The brokers that failed, with their errors. */
    readonly errors: ReadonlyMap<number, KafkaError>,
  ) {}

  /** Every listing, or the first broker's error thrown (Kafka's all()). */
  all(): T[] {
    for (const error of this.errors.values()) throw error;
    return [...this.valid];
  }
}

/** Sends `work` to every broker; a broker's failure is kept in the result's errors. */
export async function toAllBrokers<T>(admin: Admin, deadline: number, work: (nodeId: number) => Promise<T[]>): Promise<AllBrokersResult<T>> {
  const brokers = await allBrokers(admin, deadline);
  const outcomes = await perEntry(brokers, work);
  const valid: T[] = [];
  const errors = new Map<number, KafkaError>();
  for (const [nodeId, outcome] of outcomes) {
    if (outcome.ok) valid.push(...outcome.value);
    else errors.set(nodeId, outcome.error);
  }
  return new AllBrokersResult(valid, errors);
}
