/**
 * The Node participants of bench:kafka, each driven the same way as Kafka's Java
 * clients in ClientBench.java: `records` records of `size` bytes, at most `window`
 * unacknowledged, acks=all, idempotent; or transactions of `perTxn` records.
 *
 * kafkajs and @platformatic/kafka have no accumulator (a send() is a Produce of the
 * records it is given), so their records go through Batcher, which groups them as
 * Kafka's producer does by default: up to batch.size (16 KiB) per send, waiting at
 * most linger.ms (5 ms). Ours and Java's batch by themselves with those defaults.
 */
import type * as ClientModule from '../../client/index.js';
import type { LoopResult } from './java.js';

export interface ProduceSpec {
  bootstrap: string;
  topic: string;
  records: number;
  size: number;
  window: number;
  /** 0: no transactions; else records per transaction. */
  perTxn: number;
}

/** Kafka's producer defaults, which every participant is held to. */
const BATCH_BYTES = 16_384;
const LINGER_MS = 5;

function percentile(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function loopResult(records: number, ms: number, samples: number[]): LoopResult {
  samples.sort((a, b) => a - b);
  return { records, seconds: ms / 1000, p50Ms: percentile(samples, 0.5), p99Ms: percentile(samples, 0.99) };
}

/** At most `limit` holders at a time. */
class Window {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }
}

/** Groups records into sends of up to BATCH_BYTES, each sent after at most LINGER_MS. */
class Batcher {
  private batch: Buffer[] = [];
  private done: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  constructor(
    private readonly size: number,
    private readonly sendBatch: (values: Buffer[]) => Promise<unknown>,
  ) {}
  add(value: Buffer): Promise<void> {
    const acked = new Promise<void>((resolve, reject) => this.done.push({ resolve, reject }));
    this.batch.push(value);
    if ((this.batch.length + 1) * this.size > BATCH_BYTES) this.send();
    else this.timer ??= setTimeout(() => this.send(), LINGER_MS);
    return acked;
  }
  async flush(): Promise<void> {
    this.send();
    await Promise.all(this.inFlight);
  }
  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.batch.length === 0) return;
    const values = this.batch;
    const done = this.done;
    this.batch = [];
    this.done = [];
    const sent = this.sendBatch(values).then(
      () => done.forEach((d) => d.resolve()),
      (e: unknown) => done.forEach((d) => d.reject(e)),
    );
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
  }
}

/** A producer as the loop sees it. */
interface LoopProducer {
  send(value: Buffer): Promise<unknown>;
  begin(): Promise<void>;
  /** Sends what is left of the transaction and commits it. */
  commit(): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

async function runLoop(spec: ProduceSpec, producer: LoopProducer): Promise<LoopResult> {
  const value = Buffer.alloc(spec.size, 'x');
  const window = new Window(spec.window);
  const samples: number[] = [];
  let failure: unknown = null;
  try {
    const began = performance.now();
    for (let i = 0; i < spec.records && failure === null; i++) {
      if (spec.perTxn > 0 && i % spec.perTxn === 0) await producer.begin();
      await window.acquire();
      const sent = performance.now();
      producer.send(value).then(
        () => {
          if (spec.perTxn === 0) samples.push(performance.now() - sent);
          window.release();
        },
        (e: unknown) => {
          failure ??= e;
          window.release();
        },
      );
      if (spec.perTxn > 0 && (i + 1 === spec.records || (i + 1) % spec.perTxn === 0)) {
        const commitBegan = performance.now();
        await producer.commit();
        samples.push(performance.now() - commitBegan);
      }
    }
    await producer.flush();
    if (failure !== null) throw failure;
    return loopResult(spec.records, performance.now() - began, samples);
  } finally {
    await producer.close();
  }
}

export async function produceOurs(client: typeof ClientModule, spec: ProduceSpec): Promise<LoopResult> {
  const transactional = spec.perTxn > 0;
  const producer = new client.KafkaProducer({
    bootstrapServers: spec.bootstrap,
    clientId: 'bench-kipgen',
    acks: 'all',
    enableIdempotence: true,
    metricsRegistry: null,
    logger: null,
    ...(transactional ? { transactionalId: `bench-kipgen-${spec.topic}` } : {}),
  });
  if (transactional) await producer.initTransactions();
  return runLoop(spec, {
    send: (value) => producer.send({ topic: spec.topic, value }),
    begin: async () => producer.beginTransaction(),
    commit: () => producer.commitTransaction(),
    flush: () => producer.flush(),
    close: () => producer.close(),
  });
}

/**
 * @platformatic/kafka 2.12 declares Node ≥ 22.22 and calls Promise.withResolvers
 * (ES2024, Node 22); the bench runs on Node 20, so it gets that function here, as
 * the specification defines it.
 */
function providePromiseWithResolvers(): void {
  if ('withResolvers' in Promise) return;
  const withResolvers = <T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } => {
    let resolve!: (value: T) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
  Object.defineProperty(Promise, 'withResolvers', { value: withResolvers, configurable: true, writable: true });
}

export async function producePlatformatic(spec: ProduceSpec): Promise<LoopResult> {
  providePromiseWithResolvers();
  const { Producer } = await import('@platformatic/kafka');
  const transactional = spec.perTxn > 0;
  const producer = new Producer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: [spec.bootstrap],
    acks: -1,
    idempotent: true,
    ...(transactional ? { transactionalId: `bench-platformatic-${spec.topic}` } : {}),
  });
  type Transaction = Awaited<ReturnType<typeof producer.beginTransaction>>;
  let transaction: Transaction | null = null;
  const batcher = new Batcher(spec.size, (values) => {
    const messages = values.map((value) => ({ topic: spec.topic, value }));
    return transaction !== null ? transaction.send({ messages }) : producer.send({ messages });
  });
  return runLoop(spec, {
    send: (value) => batcher.add(value),
    begin: async () => {
      transaction = await producer.beginTransaction();
    },
    commit: async () => {
      await batcher.flush();
      await transaction!.commit();
      transaction = null;
    },
    flush: () => batcher.flush(),
    close: () => producer.close(),
  });
}

export async function produceKafkajs(spec: ProduceSpec): Promise<LoopResult> {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'bench-kafkajs', brokers: [spec.bootstrap], logLevel: logLevel.NOTHING });
  const transactional = spec.perTxn > 0;
  // kafkajs' idempotent producer keeps one request in flight (its docs ask for maxInFlightRequests: 1).
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, ...(transactional ? { transactionalId: `bench-kafkajs-${spec.topic}` } : {}) });
  await producer.connect();
  type Transaction = Awaited<ReturnType<typeof producer.transaction>>;
  let transaction: Transaction | null = null;
  const batcher = new Batcher(spec.size, (values) => {
    const message = { topic: spec.topic, acks: -1, messages: values.map((value) => ({ value })) };
    return transaction !== null ? transaction.send(message) : producer.send(message);
  });
  return runLoop(spec, {
    send: (value) => batcher.add(value),
    begin: async () => {
      transaction = await producer.transaction();
    },
    commit: async () => {
      await batcher.flush();
      await transaction!.commit();
      transaction = null;
    },
    flush: () => batcher.flush(),
    close: () => producer.disconnect(),
  });
}

/** Our share consumer draining `records` records: explicit acknowledgement, commitSync per poll, as ClientBench's Java loop. */
export async function shareConsumeOurs(client: typeof ClientModule, bootstrap: string, topic: string, group: string, records: number): Promise<LoopResult> {
  const consumer = new client.KafkaShareConsumer({ bootstrapServers: bootstrap, groupId: group, acknowledgementMode: 'explicit', logger: null });
  const samples: number[] = [];
  try {
    consumer.subscribe([topic]);
    let seen = 0;
    let began = 0;
    const deadline = Date.now() + 600_000;
    while (seen < records && Date.now() < deadline) {
      const batch = await consumer.poll(500);
      if (batch.length === 0) continue;
      if (began === 0) began = performance.now();
      for (const record of batch) consumer.acknowledge(record, 'accept');
      const commitBegan = performance.now();
      await consumer.commitSync();
      samples.push(performance.now() - commitBegan);
      seen += batch.length;
    }
    if (seen < records) throw new Error(`our share consumer saw ${seen} of ${records} records in 10 minutes`);
    return loopResult(seen, performance.now() - began, samples);
  } finally {
    await consumer.close(5_000).catch(() => {});
  }
}
