/**
 * A generic Kafka request/response connection over TCP, shared by the client
 * and the broker (broker→broker WriteTxnMarkers).
 *
 * - Requests are framed as `int32 size | RequestHeader | body`, the header at
 *   v2 for flexible API versions and v1 otherwise (`codec.headerVersion`).
 * - Many requests may be in flight at once (pipelining). Kafka answers the
 *   requests of one connection in order, so responses are matched against a
 *   FIFO of in-flight requests and their correlation ids are checked; a reply
 *   out of order is a protocol violation and closes the connection.
 * - The ResponseHeader version comes from the response codec's
 *   `headerVersion(version)`, so ApiVersionsResponse is read with header v0.
 * - A Produce request with `acks = 0` gets no response: `send` resolves with
 *   `undefined` once the frame has been handed to the socket.
 * - A request that is not answered within its timeout is rejected with
 *   RequestTimeoutError and, as in Kafka's NetworkClient, the connection is
 *   closed, because where the stream stands is no longer known. Every other
 *   in-flight request is rejected with NetworkError.
 * - A frame larger than `maxFrameBytes` is refused before it is buffered and
 *   closes the connection.
 *
 * - With `tls` options the connection is TLS (node:tls); a certificate or
 *   handshake failure is a TlsHandshakeError, which is not retriable.
 * - `exclusive(fn)` runs `fn` alone on the connection: it waits until no
 *   request is in flight and holds back other sends until `fn` is done (SASL
 *   re-authentication, KIP-368, must not interleave with other requests).
 *
 * This module depends only on runtime/ and the generated header codecs: it is
 * its own layer (connection/), so that runtime/ — the codecs' package — has no
 * networking. The client and the broker both use it.
 */
import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { ApiMessageCodec } from '../runtime/codec.js';
import { encodeFrameChunks, FrameReader } from '../runtime/framing.js';
import { Reader } from '../runtime/reader.js';
import { RequestHeader } from '../generated/RequestHeader.js';
import { ResponseHeader } from '../generated/ResponseHeader.js';
import { ApiKey, apiByKey } from '../generated/index.js';

/** The connection failed, was closed, or the peer broke the protocol. Retriable: open a new connection. */
export class NetworkError extends Error {
  override name = 'NetworkError';
  /** Kafka treats network failures as retriable. */
  readonly retriable: boolean = true;
  constructor(
    message: string,
    readonly host: string,
    readonly port: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A request (or the connection attempt) took longer than its timeout; the connection was closed. */
export class RequestTimeoutError extends NetworkError {
  override name = 'RequestTimeoutError';
  constructor(
    message: string,
    host: string,
    port: number,
    readonly timeoutMs: number,
  ) {
    super(message, host, port);
  }
}

/**
 * TLS failed: the broker's certificate is not trusted or does not match the
 * host, the broker refused ours, or no common protocol (Kafka's
 * SslAuthenticationException). Not retriable: fix the `ssl` settings.
 */
export class TlsHandshakeError extends NetworkError {
  override name = 'TlsHandshakeError';
  override readonly retriable: boolean = false;
}

/** TLS settings passed to node:tls (ca, cert, key, servername, rejectUnauthorized, ...). */
export type TlsOptions = Omit<tls.ConnectionOptions, 'host' | 'port' | 'socket'>;

export interface ConnectionOptions {
  host: string;
  port: number;
  /** Sent in every request header; null is allowed by the protocol. Default `kipgen`. */
  clientId?: string | null;
  /** Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Default timeout of each request, overridable per request. Default 30 000 ms (Kafka's request.timeout.ms). */
  requestTimeoutMs?: number;
  /** The largest response frame accepted. Default 100 MiB (Kafka's socket.request.max.bytes). */
  maxFrameBytes?: number;
  /** Connect with TLS, with these node:tls options; absent: plain TCP. */
  tls?: TlsOptions | null;
}

export interface SendOptions {
  /** Overrides the connection's requestTimeoutMs for this request. */
  timeoutMs?: number;
  /** Override whether a response is expected (default: false only for Produce with acks = 0). */
  expectResponse?: boolean;
  /** Sent from inside `exclusive(fn)`: not held back by it. */
  exclusive?: boolean;
}

interface InFlight {
  correlationId: number;
  apiKey: number;
  apiName: string;
  version: number;
  responseCodec: ApiMessageCodec<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | null;
  timeoutMs: number;
  sentAt: number;
}

const DEFAULTS = {
  clientId: 'kipgen',
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxFrameBytes: 100 * 1024 * 1024,
  tls: null,
};

/**
 * One TCP connection to one Kafka node. Events: `close` (cause: Error | undefined)
 * once the connection is closed for any reason. `error` is emitted only when a
 * listener is registered, so an unattended connection never crashes the process;
 * `closed` is a promise of the same outcome that never rejects.
 */
export class KafkaConnection extends EventEmitter {
  readonly host: string;
  readonly port: number;
  readonly clientId: string | null;
  readonly requestTimeoutMs: number;
  readonly maxFrameBytes: number;
  /** Resolves when the connection is closed, with the error that closed it (undefined for a clean close()). */
  readonly closed: Promise<Error | undefined>;

  private readonly socket: net.Socket;
  private readonly frames: FrameReader;
  private readonly inFlight: InFlight[] = [];
  private head = 0;
  private nextCorrelationId = 0;
  private closing: Error | undefined | null = null;
  private resolveClosed!: (cause: Error | undefined) => void;
  private corked = false;
  /** Set while `exclusive(fn)` runs; other sends wait for it. */
  private gate: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  /** TLS is in use. */
  readonly secure: boolean;

  private constructor(socket: net.Socket, options: Required<ConnectionOptions>) {
    super();
    this.socket = socket;
    this.host = options.host;
    this.port = options.port;
    this.clientId = options.clientId;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.maxFrameBytes = options.maxFrameBytes;
    this.secure = options.tls !== null;
    this.frames = new FrameReader(options.maxFrameBytes);
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) =>
      this.fail(
        new NetworkError(`connection to ${this.address} failed: ${error.message}`, this.host, this.port, {
          cause: error,
        }),
      ),
    );
    socket.on('close', () => {
      const pending = this.pendingCount;
      const partial = this.frames.pendingBytes;
      this.fail(
        new NetworkError(
          `connection to ${this.address} was closed by the peer` +
            (pending > 0 ? ` with ${pending} request(s) in flight` : '') +
            (partial > 0 ? ` (${partial} bytes of an unfinished response received)` : ''),
          this.host,
          this.port,
        ),
      );
    });
  }

  /** Opens a connection; rejects with NetworkError (or RequestTimeoutError after connectTimeoutMs). */
  static connect(options: ConnectionOptions): Promise<KafkaConnection> {
    const resolved: Required<ConnectionOptions> = {
      host: options.host,
      port: options.port,
      clientId: options.clientId === undefined ? DEFAULTS.clientId : options.clientId,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      maxFrameBytes: options.maxFrameBytes ?? DEFAULTS.maxFrameBytes,
      tls: options.tls ?? null,
    };
    const { host, port, connectTimeoutMs } = resolved;
    const secure = resolved.tls !== null;
    return new Promise((resolve, reject) => {
      const socket = secure
        ? tls.connect({
            // SNI must not be an IP address (RFC 6066); the certificate check still uses `host`.
            ...(net.isIP(host) === 0 ? { servername: host } : {}),
            ...resolved.tls,
            host,
            port,
          })
        : net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new RequestTimeoutError(`could not connect to ${host}:${port} within ${connectTimeoutMs} ms`, host, port, connectTimeoutMs));
      }, connectTimeoutMs);
      const onError = (error: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(
          secure && isTlsFailure(error)
            ? new TlsHandshakeError(
                `TLS handshake with ${host}:${port} failed: ${error.message}; check the ssl settings (ca, cert, key, servername)`,
                host,
                port,
                { cause: error },
              )
            : new NetworkError(`could not connect to ${host}:${port}: ${error.message}`, host, port, { cause: error }),
        );
      };
      socket.once('error', onError);
      socket.once(secure ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve(new KafkaConnection(socket, resolved));
      });
    });
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** True until the connection is closed (by either side, a timeout or an error). */
  get isOpen(): boolean {
    return this.closing === null;
  }

  /** Requests sent and not yet answered. */
  get pendingCount(): number {
    return this.inFlight.length - this.head;
  }

  /**
   * Sends a request and resolves with the decoded response body. The response
   * codec defaults to the API's own (looked up by API key); pass it to get a
   * typed response. Produce with
   * `acks = 0` resolves with `undefined` as soon as the frame is written.
   *
   * Byte values of 1 KiB or more in the request (record batches above all)
   * are written without being copied, as Kafka's own client does: they must
   * not be modified after `send` is called.
   */
  send<Req, Res = unknown>(
    requestCodec: ApiMessageCodec<Req>,
    request: Req,
    version: number,
    responseCodec?: ApiMessageCodec<Res>,
    options: SendOptions = {},
  ): Promise<Res> {
    if (this.gate !== null && !options.exclusive && this.closing === null) {
      return this.gate.then(() => this.send(requestCodec, request, version, responseCodec, options));
    }
    if (this.closing !== null) {
      return Promise.reject(
        new NetworkError(
          `cannot send ${requestCodec.name} v${version}: the connection to ${this.address} is closed` + (this.closing ? ` (${this.closing.message})` : ''),
          this.host,
          this.port,
          { cause: this.closing },
        ),
      );
    }
    const apiKey = requestCodec.apiKey;
    const codec = (responseCodec ?? apiByKey(apiKey)?.response) as ApiMessageCodec<unknown> | undefined;
    const expectResponse = options.expectResponse ?? !(apiKey === ApiKey.Produce && (request as { acks?: number }).acks === 0);
    if (expectResponse && codec === undefined) {
      return Promise.reject(new TypeError(`no response codec known for API key ${apiKey}`));
    }
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) | 0;
    if (this.nextCorrelationId < 0) this.nextCorrelationId = 0;
    let frame: Uint8Array[];
    try {
      const header = RequestHeader.create({
        requestApiKey: apiKey,
        requestApiVersion: version,
        correlationId,
        clientId: this.clientId,
      });
      frame = encodeFrameChunks(RequestHeader, header, requestCodec.headerVersion(version), requestCodec, request, version);
    } catch (error) {
      return Promise.reject(error);
    }
    this.write(frame);
    if (!expectResponse) return Promise.resolve(undefined as Res);

    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    return new Promise<Res>((resolve, reject) => {
      const entry: InFlight = {
        correlationId,
        apiKey,
        apiName: requestCodec.name.replace(/Request$/, ''),
        version,
        responseCodec: codec!,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer: null,
        timeoutMs,
        sentAt: Date.now(),
      };
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.timer = setTimeout(() => this.onTimeout(entry), timeoutMs);
      }
      this.inFlight.push(entry);
    });
  }

  /**
   * Runs `fn` with the connection to itself: once no request is in flight,
   * and holding back every `send` not marked `exclusive` until `fn` settles.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.gate !== null) await this.gate;
    let release!: () => void;
    this.gate = new Promise((resolve) => (release = resolve));
    try {
      if (this.pendingCount > 0 && this.closing === null) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      return await fn();
    } finally {
      this.gate = null;
      release();
    }
  }

  private notifyIdle(): void {
    if (this.pendingCount === 0 && this.idleWaiters.length > 0) for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  /** Closes the connection; every request still in flight is rejected with NetworkError. */
  close(): Promise<void> {
    if (this.closing === null) {
      const pending = this.pendingCount;
      this.fail(
        new NetworkError(
          `connection to ${this.address} was closed by close()` + (pending > 0 ? ` with ${pending} request(s) in flight; they were not answered` : ''),
          this.host,
          this.port,
        ),
        true,
      );
    }
    return this.closed.then(() => undefined);
  }

  /**
   * Writes a frame's chunks (its record batches are not copied; see
   * `encodeFrameChunks`). The socket stays corked for the rest of this tick so
   * that the chunks, and requests pipelined together, leave in one vectored write.
   */
  private write(frame: Uint8Array[]): void {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    for (const chunk of frame) this.socket.write(chunk);
  }

  private onData(chunk: Buffer): void {
    if (this.closing !== null) return;
    let frames: Uint8Array[];
    try {
      frames = this.frames.push(chunk);
    } catch (error) {
      this.fail(
        new NetworkError(`connection to ${this.address} closed: ${(error as Error).message}`, this.host, this.port, {
          cause: error,
        }),
      );
      return;
    }
    for (const frame of frames) {
      if (this.closing !== null) return;
      this.onFrame(frame);
    }
  }

  private onFrame(frame: Uint8Array): void {
    const entry = this.inFlight[this.head];
    if (entry === undefined) {
      this.fail(new NetworkError(`${this.address} sent a response to no request in flight`, this.host, this.port));
      return;
    }
    const reader = new Reader(frame);
    let correlationId: number;
    try {
      correlationId = ResponseHeader.read(reader, entry.responseCodec.headerVersion(entry.version)).correlationId;
    } catch (error) {
      this.fail(
        new NetworkError(`unreadable response header from ${this.address}: ${(error as Error).message}`, this.host, this.port, {
          cause: error,
        }),
      );
      return;
    }
    if (correlationId !== entry.correlationId) {
      this.fail(
        new NetworkError(
          `${this.address} answered correlation id ${correlationId} but ${entry.apiName} (${entry.correlationId}) is next in flight`,
          this.host,
          this.port,
        ),
      );
      return;
    }
    this.shift();
    if (entry.timer) clearTimeout(entry.timer);
    const body = frame.subarray(reader.pos);
    let response: unknown;
    try {
      response = entry.responseCodec.decode(body, entry.version);
    } catch (error) {
      // A broker that does not support the requested ApiVersions version
      // answers with a v0 body carrying UNSUPPORTED_VERSION (KIP-511).
      if (entry.apiKey === ApiKey.ApiVersions && entry.version > 0) {
        try {
          response = entry.responseCodec.decode(body, 0);
        } catch {
          entry.reject(error as Error);
          return;
        }
      } else {
        // The frame boundary is intact, so only this request fails.
        entry.reject(error as Error);
        return;
      }
    }
    entry.resolve(response);
  }

  private shift(): void {
    this.head++;
    if (this.head > 64 && this.head * 2 > this.inFlight.length) {
      this.inFlight.splice(0, this.head);
      this.head = 0;
    }
    this.notifyIdle();
  }

  private onTimeout(entry: InFlight): void {
    if (this.closing !== null) return;
    entry.timer = null;
    const index = this.inFlight.indexOf(entry, this.head);
    if (index < 0) return;
    this.inFlight.splice(index, 1);
    this.notifyIdle();
    entry.reject(
      new RequestTimeoutError(
        `${entry.apiName} v${entry.version} to ${this.address} (correlation id ${entry.correlationId}) got no response within ${entry.timeoutMs} ms; the connection was closed`,
        this.host,
        this.port,
        entry.timeoutMs,
      ),
    );
    this.fail(
      new NetworkError(
        `connection to ${this.address} was closed because ${entry.apiName} (correlation id ${entry.correlationId}) timed out after ${entry.timeoutMs} ms`,
        this.host,
        this.port,
      ),
    );
  }

  private fail(error: NetworkError, clean = false): void {
    if (this.closing !== null) return;
    this.closing = clean ? undefined : error;
    const pending = this.inFlight.splice(this.head);
    this.inFlight.length = 0;
    this.head = 0;
    for (const entry of pending) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(error);
    }
    this.notifyIdle();
    if (this.socket.destroyed) this.finish(clean ? undefined : error);
    else {
      this.socket.once('close', () => this.finish(clean ? undefined : error));
      this.socket.destroy();
    }
  }

  private finished = false;
  private finish(cause: Error | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (cause && this.listenerCount('error') > 0) this.emit('error', cause);
    this.emit('close', cause);
    this.resolveClosed(cause);
  }
}

/** Errors of certificate verification or of the TLS handshake itself (not of the TCP connection under it). */
function isTlsFailure(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND' || code === 'ETIMEDOUT') return false;
  return /CERT|SELF_SIGNED|UNABLE_TO|ERR_SSL|ERR_TLS|HOSTNAME|ALTNAME|EPROTO/.test(code) || /SSL|TLS|certificate/i.test(error.message);
}
