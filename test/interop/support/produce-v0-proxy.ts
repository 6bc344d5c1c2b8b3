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
import { ApiVersionsResponse, FindCoordinatorResponse, MetadataResponse } from '../../../generated/index.js';

const API_VERSIONS = 18;
const METADATA = 3;
const FIND_COORDINATOR = 10;
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
    const requests = new Map<number, { apiKey: number; version: number }>(); // correlation id → rewritten request
    const close = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
    frames(client, (frame) => {
      const apiKey = frame.readInt16BE(4);
      if (apiKey === API_VERSIONS || apiKey === METADATA || apiKey === FIND_COORDINATOR) {
        requests.set(frame.readInt32BE(8), { apiKey, version: frame.readInt16BE(6) });
      }
      server.write(frame);
    });
    frames(server, (frame) => {
      const correlationId = frame.readInt32BE(4);
      const request = requests.get(correlationId);
      if (request === undefined) return void client.write(frame);
      requests.delete(correlationId);
      if (request.apiKey === API_VERSIONS) client.write(this.widenProduce(frame, request.version));
      else client.write(this.advertiseProxy(frame, request.apiKey, request.version));
    });
  }

  private advertiseProxy(frame: Buffer, apiKey: number, version: number): Buffer {
    return rewritePorts.call(this, frame, apiKey, version);
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

/**
 * Metadata and FindCoordinator with this proxy's port for the broker's. The
 * response header is the correlation id, plus an empty tagged-field section in
 * flexible versions (the broker writes none).
 */
function rewritePorts(this: ProduceV0Proxy, frame: Buffer, apiKey: number, version: number): Buffer {
  const codec = apiKey === METADATA ? MetadataResponse : FindCoordinatorResponse;
  const headerSize = codec.headerVersion(version) === 1 ? 5 : 4;
  if (headerSize === 5 && frame[8] !== 0) return frame;
  const swap = (port: number) => (port === this.targetPort ? this.port : port);
  let encoded: Uint8Array;
  try {
    if (apiKey === METADATA) {
      const response = MetadataResponse.decode(frame.subarray(4 + headerSize), version);
      for (const broker of response.brokers) broker.port = swap(broker.port);
      encoded = MetadataResponse.encode(response, version);
    } else {
      const response = FindCoordinatorResponse.decode(frame.subarray(4 + headerSize), version);
      response.port = swap(response.port);
      for (const coordinator of response.coordinators) coordinator.port = swap(coordinator.port);
      encoded = FindCoordinatorResponse.encode(response, version);
    }
  } catch {
    return frame;
  }
  const out = Buffer.alloc(4 + headerSize + encoded.length);
  out.writeInt32BE(headerSize + encoded.length, 0);
  frame.copy(out, 4, 4, 4 + headerSize);
  out.set(encoded, 4 + headerSize);
  return out;
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
