/**
 * The TLS side of an SSL or SASL_SSL listener: the handshake, the client
 * certificate check, and the principal it gives.
 *
 * Client authentication follows Kafka's ssl.client.auth
 * (clients/src/main/java/org/apache/kafka/common/security/ssl/DefaultSslEngineFactory.java,
 * createSslEngine: REQUIRED → setNeedClientAuth, REQUESTED → setWantClientAuth):
 *  - required: a client without a trusted certificate fails the handshake;
 *  - requested: a client may send no certificate (it is then User:ANONYMOUS),
 *    but one that sends a certificate not trusted by `ssl.ca` is refused —
 *    Java's trust manager fails the handshake then. Node's TLS server with
 *    requestCert and without rejectUnauthorized completes the handshake for
 *    any certificate, so the check is made here, before the connection may
 *    send anything, and the connection is closed with a log line naming the
 *    peer and the reason;
 *  - none: no certificate is asked for; everyone is User:ANONYMOUS.
 * The principal comes only from a verified chain: `User:` and the subject in
 * RFC 2253 form (coordinator/auth/x500-name.ts) passed through
 * ssl.principal.mapping.rules (coordinator/auth/ssl-principal-mapper.ts), as
 * Kafka's DefaultKafkaPrincipalBuilder (SslAuthenticationContext) does.
 *
 * The handshake counts toward the listener's authentication timeout: the
 * timeout runs from the TCP accept (`acceptedAt` is handed on so the SASL
 * exchange gets only what is left).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { ANONYMOUS } from '../auth/session.js';
import type { SslPrincipalMapper } from '../auth/ssl-principal-mapper.js';
import { certificateSubjectRfc2253 } from '../auth/x500-name.js';
import { peerAddress } from '../net/address.js';

export type ClientAuth = 'none' | 'requested' | 'required';

export interface TlsListenerSettings {
  /** key, cert, ca, ciphers, minVersion, maxVersion (requestCert and rejectUnauthorized are set from clientAuth). */
  options: tls.TlsOptions;
  clientAuth: ClientAuth;
  principalMapper: SslPrincipalMapper;
}

/** The principal of a connection whose handshake completed, or why it is refused. */
export function tlsPrincipal(socket: tls.TLSSocket, settings: TlsListenerSettings): { principal: string } | { refused: string } {
  if (settings.clientAuth === 'none') return { principal: ANONYMOUS };
  const certificate = socket.getPeerCertificate();
  const presented = certificate !== null && certificate !== undefined && Buffer.isBuffer(certificate.raw) && certificate.raw.length > 0;
  if (!presented) {
    // Node refuses this itself under 'required' (rejectUnauthorized); checked again so a change there cannot let one through.
    return settings.clientAuth === 'required' ? { refused: 'no client certificate (ssl.clientAuth is required)' } : { principal: ANONYMOUS };
  }
  if (!socket.authorized) {
    return { refused: `the client certificate is not trusted (${socket.authorizationError ?? 'unverified'}; subject ${describeSubject(certificate.raw)})` };
  }
  let subject: string;
  try {
    subject = certificateSubjectRfc2253(certificate.raw);
  } catch (error) {
    return { refused: `the client certificate's subject cannot be read: ${(error as Error).message}` };
  }
  const name = settings.principalMapper.name(subject);
  if (name === null) return { refused: `no ssl.principalMappingRules rule applies to the subject ${subject} (rules ${settings.principalMapper})` };
  return { principal: `User:${name}` };
}

function describeSubject(raw: Buffer): string {
  try {
    return JSON.stringify(certificateSubjectRfc2253(raw));
  } catch {
    return 'unreadable';
  }
}

interface Pending {
  peer: string;
  acceptedAt: number;
  secured: boolean;
  failure: string | null;
}

/**
 * A TLS server for one listener. `onSecure` gets each connection whose
 * handshake completed and whose certificate (if any) was accepted, with its
 * principal and the time its TCP connection was accepted; failures are
 * logged with the peer's address and the connection closed.
 */
export function createTlsServer(
  listenerName: string,
  settings: TlsListenerSettings,
  handshakeTimeoutMs: number,
  log: (line: string) => void,
  onSecure: (socket: tls.TLSSocket, principal: string, acceptedAt: number) => void,
): tls.Server {
  const server = tls.createServer({
    ...settings.options,
    handshakeTimeout: handshakeTimeoutMs,
    requestCert: settings.clientAuth !== 'none',
    rejectUnauthorized: settings.clientAuth === 'required',
  });
  // Node gives the TLS socket only once the handshake ended, and a socket
  // the client reset has no address left by then: each TCP connection is
  // remembered by its four-tuple from the accept, so the handshake's outcome
  // can be told with the right peer address and accept time.
  const pending = new Map<string, Pending>();
  server.on('connection', (raw: net.Socket) => {
    const key = fourTuple(raw);
    const entry: Pending = { peer: peerAddress(raw.remoteAddress, raw.remotePort), acceptedAt: Date.now(), secured: false, failure: null };
    pending.set(key, entry);
    raw.once('close', () => {
      if (pending.get(key) === entry) pending.delete(key);
      if (!entry.secured)
        log(
          `${listenerName}: TLS handshake with ${entry.peer} failed: ${entry.failure ?? 'the connection closed before the handshake completed'}; closing the connection`,
        );
    });
  });
  server.on('tlsClientError', (error: Error, socket: tls.TLSSocket) => {
    const entry = socket.remoteAddress === undefined ? undefined : pending.get(fourTuple(socket));
    if (entry !== undefined) entry.failure = error.message;
    socket.destroy();
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    const key = fourTuple(socket);
    const entry = pending.get(key);
    pending.delete(key);
    if (entry !== undefined) entry.secured = true;
    const peer = entry?.peer ?? peerAddress(socket.remoteAddress, socket.remotePort);
    const outcome = tlsPrincipal(socket, settings);
    if ('refused' in outcome) {
      log(`${listenerName}: refused the TLS client ${peer}: ${outcome.refused}; closing the connection`);
      socket.destroy();
      return;
    }
    onSecure(socket, outcome.principal, entry?.acceptedAt ?? Date.now());
  });
  return server;
}

function fourTuple(socket: net.Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`;
}
