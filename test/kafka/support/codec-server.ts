/**
 * Kafka 4.4's own codecs as a child process (java/dev/kipgen/codec): compiled
 * with javac against Kafka's class path into a `kipgen-kafka-codec-*` temp
 * folder (as the judge is, ./judge.ts), started once, and spoken to with one
 * JSON line per request and per answer (see CodecServer.java for the
 * requests). Requests are answered in order, so a queue of pending promises
 * pairs them.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KAFKA_TEST_DIR } from './judge.js';

const SOURCES = path.join(KAFKA_TEST_DIR, 'java/dev/kipgen/codec');

export type KafkaResult = { bytes: string; json: unknown; unknownTags: number; error?: undefined } | { error: string; bytes?: undefined; json?: undefined };

export interface KafkaCodecs {
  /** Kafka's [lowest, highest] version of each name, or null where Kafka 4.4 has no such class. */
  versions(names: string[]): Promise<Record<string, [number, number] | null>>;
  /** Kafka reads each base64 message at `version`, writes it back and prints it with its JsonConverter. */
  read(name: string, version: number, items: string[]): Promise<KafkaResult[]>;
  /** Kafka's JsonConverter reads each JSON text, then Kafka writes and prints the message. */
  fromJson(name: string, version: number, jsonTexts: string[]): Promise<KafkaResult[]>;
  /** Kafka's JsonConverter reads each JSON text at `from`, Kafka writes the message at `to`. */
  downgrade(name: string, from: number, to: number, jsonTexts: string[]): Promise<({ bytes: string } | { error: string })[]>;
  /** Each coordinator record (JSON text) as its coordinator writes it in its log: a key after its record type, a value after its version. */
  logRecord(name: string, version: number, jsonTexts: string[]): Promise<({ bytes: string } | { error: string })[]>;
  /** Kafka's MemoryRecords writes each batch described (see Batches.java): base64 bytes or an error. */
  writeBatches(items: unknown[]): Promise<({ bytes: string } | { error: string })[]>;
  /** Kafka's MemoryRecords reads each base64 records field: the batches and records it finds, or an error. */
  readBatches(items: string[]): Promise<({ batches: KafkaBatch[] } | { error: string })[]>;
  /** Milliseconds Kafka's process has spent answering, so far (its own clock). */
  busyMs(): number;
  close(): Promise<void>;
}

/** A batch as Batches.read describes it (int64 values as decimal strings). */
export interface KafkaBatch {
  baseOffset: string;
  lastOffset: string;
  partitionLeaderEpoch: number;
  magic: number;
  compression: string;
  timestampType: string;
  maxTimestamp: string;
  transactional: boolean;
  control: boolean;
  producerId: string;
  producerEpoch: number;
  baseSequence: number;
  lastSequence: number;
  count: number;
  sizeInBytes: number;
  records: {
    offset: string;
    timestamp: string;
    key: string | null;
    value: string | null;
    headers: { key: string; value: string | null }[];
    controlType?: string;
    coordinatorEpoch?: number;
  }[];
}

/** Compiles the codec server (seconds of javac) and starts its JVM. */
export async function startKafkaCodecs(classpath: string): Promise<KafkaCodecs> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-codec-'));
  let child: ChildProcessWithoutNullStreams;
  try {
    const sources = fs
      .readdirSync(SOURCES)
      .filter((f) => f.endsWith('.java'))
      .map((f) => path.join(SOURCES, f));
    const javac = spawnSync('javac', ['-nowarn', '-encoding', 'UTF-8', '-d', dir, '-cp', classpath, ...sources], { encoding: 'utf8' });
    if (javac.error) throw new Error(`javac could not run: ${javac.error.message}`);
    if (javac.status !== 0) throw new Error(`javac failed (${javac.status}) on ${SOURCES}:\n${javac.stderr}`);
    // C2 pays off here (hundreds of thousands of messages), so no TieredStopAtLevel; log4j2 OFF as in ./judge.ts.
    child = spawn(
      'java',
      ['-Xmx384m', '-XX:+UseSerialGC', '-Dlog4j2.level=OFF', '-cp', `${dir}${path.delimiter}${classpath}`, 'dev.kipgen.codec.CodecServer'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const pending: { resolve: (v: any) => void; reject: (e: Error) => void }[] = [];
  let stderr = '';
  let buffered = '';
  let exited: Error | undefined;
  let busyNanos = 0;
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-8000)));
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    buffered += s;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const waiter = pending.shift();
      if (waiter === undefined) continue;
      const answer = JSON.parse(line) as { fatal?: string; busyNanos?: number };
      busyNanos += answer.busyNanos ?? 0;
      if (answer.fatal !== undefined) waiter.reject(new Error(`Kafka's codec server refused the request: ${answer.fatal}`));
      else waiter.resolve(answer);
    }
  });
  const gone = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = new Error(`Kafka's codec server exited (${code ?? signal}); stderr:\n${stderr}`);
      for (const w of pending.splice(0)) w.reject(exited);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve();
    }),
  );
  child.once('error', (e) => {
    exited = new Error(`java could not run: ${e.message}`);
    for (const w of pending.splice(0)) w.reject(exited);
  });

  function ask<T>(line: string): Promise<T> {
    if (exited) return Promise.reject(exited);
    return new Promise<T>((resolve, reject) => {
      pending.push({ resolve, reject });
      child.stdin.write(`${line}\n`);
    });
  }

  return {
    versions: async (names) => (await ask<{ versions: Record<string, [number, number] | null> }>(JSON.stringify({ op: 'versions', names }))).versions,
    read: async (name, version, items) => (await ask<{ results: KafkaResult[] }>(JSON.stringify({ op: 'read', name, version, items }))).results,
    fromJson: async (name, version, texts) =>
      // The texts are JSON already (with int64 as bare numbers), so they are spliced in, not re-stringified.
      (await ask<{ results: KafkaResult[] }>(`{"op":"fromJson","name":${JSON.stringify(name)},"version":${version},"items":[${texts.join(',')}]}`)).results,
    downgrade: async (name, from, to, texts) =>
      (
        await ask<{ results: ({ bytes: string } | { error: string })[] }>(
          `{"op":"downgrade","name":${JSON.stringify(name)},"from":${from},"to":${to},"items":[${texts.join(',')}]}`,
        )
      ).results,
    logRecord: async (name, version, texts) =>
      (
        await ask<{ results: ({ bytes: string } | { error: string })[] }>(
          `{"op":"logRecord","name":${JSON.stringify(name)},"version":${version},"items":[${texts.join(',')}]}`,
        )
      ).results,
    writeBatches: async (items) => (await ask<{ results: ({ bytes: string } | { error: string })[] }>(JSON.stringify({ op: 'writeBatches', items }))).results,
    readBatches: async (items) =>
      (await ask<{ results: ({ batches: KafkaBatch[] } | { error: string })[] }>(JSON.stringify({ op: 'readBatches', items }))).results,
    busyMs: () => busyNanos / 1e6,
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
