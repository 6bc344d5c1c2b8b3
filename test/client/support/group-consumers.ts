/**
 * Helpers for tests of KafkaConsumer in a group: partition keys, record
 * values as text, and polling several consumers together until a condition
 * holds (as test/client/consumer-group.test.ts does).
 */
import type { ConsumerRecord, KafkaConsumer, TopicPartition } from '../../../client/index.js';

export const keys = (tps: readonly TopicPartition[]): string[] => tps.map((tp) => `${tp.topic}-${tp.partition}`).sort();
export const text = (r: ConsumerRecord): string => Buffer.from(r.value ?? new Uint8Array()).toString();

/** Polls every consumer together until `done` holds (`timeoutMs` at most), adding what they return to `seen`. */
export async function pollAll(consumers: KafkaConsumer[], done: () => boolean, seen: ConsumerRecord[] = [], timeoutMs = 15_000): Promise<ConsumerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) {
    for (const batch of await Promise.all(consumers.map((k) => k.poll(100)))) seen.push(...batch);
  }
  return seen;
}

/** A listener recording `<who>+<partitions>` and `<who>-<partitions>` into `events`. */
export function recorder(events: string[], who: string) {
  return {
    onPartitionsAssigned: (tps: TopicPartition[]) => void events.push(`${who}+${keys(tps).join(',')}`),
    onPartitionsRevoked: (tps: TopicPartition[]) => void events.push(`${who}-${keys(tps).join(',')}`),
    onPartitionsLost: (tps: TopicPartition[]) => void events.push(`${who}!${keys(tps).join(',')}`),
  };
}
