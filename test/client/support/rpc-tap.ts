/**
 * A TCP tap between clients and one real broker, in the test's process: bytes
 * pass untouched, and each request and its answer are recorded in the order
 * the tap saw them (a sequence number, no clock), so a test can assert which
 * RPCs were in flight together. A broker answers one connection's requests in
 * order, and so does the tap: answers held back on a connection (`holdAnswers`,
 * e.g. Produce, to play a slow acks=all) hold back the ones behind them, as a
 * slow request does on a real broker. After bench/rpc-tap.ts (a process of its
 * own, with wall-clock times for the timeline).
 */
import * as net from 'node:net';
import { apiByKey } from '../../../generated/index.js';

export interface TappedRpc {
  api: string;
  /** The client id of the request header. */
  client: string | null;
  /** The connection it went on (numbered in the order the tap accepted them). */
  connection: number;
  /** When its request reached the tap, and when its answer left the tap for the client. */
  sentAt: number;
  answeredAt: number;
}

/** Reads size-prefixed Kafka frames from a byte stream. */
class Frames {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (frame: Buffer, raw: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + size) return;
      const raw = this.buffered.subarray(0, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      this.onFrame(raw.subarray(4), raw);
    }
  }
}

export class RpcTap {
  /** Every RPC answered so far, in the order their answers left the tap. */
  readonly rpcs: TappedRpc[] = [];
  private seq = 0;
  private connections = 0;
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private held: { apis: ReadonlySet<string>; ms: number } = { apis: new Set(), ms: 0 };
  private readonly waiters: Array<{ api: string; resolve: () => void }> = [];

  private constructor(private readonly brokerPort: number) {}

  static async start(brokerPort: number): Promise<RpcTap> {
    const tap = new RpcTap(brokerPort);
    tap.server = net.createServer((client) => tap.accept(client));
    await new Promise<void>((resolve) => tap.server!.listen(0, '127.0.0.1', resolve));
    return tap;
  }

  get port(): number {
    return (this.server!.address() as net.AddressInfo).port;
  }

  /** From now on the answers to these APIs leave the tap `ms` after the broker gave them (and the answers behind them on their connection wait). */
  holdAnswers(apis: readonly string[], ms: number): void {
    this.held = { apis: new Set(apis), ms };
  }

  /** Resolves when the next request of `api` reaches the tap. */
  whenRequested(api: string): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ api, resolve }));
  }

  /** The RPCs of `api`, in the order they were answered. */
  of(api: string): TappedRpc[] {
    return this.rpcs.filter((r) => r.api === api);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const connection = ++this.connections;
    const broker = net.connect({ host: '127.0.0.1', port: this.brokerPort });
    for (const s of [client, broker]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        broker.destroy();
      });
    }
    const pending = new Map<number, { api: string; client: string | null; sentAt: number }>();
    // Answers leave in order: each waits for the one before it.
    let answers: Promise<void> = Promise.resolve();
    const requests = new Frames((frame, raw) => {
      const api = apiByKey(frame.readInt16BE(0))?.name ?? `api-${frame.readInt16BE(0)}`;
      const idLength = frame.readInt16BE(8);
      const client = idLength < 0 ? null : frame.toString('utf8', 10, 10 + idLength);
      pending.set(frame.readInt32BE(4), { api, client, sentAt: ++this.seq });
      broker.write(raw);
      for (const w of this.waiters.filter((x) => x.api === api)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    });
    const responses = new Frames((frame, raw) => {
      const request = pending.get(frame.readInt32BE(0));
      pending.delete(frame.readInt32BE(0));
      const hold = request !== undefined && this.held.apis.has(request.api) ? this.held.ms : 0;
      answers = answers.then(async () => {
        if (hold > 0) await new Promise((r) => setTimeout(r, hold));
        if (request) this.rpcs.push({ api: request.api, client: request.client, connection, sentAt: request.sentAt, answeredAt: ++this.seq });
        if (!client.destroyed) client.write(raw);
      });
    });
    client.on('data', (chunk: Buffer) => requests.push(chunk));
    broker.on('data', (chunk: Buffer) => responses.push(chunk));
  }
}
