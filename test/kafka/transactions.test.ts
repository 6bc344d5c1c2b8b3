/**
 * Our producer against Kafka 4.4's transaction coordinator: the idempotent
 * producer, Transactions V2 commit and abort (read back read_committed by
 * Kafka's own consumer), and KIP-939 two-phase commit — a transaction
 * prepared by a process that is then killed is completed from its saved
 * state by another, and an older saved state never commits a newer prepared
 * transaction.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaProducer, PreparedTxnState } from '../../client/index.js';
import { Cleanups, createTopic, kafka, readWithKafkaConsumer, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function producer(config: Partial<ConstructorParameters<typeof KafkaProducer>[0]> = {}): KafkaProducer {
  return cleanups.track(
    new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, maxBlockMs: 30_000, logger: null, metricsRegistry: null, ...config }),
    (p) => p.close(2_000),
  );
}

const committedValues = async (topic: string, expected?: number): Promise<string[]> =>
  (await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_committed', expected })).map((r) => r.value).sort();

describe('idempotent producer against Kafka 4.4', () => {
  it('sends 200 records to 3 partitions with sequence numbers Kafka accepts: every record once, offsets dense per partition', async () => {
    const topic = unique('idempotent');
    await createTopic(kafka(), topic, 3);
    const p = producer({ enableIdempotence: true, batchSize: 512 });
    const sent = await Promise.all(Array.from({ length: 200 }, (_, i) => p.send({ topic, key: `k${i}`, value: `v${i}` })));
    const byPartition = new Map<number, bigint[]>();
    for (const m of sent) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
    for (const offsets of byPartition.values()) {
      expect([...offsets].sort((a, b) => Number(a - b))).toEqual(offsets.map((_, i) => BigInt(i)));
    }
    const read = await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_uncommitted', expected: 200 });
    expect(read.map((r) => r.value).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `v${i}`).sort());
  });
});

describe('Transactions V2 against Kafka 4.4', () => {
  it('a committed transaction is visible to read_committed, an aborted one only to read_uncommitted', async () => {
    const topic = unique('tv2');
    await createTopic(kafka(), topic, 2);
    const p = producer({ transactionalId: unique('tv2-txn') });
    await p.initTransactions();

    p.beginTransaction();
    for (let i = 0; i < 4; i++) void p.send({ topic, key: `c${i}`, value: `committed-${i}` });
    await p.commitTransaction();

    p.beginTransaction();
    const aborted = Array.from({ length: 3 }, (_, i) => p.send({ topic, key: `a${i}`, value: `aborted-${i}` }));
    await p.flush();
    await p.abortTransaction();
    await Promise.allSettled(aborted);

    p.beginTransaction();
    void p.send({ topic, key: 'c4', value: 'committed-4' });
    await p.commitTransaction();

    expect(await committedValues(topic)).toEqual(['committed-0', 'committed-1', 'committed-2', 'committed-3', 'committed-4']);
    const all = (await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_uncommitted' })).map((r) => r.value);
    expect(all.filter((v) => v.startsWith('aborted-')).sort()).toEqual(['aborted-0', 'aborted-1', 'aborted-2']);
  });

  it('every transaction ends with an epoch bump (Transactions V2): the state after a commit names the next epoch', async () => {
    const topic = unique('tv2-epoch');
    await createTopic(kafka(), topic);
    const p = producer({ transactionalId: unique('tv2-epoch-txn') });
    await p.initTransactions();
    const before = p.transactionSnapshot();
    p.beginTransaction();
    void p.send({ topic, value: 'x' });
    await p.commitTransaction();
    const after = p.transactionSnapshot();
    expect(after.producerId).toBe(before.producerId);
    expect(after.producerEpoch).toBe(before.producerEpoch + 1);
  });
});

interface Child {
  process: ChildProcess;
  lines: AsyncIterator<string>;
  stderr: string[];
}

function startChild(job: object): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/kafka/support/prepare-child.ts'), JSON.stringify(job)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  cleanups.track(child, async (c) => {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  });
  return { process: child, lines: readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator](), stderr };
}

/** The child's JSON lines until `{"waiting":true}`: its prepared states, in order. */
async function preparedStates(child: Child): Promise<string[]> {
  const prepared: string[] = [];
  for (;;) {
    const next = await child.lines.next();
    if (next.done === true) throw new Error(`the producer process ended early: ${child.stderr.join('')}`);
    const line = JSON.parse(next.value) as { prepared?: string; waiting?: boolean };
    if (line.prepared !== undefined) prepared.push(line.prepared);
    if (line.waiting === true) return prepared;
  }
}

async function kill(child: Child): Promise<void> {
  const gone = new Promise((r) => child.process.once('exit', r));
  child.process.kill('SIGKILL');
  await gone;
}

describe('KIP-939 two-phase commit against Kafka 4.4', () => {
  it('prepareTransaction, the process killed, completeTransaction from the saved state commits it', async () => {
    const topic = unique('2pc');
    const transactionalId = unique('2pc-txn');
    await createTopic(kafka(), topic);
    const child = startChild({ bootstrap: kafka().bootstrap, transactionalId, topic, steps: [{ values: ['p-0', 'p-1', 'p-2'], end: 'prepare' }] });
    const [saved] = await preparedStates(child);
    await kill(child);
    expect(await committedValues(topic)).toEqual([]);

    const result = await KafkaProducer.completeTransaction({ bootstrapServers: kafka().bootstrap, logger: null, maxBlockMs: 30_000 }, saved!, 'commit');
    expect(result).toBe('committed');
    expect(await committedValues(topic, 3)).toEqual(['p-0', 'p-1', 'p-2']);

    // Again from the same state (a restart during recovery): Kafka answers the EndTxn as a retry of the commit
    // (TransactionCoordinator.endTransaction, COMPLETE_COMMIT one epoch later → NONE); nothing is written twice.
    expect(await KafkaProducer.completeTransaction({ bootstrapServers: kafka().bootstrap, logger: null, maxBlockMs: 30_000 }, saved!, 'commit')).toBe(
      'committed',
    );
    expect(await committedValues(topic)).toEqual(['p-0', 'p-1', 'p-2']);
  });

  it('a stale checkpoint: the state of an earlier (committed) transaction aborts the newer prepared one instead of committing it', async () => {
    const topic = unique('2pc-stale');
    const transactionalId = unique('2pc-stale-txn');
    await createTopic(kafka(), topic);
    const child = startChild({
      bootstrap: kafka().bootstrap,
      transactionalId,
      topic,
      steps: [
        { values: ['first'], end: 'prepare' },
        { values: ['second-0', 'second-1'], end: 'prepare' },
      ],
    });
    const [older, newer] = await preparedStates(child);
    await kill(child);
    const olderState = PreparedTxnState.fromString(older!);
    const newerState = PreparedTxnState.fromString(newer!);
    expect(newerState.producerId === olderState.producerId && newerState.producerEpoch === olderState.producerEpoch).toBe(false);

    // The coordinator is past the older state (EndTxn for it is fenced): the newer prepared transaction is
    // aborted, and what became of the older one is not the coordinator's to say any more.
    const result = await KafkaProducer.completeTransaction({ bootstrapServers: kafka().bootstrap, logger: null, maxBlockMs: 30_000 }, older!, 'commit');
    expect(result).toBe('unknown');
    expect(await committedValues(topic)).toEqual(['first']);
    const all = (await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_uncommitted' })).map((r) => r.value).sort();
    expect(all).toEqual(['first', 'second-0', 'second-1']);
  });

  it("a producer in the same process: completeTransaction(state) commits its prepared transaction; another state's aborts it", async () => {
    const topic = unique('2pc-inproc');
    await createTopic(kafka(), topic);
    const p = producer({ transactionalId: unique('2pc-inproc-txn'), transactionTwoPhaseCommitEnable: true });
    await p.initTransactions();
    p.beginTransaction();
    void p.send({ topic, value: 'kept' });
    const state = await p.prepareTransaction();
    expect(await p.completeTransaction(state)).toBe('committed');

    p.beginTransaction();
    void p.send({ topic, value: 'dropped' });
    await p.prepareTransaction();
    expect(await p.completeTransaction(state)).toBe('unknown');
    expect(await committedValues(topic)).toEqual(['kept']);
  });
});

describe('records against Kafka 4.4', () => {
  it("keys, headers (a null header value too), explicit timestamps, null and empty values arrive in Kafka's consumer as sent", async () => {
    const topic = unique('records');
    await createTopic(kafka(), topic);
    const p = producer();
    await p.send({ topic, key: 'k1', value: 'v1', headers: { a: '1', b: null, c: 'x y' }, timestamp: 1_700_000_000_123n });
    await p.send({ topic, key: 'k2', value: null });
    await p.send({ topic, value: '' });
    const read = await readWithKafkaConsumer(kafka(), topic, { isolationLevel: 'read_uncommitted', expected: 3 });
    expect(read.map(({ timestamp, headers, key, value }) => ({ timestamp, headers, key, value }))).toEqual([
      { timestamp: 'CreateTime:1700000000123', headers: 'a:1,b:null,c:x y', key: 'k1', value: 'v1' },
      { timestamp: expect.stringMatching(/^CreateTime:\d+$/), headers: 'NO_HEADERS', key: 'k2', value: 'null' },
      { timestamp: expect.stringMatching(/^CreateTime:\d+$/), headers: 'NO_HEADERS', key: 'null', value: '' },
    ]);
  });
});
