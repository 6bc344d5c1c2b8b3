/** A kipgen broker as a separate process (`coordinator/cli.ts broker`), which a test can kill -9 and restart. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BrokerConfigInput } from '../../../coordinator/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export class BrokerProcess {
  private child: ChildProcess | null = null;
  port = 0;
  readonly stderr: string[] = [];

  constructor(private readonly configFile: string) {}

  static async start(dir: string, config: BrokerConfigInput): Promise<BrokerProcess> {
    const file = path.join(dir, 'broker.json');
    // KIP-1289 flows read committed output from the start (not Kafka's group-config defaults).
    const shareGroup = { isolationLevel: 'read_committed', autoOffsetReset: 'earliest', ...config.shareGroup };
    fs.writeFileSync(file, JSON.stringify({ port: 0, dataDir: path.join(dir, 'data'), ...config, shareGroup }));
    const broker = new BrokerProcess(file);
    await broker.launch();
    return broker;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  async launch(): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'coordinator/cli.ts'), 'broker', '--config', this.configFile], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()));
    const lines = readline.createInterface({ input: child.stdout! });
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`broker did not start: ${this.stderr.join('')}`)), 20_000);
      lines.on('line', (line) => {
        try {
          const event = JSON.parse(line) as { event: string; port: number };
          if (event.event === 'listening') {
            clearTimeout(timer);
            resolve(event.port);
          }
        } catch {
          /* not ours */
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`broker exited with ${code}: ${this.stderr.join('')}`));
      });
    });
  }

  /** kill -9: no shutdown, nothing flushed that was not already fsynced. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    this.child = null;
  }
}
