/**
 * The Java side of bench:kafka: ClientBench (Kafka's own clients running the
 * bench's loops) compiled once per run, and Kafka's load generators from
 * kafka-tools 4.4 (ProducerPerformance, ShareConsumerPerformance).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'java/dev/kipgen/bench');

/** What one timed loop reports: records, seconds, and the median and 99th percentile of its latency samples. */
export interface LoopResult {
  records: number;
  seconds: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** Client JVMs get Kafka's defaults (G1, C2), as an application would run them. */
const CLIENT_JVM = ['-Xmx1g', '-XX:+UseG1GC', '-Dlog4j2.level=OFF'];

export class JavaSide {
  private constructor(
    private readonly classpath: string,
    private readonly classes: string,
  ) {}

  static compile(classpath: string, outDir: string): JavaSide {
    const sources = fs
      .readdirSync(SOURCES)
      .filter((f) => f.endsWith('.java'))
      .map((f) => path.join(SOURCES, f));
    const result = spawnSync('javac', ['-nowarn', '-encoding', 'UTF-8', '-d', outDir, '-cp', classpath, ...sources], { encoding: 'utf8' });
    if (result.error) throw new Error(`javac could not run: ${result.error.message}`);
    if (result.status !== 0) throw new Error(`javac failed on ${SOURCES}:\n${result.stderr}`);
    return new JavaSide(classpath, outDir);
  }

  /** Runs ClientBench with `args`; resolves with its JSON line. */
  async clientBench(args: (string | number)[], timeoutMs = 600_000): Promise<LoopResult & Record<string, unknown>> {
    const out = await this.java(
      [...CLIENT_JVM, '-cp', `${this.classes}${path.delimiter}${this.classpath}`, 'dev.kipgen.bench.ClientBench', ...args.map(String)],
      timeoutMs,
    );
    const line = out.stdout
      .trim()
      .split('\n')
      .reverse()
      .find((l) => l.startsWith('{'));
    if (line === undefined) throw new Error(`ClientBench ${args.join(' ')} printed no result:\n${out.stderr.slice(-3000)}`);
    return JSON.parse(line) as LoopResult & Record<string, unknown>;
  }

  /**
   * Kafka's ProducerPerformance: `records` records of `size` bytes as fast as it can, acks=all.
   * Its last line: "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P50 ms 50th, P95 ms 95th, P99 ms 99th, …".
   */
  async producerPerformance(bootstrap: string, topic: string, records: number, size: number): Promise<LoopResult> {
    const out = await this.java(
      [
        ...CLIENT_JVM,
        '-cp',
        this.classpath,
        'org.apache.kafka.tools.ProducerPerformance',
        '--topic',
        topic,
        '--num-records',
        String(records),
        '--record-size',
        String(size),
        '--throughput',
        '-1',
        '--producer-props',
        `bootstrap.servers=${bootstrap}`,
        'acks=all',
      ],
      600_000,
    );
    const match = /(\d+)[^\n]*? records sent, ([\d.]+) records\/sec .*?, ([\d.]+) ms 50th, [\d.]+ ms 95th, ([\d.]+) ms 99th/.exec(out.stdout);
    if (match === null) throw new Error(`ProducerPerformance printed no summary:\n${out.stdout.slice(-2000)}\n${out.stderr.slice(-2000)}`);
    const sent = Number(match[1]);
    return { records: sent, seconds: sent / Number(match[2]), p50Ms: Number(match[3]), p99Ms: Number(match[4]) };
  }

  /**
   * Kafka's ShareConsumerPerformance: drains `records` records of `topic` in share group `group`.
   * Its summary line: start time, end time, MB, MB/s, records/s, records, fetch time (ms).
   */
  async shareConsumerPerformance(bootstrap: string, topic: string, group: string, records: number): Promise<LoopResult> {
    const out = await this.java(
      [
        ...CLIENT_JVM,
        '-cp',
        this.classpath,
        'org.apache.kafka.tools.ShareConsumerPerformance',
        '--bootstrap-server',
        bootstrap,
        '--topic',
        topic,
        '--group',
        group,
        '--num-records',
        String(records),
        '--timeout',
        '60000',
        '--hide-header',
      ],
      600_000,
    );
    const line = out.stdout
      .trim()
      .split('\n')
      .reverse()
      .find((l) => /^\d{4}-\d\d-\d\d/.test(l));
    const fields = line?.split(',').map((f) => f.trim());
    if (fields === undefined || fields.length < 6)
      throw new Error(`ShareConsumerPerformance printed no summary:\n${out.stdout.slice(-2000)}\n${out.stderr.slice(-2000)}`);
    const consumed = Number(fields[5]);
    return { records: consumed, seconds: consumed / Number(fields[4]), p50Ms: null, p99Ms: null };
  }

  private java(args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
      child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`java could not run: ${e.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve({ stdout, stderr });
        else reject(new Error(`java ${args.slice(-8).join(' ')} exited ${code ?? signal}:\n${stderr.slice(-3000)}${stdout.slice(-1000)}`));
      });
    });
  }
}
