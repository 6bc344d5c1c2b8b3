/**
 * `kipgen broker` as a child process, as a real client meets it: spawned with
 * `node bin/kipgen.mjs broker --port 0 --data-dir … --topic … --log-requests`,
 * port read from the `{"event":"listening",…}` line on stdout, stderr kept
 * (with --log-requests it names every request's API, version and client id).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';
import type { BrokerConfigInput } from '../../../coordinator/config.js';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');

const createdDirs: string[] = [];
/** Removes the directories tempDir made; runs after every test file that imports this module. */
export function removeTempDirs(): void {
  for (const dir of createdDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
// Registered while the importing test file is collected, so it is that file's afterAll.
afterAll(removeTempDirs);

/** A fresh directory under the OS temp dir, removed after the test file (afterAll). */
export function tempDir(prefix = 'kipgen-interop-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

export interface KipgenBrokerOptions {
  /** `name:partitions`, as `--topic` takes them. */
  topics: string[];
  /** Default: a fresh temporary directory. */
  dataDir?: string;
  /** Written to a JSON config file passed with --config (flags override it). */
  config?: BrokerConfigInput;
  /**
   * `kipgen` runs bin/kipgen.mjs (the installed CLI); `cli` runs coordinator/cli.ts
   * directly, which starts in a quarter of the time (no generator modules to load).
   */
  entry?: 'kipgen' | 'cli';
  env?: Record<string, string>;
  /** Pass --log-requests (default true). */
  logRequests?: boolean;
}

export interface KipgenBroker {
  readonly port: number;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Requests logged by --log-requests so far. */
  requests(): LoggedRequest[];
  /** Graceful stop (SIGTERM); resolves with stderr once the process is gone. */
  stop(): Promise<string>;
  kill9(): Promise<void>;
  /** True while the process runs. */
  alive(): boolean;
  /** Resident set size of the broker process (Linux /proc), in bytes. */
  rss(): number;
}

export interface LoggedRequest {
  connection: number;
  api: string;
  version: number;
  correlationId: number;
  clientId: string | null;
}

const QUICK: BrokerConfigInput = { transactionAbortCheckIntervalMs: 200, markerRetryBackoffMs: 50, requestTimeoutMs: 3_000 };

export async function startKipgenBroker(options: KipgenBrokerOptions): Promise<KipgenBroker> {
  const dataDir = options.dataDir ?? tempDir();
  fs.mkdirSync(dataDir, { recursive: true });
  const configFile = path.join(dataDir, 'interop-config.json');
  fs.writeFileSync(configFile, JSON.stringify({ ...QUICK, ...options.config }));
  const entry = options.entry === 'cli' ? ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts')] : [path.join(ROOT, 'bin/kipgen.mjs')];
  const args = [...entry, 'broker', '--config', configFile, '--port', '0', '--data-dir', dataDir];
  if (options.logRequests !== false) args.push('--log-requests');
  for (const topic of options.topics) args.push('--topic', topic);
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kipgen broker did not print its listening line within 30 s:\n${stderr}`));
    }, 30_000);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.includes('"event":"listening"'));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`kipgen broker exited (${child.exitCode ?? child.signalCode}) before listening:\n${stderr}`));
    });
  });
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    port,
    dataDir,
    child,
    stderr: () => stderr,
    requests: () => parseRequestLog(stderr),
    alive,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024,
    async stop() {
      if (alive()) child.kill('SIGTERM');
      await exited;
      return stderr;
    },
    async kill9() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
  };
}

const REQUEST_LINE = /\] connection (\d+): (\w+) v(\d+) correlation (-?\d+) client (null|"(?:[^"\\]|\\.)*")(?: \(unsupported: answered with v0\))?$/;

export function parseRequestLog(stderr: string): LoggedRequest[] {
  const out: LoggedRequest[] = [];
  for (const line of stderr.split('\n')) {
    const m = REQUEST_LINE.exec(line);
    if (m) out.push({ connection: Number(m[1]), api: m[2]!, version: Number(m[3]), correlationId: Number(m[4]), clientId: JSON.parse(m[5]!) as string | null });
  }
  return out;
}

/** `{ Produce: [7], Metadata: [4, 12] }` for the requests whose client id matches. */
export function apisUsed(requests: LoggedRequest[], clientId: (id: string | null) => boolean = () => true): Record<string, number[]> {
  const byApi = new Map<string, Set<number>>();
  for (const r of requests) {
    if (!clientId(r.clientId)) continue;
    let versions = byApi.get(r.api);
    if (versions === undefined) byApi.set(r.api, (versions = new Set()));
    versions.add(r.version);
  }
  return Object.fromEntries([...byApi].sort(([a], [b]) => a.localeCompare(b)).map(([api, v]) => [api, [...v].sort((a, b) => a - b)]));
}

/** Fails, naming the Debian package, when a tool the test needs is not installed (CI installs them: .ci/run). */
/**
 * The tool's version output, or an error whose message is one line naming the
 * Debian package to install. A probe that runs but fails (e.g. python3 without
 * the module) counts as missing. The tools the interop project knows are in
 * support/tools.ts (requireInteropTool); this is for a new one.
 */
export function requireTool(command: string, versionArgs: string[], debianPackage: string): string {
  const probe = spawnSync(command, versionArgs, { encoding: 'utf8', timeout: 20_000 });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `this test needs \`${[command, ...versionArgs].join(' ')}\` to work: install with \`sudo apt-get install -y --no-install-recommends ${debianPackage}\` (.ci/run does this)`,
    );
  }
  return `${probe.stdout}${probe.stderr}`.trim();
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs a command to completion (killed after timeoutMs), with optional stdin. */
export function run(
  command: string,
  args: string[],
  options: { input?: Uint8Array | string; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
