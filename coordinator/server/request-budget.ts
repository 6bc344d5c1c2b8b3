/**
 * What decoding and holding requests may cost the broker's memory.
 *
 * A frame's bytes are not its cost: an element of an array of structs takes
 * one to six bytes on the wire and some 200 bytes as decoded objects, so a
 * 39 MiB Produce v3 frame of 6.8 million empty topic entries grew the broker
 * by 1.4 GiB. Two bounds follow.
 *
 * - Per request: the decoder may create at most `elementBudget` array
 *   elements (Reader.elementBudget), so a request costs at most its frame plus
 *   that many elements; one over it is refused as malformed before it is
 *   built further (and the connection closed, as for any unreadable frame).
 *   The Produce handler applies the same number to the records of each batch
 *   it decodes (produce/batch-validation.ts).
 * - All requests in flight: a pool of `queued.max.request.bytes`, after
 *   Kafka's SocketServer and its MemoryPool (clients/src/main/java/org/apache/
 *   kafka/common/memory/SimpleMemoryPool.java, non-strict: an allocation is
 *   granted while any memory is left, so one large request is never starved).
 *   A request holds its frame's bytes plus ELEMENT_COST_BYTES per element it
 *   decoded, from the moment it is decoded until its response is written; a
 *   connection does not start its next request while the pool is exhausted,
 *   as Kafka mutes a channel it cannot allocate for, and resumes when memory
 *   is released.
 *
 * Where we deviate: Kafka's pool counts the network bytes it reads (its
 * decoded requests are not counted, and its default is -1, unbounded); ours
 * counts an estimate of the decoded request, which is what runs a Node heap
 * out, and is bounded by default (a quarter of the heap limit). Queued frames
 * not yet decoded are bounded per connection by the server (MAX_QUEUED_BYTES),
 * not by the pool. Kafka has no element budget: the JVM's objects per element
 * are smaller, and its default heap is sized for its frame limit.
 */
import { getHeapStatistics } from 'node:v8';

/**
 * What one decoded array element is charged: an empty struct's object, its
 * empty arrays and its slot (measured: 216 bytes per empty Produce topic
 * entry), rounded up.
 */
export const ELEMENT_COST_BYTES = 256;

/** The default pool: a quarter of this process's heap limit. */
export function defaultQueuedMaxRequestBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 4);
}

/**
 * The default element budget: a million, or fewer when the heap is small, so
 * that one request alone never costs more than the default pool.
 */
export function defaultMaxRequestElements(): number {
  return Math.min(1_000_000, Math.floor(defaultQueuedMaxRequestBytes() / ELEMENT_COST_BYTES));
}

export class RequestMemoryPool {
  private used = 0;
  private readonly waiters: (() => void)[] = [];

  /** `capacity` in bytes; -1 for unbounded (Kafka's queued.max.request.bytes). */
  constructor(readonly capacity: number) {}

  get usedBytes(): number {
    return this.used;
  }

  get exhausted(): boolean {
    return this.capacity >= 0 && this.used >= this.capacity;
  }

  /** Resolves at once when memory is left, else once a release leaves some. */
  whenAvailable(): Promise<void> {
    if (!this.exhausted) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  take(bytes: number): void {
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
    while (!this.exhausted && this.waiters.length > 0) this.waiters.shift()!();
  }
}

/** The bounds one KafkaServer applies. */
export interface RequestBudget {
  pool: RequestMemoryPool;
  /** Array elements one request may create. */
  elementBudget: number;
}

export function requestBudget(queuedMaxRequestBytes: number, maxRequestElements: number): RequestBudget {
  return { pool: new RequestMemoryPool(queuedMaxRequestBytes), elementBudget: maxRequestElements };
}

/** What a decoded request is charged: its frame and its elements. */
export function decodedCost(frameBytes: number, elements: number): number {
  return frameBytes + elements * ELEMENT_COST_BYTES;
}
