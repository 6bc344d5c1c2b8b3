/**
 * A timing tap between Kafka clients and one broker, run as its own process
 * (so its work does not share the client's event loop):
 *
 *   node --import tsx bench/rpc-tap.ts <listen port> <broker port>
 *
 * Bytes are forwarded as they arrive, untouched. Each request frame read on
 * the way in (size, API key, version, correlation id, client id) is matched
 * with the response frame carrying its correlation id on the way back; when
 * the response is complete one JSON line goes to stdout:
 *   {"rpc":"Produce","v":12,"client":"…","startMs":…,"endMs":…}
 * startMs is when the request's first byte reached the tap, endMs when the
 * response's last byte did, both wall-clock milliseconds with sub-millisecond
 * precision (performance.timeOrigin + performance.now(), as the broker's
 * log-write trace), so the two processes' events share one time line. The hop
 * through the tap adds its own forwarding time to each round trip.
 */
import * as net from 'node:net';
import { apiByKey } from '../generated/index.js';

const now = (): number => performance.timeOrigin + performance.now();

interface Pending {
  rpc: string;
  v: number;
  client: string | null;
  startMs: number;
}

/** Reads size-prefixed frames from a byte stream; `onStart` sees a frame's first chunk, `onFrame` the whole frame. */
class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private startedAt: number | null = null;

  constructor(private readonly onFrame: (frame: Buffer, startMs: number) => void) {}

  push(chunk: Buffer): void {
    const at = now();
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length > 0) {
      this.startedAt ??= at;
      if (this.buffered.length < 4) return;
      const size = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + size) return;
      const frame = this.buffered.subarray(4, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      const startMs = this.startedAt;
      this.startedAt = null;
      this.onFrame(frame, startMs);
    }
  }
}

function tap(client: net.Socket, brokerPort: number): void {
  const broker = net.connect({ host: '127.0.0.1', port: brokerPort });
  client.setNoDelay(true);
  broker.setNoDelay(true);
  const pending = new Map<number, Pending>();
  const requests = new FrameReader((frame, startMs) => {
    const apiKey = frame.readInt16BE(0);
    const v = frame.readInt16BE(2);
    const correlationId = frame.readInt32BE(4);
    const idLength = frame.readInt16BE(8);
    const clientId = idLength < 0 ? null : frame.toString('utf8', 10, 10 + idLength);
    pending.set(correlationId, { rpc: apiByKey(apiKey)?.name ?? `api-${apiKey}`, v, client: clientId, startMs });
  });
  const responses = new FrameReader((frame) => {
    const correlationId = frame.readInt32BE(0);
    const request = pending.get(correlationId);
    if (request === undefined) return;
    pending.delete(correlationId);
    process.stdout.write(`${JSON.stringify({ ...request, endMs: now() })}\n`);
  });
  client.on('data', (chunk: Buffer) => {
    broker.write(chunk);
    requests.push(chunk);
  });
  broker.on('data', (chunk: Buffer) => {
    client.write(chunk);
    responses.push(chunk);
  });
  const close = (): void => {
    client.destroy();
    broker.destroy();
  };
  client.on('close', close).on('error', close);
  broker.on('close', close).on('error', close);
}

const [listenPort, brokerPort] = process.argv.slice(2).map(Number);
if (!Number.isInteger(listenPort) || !Number.isInteger(brokerPort)) {
  process.stderr.write('usage: rpc-tap.ts <listen port> <broker port>\n');
  process.exit(2);
}
const server = net.createServer((socket) => tap(socket, brokerPort!));
server.listen(listenPort, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ event: 'listening', port: listenPort })}\n`));
process.on('SIGTERM', () => process.exit(0));
