/**
 * A TCP proxy in front of a kipgen broker that passes every byte through,
 * except that it widens the Produce range in ApiVersions responses to start
 * at v0, as Kafka 3.x brokers advertised it.
 *
 * Why: librdkafka 2.0.2 (Debian's) compresses gzip, snappy and lz4 only when
 * the broker's Produce range includes v0 (it checks each codec against the
 * Produce version that brought it: v0 for those three, v7 for zstd). Against
 * Kafka 4.0 and kipgen, whose Produce starts at v3 (KIP-896), it logs "Broker
 * does not support compression type gzip: not compressing batch" and sends
 * those batches uncompressed. Behind this proxy librdkafka compresses them;
 * it still sends Produce v3+ (v2 batches need it), so the broker never sees a
 * version it does not serve. The broker must advertise the proxy's
 * port in Metadata so that every connection goes through it.
 */
import * as net from 'node:net';
import { ApiVersionsResponse } from '../../../generated/index.js';

const API_VERSIONS = 18;
const PRODUCE = 0;

export class ProduceV0Proxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  targetPort = 0;
  /** ApiVersions responses rewritten so far. */
  rewritten = 0;

  async listen(): Promise<void> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: net.Socket): void {
    const server = net.connect(this.targetPort, '127.0.0.1');
    this.sockets.add(client).add(server);
    const versionsRequests = new Map<number, number>(); // correlation id → ApiVersions version
    const close = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
    frames(client, (frame) => {
      if (frame.readInt16BE(4) === API_VERSIONS) versionsRequests.set(frame.readInt32BE(8), frame.readInt16BE(6));
      server.write(frame);
    });
    frames(server, (frame) => {
      const correlationId = frame.readInt32BE(4);
      const version = versionsRequests.get(correlationId);
      if (version === undefined) return void client.write(frame);
      versionsRequests.delete(correlationId);
      client.write(this.widenProduce(frame, version));
    });
  }

  /** ApiVersionsResponse always has header v0 (the correlation id alone). */
  private widenProduce(frame: Buffer, version: number): Buffer {
    const body = frame.subarray(8);
    let response;
    try {
      response = ApiVersionsResponse.decode(body, version);
    } catch {
      return frame; // e.g. an UNSUPPORTED_VERSION answer in v0 form: pass it on as it is
    }
    const produce = response.apiKeys.find((k) => k.apiKey === PRODUCE);
    if (produce === undefined || produce.minVersion === 0) return frame;
    produce.minVersion = 0;
    this.rewritten++;
    const encoded = ApiVersionsResponse.encode(response, version);
    const out = Buffer.alloc(8 + encoded.length);
    out.writeInt32BE(4 + encoded.length, 0);
    out.writeInt32BE(frame.readInt32BE(4), 4);
    out.set(encoded, 8);
    return out;
  }
}

/** Calls `onFrame` with each whole size-prefixed frame (size included) read from `socket`. */
function frames(socket: net.Socket, onFrame: (frame: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = 4 + pending.readInt32BE(0);
      onFrame(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
  });
}
