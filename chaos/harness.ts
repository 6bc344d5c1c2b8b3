/**
 * The chaos cluster harness: a static cluster of real broker processes
 * (`coordinator/cli.ts broker --config file.json`), each behind a FaultProxy,
 * plus job processes. Every process is spawned in its own process group and
 * killed by its id (SIGKILL to the group); an exit hook kills whatever is
 * left. 127.0.0.1 only.
 *
 * Addressing: node i listens on its own port R_i; the cluster config of every
 * node names proxy ports P_i, so Metadata, FindCoordinator and the brokers'
 * own peer connections all go through the proxies. A link fault between
 * nodes A and B is a rule on B's proxy for client id `kipgen-broker-A` and on
 * A's proxy for `kipgen-broker-B`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { partitionForKey } from '../coordinator/cluster.js';
import { FaultProxy } from './proxy.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------
// Processes

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* gone */
    }
  }
}

/** A JSON event a child printed on stdout, with the time it was seen. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded JSON from a child's stdout: each check reads the fields its event has
export type ChildEvent = Record<string, any> & { event: string; at: number };

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout lines so far. */
  readonly lines: string[];
  stderr(): string;
  /** JSON events (stdout lines that parse as objects with `event`). */
  readonly events: ChildEvent[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly running: boolean;
  /** Resolves with the first event matching `pred` (rejects when the process exits first or after `timeoutMs`). */
  waitFor(pred: (e: ChildEvent) => boolean, timeoutMs: number, what?: string): Promise<ChildEvent>;
  /**
   * Resolves once the process is stopped (SIGSTOP: state `T`). A job that
   * freezes itself prints its `hanging` event and *then* stops; a SIGCONT
   * sent between the two is lost and the job stays frozen forever, so wait
   * for the stop before resuming it (see `resume`).
   */
  waitStopped(timeoutMs?: number): Promise<void>;
  /** waitStopped(), then SIGCONT. */
  resume(timeoutMs?: number): Promise<void>;
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function spawnManaged(name: string, args: string[], env: Record<string, string> = {}, echo = false): ManagedProcess {
  installExitHook();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  const lines: string[] = [];
  const events: ManagedProcess['events'] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffered = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      if (echo) process.stderr.write(`[${name}] ${line}\n`);
      if (line.startsWith('{')) {
        try {
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded JSON (see `events`)
          const parsed = JSON.parse(line) as Record<string, any>;
          if (typeof parsed.event === 'string') events.push({ ...parsed, event: parsed.event, at: Date.now() });
        } catch {
          /* not an event */
        }
      }
      for (const w of [...waiters]) w();
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
    if (echo) process.stderr.write(`[${name}!] ${chunk}`);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      for (const w of [...waiters]) w();
      resolve({ code, signal });
    }),
  );
  const proc: ManagedProcess = {
    name,
    child,
    pid: child.pid!,
    lines,
    events,
    exited,
    stderr: () => stderr,
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    waitFor(pred, timeoutMs, what = 'event') {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${name}: no ${what} within ${timeoutMs} ms; last lines:\n${lines.slice(-10).join('\n')}\nstderr tail:\n${stderr.slice(-2000)}`));
        }, timeoutMs);
        const check = (): void => {
          for (; seen < events.length; seen++) {
            if (pred(events[seen]!)) {
              clearTimeout(timer);
              waiters.delete(check);
              resolve(events[seen]!);
              return;
            }
          }
          if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before ${what}; stderr tail:\n${stderr.slice(-2000)}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async waitStopped(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (!proc.running) throw new Error(`${name} exited while waiting for it to stop`);
        if (processState(child.pid!) === 'T') return;
        if (Date.now() > deadline) throw new Error(`${name} (pid ${child.pid}) did not stop within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async resume(timeoutMs) {
      await proc.waitStopped(timeoutMs);
      killGroup(child, 'SIGCONT');
    },
    async kill9() {
      killGroup(child, 'SIGKILL');
      await exited;
    },
    async stop(graceMs = 5_000) {
      if (!proc.running) return void (await exited);
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  return proc;
}

/**
 * The scheduler state of a process (`R`, `S`, `T` stopped, `Z`, …), from
 * /proc on Linux, else from ps(1); null when it cannot be read.
 */
export function processState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S …": comm may hold spaces and parentheses; the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || null;
  } catch {
    try {
      return (
        execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
          .trim()
          .charAt(0) || null
      );
    } catch {
      return null;
    }
  }
}

// ---------------------------------------------------------------------------
// Cluster

/**
 * `count` free ports on 127.0.0.1, taken from outside the kernel's ephemeral
 * range. A broker restarted on its port must find it free; a port from the
 * ephemeral range (what listen(0) gives) may meanwhile have become the local
 * port of some outgoing connection, and the restart fails with EADDRINUSE.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const range = portsOutsideEphemeralRange();
    while (servers.length < count) servers.push(await listenOnFreePort(range));
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** The widest span of ports that the kernel never hands out as ephemeral ports, or null when there is none worth using. */
function portsOutsideEphemeralRange(): { low: number; high: number } | null {
  let ephemeral = { low: 32768, high: 60999 }; // Linux's default
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) ephemeral = { low: low!, high: high! };
  } catch {
    // not Linux: keep the default
  }
  const below = { low: 10_000, high: ephemeral.low - 1 };
  const above = { low: ephemeral.high + 1, high: 65_535 };
  const best = below.high - below.low >= above.high - above.low ? below : above;
  return best.high - best.low >= 1000 ? best : null;
}

/** A server listening on a random free port of `range` (on any port when range is null). */
async function listenOnFreePort(range: { low: number; high: number } | null): Promise<net.Server> {
  for (let attempt = 0; attempt < 60; attempt++) {
    const port = range === null || attempt >= 50 ? 0 : range.low + Math.floor(Math.random() * (range.high - range.low + 1));
    const server = net.createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (listening) return server;
  }
  throw new Error('no free port on 127.0.0.1 after 60 attempts');
}

export interface ChaosClusterOptions {
  nodes: number;
  topics: { name: string; partitions: number }[];
  /** Share-group settings (short by default). */
  shareGroup?: Partial<{
    recordLockDurationMs: number;
    deliveryCountLimit: number;
    sessionTimeoutMs: number;
    heartbeatIntervalMs: number;
    maxRecordLocks: number;
  }>;
  /** Other BrokerConfig fields. */
  config?: Record<string, unknown>;
  /** KIPGEN_FAULT per node id, for its first start. */
  faults?: Record<number, string>;
  /** Directory for data dirs (default: a fresh temp dir, removed by close()). */
  dir?: string;
  echo?: boolean;
}

export const CHAOS_SHARE_GROUP = {
  // The soak checks exactly-once over committed transactional output, consumed from the start.
  isolationLevel: 'read_committed',
  autoOffsetReset: 'earliest',
  recordLockDurationMs: 1_500,
  deliveryCountLimit: 10,
  sessionTimeoutMs: 2_500,
  heartbeatIntervalMs: 250,
  maxRecordLocks: 200,
};

export const CHAOS_BROKER = {
  transactionStatePartitions: 4,
  consumerOffsetsPartitions: 4,
  transactionAbortCheckIntervalMs: 200,
  markerRetryBackoffMs: 50,
  requestTimeoutMs: 2_000,
  transactionMaxTimeoutMs: 60_000,
};

export interface ChaosNode {
  nodeId: number;
  port: number;
  proxyPort: number;
  proxy: FaultProxy;
  dataDir: string;
  configFile: string;
  process: ManagedProcess | null;
  starts: number;
}

/** Java's String.hashCode → Kafka's coordinator partition → leader node (static: partition % nodes). */
export function coordinatorNode(key: string, partitions: number, nodes: number): number {
  return partitionForKey(key, partitions) % nodes;
}

export class ChaosCluster {
  readonly nodes: ChaosNode[] = [];
  private constructor(
    readonly dir: string,
    private readonly ownsDir: boolean,
    readonly options: ChaosClusterOptions,
  ) {}

  static async start(options: ChaosClusterOptions): Promise<ChaosCluster> {
    const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-chaos-'));
    fs.mkdirSync(dir, { recursive: true });
    const cluster = new ChaosCluster(dir, options.dir === undefined, options);
    const ports = await freePorts(options.nodes);
    for (let i = 0; i < options.nodes; i++) {
      const proxy = new FaultProxy(`node-${i}`, ports[i]!);
      const proxyPort = await proxy.start();
      const dataDir = path.join(dir, `node-${i}`);
      fs.mkdirSync(dataDir, { recursive: true });
      cluster.nodes.push({
        nodeId: i,
        port: ports[i]!,
        proxyPort,
        proxy,
        dataDir,
        configFile: path.join(dataDir, 'broker-config.json'),
        process: null,
        starts: 0,
      });
    }
    const clusterConfig = cluster.nodes.map((n) => ({ nodeId: n.nodeId, host: '127.0.0.1', port: n.proxyPort }));
    for (const n of cluster.nodes) {
      const config = {
        ...CHAOS_BROKER,
        ...options.config,
        nodeId: n.nodeId,
        host: '127.0.0.1',
        port: n.port,
        cluster: clusterConfig,
        dataDir: n.dataDir,
        topics: options.topics,
        shareGroup: { ...CHAOS_SHARE_GROUP, ...options.shareGroup },
      };
      fs.writeFileSync(n.configFile, JSON.stringify(config, null, 2));
    }
    try {
      await Promise.all(cluster.nodes.map((n) => cluster.startNode(n.nodeId, options.faults?.[n.nodeId])));
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  get bootstrap(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.proxyPort}`).join(',');
  }

  get config(): { transactionStatePartitions: number } {
    return { transactionStatePartitions: (this.options.config?.transactionStatePartitions as number | undefined) ?? CHAOS_BROKER.transactionStatePartitions };
  }

  /** The node coordinating transactions of `transactionalId`. */
  transactionCoordinatorOf(transactionalId: string): number {
    return coordinatorNode(transactionalId, this.config.transactionStatePartitions, this.nodes.length);
  }

  /** Leader of partition p of any data topic (static rule of coordinator/cluster.ts). */
  leaderOf(partition: number): number {
    return partition % this.nodes.length;
  }

  /** Starts (or restarts) a node; resolves when it prints its listening line. */
  async startNode(nodeId: number, fault?: string): Promise<ManagedProcess> {
    const n = this.nodes[nodeId]!;
    if (n.process?.running) throw new Error(`node ${nodeId} is running`);
    n.starts++;
    const proc = spawnManaged(
      `node-${nodeId}#${n.starts}`,
      ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts'), 'broker', '--config', n.configFile],
      fault ? { KIPGEN_FAULT: fault } : { KIPGEN_FAULT: '' },
      this.options.echo,
    );
    n.process = proc;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`node ${nodeId} did not listen within 30 s:\n${proc.stderr().slice(-3000)}`)), 30_000);
      const check = setInterval(() => {
        if (proc.lines.some((l) => l.includes('"listening"'))) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        } else if (!proc.running) {
          clearInterval(check);
          clearTimeout(timer);
          reject(new Error(`node ${nodeId} exited before listening:\n${proc.stderr().slice(-3000)}`));
        }
      }, 20);
    });
    return proc;
  }

  /** kill -9 of a node's process; its proxy resets the connections it carried (as the dead socket would). */
  async killNode(nodeId: number): Promise<void> {
    const n = this.nodes[nodeId]!;
    await n.process?.kill9();
    n.proxy.resetAll();
  }

  isRunning(nodeId: number): boolean {
    return this.nodes[nodeId]!.process?.running ?? false;
  }

  /** Cuts ('cut') or black-holes ('stall') the links between nodes a and b, both directions. */
  partition(a: number, b: number, mode: 'cut' | 'stall' = 'cut'): void {
    this.nodes[b]!.proxy.addRule({ id: `link-${a}-${b}`, mode, clientId: `kipgen-broker-${a}` });
    this.nodes[a]!.proxy.addRule({ id: `link-${b}-${a}`, mode, clientId: `kipgen-broker-${b}` });
  }

  healLink(a: number, b: number): void {
    this.nodes[b]!.proxy.removeRule(`link-${a}-${b}`);
    this.nodes[a]!.proxy.removeRule(`link-${b}-${a}`);
  }

  healAll(): void {
    for (const n of this.nodes) n.proxy.heal();
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.process?.kill9()));
    await Promise.all(this.nodes.map((n) => n.proxy.stop()));
    if (this.ownsDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Jobs

export interface JobOptions {
  name: string;
  bootstrap: string;
  group: string;
  input: string;
  output: string;
  transactionalId: string;
  extra?: string[];
  echo?: boolean;
}

/** Spawns chaos/ctp-job.ts; its client id is `job-<name>` (for proxy rules). */
export function spawnJob(options: JobOptions): ManagedProcess {
  return spawnManaged(
    options.name,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'chaos/ctp-job.ts'),
      '--bootstrap',
      options.bootstrap,
      '--group',
      options.group,
      '--input',
      options.input,
      '--output',
      options.output,
      '--transactional-id',
      options.transactionalId,
      '--client-id',
      `job-${options.name}`,
      ...(options.extra ?? []),
    ],
    {},
    options.echo,
  );
}
