/**
 * What `npm run test:kafka` needs besides Node: a Java runtime, Maven, and the
 * jars test/kafka/pom.xml names (Apache Kafka 4.4.0's broker, kafka-clients,
 * kafka-tools), resolved from ~/.m2 or Maven Central. Each is probed the way the
 * harness uses it; a failure is one line saying what is missing and the command
 * that fixes it, never a stack trace.
 *
 * Run as a script (`node --import tsx test/kafka/support/prerequisites.ts`) it
 * prints that line and exits 2 when something is missing, else prints the
 * Java version and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const KAFKA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const POM = path.join(KAFKA_DIR, 'pom.xml');

/** The classes the harness runs: a missing one means the class path is not Kafka 4.4's. */
const REQUIRED_JARS = ['kafka_2.13-4.4.0.jar', 'kafka-clients-4.4.0.jar', 'kafka-tools-4.4.0.jar', 'log4j-slf4j-impl-'];

export type KafkaPrerequisites = { ok: true; classpath: string; java: string } | { ok: false; missing: string };

let cached: KafkaPrerequisites | undefined;

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ''
  );
}

/** Maven's own words for why it failed: its first [ERROR] line, without the ANSI colours. */
function mavenError(output: string): string {
  const clean = output.replace(/\x1b\[[0-9;]*m/g, '');
  const line = clean.split('\n').find((l) => l.startsWith('[ERROR]')) ?? firstLine(clean);
  return line.replace(/^\[ERROR\]\s*/, '').slice(0, 300);
}

/**
 * The class path of the last resolution, kept in test/kafka/target (git-ignored)
 * under the pom's hash, so that the prerequisite check and the globalSetup of
 * one run (and later runs) ask Maven once; used only while every jar exists.
 */
const CACHE = path.join(KAFKA_DIR, 'target', 'classpath.txt');

function pomHash(): string {
  return createHash('sha256').update(fs.readFileSync(POM)).digest('hex');
}

function cachedClasspath(): string | undefined {
  try {
    const [hash, classpath] = fs.readFileSync(CACHE, 'utf8').split('\n');
    if (hash !== pomHash() || classpath === undefined || classpath.length === 0) return undefined;
    const jars = classpath.split(path.delimiter);
    if (!REQUIRED_JARS.every((name) => jars.some((j) => path.basename(j).startsWith(name)))) return undefined;
    return jars.every((j) => fs.existsSync(j)) ? classpath : undefined;
  } catch {
    return undefined;
  }
}

function writeCachedClasspath(classpath: string): void {
  fs.mkdirSync(path.dirname(CACHE), { recursive: true });
  fs.writeFileSync(CACHE, `${pomHash()}\n${classpath}\n`);
}

/**
 * Java, Maven and the class path, probed once per process (about 2 s with a
 * warm ~/.m2; nothing once test/kafka/target holds it). `missing` is one line: what is missing and what to run.
 */
export function kafkaPrerequisites(): KafkaPrerequisites {
  if (cached !== undefined) return cached;
  cached = probe();
  return cached;
}

function probe(): KafkaPrerequisites {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 30_000 });
  if (java.error !== undefined || java.status !== 0) {
    return {
      ok: false,
      missing:
        'npm run test:kafka needs Java 17+ (`java` not found on PATH): install it with `sudo apt-get install -y --no-install-recommends default-jdk-headless` (.ci/run does this)',
    };
  }
  const javaVersion = firstLine(java.stderr || java.stdout);
  const major = /version "(\d+)/.exec(javaVersion)?.[1];
  if (major !== undefined && Number(major) < 17) {
    return { ok: false, missing: `npm run test:kafka needs Java 17+ for Kafka 4.4, found ${javaVersion}: install default-jdk-headless (Debian 12 has 17)` };
  }
  // With the class path cached Maven is not needed (a machine that ran once can run offline).
  const reused = cachedClasspath();
  if (reused !== undefined) return { ok: true, classpath: reused, java: javaVersion };
  const mvn = spawnSync('mvn', ['-v'], { encoding: 'utf8', timeout: 60_000 });
  if (mvn.error !== undefined || mvn.status !== 0) {
    return {
      ok: false,
      missing:
        'npm run test:kafka needs Maven (`mvn` not found on PATH) to fetch Kafka 4.4.0: install it with `sudo apt-get install -y --no-install-recommends maven` (.ci/run does this)',
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-classpath-'));
  try {
    const out = path.join(dir, 'classpath.txt');
    const build = spawnSync('mvn', ['-q', '-B', '-f', POM, 'dependency:build-classpath', `-Dmdep.outputFile=${out}`], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (build.status !== 0 || !fs.existsSync(out)) {
      return {
        ok: false,
        missing: `Maven could not resolve Kafka 4.4.0's jars from test/kafka/pom.xml (${mavenError(`${build.stdout}${build.stderr}`) || build.error?.message || `exit ${build.status}`}): run \`cd test/kafka && mvn dependency:build-classpath\` with Maven Central reachable once (then ~/.m2 serves it offline)`,
      };
    }
    const classpath = fs.readFileSync(out, 'utf8').trim();
    const jars = classpath.split(path.delimiter);
    for (const name of REQUIRED_JARS) {
      const jar = jars.find((j) => path.basename(j).startsWith(name));
      if (jar === undefined || !fs.existsSync(jar)) {
        return {
          ok: false,
          missing: `${name.replace(/-$/, '')} is not on the class path Maven built from test/kafka/pom.xml${jar ? ` (${jar} is gone)` : ''}: run \`cd test/kafka && mvn dependency:build-classpath\``,
        };
      }
    }
    writeCachedClasspath(classpath);
    return { ok: true, classpath, java: javaVersion };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = kafkaPrerequisites();
  if (!result.ok) {
    process.stderr.write(`${result.missing}\n`);
    process.exit(2);
  }
  process.stdout.write(`test:kafka: Apache Kafka 4.4.0 from ~/.m2 (${result.classpath.split(path.delimiter).length} jars), ${result.java}\n`);
}
