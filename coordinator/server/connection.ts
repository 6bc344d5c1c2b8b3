/**
 * One client connection: framing, requests handled in order, back-pressure,
 * the authentication deadline and the idle timeout.
 *
 * Like a Kafka broker, a connection's requests are handled one at a time, in
 * the order they arrived (Kafka mutes a channel while one of its requests is
 * in flight), so a client may pipeline and always gets its answers in order.
 * A frame that cannot be served (oversize here; the rest in dispatch.ts) is
 * logged in one line and closes that connection only.
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
 */
import type * as net from 'node:net';
import { FrameError, FrameReader } from '../../runtime/index.js';
import type { ConnectionSession } from '../auth/session.js';
import { canonicalHost, peerAddress } from '../net/address.js';
import { PRODUCE_KEY, RejectedFrame, RequestDispatcher, type RequestSource } from './dispatch.js';
import type { ListenerSpec, ServerOptions } from './server-options.js';

/** Frames read and not yet handled, per connection, before the socket stops being read. */
const MAX_QUEUED_FRAMES = 1024;
const MAX_QUEUED_BYTES = 32 * 1024 * 1024;
/** Response bytes the client has not read yet, per connection, before handling pauses. */
const MAX_UNSENT_BYTES = 16 * 1024 * 1024;

export class Connection implements RequestSource {
  private readonly frames: FrameReader;
  private readonly dispatcher: RequestDispatcher;
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
  readonly peer: string;
  readonly clientHost: string;
  readonly listenerName: string;

  private authTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly options: ServerOptions,
    listener: ListenerSpec,
    readonly session: ConnectionSession,
    acceptedAt: number,
    onGone: () => void,
  ) {
    this.peer = peerAddress(socket.remoteAddress, socket.remotePort);
    this.clientHost = canonicalHost(socket.remoteAddress ?? '');
    this.listenerName = listener.name;
    this.dispatcher = new RequestDispatcher(options, this);
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
        this.options.log(
          `connection ${this.id} (${this.peer}, ${listener.name}, ${this.session.principal}) idle for ${idleMs} ms (connections.max.idle.ms); closing it`,
        );
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

  /** RequestContext.onClose; a property, not a method, so every request's context shares this one function. */
  readonly onClose = (callback: () => void): void => {
    if (this.closed) queueMicrotask(callback);
    else this.closeCallbacks.push(callback);
  };

  authenticated(): void {
    if (this.authTimer === null) return;
    clearTimeout(this.authTimer);
    this.authTimer = null;
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
    if (
      this.paused &&
      !this.preAuthPaused &&
      !this.closed &&
      this.refuseAfterQueue === null &&
      this.queue.length <= MAX_QUEUED_FRAMES / 2 &&
      this.queuedBytes <= MAX_QUEUED_BYTES / 2
    ) {
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
    this.options.log(
      `rejected frame from ${this.peer} (connection ${this.id}, ${this.listenerName}, ${this.session.principal}): ${reason}; closing the connection`,
    );
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
        let written = false;
        try {
          const response = await this.dispatcher.handle(frame);
          if (response !== null && !this.closed) {
            written = true;
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
          }
        } catch (error) {
          if (error instanceof RejectedFrame) this.reject(error.message);
          else {
            this.options.log(`connection ${this.id} (${this.peer}): request failed: ${(error as Error).stack ?? String(error)}`);
            this.reject(`internal error: ${(error as Error).message}`);
          }
          continue;
        } finally {
          // The request's memory goes back once its answer is written (or none is due, or it failed),
          // before waiting for the client to read: a slow reader does not hold the pool.
          this.dispatcher.releaseHeld();
        }
        if (written) await this.unsentDrained();
        this.frames.maxFrameBytes = this.session.frameLimit(this.options.maxFrameBytes);
        if (this.session.closeAfterResponse !== null) {
          const reason = this.session.closeAfterResponse;
          this.session.closeAfterResponse = null;
          this.reject(reason);
        }
      }
    } finally {
      this.processing = false;
    }
    if (this.droppedAfterClose > 0 && this.queue.length === 0) {
      this.options.log(
        `connection ${this.id} (${this.peer}) closed with ${this.droppedAfterClose} request(s) read but not handled; dropped (Produce requests are still applied)`,
      );
      this.droppedAfterClose = 0;
    }
    if (this.refuseAfterQueue !== null && this.queue.length === 0) this.reject(this.refuseAfterQueue);
    else if (this.preAuthPaused && this.queue.length === 0 && !this.closed && !this.stopped) {
      // The answer is out: read the next request (the authenticated bounds apply from now on if it succeeded).
      this.preAuthPaused = false;
      if (!this.paused) this.socket.resume();
    }
  }
}
