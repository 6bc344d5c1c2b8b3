/** Small helpers the clients share. */
import { randomBytes } from 'node:crypto';
import { uuidToString } from '../../runtime/uuid.js';

/** `items` grouped by `keyOf`: keys in the order first seen, each group in input order. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** Kafka's Uuid.randomUuid().toString(): 22 base64url characters. */
export function randomUuid(): string {
  return uuidToString(randomBytes(16), 0);
}
