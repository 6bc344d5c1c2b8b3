/**
 * bench/kafka/ctp-ours.ts, our side of bench:kafka's eos part, against a real
 * kipgen broker over TCP: each loop copies every input record to the output
 * once, commits what it consumed, and reports the records it committed with a
 * latency sample per commit. (What it measures is not checked: nothing is timed.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as client from '../../client/index.js';
import { seedInput, inputValue } from '../../chaos/seed.js';
import { consumeTransformProduceOurs } from '../../bench/kafka/ctp-ours.js';
import { readCommitted, startCluster, type TestCluster } from '../client/support/brokers.js';

let cluster: TestCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

const RECORDS = 250;

describe("bench:kafka eos part, kipgen's loops", () => {
  it('explicit-ctp and transactional-ctp each copy every input record to the output once and report what they committed', async () => {
    cluster = await startCluster({
      config: {
        topics: [
          { name: 'bench-in', partitions: 1 },
          { name: 'bench-out', partitions: 1 },
        ],
      },
    });
    await seedInput(cluster.bootstrap, 'bench-in', RECORDS);
    const inputs = Array.from({ length: RECORDS }, (_, i) => inputValue(i));
    const spec = { bootstrap: cluster.bootstrap, input: 'bench-in', output: 'bench-out', records: RECORDS, batch: 100 };

    const explicit = await consumeTransformProduceOurs(client, 'explicit-ctp', { ...spec, group: 'explicit' });
    expect(explicit.records).toBe(RECORDS);
    expect(explicit.p50Ms).not.toBeNull();
    expect(await readCommitted(cluster.bootstrap, 'bench-out')).toEqual(inputs);

    const transactional = await consumeTransformProduceOurs(client, 'transactional-ctp', { ...spec, group: 'transactional' });
    expect(transactional.records).toBe(RECORDS);
    expect(transactional.p99Ms).not.toBeNull();
    expect(await readCommitted(cluster.bootstrap, 'bench-out')).toEqual([...inputs, ...inputs]);
  });
});
