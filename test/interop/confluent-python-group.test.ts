/**
 * confluent-kafka-python (Debian's python3-confluent-kafka, on librdkafka)
 * against `kipgen broker`: AdminClient.create_topics (and TOPIC_ALREADY_EXISTS
 * the second time), a Consumer with a group that reads everything and
 * commits, committed() reading the commits back, and a second member of the
 * group that finds nothing left. Prints the API versions librdkafka used.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, apisUsed, removeTempDirs, requireTool, run, startKipgenBroker, type KipgenBroker } from './support/broker-process.js';
import { DEBIAN_PYTHON as PYTHON } from './support/tools.js';

const CLIENT_ID = 'confluent-python-interop';
let broker: KipgenBroker;
let outcome: {
  confluent_kafka: string;
  librdkafka: string;
  exists_error: string;
  values: string[];
  assignment: number[];
  committed: [number, number][];
  later: string[];
  errors: string[];
};

beforeAll(async () => {
  requireTool(PYTHON, ['-c', 'import confluent_kafka'], 'python3-confluent-kafka');
  broker = await startKipgenBroker({ topics: [], config: { groupInitialRebalanceDelayMs: 200 } });
  const result = await run(PYTHON, [path.join(ROOT, 'test/interop/support/confluent_group.py'), `127.0.0.1:${broker.port}`, 'py-group-topic', 'py-consumers'], {
    timeoutMs: 90_000,
  });
  if (result.code !== 0) throw new Error(`confluent_group.py exited ${result.code ?? result.signal}:\n${result.stderr}\nbroker:\n${broker.stderr()}`);
  outcome = JSON.parse(result.stdout.toString('utf8').trim().split('\n').pop()!) as typeof outcome;
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
  if (outcome) {
    process.stdout.write(
      `confluent-kafka-python ${outcome.confluent_kafka} (librdkafka ${outcome.librdkafka}) group: APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`,
    );
  }
});

describe('confluent-kafka-python Consumer with a group against kipgen broker', () => {
  it('creates the topic with AdminClient; the second creation is TOPIC_ALREADY_EXISTS', () => {
    expect(outcome.errors).toEqual([]);
    expect(outcome.exists_error).toBe('TOPIC_ALREADY_EXISTS');
  });

  it('reads every record, commits, reads the commits back; a later member of the group has nothing left', () => {
    expect(outcome.values.slice().sort()).toEqual(Array.from({ length: 30 }, (_, i) => `v${i}`).sort());
    expect(outcome.assignment).toEqual([0, 1, 2]);
    expect(outcome.committed.sort()).toEqual([
      [0, 10],
      [1, 10],
      [2, 10],
    ]);
    expect(outcome.later).toEqual([]);
    expect(broker.stderr()).toMatch(/group py-consumers: generation \d+ with 1 member\(s\), protocol (range|roundrobin|cooperative-sticky)/);
    expect(broker.stderr()).not.toMatch(/rejected frame|request failed/);
  });
});
