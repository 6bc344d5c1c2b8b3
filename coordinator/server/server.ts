/**
 * The TCP front end: frames, headers, dispatch, responses in order.
 *
 * Like a Kafka broker, a connection's requests are handled one at a time, in
 * the order they arrived (Kafka mutes a channel while one of its requests is
 * in flight), so a client may pipeline and always gets its answers in order.
 * A frame that cannot be served — oversize, malformed header or body, an API
 * or version not served — is logged in one line and closes that connection
 * only; the one exception is ApiVersions, which answers an unsupported version
 * with a v0 body carrying UNSUPPORTED_VERSION and its own version range (KIP-511).
 *
 * Backpressure: a connection whose client pipelines faster than it is served
 * stops being read once MAX_QUEUED_FRAMES frames or MAX_QUEUED_BYTES bytes
 * wait, and requests stop being handled while more than MAX_UNSENT_BYTES of
 * responses wait for the client to read them; reading resumes as the queue
 * drains. So a client can neither make the broker buffer without bound nor
 * starve other connections (Kafka mutes such a channel the same way).
 *
 * Before authentication (SASL listeners, until SaslAuthenticate succeeds)
 * those bounds are not used: the connection reads one request at a time, and
 * stops reading until that request's answer has been written out to the
 * socket, as Kafka's SaslServerAuthenticator (it reads the next receive only
 * once the previous response is flushed), and frames are capped at
 * sasl.server.max.receive.size. With the session's state machine (one
 * ApiVersions, then SaslHandshake, then SaslAuthenticate) an unauthenticated
 * client holds at most the frames of one socket read (the rest of them are
 * refused by that state machine), one unfinished frame and one answer.
 *
 * Security: the server listens on one or more listeners (Kafka's
 * `listeners`), each PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. Each
 * connection has a ConnectionSession (coordinator/auth/session.ts) that
 * decides what may be sent before authentication, runs the SASL exchange
 * (SaslHandshake and SaslAuthenticate are answered here, not by a handler)
 * and carries the principal into the RequestContext; the authorizer hook
 * (`authorize`) is consulted for every other request before its handler.
 */
import * as net from 'node:net';
import { ApiKey, ApiVersionsResponse, RequestHeader, ResponseHeader, apiByKey } from '../../generated/index.js';
import { FrameError, FrameReader, Reader, encodeFrameChunks, type ApiMessageCodec } from '../../runtime/index.js';
import type { RequestContext } from '../broker-context.js';
import { ErrorCode, BrokerError, errorCodeName } from '../errors.js';
import { fillErrorBody } from './error-bodies.js';
import type { Metrics } from '../metrics.js';
import type { AuthorizationRule } from '../auth/rule-kit.js';
import type { ApiRegistry } from './api-registry.js';
import { ANONYMOUS, ConnectionSession, type SaslSettings, type SecurityProtocol } from '../auth/session.js';
import { canonicalHost, peerAddress } from '../net/address.js';
import { createTlsServer, type TlsListenerSettings } from './tls-listener.js';
import { decodedCost, type RequestBudget } from './request-budget.js';

const SASL_HANDSHAKE_KEY: number = ApiKey.SaslHandshake;
const SASL_AUTHENTICATE_KEY: number = ApiKey.SaslAuthenticate;

const API_VERSIONS_KEY: number = ApiKey.ApiVersions;
const PRODUCE_KEY: number = ApiKey.Produce;
/** Frames read and not yet handled, per connection, before the socket stops being read. */
const MAX_QUEUED_FRAMES = 1024;
const MAX_QUEUED_BYTES = 32 * 1024 * 1024;
/** Response bytes the client has not read yet, per connection, before handling pauses. */
const MAX_UNSENT_BYTES = 16 * 1024 * 1024;

export interface ListenerSpec {
  /** Kafka's listener name, e.g. PLAINTEXT, SASL_SSL or any name mapped to a protocol. */
  name: string;
  host: string;
  port: number;
  protocol: SecurityProtocol;
  /** TLS settings (SSL and SASL_SSL listeners). */
  tls: TlsListenerSettings | null;
  /** SASL settings (SASL_PLAINTEXT and SASL_SSL listeners). */
  sasl: SaslSettings | null;
  /** A connection still unauthenticated this long after its TCP accept (the TLS handshake included) is closed. */
  authenticationTimeoutMs: number;
}

/**
 * Runs around every handler (coordinator/auth/api-acls.ts): calls `next` with
 * the request (or its authorized part), or answers the denial itself.
 */
/** A request or response body as the dispatcher holds it. */
type WireMessage = Record<string, unknown>;

export type AuthorizeHook = (
  request: unknown,
  ctx: RequestContext,
  next: (request: unknown) => Promise<unknown>,
  rule: AuthorizationRule<unknown, unknown> | undefined,
) => Promise<unknown>;

export interface ServerOptions {
  listeners: ListenerSpec[];
  maxFrameBytes: number;
  authorize?: AuthorizeHook;
  registry: ApiRegistry;
  metrics: Metrics;
  log: (line: string) => void;
  /** One log line per request handled (API, version, client id, correlation id). */
  logRequests?: boolean;
  /**
   * connections.max.idle.ms: a connection that neither sends nor receives
   * for this long is closed (Kafka's Selector idle expiry, default 10 min);
   * 0 or absent: never. A request being handled keeps it open.
   */
  connectionsMaxIdleMs?: number;
  /** What one request and all requests in flight may cost (request-budget.ts); none when absent. */
  budget?: RequestBudget;
}

/** Thrown inside the server to reject a frame: logged, then the connection is closed. */
class RejectedFrame extends Error {}

export class KafkaServer {
  private readonly servers: net.Server[] = [];
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;

  constructor(private readonly options: ServerOptions) {}

  /** Starts every listener; resolves with the bound port of each, by listener name. */
  async listen(): Promise<Map<string, number>> {
    const ports = new Map<string, number>();
    for (const listener of this.options.listeners) ports.set(listener.name, await this.listenOn(listener));
    return ports;
  }

  private listenOn(listener: ListenerSpec): Promise<number> {
    return new Promise((resolve, reject) => {
      const server =
        listener.tls !== null
          ? createTlsServer(listener.name, listener.tls, listener.authenticationTimeoutMs, this.options.log, (socket, principal, acceptedAt) =>
              this.accept(socket, listener, principal, acceptedAt),
            )
          : net.createServer((socket) => this.accept(socket, listener, ANONYMOUS, Date.now()));
      server.once('error', reject);
      server.listen(listener.port, listener.host, () => {
        server.off('error', reject);
        server.on('error', (error) => this.options.log(`listener ${listener.name} error: ${error.message}`));
        this.servers.push(server);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  /** `principal`: the TLS client certificate's (tls-listener.ts), else ANONYMOUS; `acceptedAt`: when the TCP connection was accepted. */
  private accept(socket: net.Socket, listener: ListenerSpec, principal: string, acceptedAt: number): void {
    const session = new ConnectionSession(listener.protocol, listener.sasl, principal);
    const connection = new Connection(this.nextConnectionId++, socket, this.options, listener, session, acceptedAt, () => this.connections.delete(connection));
    this.connections.add(connection);
    this.options.metrics.connectionsOpened++;
  }

  /** Stops accepting, closes every connection. */
  async close(): Promise<void> {
    for (const connection of this.connections) connection.destroy();
    await Promise.all(this.servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

class Connection {
  private readonly frames: FrameReader;
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private paused = false;
  /** Not reading until the answer to a request read before authentication is written out. */
  private preAuthPaused = false;
  private processing = false;
  private waitingForDrain: (() => void) | null = null;
  /** Called once an answer written before authentication has left for the socket (or the socket closed). */
  private answerWritten: (() => void) | null = null;
  /** The socket is gone (either side closed it): nothing more is read or written. */
  private closed = false;
  /** Stop handling queued frames: a frame was refused, or the server is shutting down. */
  private stopped = false;
  /** A bad frame followed good ones: answer those, then refuse (as Kafka, which reads one frame at a time). */
  private refuseAfterQueue: string | null = null;
  /** Non-Produce frames skipped because the client had gone (logged once the queue is empty). */
  private droppedAfterClose = 0;
  private readonly closeCallbacks: (() => void)[] = [];
  /** APIs (name@clientId) whose trailing bytes this connection already logged: one line each, not one per request. */
  private readonly trailingLogged = new Set<string>();
  readonly peer: string;
  /** The client's address as Kafka (Java) writes it, for ACL host matching (RequestContext.clientHost). */
  private readonly clientHost: string;

  private authTimer: NodeJS.Timeout | null = null;
  /** What the request being handled holds of the server's RequestMemoryPool. */
  private heldBytes = 0;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly options: ServerOptions,
    private readonly listener: ListenerSpec,
    private readonly session: ConnectionSession,
    acceptedAt: number,
    onGone: () => void,
  ) {
    this.peer = peerAddress(socket.remoteAddress, socket.remotePort);
    this.clientHost = canonicalHost(socket.remoteAddress ?? '');
    this.frames = new FrameReader(options.maxFrameBytes);
    this.frames.maxFrameBytes = session.frameLimit(options.maxFrameBytes);
    if (!session.authenticated) {
      // The time since the TCP accept (the TLS handshake) counts.
      this.authTimer = setTimeout(
        () => {
          if (!this.session.authenticated && !this.closed) {
            this.reject(`not authenticated within ${listener.authenticationTimeoutMs} ms on ${listener.name}`);
          }
        },
        Math.max(0, acceptedAt + listener.authenticationTimeoutMs - Date.now()),
      );
      this.authTimer.unref();
    }
    const idleMs = options.connectionsMaxIdleMs ?? 0;
    if (idleMs > 0) {
      // Kafka's Selector closes a channel with no read or write for connections.max.idle.ms;
      // one whose request is still being handled (a long poll) is not idle.
      socket.setTimeout(idleMs);
      socket.on('timeout', () => {
        if (this.closed) return;
        if (this.processing) {
          socket.setTimeout(idleMs);
          return;
        }
        this.options.log(`connection ${this.id} (${this.peer}, ${listener.name}, ${this.session.principal}) idle for ${idleMs} ms (connections.max.idle.ms); closing it`);
        this.stopped = true;
        this.socket.destroy();
      });
    }
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => {
      /* a reset by the peer: 'close' follows */
    });
    socket.on('close', () => {
      const partial = this.frames.pendingBytes;
      if (!this.closed && partial > 0) {
        options.log(`connection ${this.id} (${this.peer}) closed by the peer in the middle of a frame: ${partial} bytes of an unfinished request dropped`);
      }
      // Produce frames already read are still handled (their responses
      // dropped): an acks=0 producer may close right after its last request.
      // The rest are dropped by drain(): no one is left to read the answers.
      this.closed = true;
      if (this.authTimer) clearTimeout(this.authTimer);
      this.waitingForDrain?.();
      this.answerWritten?.();
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

  /** Server shutdown: stop handling, close the socket. */
  destroy(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.closed || this.refuseAfterQueue !== null) return;
    let frames: Uint8Array[];
    try {
      frames = this.frames.push(chunk);
    } catch (error) {
      const reason =
        (error instanceof FrameError ? error.message : String(error)) +
        (this.session.authenticated ? '' : ' (before authentication: sasl.server.max.receive.size)');
      if (!(error instanceof FrameError) || error.frames.length === 0) {
        this.reject(reason);
        return;
      }
      frames = error.frames;
      this.refuseAfterQueue = reason;
      this.socket.pause();
    }
    for (const frame of frames) {
      this.queue.push(frame);
      this.queuedBytes += frame.length;
    }
    if (!this.session.authenticated && this.queue.length > 0 && !this.preAuthPaused) {
      this.preAuthPaused = true;
      this.socket.pause();
    }
    if (!this.paused && this.refuseAfterQueue === null && (this.queue.length >= MAX_QUEUED_FRAMES || this.queuedBytes >= MAX_QUEUED_BYTES)) {
      this.paused = true;
      this.socket.pause();
    }
    void this.drain();
  }

  /** Reads again once the queue is down to half its bounds. */
  private maybeResume(): void {
    if (this.paused && !this.preAuthPaused && !this.closed && this.refuseAfterQueue === null && this.queue.length <= MAX_QUEUED_FRAMES / 2 && this.queuedBytes <= MAX_QUEUED_BYTES / 2) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** Resolves when the client has read enough of its responses (or the connection is gone). */
  private unsentDrained(): Promise<void> {
    if (this.closed || this.socket.writableLength <= MAX_UNSENT_BYTES) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.waitingForDrain = null;
        resolve();
      };
      this.waitingForDrain = done;
      this.socket.on('drain', done);
    });
  }

  /** Logs one line for a refused frame and closes this connection (others keep being served). */
  private reject(reason: string): void {
    if (this.stopped) return;
    this.options.metrics.rejectedFrames++;
    this.options.log(`rejected frame from ${this.peer} (connection ${this.id}, ${this.listener.name}, ${this.session.principal}): ${reason}; closing the connection`);
    this.stopped = true;
    this.closed = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    if (this.socket.writableLength > 0) {
      // Responses to the frames before the bad one are still on their way: flush them, then close.
      this.socket.pause();
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1000).unref();
    } else {
      this.socket.destroy();
    }
  }

  private async drain(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const frame = this.queue.shift()!;
        this.queuedBytes -= frame.length;
        this.maybeResume();
        if (this.closed && (frame.length < 2 || (frame[0]! << 8) + frame[1]! !== PRODUCE_KEY)) {
          this.droppedAfterClose++;
          continue;
        }
        // Like a muted Kafka channel: no next request while the pool of requests in flight is exhausted.
        const pool = this.options.budget?.pool;
        if (pool?.exhausted) {
          await pool.whenAvailable();
          if (this.stopped) break;
        }
        try {
          const response = await this.handle(frame);
          if (response !== null && !this.closed) {
            // Record batches read from the log go out by reference (encodeFrameChunks), in one vectored write.
            this.socket.cork();
            // Before authentication the next request is read only once this answer is out (the write's callback).
            const out = this.preAuthPaused ? new Promise<void>((resolve) => (this.answerWritten = resolve)) : null;
            response.forEach((chunk, i) => this.socket.write(chunk, i === response.length - 1 && out !== null ? () => this.answerWritten?.() : undefined));
            this.socket.uncork();
            if (out !== null) {
              await out;
              this.answerWritten = null;
            }
            this.releaseHeld();
            await this.unsentDrained();
          }
          this.frames.maxFrameBytes = this.session.frameLimit(this.options.maxFrameBytes);
          if (this.session.closeAfterResponse !== null) {
            const reason = this.session.closeAfterResponse;
            this.session.closeAfterResponse = null;
            this.reject(reason);
          }
        } catch (error) {
          if (error instanceof RejectedFrame) this.reject(error.message);
          else {
            this.options.log(`connection ${this.id} (${this.peer}): request failed: ${(error as Error).stack ?? String(error)}`);
            this.reject(`internal error: ${(error as Error).message}`);
          }
        } finally {
          this.releaseHeld();
        }
      }
    } finally {
      this.processing = false;
    }
    if (this.droppedAfterClose > 0 && this.queue.length === 0) {
      this.options.log(`connection ${this.id} (${this.peer}) closed with ${this.droppedAfterClose} request(s) read but not handled; dropped (Produce requests are still applied)`);
      this.droppedAfterClose = 0;
    }
    if (this.refuseAfterQueue !== null && this.queue.length === 0) this.reject(this.refuseAfterQueue);
    else if (this.preAuthPaused && this.queue.length === 0 && !this.closed && !this.stopped) {
      // The answer is out: read the next request (the authenticated bounds apply from now on if it succeeded).
      this.preAuthPaused = false;
      if (!this.paused) this.socket.resume();
    }
  }

  private releaseHeld(): void {
    if (this.heldBytes === 0) return;
    this.options.budget!.pool.release(this.heldBytes);
    this.heldBytes = 0;
  }

  private logTrailingBytes(apiName: string, apiVersion: number, clientId: string | null, count: number): void {
    const key = `${apiName}@${clientId ?? ''}`;
    if (this.trailingLogged.has(key)) return;
    this.trailingLogged.add(key);
    this.options.log(
      `connection ${this.id} (${this.peer}) client ${JSON.stringify(clientId)}: ${apiName} v${apiVersion} request has ${count} byte(s) after its body; ignored, as Kafka does (logged once per connection and API)`,
    );
  }

  /** Decodes, dispatches and encodes one request; null when no response is due (Produce acks=0). */
  private async handle(frame: Uint8Array): Promise<Uint8Array[] | null> {
    if (this.session.rawTokens) {
      // After SaslHandshake v0 the tokens travel as bare frames, without Kafka headers (pre-KIP-152 clients).
      const result = await this.session.authenticate(frame);
      if (result.errorCode !== 0) throw new RejectedFrame(result.errorMessage ?? 'SASL authentication failed');
      const size = Buffer.alloc(4);
      size.writeInt32BE(result.authBytes.length);
      return [size, result.authBytes];
    }
    if (frame.length < 8) throw new RejectedFrame(`frame of ${frame.length} bytes is too short for a request header`);
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const apiKey = view.getInt16(0);
    const apiVersion = view.getInt16(2);
    const correlationId = view.getInt32(4);
    const { registry, metrics } = this.options;
    const registered = registry.get(apiKey);
    const api = registered?.api ?? apiByKey(apiKey);
    const refusal = this.session.refusal(apiKey, api?.name.replace(/Request$/, '') ?? `API key ${apiKey}`);
    if (refusal !== null) throw new RejectedFrame(`${refusal} (correlation id ${correlationId})`);
    if (registered === undefined || api === undefined) {
      throw new RejectedFrame(`API key ${apiKey}${api ? ` (${api.name})` : ''} is not served by this broker (correlation id ${correlationId})`);
    }
    if (apiVersion < registered.minVersion || apiVersion > registered.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) {
        metrics.countRequest(api.name, apiVersion);
        metrics.countError(ErrorCode.UNSUPPORTED_VERSION);
        if (this.options.logRequests) {
          // The client id sits at the same place in request headers v1 and v2.
          let clientId: string | null = null;
          try {
            clientId = RequestHeader.read(new Reader(frame), 1).clientId;
          } catch {
            /* unreadable: logged as null */
          }
          this.options.log(`connection ${this.id}: ${api.name} v${apiVersion} correlation ${correlationId} client ${JSON.stringify(clientId)} (unsupported: answered with v0)`);
        }
        // Only ApiVersions' own range, as Kafka's ApiVersionsRequest.getErrorResponse: what the client needs to retry.
        const body = ApiVersionsResponse.create({ errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: registry.advertised().filter((k) => k.apiKey === API_VERSIONS_KEY) });
        return encodeFrameChunks(ResponseHeader, ResponseHeader.create({ correlationId }), 0, ApiVersionsResponse, body, 0);
      }
      throw new RejectedFrame(
        `${api.name} v${apiVersion} is not supported (served: v${registered.minVersion}-${registered.maxVersion}, correlation id ${correlationId})`,
      );
    }
    // The dispatcher sees every API's messages as plain objects: a decoded request only
    // ever reaches its own API's handler, whose definition (apis/) is typed.
    const requestCodec = api.request as ApiMessageCodec<WireMessage, WireMessage>;
    const responseCodec = api.response as ApiMessageCodec<WireMessage, WireMessage>;
    const reader = new Reader(frame);
    const budget = this.options.budget;
    if (budget !== undefined) reader.elementBudget = budget.elementBudget;
    let header: { clientId: string | null; correlationId: number };
    let request: unknown;
    try {
      header = RequestHeader.read(reader, requestCodec.headerVersion(apiVersion));
      // Bytes after the body are ignored, as Kafka's broker does (docs/DESIGN.md §6):
      // librdkafka 2.15's all-topics Metadata v13 request carries 3 of them.
      // The body is read from the header's reader: no second reader or closure per request.
      request = requestCodec.read(reader, apiVersion);
      if (reader.remaining > 0) this.logTrailingBytes(api.name, apiVersion, header.clientId, reader.remaining);
    } catch (error) {
      throw new RejectedFrame(`malformed ${api.name} v${apiVersion} request (correlation id ${correlationId}): ${(error as Error).message}`);
    }
    if (budget !== undefined) {
      this.heldBytes = decodedCost(frame.length, budget.elementBudget - reader.elementBudget);
      budget.pool.take(this.heldBytes);
    }
    metrics.countRequest(api.name, apiVersion);
    if (this.options.logRequests) {
      this.options.log(`connection ${this.id}: ${api.name} v${apiVersion} correlation ${header.correlationId} client ${JSON.stringify(header.clientId)}`);
    }
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      header: { clientId: header.clientId, correlationId: header.correlationId },
      connectionId: this.id,
      peer: this.peer,
      principal: this.session.principal,
      clientHost: this.clientHost,
      listener: this.listener.name,
      onClose: (callback) => {
        if (this.closed) queueMicrotask(callback);
        else this.closeCallbacks.push(callback);
      },
    };
    let body: WireMessage;
    try {
      if (apiKey === SASL_HANDSHAKE_KEY) {
        body = responseCodec.create(this.session.handshake((request as { mechanism: string }).mechanism, apiVersion) as unknown as WireMessage);
      } else if (apiKey === SASL_AUTHENTICATE_KEY) {
        body = responseCodec.create((await this.session.authenticate((request as { authBytes: Uint8Array }).authBytes)) as unknown as WireMessage);
        if (this.session.authenticated && body.errorCode === 0 && body.authBytes !== undefined && this.authTimer) {
          clearTimeout(this.authTimer);
          this.authTimer = null;
        }
      } else {
        const authorize = this.options.authorize;
        body = (authorize ? await authorize(request, ctx, (r) => registered.handler(r, ctx), registered.authorize) : await registered.handler(request, ctx)) as WireMessage;
        if (apiKey === API_VERSIONS_KEY && body.errorCode === ErrorCode.NONE) this.session.apiVersionsAnswered();
      }
    } catch (error) {
      if (!(error instanceof BrokerError)) throw error;
      // A handler may throw a BrokerError to answer with a top-level error code.
      body = responseCodec.create();
      if (!('errorCode' in body)) throw new Error(`${api.name} has no top-level error code to carry ${errorCodeName(error.code)}: ${error.message}`);
      body.errorCode = error.code;
      if ('errorMessage' in body) body.errorMessage = error.message;
      fillErrorBody(apiKey, apiVersion, body);
    }
    if (apiKey === PRODUCE_KEY && (request as { acks: number }).acks === 0) return null;
    metrics.countResponseErrors(body);
    const responseHeader = ResponseHeader.create({ correlationId: header.correlationId });
    return encodeFrameChunks(ResponseHeader, responseHeader, responseCodec.headerVersion(apiVersion), responseCodec, body, apiVersion);
  }
}
