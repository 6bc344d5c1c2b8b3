/**
 * Seeds an input topic with N uniquely numbered records (`in-000000` …),
 * round-robin over its partitions, with plain Produce requests (no client
 * library), and returns the values per partition.
 */
import { WireClient } from './wire.js';

export const inputValue = (i: number): string => `in-${String(i).padStart(6, '0')}`;

export async function seedInput(bootstrap: string, topic: string, count: number, first = 0): Promise<void> {
  const client = new WireClient(WireClient.parseBootstrap(bootstrap), 'kipgen-chaos-seeder');
  try {
    const layout = (await client.metadata([topic])).get(topic)!;
    const partitions = layout.leaders.length;
    const byPartition: string[][] = Array.from({ length: partitions }, () => []);
    for (let i = first; i < first + count; i++) byPartition[i % partitions]!.push(inputValue(i));
    const enc = new TextEncoder();
    await Promise.all(
      byPartition.map(async (values, p) => {
        for (let at = 0; at < values.length; at += 200) {
          const now = BigInt(Date.now());
          await client.produce(
            layout,
            p,
            values.slice(at, at + 200).map((v) => ({ key: enc.encode(v), value: enc.encode(v), timestamp: now })),
          );
        }
      }),
    );
  } finally {
    await client.close();
  }
}
