/**
 * The TCP front end: frames, headers, dispatch, responses in order.
 *
 * Like a Kafka broker, a connection's requests are handled one at a time, in
 * the order they arrived (Kafka mutes a channel while one of its requests is
 * in flight), so a client may pipeline and always gets its answers in order.
 * A frame that cannot be served — oversize, malformed header or body, an API
 * or version not served — is logged in one line and closes that connection
 * only; the one exception is ApiVersions, which answers an unsupported version
 * with a v0 body carrying UNSUPPORTED_VERSION and the supported APIs (KIP-511).
 */
import * as net from 'node:net';
import { ApiVersionsResponse, RequestHeader, ResponseHeader, apiByKey } from '../../generated/index.js';
import { FrameError, FrameReader, Reader, encodeFrame, type ApiMessageCodec } from '../../runtime/index.js';
import type { RequestContext } from '../broker-context.js';
import { ErrorCode, KafkaError, errorName } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { ApiRegistry } from './api-registry.js';

const API_VERSIONS_KEY = 18;
const PRODUCE_KEY = 0;

export interface ServerOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  registry: ApiRegistry;
  metrics: Metrics;
  log: (line: string) => void;
}

/** Thrown inside the server to reject a frame: logged, then the connection is closed. */
class RejectedFrame extends Error {}

export class KafkaServer {
  private server: net.Server | null = null;
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;

  constructor(private readonly options: ServerOptions) {}

  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.accept(socket));
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        server.on('error', (error) => this.options.log(`listener error: ${error.message}`));
        this.server = server;
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  private accept(socket: net.Socket): void {
    const connection = new Connection(this.nextConnectionId++, socket, this.options, () => this.connections.delete(connection));
    this.connections.add(connection);
    this.options.metrics.connectionsOpened++;
  }

  /** Stops accepting, closes every connection. */
  async close(): Promise<void> {
    for (const connection of this.connections) connection.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

class Connection {
  private readonly frames: FrameReader;
  private readonly queue: Uint8Array[] = [];
  private processing = false;
  private closed = false;
  private readonly closeCallbacks: (() => void)[] = [];
  readonly peer: string;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly options: ServerOptions,
    onGone: () => void,
  ) {
    this.peer = `${socket.remoteAddress}:${socket.remotePort}`;
    this.frames = new FrameReader(options.maxFrameBytes);
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => {
      /* a reset by the peer: 'close' follows */
    });
    socket.on('close', () => {
      this.closed = true;
      onGone();
      for (const callback of this.closeCallbacks.splice(0)) {
        try {
          callback();
        } catch (error) {
          options.log(`connection ${this.id}: close callback failed: ${(error as Error).message}`);
        }
      }
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    try {
      for (const frame of this.frames.push(chunk)) this.queue.push(frame);
    } catch (error) {
      this.reject(error instanceof FrameError ? error.message : String(error));
      return;
    }
    void this.drain();
  }

  /** Logs one line for a refused frame and closes this connection (others keep being served). */
  private reject(reason: string): void {
    if (this.closed) return;
    this.options.metrics.rejectedFrames++;
    this.options.log(`rejected frame from ${this.peer} (connection ${this.id}): ${reason}; closing the connection`);
    this.closed = true;
    this.queue.length = 0;
    this.socket.destroy();
  }

  private async drain(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const frame = this.queue.shift()!;
        try {
          const response = await this.handle(frame);
          if (response !== null && !this.closed) this.socket.write(response);
        } catch (error) {
          if (error instanceof RejectedFrame) this.reject(error.message);
          else {
            this.options.log(`connection ${this.id} (${this.peer}): request failed: ${(error as Error).stack ?? String(error)}`);
            this.reject(`internal error: ${(error as Error).message}`);
          }
        }
      }
    } finally {
      this.processing = false;
    }
  }

  /** Decodes, dispatches and encodes one request; null when no response is due (Produce acks=0). */
  private async handle(frame: Uint8Array): Promise<Uint8Array | null> {
    if (frame.length < 8) throw new RejectedFrame(`frame of ${frame.length} bytes is too short for a request header`);
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const apiKey = view.getInt16(0);
    const apiVersion = view.getInt16(2);
    const correlationId = view.getInt32(4);
    const { registry, metrics } = this.options;
    const registered = registry.get(apiKey);
    const api = registered?.api ?? apiByKey(apiKey);
    if (registered === undefined || api === undefined) {
      throw new RejectedFrame(`API key ${apiKey}${api ? ` (${api.name})` : ''} is not served by this broker (correlation id ${correlationId})`);
    }
    if (apiVersion < registered.minVersion || apiVersion > registered.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) {
        metrics.countRequest(api.name);
        metrics.countError(ErrorCode.UNSUPPORTED_VERSION);
        const body = ApiVersionsResponse.create({ errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: registry.advertised() });
        return encodeFrame(ResponseHeader, ResponseHeader.create({ correlationId }), 0, ApiVersionsResponse, body, 0);
      }
      throw new RejectedFrame(
        `${api.name} v${apiVersion} is not supported (served: v${registered.minVersion}-${registered.maxVersion}, correlation id ${correlationId})`,
      );
    }
    const requestCodec = api.request as ApiMessageCodec<any>;
    const responseCodec = api.response as ApiMessageCodec<any>;
    const reader = new Reader(frame);
    let header: { clientId: string | null; correlationId: number };
    let request: unknown;
    try {
      header = RequestHeader.read(reader, requestCodec.headerVersion(apiVersion));
      request = requestCodec.decode(frame.subarray(reader.pos), apiVersion);
    } catch (error) {
      throw new RejectedFrame(`malformed ${api.name} v${apiVersion} request (correlation id ${correlationId}): ${(error as Error).message}`);
    }
    metrics.countRequest(api.name);
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      header: { clientId: header.clientId, correlationId: header.correlationId },
      connectionId: this.id,
      peer: this.peer,
      onClose: (callback) => {
        if (this.closed) queueMicrotask(callback);
        else this.closeCallbacks.push(callback);
      },
    };
    let body: any;
    try {
      body = await registered.handler(request, ctx);
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      // A handler may throw a KafkaError to answer with a top-level error code.
      body = responseCodec.create();
      if (!('errorCode' in body)) throw new Error(`${api.name} has no top-level error code to carry ${errorName(error.code)}: ${error.message}`);
      body.errorCode = error.code;
      if ('errorMessage' in body) body.errorMessage = error.message;
    }
    if (apiKey === PRODUCE_KEY && (request as { acks: number }).acks === 0) return null;
    metrics.countResponseErrors(body);
    const responseHeader = ResponseHeader.create({ correlationId: header.correlationId });
    return encodeFrame(ResponseHeader, responseHeader, responseCodec.headerVersion(apiVersion), responseCodec, body, apiVersion);
  }
}
