/**
 * `kcat -G` (Debian's kcat on librdkafka) against `kipgen broker`: two
 * balanced consumers in one group split a topic's partitions in one
 * generation (the broker relays librdkafka's own assignment), read every
 * record exactly once between them, commit on exit, and a later run of the
 * group finds nothing left. Prints the API versions librdkafka used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OffsetFetchRequest, OffsetFetchResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { apisUsed, removeTempDirs, run, startKipgenBroker, type KipgenBroker } from './support/broker-process.js';
import { requireKcat } from './support/kcat.js';

const TOPIC = 'kcat-group-topic';
const GROUP = 'kcat-balanced';
const CLIENT_ID = 'kcat-group-interop';
let broker: KipgenBroker;
let kcatVersion: string;

beforeAll(async () => {
  kcatVersion = requireKcat();
  // A long enough initial delay that both consumers land in the first generation.
  broker = await startKipgenBroker({ topics: [`${TOPIC}:4`], config: { groupInitialRebalanceDelayMs: 2_000 } });
  const lines = Array.from({ length: 40 }, (_, i) => `${i % 4}:v-${i}`).join('\n') + '\n';
  // -K: key before ':'; the default partitioner spreads keys; the records are what matters.
  const produced = await run('kcat', ['-P', '-b', `127.0.0.1:${broker.port}`, '-X', `client.id=${CLIENT_ID}-p`, '-t', TOPIC, '-K', ':'], { input: lines });
  expect(produced.code, produced.stderr).toBe(0);
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
  if (broker)
    process.stdout.write(`${kcatVersion} -G: APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === CLIENT_ID))}\n`);
});

const consume = () =>
  // No -o: kcat would seek every assigned partition there; auto.offset.reset=earliest applies only without a committed offset.
  run(
    'kcat',
    [
      '-G',
      GROUP,
      '-b',
      `127.0.0.1:${broker.port}`,
      '-X',
      `client.id=${CLIENT_ID}`,
      '-X',
      'auto.offset.reset=earliest',
      '-X',
      'session.timeout.ms=10000',
      '-e',
      '-q',
      '-f',
      '%p %s\n',
      TOPIC,
    ],
    { timeoutMs: 60_000 },
  );

describe('kcat -G against kipgen broker', () => {
  it('two balanced consumers split the partitions and read every record once; the commits hold', async () => {
    const [one, two] = await Promise.all([consume(), consume()]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const read = (r: typeof one) =>
      r.stdout
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split(' ') as [string, string]);
    const [a, b] = [read(one), read(two)];
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    // Disjoint partitions, all records once.
    const partitionsA = new Set(a.map(([p]) => p));
    expect(b.every(([p]) => !partitionsA.has(p))).toBe(true);
    expect([...a, ...b].map(([, v]) => v).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `v-${i}`).sort());
    expect(broker.stderr()).toMatch(new RegExp(`group ${GROUP}: generation 1 with 2 member\\(s\\), protocol \\w+`));

    // Both committed on exit: the group's offsets are the log ends, and a new run reads nothing.
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, clientId: 'kipgen-interop-reader' });
    try {
      const r = await c.send(OffsetFetchRequest, OffsetFetchRequest.create({ groupId: GROUP, topics: null }), 7, OffsetFetchResponse);
      const total = r.topics.flatMap((t) => t.partitions).reduce((sum, p) => sum + Number(p.committedOffset), 0);
      expect(total).toBe(40);
    } finally {
      await c.close();
    }
    const again = await consume();
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.toString('utf8')).toBe('');
  });
});
