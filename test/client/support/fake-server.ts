/**
 * A tiny Kafka-speaking TCP server on 127.0.0.1 for unit tests: it decodes
 * each request with the generated codecs and lets the test decide, per
 * request, to answer, stall, drop the connection, or write raw bytes.
 */
import * as net from 'node:net';
import { apiByKey, RequestHeader, ResponseHeader } from '../../../generated/index.js';
import { encodeFrame, FrameReader, Reader } from '../../../runtime/index.js';

export interface ReceivedRequest {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: any;
}

export type Reply =
  | { kind: 'respond'; body: any; correlationId?: number; version?: number }
  | { kind: 'stall' }
  | { kind: 'drop' }
  | { kind: 'raw'; bytes: Uint8Array; thenDrop?: boolean }
  | { kind: 'none' };

export type Handler = (request: ReceivedRequest, socket: net.Socket) => Reply | Promise<Reply>;

export class FakeServer {
  readonly received: ReceivedRequest[] = [];
  readonly sockets = new Set<net.Socket>();
  handler: Handler;
  private server: net.Server;
  port = 0;

  constructor(handler: Handler) {
    this.handler = handler;
    this.server = net.createServer((socket) => this.onSocket(socket));
  }

  static async start(handler: Handler): Promise<FakeServer> {
    const server = new FakeServer(handler);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    server.port = (server.server.address() as net.AddressInfo).port;
    return server;
  }

  private onSocket(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    const frames = new FrameReader(64 * 1024 * 1024);
    // Replies are written in request order even when the handler is async.
    let chain = Promise.resolve();
    socket.on('data', (chunk) => {
      for (const frame of frames.push(chunk)) {
        const reader = new Reader(frame);
        const apiKey = new DataView(frame.buffer, frame.byteOffset).getInt16(0);
        const apiVersion = new DataView(frame.buffer, frame.byteOffset).getInt16(2);
        const api = apiByKey(apiKey)!;
        const header = RequestHeader.read(reader, api.request.headerVersion(apiVersion));
        const body = api.request.decode(frame.subarray(reader.pos), apiVersion);
        const request: ReceivedRequest = {
          apiKey,
          apiVersion,
          correlationId: header.correlationId,
          clientId: header.clientId,
          body,
        };
        this.received.push(request);
        const replyP = Promise.resolve(this.handler(request, socket));
        chain = chain.then(async () => {
          const reply = await replyP;
          if (socket.destroyed) return;
          switch (reply.kind) {
            case 'respond': {
              const version = reply.version ?? apiVersion;
              let bytes: Uint8Array;
              try {
                bytes = encodeFrame(
                  ResponseHeader,
                  ResponseHeader.create({ correlationId: reply.correlationId ?? header.correlationId }),
                  api.response.headerVersion(version),
                  api.response,
                  api.response.create(reply.body),
                  version,
                );
              } catch (error) {
                console.error(`fake server: cannot encode the ${api.name} response:`, error);
                socket.destroy();
                return;
              }
              socket.write(bytes);
              break;
            }
            case 'drop':
              socket.destroy();
              break;
            case 'raw':
              socket.write(reply.bytes);
              if (reply.thenDrop) socket.end(() => socket.destroy());
              break;
            default:
              break;
          }
        });
      }
    });
  }

  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function respond(body: any, extra: Partial<{ correlationId: number; version: number }> = {}): Reply {
  return { kind: 'respond', body, ...extra };
}
