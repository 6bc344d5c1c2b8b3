/**
 * Speed against Apache Kafka itself, on this machine, in one run:
 *
 *  1. Brokers: start-up (process start to serving) and resident memory of Kafka 4.4
 *     and of our broker, idle and after the load below.
 *  2. Clients against one Kafka 4.4 broker: our KafkaProducer beside Kafka's Java
 *     KafkaProducer, @platformatic/kafka and kafkajs — records/s and p50/p99 send
 *     latency for 1 KiB records, acks=all, idempotent; then transactions of 100
 *     records (p50/p99 of the commit). Our KafkaShareConsumer beside Kafka's
 *     (explicit acknowledgement, commitSync per poll) draining a topic.
 *  3. Brokers under Kafka's own load generators (kafka-tools 4.4): ProducerPerformance
 *     and ShareConsumerPerformance against Kafka 4.4 and against our broker.
 *  4. eos: what exactly-once costs. bench:txn's consume-transform-produce loop with
 *     Kafka's own clients on Kafka 4.4 (a classic consumer; at-least-once with
 *     commitSync against exactly-once with sendOffsetsToTransaction), beside our
 *     stack's explicit-ctp and transactional-ctp (KIP-1289) on bench:txn's broker:
 *     each stack's exactly-once ÷ at-least-once ratio, side by side.
 *
 * Every comparison runs in interleaved rounds (the order rotates each round), each
 * participant on a fresh topic (eos: a fresh group over one seeded input); a ratio is
 * the median of the per-round ratios. Untimed warm-up rounds run first.
 *
 *   npm run bench:kafka [-- --records 100000] [--txn-records 10000] [--consume-records 200000] [--rounds 3] [--warmup-rounds 1]
 *                       [--parts start,clients,share,tools,eos] [--eos-records 2000] [--eos-batches 100,10] [--json]
 *
 * Needs java and mvn (the classpath test:kafka resolves); says what is missing otherwise.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ClientModule from '../client/index.js';
import { seedInput } from '../chaos/seed.js';
import { kafkaPrerequisites } from '../test/kafka/support/prerequisites.js';
import { compileProject, startApacheKafka, startKipgen, type BrokerUnderTest } from './kafka/brokers.js';
import { consumeTransformProduceOurs, type OurCtpMode } from './kafka/ctp-ours.js';
import { JavaSide, type LoopResult } from './kafka/java.js';
import { produceKafkajs, produceOurs, producePlatformatic, shareConsumeOurs, type ProduceSpec } from './kafka/node-clients.js';
import { integerOption, median, roundTag, schedule } from './kafka/rounds.js';
import { startBenchBroker, type BenchBroker } from './txn-broker.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RECORDS = integerOption(argv, 'records', 100_000, 1);
/** Transactional producing runs fewer records: @platformatic/kafka commits about once a second here. */
const TXN_RECORDS = integerOption(argv, 'txn-records', 10_000, 1);
const CONSUME_RECORDS = integerOption(argv, 'consume-records', 200_000, 1);
const ROUNDS = integerOption(argv, 'rounds', 3, 1);
/** Untimed rounds before the timed ones: the brokers' JITs, page cache and our client's JIT warm up in them. */
const WARMUP_ROUNDS = integerOption(argv, 'warmup-rounds', 1, 0);
const ALL_PARTS = ['start', 'clients', 'share', 'tools', 'eos'];
const PARTS = new Set((opt('parts') ?? 'start,clients,share,tools').split(','));
for (const part of PARTS) if (!ALL_PARTS.includes(part)) throw new Error(`--parts: unknown part '${part}' (the parts are ${ALL_PARTS.join(', ')})`);
/** bench:txn's defaults: 2,000 records (key = value = in-000000 …, 9 bytes each) on one partition. */
const EOS_RECORDS = integerOption(argv, 'eos-records', 2_000, 1);
const EOS_BATCHES = (opt('eos-batches') ?? '100,10').split(',').map((b) => {
  const n = Number(b);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--eos-batches: each batch must be an integer ≥ 1, got '${b}'`);
  return n;
});
const JSON_OUT = argv.includes('--json');
const RECORD_SIZE = 1024;
const PARTITIONS = 3;
/** Unacknowledged records each producer may have (Kafka's buffer.memory holds 32 MiB; 8 MiB of 1 KiB records here). */
const WINDOW = 8_192;
const PER_TXN = 100;

interface Row {
  part: string;
  target: string;
  participant: string;
  round: number;
  result: LoopResult;
}

const rows: Row[] = [];
let topicCounter = 0;

const rps = (r: LoopResult): number => r.records / r.seconds;
const fmt = (n: number | null | undefined, digits = 0): string =>
  n === null || n === undefined || Number.isNaN(n) ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

type Participant = [name: string, run: (round: number) => Promise<LoopResult>, target?: string];

/**
 * Runs each participant once per round, the order rotated each round, after WARMUP_ROUNDS untimed rounds
 * (their results are printed, marked, and left out of every table). `target` is the broker unless a participant names its own.
 */
async function interleaved(part: string, target: string, participants: Participant[]): Promise<void> {
  for (const slot of schedule(participants.length, ROUNDS, WARMUP_ROUNDS)) {
    const [name, run, own] = participants[slot.participant]!;
    const result = await run(slot.round);
    if (!slot.warmup) rows.push({ part, target: own ?? target, participant: name, round: slot.round, result });
    const when = slot.warmup ? `warm-up ${WARMUP_ROUNDS + slot.round + 1}` : `round ${slot.round + 1}`;
    process.stderr.write(`  ${part} ${own ?? target} ${when}: ${name} ${fmt(rps(result))} records/s\n`);
  }
}

/** The part's table: each participant's median records/s and latencies, and the median per-round ratio of `anchor` to it. */
function table(part: string, anchor: string, latencyLabel: string): string {
  const mine = rows.filter((r) => r.part === part);
  const names = [...new Set(mine.map((r) => `${r.target}\u0000${r.participant}`))];
  const lines = [
    `| target | participant | records/s (median of ${ROUNDS}) | ${latencyLabel} p50 ms | ${latencyLabel} p99 ms | ${anchor} ÷ this (per-round ratios) |`,
    '| --- | --- | ---: | ---: | ---: | --- |',
  ];
  for (const key of names) {
    const [target, participant] = key.split('\u0000') as [string, string];
    const own = mine.filter((r) => r.target === target && r.participant === participant);
    const ratios = own.map((r) => {
      const peer = mine.find((a) => a.participant === anchor && a.round === r.round);
      return peer === undefined ? Number.NaN : rps(peer.result) / rps(r.result);
    });
    lines.push(
      `| ${target} | ${participant} | ${fmt(median(own.map((r) => rps(r.result))))} | ${fmt(median(own.map((r) => r.result.p50Ms ?? Number.NaN)), 1)} | ${fmt(median(own.map((r) => r.result.p99Ms ?? Number.NaN)), 1)} | ${participant === anchor ? '—' : `${fmt(median(ratios), 2)}× (${ratios.map((x) => fmt(x, 2)).join(' / ')})`} |`,
    );
  }
  return lines.join('\n');
}

/** The eos part's two stacks: which participant is each one's at-least-once loop and which its exactly-once loop. */
const EOS_STACKS = [
  {
    target: 'Kafka 4.4',
    label: "Kafka 4.4 with Kafka's Java clients (classic consumer; offsets committed by commitSync / by sendOffsetsToTransaction)",
    atLeastOnce: 'at-least-once',
    exactlyOnce: 'exactly-once',
  },
  {
    target: 'kipgen',
    label: "kipgen's client on bench:txn's broker (share consumer; explicit-ctp / transactional-ctp, KIP-1289's sendShareAcksToTransaction)",
    atLeastOnce: 'explicit-ctp',
    exactlyOnce: 'transactional-ctp',
  },
] as const;

/** The eos table: per batch and stack, both loops' medians and the median of the per-round exactly-once ÷ at-least-once ratios. */
function eosTable(): string {
  const lines = [
    `| batch | stack | at-least-once records/s (median of ${ROUNDS}) | commit p50 / p99 ms | exactly-once records/s | commit p50 / p99 ms | exactly-once ÷ at-least-once (per-round ratios) |`,
    '| ---: | --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const batch of EOS_BATCHES) {
    const mine = rows.filter((r) => r.part === `eos-${batch}`);
    for (const stack of EOS_STACKS) {
      const of = (participant: string): Row[] => mine.filter((r) => r.participant === participant).sort((a, b) => a.round - b.round);
      const [alos, eos] = [of(stack.atLeastOnce), of(stack.exactlyOnce)];
      const latency = (runs: Row[]): string =>
        `${fmt(median(runs.map((r) => r.result.p50Ms ?? Number.NaN)), 1)} / ${fmt(median(runs.map((r) => r.result.p99Ms ?? Number.NaN)), 1)}`;
      const ratios = eos.map((e) => {
        const peer = alos.find((a) => a.round === e.round);
        return peer === undefined ? Number.NaN : rps(e.result) / rps(peer.result);
      });
      lines.push(
        `| ${batch} | ${stack.label} | ${fmt(median(alos.map((r) => rps(r.result))))} | ${latency(alos)} | ${fmt(median(eos.map((r) => rps(r.result))))} | ${latency(eos)} | ${fmt(median(ratios), 2)}× (${ratios.map((x) => fmt(x, 2)).join(' / ')}) |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const prerequisites = kafkaPrerequisites();
  if (!prerequisites.ok) {
    process.stderr.write(`bench:kafka needs Apache Kafka 4.4 and its Java clients: ${prerequisites.missing}\n`);
    process.exit(2);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-bench-kafka-java-'));
  let compiled: string | undefined;
  const brokers: BrokerUnderTest[] = [];
  const report: string[] = [];
  try {
    process.stderr.write('compiling the Java side and our client and broker…\n');
    const java = JavaSide.compile(prerequisites.classpath, work);
    compiled = compileProject();
    const client = (await import(pathToFileURL(path.join(compiled, 'client/index.js')).href)) as typeof ClientModule;

    // Start-up, one sample per broker and round, in alternating order, on an otherwise idle
    // machine: the brokers the other parts use start after these (ours while Kafka's JVM is
    // still compiling on the other core), so their starts are only the last sample.
    const starts = { kafka: [] as number[], ours: [] as number[] };
    if (PARTS.has('start')) {
      const once = async (which: 'kafka' | 'ours'): Promise<void> => {
        const broker = which === 'kafka' ? await startApacheKafka() : await startKipgen(compiled!);
        starts[which].push(broker.startMs);
        await broker.stop();
      };
      for (let round = 0; round < ROUNDS; round++) {
        for (const which of round % 2 === 0 ? (['kafka', 'ours'] as const) : (['ours', 'kafka'] as const)) await once(which);
        process.stderr.write(`start-up round ${round + 1}: Kafka 4.4 ${fmt(starts.kafka.at(-1))} ms, ours ${fmt(starts.ours.at(-1))} ms\n`);
      }
    }
    const kafka = await startApacheKafka();
    brokers.push(kafka);
    const ours = await startKipgen(compiled);
    brokers.push(ours);
    starts.kafka.push(kafka.startMs);
    starts.ours.push(ours.startMs);
    const startMs = { kafka: median(starts.kafka), ours: median(starts.ours) };
    const startRatios = starts.kafka.map((k, i) => fmt(k / starts.ours[i]!, 1)).join(' / ');
    const idle = { kafka: kafka.rssMiB(), ours: ours.rssMiB() };
    process.stderr.write(`started: Kafka 4.4 in ${fmt(kafka.startMs)} ms (${fmt(idle.kafka)} MiB), ours in ${fmt(ours.startMs)} ms (${fmt(idle.ours)} MiB)\n`);

    const newTopic = async (broker: BrokerUnderTest, prefix: string): Promise<string> => {
      const topic = `${prefix}-${++topicCounter}`;
      await java.clientBench(['topic', broker.bootstrap, topic, PARTITIONS]);
      return topic;
    };

    if (PARTS.has('clients')) {
      for (const perTxn of [0, PER_TXN]) {
        const part = perTxn === 0 ? 'produce' : 'produce-transactional';
        const records = perTxn === 0 ? RECORDS : TXN_RECORDS;
        const spec = async (): Promise<ProduceSpec> => ({
          bootstrap: kafka.bootstrap,
          topic: await newTopic(kafka, part),
          records,
          size: RECORD_SIZE,
          window: WINDOW,
          perTxn,
        });
        await interleaved(part, 'Kafka 4.4', [
          ['kipgen', async () => produceOurs(client, await spec())],
          [
            'Kafka Java client',
            async () => {
              const s = await spec();
              return java.clientBench(['produce', s.bootstrap, s.topic, s.records, s.size, s.window, s.perTxn]);
            },
          ],
          ['@platformatic/kafka', async () => producePlatformatic(await spec())],
          ['kafkajs', async () => produceKafkajs(await spec())],
        ]);
        report.push(
          `### ${perTxn === 0 ? 'Produce' : `Transactional produce (${PER_TXN} records per transaction)`}: ${fmt(records)} records of 1 KiB, acks=all, idempotent, against Kafka 4.4\n\n${table(part, 'kipgen', perTxn === 0 ? 'send' : 'commit')}`,
        );
      }
    }

    if (PARTS.has('share')) {
      const topic = await newTopic(kafka, 'share-input');
      await java.clientBench(['produce', kafka.bootstrap, topic, CONSUME_RECORDS * ROUNDS * 2, RECORD_SIZE, WINDOW, 0]);
      const group = async (name: string, round: number): Promise<string> => {
        const id = `bench-${name}-${roundTag(round)}`;
        await java.clientBench(['group-earliest', kafka.bootstrap, id]);
        return id;
      };
      // Each group starts from the earliest offset: every participant drains the same records.
      await interleaved('share', 'Kafka 4.4', [
        ['kipgen', async (round) => shareConsumeOurs(client, kafka.bootstrap, topic, await group('kipgen', round), CONSUME_RECORDS)],
        ['Kafka Java client', async (round) => java.clientBench(['share-consume', kafka.bootstrap, topic, await group('java', round), CONSUME_RECORDS])],
      ]);
      report.push(
        `### Share consumer: draining ${fmt(CONSUME_RECORDS)} records (explicit acknowledgement, commitSync per poll) from Kafka 4.4\n\n${table('share', 'kipgen', 'commit')}`,
      );
    }

    if (PARTS.has('tools')) {
      await interleaved('tools-produce', '—', [
        ['kipgen', async () => java.producerPerformance(ours.bootstrap, await newTopic(ours, 'perf'), RECORDS, RECORD_SIZE)],
        ['Kafka 4.4', async () => java.producerPerformance(kafka.bootstrap, await newTopic(kafka, 'perf'), RECORDS, RECORD_SIZE)],
      ]);
      report.push(
        `### Brokers under Kafka's ProducerPerformance (${fmt(RECORDS)} records of 1 KiB, acks=all; the broker is what differs)\n\n${table('tools-produce', 'kipgen', 'send')}`,
      );
      const seeded = new Map<BrokerUnderTest, string>();
      for (const broker of [ours, kafka]) {
        const topic = await newTopic(broker, 'share-perf');
        await java.clientBench(['produce', broker.bootstrap, topic, CONSUME_RECORDS * ROUNDS, RECORD_SIZE, WINDOW, 0]);
        seeded.set(broker, topic);
      }
      const perfGroup = async (broker: BrokerUnderTest, round: number): Promise<string> => {
        const id = `perf-${broker.name === 'kipgen' ? 'kipgen' : 'kafka'}-${roundTag(round)}`;
        await java.clientBench(['group-earliest', broker.bootstrap, id]);
        return id;
      };
      await interleaved('tools-share', '—', [
        ['kipgen', async (round) => java.shareConsumerPerformance(ours.bootstrap, seeded.get(ours)!, await perfGroup(ours, round), CONSUME_RECORDS)],
        ['Kafka 4.4', async (round) => java.shareConsumerPerformance(kafka.bootstrap, seeded.get(kafka)!, await perfGroup(kafka, round), CONSUME_RECORDS)],
      ]);
      report.push(`### Brokers under Kafka's ShareConsumerPerformance (${fmt(CONSUME_RECORDS)} records)\n\n${table('tools-share', 'kipgen', 'fetch')}`);
    }

    if (PARTS.has('eos')) {
      // bench:txn's topics: one partition in, one out, the input seeded alike on both brokers.
      const input = `eos-in-${++topicCounter}`;
      const output = `eos-out-${++topicCounter}`;
      for (const topic of [input, output]) await java.clientBench(['topic', kafka.bootstrap, topic, 1]);
      await java.clientBench(['seed', kafka.bootstrap, input, EOS_RECORDS]);
      // bench:txn's own broker (Transactions V2, share groups read_committed from the earliest offset), so that
      // our ratio here is the one bench:txn measures.
      const txnBroker: BenchBroker = await startBenchBroker(2);
      try {
        await seedInput(txnBroker.bootstrap, 'bench-in', EOS_RECORDS);
        for (const batch of EOS_BATCHES) {
          const kafkaLoop =
            (exactlyOnce: boolean) =>
            (round: number): Promise<LoopResult> =>
              java.clientBench([
                'ctp',
                kafka.bootstrap,
                input,
                output,
                `bench-${exactlyOnce ? 'eos' : 'alos'}-${batch}-${roundTag(round)}`,
                EOS_RECORDS,
                batch,
                exactlyOnce ? 1 : 0,
                WARMUP_ROUNDS,
              ]);
          const ourLoop =
            (mode: OurCtpMode) =>
            (round: number): Promise<LoopResult> =>
              consumeTransformProduceOurs(client, mode, {
                bootstrap: txnBroker.bootstrap,
                input: 'bench-in',
                output: 'bench-out',
                group: `bench-${mode}-${batch}-${roundTag(round)}`,
                records: EOS_RECORDS,
                batch,
              });
          await interleaved(`eos-${batch}`, 'Kafka 4.4', [
            ['at-least-once', kafkaLoop(false)],
            ['exactly-once', kafkaLoop(true)],
            ['explicit-ctp', ourLoop('explicit-ctp'), 'kipgen'],
            ['transactional-ctp', ourLoop('transactional-ctp'), 'kipgen'],
          ]);
        }
      } finally {
        await txnBroker.proc.stop(3_000);
        fs.rmSync(txnBroker.dir, { recursive: true, force: true });
      }
      report.push(
        `### What exactly-once costs: bench:txn's consume-transform-produce loop, ${fmt(EOS_RECORDS)} records (9-byte keys and values, one partition), Transactions V2\n\n${eosTable()}`,
      );
    }

    const loaded = { kafka: kafka.rssMiB(), ours: ours.rssMiB() };
    report.unshift(
      [
        '### Brokers: start-up and memory',
        '',
        `| broker | start to serving, ms (median of ${starts.kafka.length}) | resident memory idle, MiB | after the load, MiB |`,
        '| --- | ---: | ---: | ---: |',
        `| Kafka 4.4 (one KRaft node, Kafka's JVM flags, 1 GiB heap; storage format not counted) | ${fmt(startMs.kafka)} | ${fmt(idle.kafka)} | ${fmt(loaded.kafka)} |`,
        `| kipgen (the kipgen-broker bin's one-file build, Node ${process.versions.node}) | ${fmt(startMs.ours)} | ${fmt(idle.ours)} | ${fmt(loaded.ours)} |`,
        `| Kafka ÷ kipgen | ${fmt(startMs.kafka / startMs.ours, 1)}× (${startRatios}) | ${fmt(idle.kafka / idle.ours, 1)}× | ${fmt(loaded.kafka / loaded.ours, 1)}× |`,
      ].join('\n'),
    );
    process.stdout.write(
      JSON_OUT
        ? `${JSON.stringify({ rows, startup: { kafkaMs: starts.kafka, oursMs: starts.ours }, memory: { idle, loaded } }, null, 2)}\n`
        : `${report.join('\n\n')}\n`,
    );
  } finally {
    for (const broker of brokers) await broker.stop().catch(() => {});
    fs.rmSync(work, { recursive: true, force: true });
    if (compiled !== undefined) fs.rmSync(compiled, { recursive: true, force: true });
  }
}

await main();
