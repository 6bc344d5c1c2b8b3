/**
 * The Kafka judge (test/kafka/java): compiling it, running it once against
 * several brokers, reading its lines, and comparing two brokers' lines with
 * the committed differences file (test/kafka/differences.json).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const KAFKA_TEST_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const JAVA_SOURCES = path.join(KAFKA_TEST_DIR, 'java/dev/kipgen/judge');
export const DIFFERENCES_FILE = path.join(KAFKA_TEST_DIR, 'differences.json');

/** Compiles the judge into `outDir` (a temp folder the caller removes): plain javac, no build tool. */
export function compileJudge(classpath: string, outDir: string): void {
  const sources = fs
    .readdirSync(JAVA_SOURCES)
    .filter((f) => f.endsWith('.java'))
    .map((f) => path.join(JAVA_SOURCES, f));
  const result = spawnSync('javac', ['-nowarn', '-encoding', 'UTF-8', '-d', outDir, '-cp', classpath, ...sources], { encoding: 'utf8' });
  if (result.error) throw new Error(`javac could not run: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`javac failed (${result.status}) on ${JAVA_SOURCES}:\n${result.stderr}`);
}

export interface JudgeRun {
  /** target → scenario → [step, result] in the order printed. */
  lines: Map<string, Map<string, [string, string][]>>;
  stderr: string;
  ms: number;
}

/**
 * Runs the judge in one JVM against every target (name → host:port), each in
 * its own thread; resolves when the JVM exits with every target's lines.
 * `tag` prefixes every name the scenarios use (and is removed from the lines),
 * so that a run can reuse a broker an earlier run left names on.
 */
export async function runJudge(classpath: string, classesDir: string, targets: Record<string, string>, timeoutMs: number, tag = ''): Promise<JudgeRun> {
  // log4j2.level=OFF: the class path has Kafka's SLF4J binding, and Log4j's default configuration would write client errors to stdout.
  const args = [
    '-Xmx384m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Dlog4j2.level=OFF',
    '-cp',
    `${classesDir}${path.delimiter}${classpath}`,
    'dev.kipgen.judge.Judge',
  ];
  if (tag !== '') args.push('--tag', tag);
  for (const [name, bootstrap] of Object.entries(targets)) args.push('--target', `${name}=${bootstrap}`);
  const began = Date.now();
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const code = await new Promise<number | string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the judge did not finish within ${timeoutMs} ms; stderr so far:\n${stderr.slice(-4000)}`));
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`java could not run: ${e.message}`));
    });
    child.once('exit', (c, signal) => {
      clearTimeout(timer);
      resolve(c ?? signal ?? 'unknown');
    });
  });
  if (code !== 0) throw new Error(`the judge exited ${code}:\n${stderr.slice(-4000)}`);
  return { lines: parseJudgeOutput(stdout, Object.keys(targets)), stderr, ms: Date.now() - began };
}

/** Parses `<target> <scenario> <step>: <result>` lines; every target must end with `<target> done`. */
export function parseJudgeOutput(stdout: string, targets: string[]): Map<string, Map<string, [string, string][]>> {
  const out = new Map<string, Map<string, [string, string][]>>(targets.map((t) => [t, new Map()]));
  const done = new Set<string>();
  stdout.split('\n').forEach((line, i) => {
    if (line === '') return;
    const m = /^(\S+) (?:(done)|(\S+) (.+?): (.*))$/.exec(line);
    const byScenario = m ? out.get(m[1]!) : undefined;
    if (!m || byScenario === undefined)
      throw new Error(`judge output line ${i + 1} is not "<target> <scenario> <step>: <result>" for a known target: ${JSON.stringify(line)}`);
    if (m[2] === 'done') return void done.add(m[1]!);
    const steps = byScenario.get(m[3]!) ?? [];
    steps.push([m[4]!, m[5]!]);
    byScenario.set(m[3]!, steps);
  });
  for (const t of targets) if (!done.has(t)) throw new Error(`judge output has no "${t} done" line: the run of ${t} did not finish`);
  return out;
}

export interface Difference {
  scenario: string;
  steps: string[];
  kafka: string;
  kipgen: string;
  why: string;
}

/** Reads and checks the differences file; a malformed entry is an error naming its index and field. */
export function readDifferences(file = DIFFERENCES_FILE): Difference[] {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { differences?: unknown };
  if (!Array.isArray(parsed.differences)) throw new Error(`${file}: "differences" must be an array`);
  return parsed.differences.map((e: any, i: number) => {
    const where = `${file}: differences[${i}]`;
    for (const field of ['scenario', 'kafka', 'kipgen', 'why'] as const) {
      if (typeof e?.[field] !== 'string' || e[field] === '') throw new Error(`${where}.${field} must be a non-empty string`);
    }
    if (!Array.isArray(e.steps) || e.steps.length === 0 || e.steps.some((s: unknown) => typeof s !== 'string' || s === ''))
      throw new Error(`${where}.steps must be a non-empty array of step names`);
    return { scenario: e.scenario, steps: e.steps, kafka: e.kafka, kipgen: e.kipgen, why: e.why };
  });
}

export interface Comparison {
  steps: number;
  same: number;
  /** Differences the file explains. */
  explained: { step: string; kafka: string; kipgen: string; why: string }[];
  /** Differences the file does not list, or lists with other results. */
  unexplained: string[];
  /** Listed differences that did not differ (so) in this run. */
  stale: string[];
}

const ABSENT = '(no such step)';

/** Compares one scenario's steps on Kafka and on kipgen, step by step, against the listed differences. */
export function compareScenario(scenario: string, kafka: [string, string][], kipgen: [string, string][], differences: Difference[]): Comparison {
  const unique = (steps: [string, string][], who: string): Map<string, string> => {
    const m = new Map<string, string>();
    for (const [step, result] of steps) {
      if (m.has(step)) throw new Error(`${scenario}: step "${step}" printed twice by ${who}; step names must be unique in a scenario`);
      m.set(step, result);
    }
    return m;
  };
  const a = unique(kafka, 'kafka');
  const b = unique(kipgen, 'kipgen');
  const order = [...a.keys(), ...[...b.keys()].filter((s) => !a.has(s))];
  const listed = new Map<string, Difference>();
  for (const d of differences.filter((d) => d.scenario === scenario)) for (const s of d.steps) listed.set(s, d);
  const result: Comparison = { steps: order.length, same: 0, explained: [], unexplained: [], stale: [] };
  const used = new Set<string>();
  for (const step of order) {
    const k = a.get(step) ?? ABSENT;
    const g = b.get(step) ?? ABSENT;
    const entry = listed.get(step);
    if (entry !== undefined) used.add(step);
    if (k === g) {
      result.same++;
      if (entry !== undefined) result.stale.push(`${scenario} ${step}: listed as a difference, but both print ${JSON.stringify(k)}`);
    } else if (entry !== undefined && entry.kafka === k && entry.kipgen === g) {
      result.explained.push({ step, kafka: k, kipgen: g, why: entry.why });
    } else if (entry !== undefined) {
      result.unexplained.push(
        `${scenario} ${step}: Kafka ${JSON.stringify(k)}, kipgen ${JSON.stringify(g)}; listed with Kafka ${JSON.stringify(entry.kafka)}, kipgen ${JSON.stringify(entry.kipgen)}`,
      );
    } else {
      result.unexplained.push(
        `${scenario} ${step}: Kafka ${JSON.stringify(k)}, kipgen ${JSON.stringify(g)} (not in ${path.relative(process.cwd(), DIFFERENCES_FILE)})`,
      );
    }
  }
  for (const step of listed.keys()) if (!used.has(step)) result.stale.push(`${scenario} ${step}: listed as a difference, but no broker printed this step`);
  return result;
}
