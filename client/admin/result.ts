/**
 * What an Admin call that Kafka answers entry by entry gives back: one outcome
 * per topic, resource, group or ACL filter, as Kafka's `CreateTopicsResult.values()`
 * and `.all()` do with a KafkaFuture per entry. A plain map of outcomes instead of
 * a promise per entry: a rejected promise nobody awaited would be an unhandled
 * rejection in Node, and a caller that wants only `all()` should not have to
 * catch every entry.
 *
 * The call's own promise rejects only when the request as a whole failed (no
 * broker answered in time, the client was closed, authentication failed); an
 * entry the broker refused is an entry error here.
 */
import type { KafkaError, UnsupportedVersionError } from '../errors.js';

/** An entry's error: a typed client error (UnsupportedVersionError, for a broker too old for the entry, is not a KafkaError subclass). */
export type EntryError = KafkaError | UnsupportedVersionError;

/** One entry's outcome: its value, or the error the broker gave for it. */
export type EntryOutcome<V> = { ok: true; value: V } | { ok: false; error: EntryError };

export class AdminResult<K, V> {
  constructor(
    /** Every entry of the call, in the order the caller named them. */
    readonly entries: ReadonlyMap<K, EntryOutcome<V>>,
  ) {}

  /** The value of one entry; throws that entry's error, or an Error when the call did not name it. */
  get(key: K): V {
    const outcome = this.entries.get(key);
    if (outcome === undefined) throw new Error(`no entry ${String(key)} in this result`);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Every value, or the first entry error thrown (Kafka's `all()`). */
  all(): Map<K, V> {
    const values = new Map<K, V>();
    for (const [key, outcome] of this.entries) {
      if (!outcome.ok) throw outcome.error;
      values.set(key, outcome.value);
    }
    return values;
  }

  /** The entries that failed, with their errors. */
  errors(): Map<K, EntryError> {
    const failed = new Map<K, EntryError>();
    for (const [key, outcome] of this.entries) if (!outcome.ok) failed.set(key, outcome.error);
    return failed;
  }
}
