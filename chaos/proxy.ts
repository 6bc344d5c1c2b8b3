/**
 * A fault-injecting TCP proxy for Kafka connections, one in front of each
 * broker node (127.0.0.1 only). Every node's static cluster config names the
 * proxies' ports, so clients *and* the other nodes reach a node through its
 * proxy. The proxy reads the request frames going in (size-prefixed; the
 * request header's client id and API key), so a fault can target one link:
 * node A's connections to node B carry client id `kipgen-broker-A`, a job's
 * connections carry the job's client id.
 *
 * Faults, each matched on (client id, API key):
 *  - `cut`:   matching connections are reset at once, and new ones as soon as
 *             their first request arrives (a partition that fails fast);
 *  - `stall`: requests and responses of matching connections are held, not
 *             forwarded (a black hole: peers time out); `heal()` releases what
 *             is still connected;
 *  - `kill-request`: a connection is reset when a request with a matching
 *             API key arrives (one failing RPC: e.g. Produce to one node).
 * Optional `onRequest` hook sees every request (e.g. to kill a process the
 * moment it sent EndTxn).
 */
import * as net from 'node:net';

export type FaultMode = 'cut' | 'stall' | 'kill-request';

export interface FaultRule {
  id: string;
  mode: FaultMode;
  /** Client ids the rule applies to: exact string, or a RegExp. */
  clientId: string | RegExp;
  /** API keys (for kill-request; for cut/stall optional, default all). */
  apiKeys?: number[];
}

export interface RequestInfo {
  clientId: string | null;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
}

interface ProxiedConnection {
  client: net.Socket;
  server: net.Socket;
  clientId: string | null;
  /** Set once the first request frame was read. */
  identified: boolean;
  held: Array<{ to: 'server' | 'client'; data: Buffer }>;
  pending: Buffer;
  closed: boolean;
}

export class FaultProxy {
  private server: net.Server | null = null;
  private readonly connections = new Set<ProxiedConnection>();
  private readonly rules = new Map<string, FaultRule>();
  port = 0;
  /** Counters for tests: requests seen per API key, connections reset by rules. */
  readonly stats = { requests: 0, resets: 0, held: 0 };
  onRequest: ((info: RequestInfo) => void) | null = null;

  constructor(
    readonly name: string,
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(port = 0): Promise<number> {
    const server = net.createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  addRule(rule: FaultRule): void {
    this.rules.set(rule.id, rule);
    if (rule.mode === 'cut') for (const c of this.connections) if (c.identified && this.matches(rule, c.clientId, null)) this.reset(c);
  }

  removeRule(id: string): void {
    this.rules.delete(id);
    this.flushHeld();
  }

  /** Removes every rule and releases held traffic. */
  heal(): void {
    this.rules.clear();
    this.flushHeld();
  }

  get ruleCount(): number {
    return this.rules.size;
  }

  /** Resets every connection (as when the node behind it dies) without adding a rule. */
  resetAll(): void {
    for (const c of [...this.connections]) this.reset(c);
  }

  private matches(rule: FaultRule, clientId: string | null, apiKey: number | null): boolean {
    const id = clientId ?? '';
    const idOk = typeof rule.clientId === 'string' ? rule.clientId === id : rule.clientId.test(id);
    if (!idOk) return false;
    if (apiKey === null || !rule.apiKeys) return true;
    return rule.apiKeys.includes(apiKey);
  }

  private ruleFor(c: ProxiedConnection, apiKey: number | null, modes: FaultMode[]): FaultRule | undefined {
    for (const rule of this.rules.values()) if (modes.includes(rule.mode) && this.matches(rule, c.clientId, apiKey)) return rule;
    return undefined;
  }

  private accept(client: net.Socket): void {
    const server = net.connect({ host: this.targetHost, port: this.targetPort });
    const c: ProxiedConnection = { client, server, clientId: null, identified: false, held: [], pending: Buffer.alloc(0), closed: false };
    this.connections.add(c);
    client.setNoDelay(true);
    server.setNoDelay(true);
    const close = (): void => this.close(c);
    client.on('error', close);
    server.on('error', close);
    client.on('close', close);
    server.on('close', close);
    client.on('data', (chunk: Buffer) => this.fromClient(c, chunk));
    server.on('data', (chunk: Buffer) => this.forward(c, 'client', chunk));
  }

  private fromClient(c: ProxiedConnection, chunk: Buffer): void {
    c.pending = c.pending.length === 0 ? chunk : Buffer.concat([c.pending, chunk]);
    // Forward whole frames only, so that a rule can act before a request is delivered.
    while (c.pending.length >= 4) {
      const size = c.pending.readInt32BE(0);
      if (size < 0 || size > 200 * 1024 * 1024) return this.reset(c);
      if (c.pending.length < 4 + size) return;
      const frame = c.pending.subarray(0, 4 + size);
      c.pending = c.pending.subarray(4 + size);
      const info = parseHeader(frame);
      if (!c.identified) {
        c.identified = true;
        c.clientId = info?.clientId ?? null;
      }
      this.stats.requests++;
      if (info) this.onRequest?.(info);
      if (this.ruleFor(c, info?.apiKey ?? null, ['cut'])) return this.reset(c);
      if (info && this.ruleFor(c, info.apiKey, ['kill-request'])) return this.reset(c);
      this.forward(c, 'server', Buffer.from(frame));
      if (c.closed) return;
    }
  }

  private forward(c: ProxiedConnection, to: 'server' | 'client', data: Buffer): void {
    if (c.closed) return;
    if (c.held.length > 0 || (c.identified && this.ruleFor(c, null, ['stall']))) {
      c.held.push({ to, data });
      this.stats.held++;
      return;
    }
    (to === 'server' ? c.server : c.client).write(data);
  }

  private flushHeld(): void {
    for (const c of this.connections) {
      if (c.closed || this.ruleFor(c, null, ['stall'])) continue;
      const held = c.held;
      c.held = [];
      for (const h of held) (h.to === 'server' ? c.server : c.client).write(h.data);
    }
  }

  private reset(c: ProxiedConnection): void {
    if (c.closed) return;
    this.stats.resets++;
    c.client.resetAndDestroy?.();
    c.server.resetAndDestroy?.();
    c.client.destroy();
    c.server.destroy();
    this.close(c);
  }

  private close(c: ProxiedConnection): void {
    if (c.closed) return;
    c.closed = true;
    c.held = [];
    c.client.destroy();
    c.server.destroy();
    this.connections.delete(c);
  }

  async stop(): Promise<void> {
    for (const c of [...this.connections]) this.close(c);
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Request header v1/v2: int16 apiKey, int16 apiVersion, int32 correlationId, nullable string clientId. */
export function parseHeader(frame: Buffer): RequestInfo | null {
  if (frame.length < 4 + 10) return null;
  const apiKey = frame.readInt16BE(4);
  const apiVersion = frame.readInt16BE(6);
  const correlationId = frame.readInt32BE(8);
  const len = frame.readInt16BE(12);
  if (len < 0) return { apiKey, apiVersion, correlationId, clientId: null };
  if (frame.length < 14 + len) return null;
  return { apiKey, apiVersion, correlationId, clientId: frame.toString('utf8', 14, 14 + len) };
}
