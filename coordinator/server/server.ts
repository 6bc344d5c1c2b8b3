/**
 * The TCP front end: listeners and the connections they accept.
 *
 * The server listens on one or more listeners (Kafka's `listeners`), each
 * PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, and gives every accepted socket
 * a Connection (connection.ts: framing, in-order handling, back-pressure,
 * idle and authentication timeouts) with its own ConnectionSession
 * (coordinator/auth/session.ts: what may be sent before authentication, the
 * SASL exchange, the principal). Each request is decoded, checked and
 * answered by the connection's RequestDispatcher (dispatch.ts).
 */
import * as net from 'node:net';
import { ANONYMOUS, ConnectionSession } from '../auth/session.js';
import { createTlsServer } from './tls-listener.js';
import { Connection } from './connection.js';
import type { ListenerSpec, ServerOptions } from './server-options.js';

// Importers name these through this module (the server's public surface).
export type { AuthorizeHook, ListenerSpec, ServerOptions } from './server-options.js';

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
