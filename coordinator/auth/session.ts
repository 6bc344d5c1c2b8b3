/**
 * One connection's security state (Kafka's KafkaChannel +
 * SaslServerAuthenticator, for our single-threaded server): the listener's
 * protocol, the principal, the SASL state machine and the session lifetime.
 *
 * On a SASL listener a connection starts unauthenticated: it may send one
 * ApiVersions (answered; one of an unsupported version does not count, so the
 * client can retry at a version it finds in the answer) and then SaslHandshake,
 * then only SaslAuthenticate until the exchange completes, and only frames up
 * to `maxReceiveBytes` (Kafka's sasl.server.max.receive.size). Anything else —
 * a second ApiVersions included — closes it: Kafka's SaslServerAuthenticator
 * moves HANDSHAKE_OR_VERSIONS_REQUEST -> HANDSHAKE_REQUEST -> AUTHENTICATE
 * and fails the connection on a request its state does not expect, so an
 * unauthenticated client cannot make the broker answer without end. A SaslHandshake on
 * an authenticated connection starts a re-authentication (KIP-368), which
 * must keep the mechanism and the principal. Once the session lifetime has
 * passed, any request but SaslHandshake closes the connection.
 */
import { ErrorCode } from '../errors.js';
import { AuthenticationFailed, createSaslServer, type MechanismDeps, type SaslServer, type ServerMechanismName } from './sasl-server.js';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export const ANONYMOUS = 'User:ANONYMOUS';

const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;
const API_VERSIONS = 18;

export interface SaslSettings {
  mechanisms: readonly ServerMechanismName[];
  deps: MechanismDeps;
  /** sasl.server.max.receive.size */
  maxReceiveBytes: number;
  /** connections.max.reauth.ms; 0: sessions do not expire (unless the credential does). */
  connectionsMaxReauthMs: number;
}

/** versionsOrHandshake, handshake: Kafka's HANDSHAKE_OR_VERSIONS_REQUEST and HANDSHAKE_REQUEST. */
type State = 'versionsOrHandshake' | 'handshake' | 'authenticate' | 'authenticated';

export class ConnectionSession {
  principal: string;
  private state: State;
  private mechanism: ServerMechanismName | null = null;
  private server: SaslServer | null = null;
  private reauthenticating = false;
  private expiresAt = 0;
  /** SaslHandshake v0 was used: the next frames are bare SASL tokens, not Kafka requests. */
  rawTokens = false;
  /** Set when the response being sent must be the last one on this connection (a failed login). */
  closeAfterResponse: string | null = null;

  constructor(
    readonly protocol: SecurityProtocol,
    private readonly sasl: SaslSettings | null,
    /** The TLS client certificate's principal, or ANONYMOUS. */
    sslPrincipal: string = ANONYMOUS,
    private readonly now: () => number = Date.now,
  ) {
    this.principal = sslPrincipal;
    this.state = this.usesSasl ? 'versionsOrHandshake' : 'authenticated';
  }

  get usesSasl(): boolean {
    return this.protocol === 'SASL_PLAINTEXT' || this.protocol === 'SASL_SSL';
  }

  /** Authenticated at least once (always, on PLAINTEXT and SSL listeners). */
  get authenticated(): boolean {
    return this.state === 'authenticated' || this.reauthenticating;
  }

  /** The largest frame accepted now. */
  frameLimit(normal: number): number {
    return this.authenticated || this.sasl === null ? normal : Math.min(normal, this.sasl.maxReceiveBytes);
  }

  /** Why this request may not be handled now (the connection is then closed), or null. */
  refusal(apiKey: number, apiName: string): string | null {
    if (!this.usesSasl) return null;
    if (this.state === 'versionsOrHandshake') {
      return apiKey === API_VERSIONS || apiKey === SASL_HANDSHAKE
        ? null
        : `${apiName} before authentication (only ApiVersions and SaslHandshake may come first)`;
    }
    if (this.state === 'handshake') {
      if (apiKey === SASL_HANDSHAKE) return null;
      return apiKey === API_VERSIONS
        ? 'a second ApiVersions before authentication (one ApiVersions, then SaslHandshake)'
        : `${apiName} before authentication (SaslHandshake expected after ApiVersions)`;
    }
    if (this.state === 'authenticate') {
      return apiKey === SASL_AUTHENTICATE ? null : `${apiName} during SASL authentication (SaslAuthenticate expected)`;
    }
    if (this.expiresAt > 0 && this.now() >= this.expiresAt && apiKey !== SASL_HANDSHAKE) {
      return `${apiName} after the session of ${this.principal} expired (connections.max.reauth.ms / credential lifetime); the client did not re-authenticate`;
    }
    return null;
  }

  /** An ApiVersions was answered without error: before authentication, only SaslHandshake may follow. */
  apiVersionsAnswered(): void {
    if (this.state === 'versionsOrHandshake') this.state = 'handshake';
  }

  handshake(mechanism: string, version = 1): { errorCode: number; mechanisms: string[] } {
    const enabled = [...(this.sasl?.mechanisms ?? [])];
    if (!this.usesSasl || this.state === 'authenticate') return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: enabled };
    if (!enabled.includes(mechanism as ServerMechanismName)) {
      this.closeAfterResponse = `SASL mechanism ${mechanism} is not enabled (enabled: ${enabled.join(', ')})`;
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled };
    }
    if (this.state === 'authenticated') {
      if (mechanism !== this.mechanism) {
        this.closeAfterResponse = `re-authentication with ${mechanism}, not the connection's ${this.mechanism}`;
        return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: enabled };
      }
      this.reauthenticating = true;
    }
    this.mechanism = mechanism as ServerMechanismName;
    this.server = createSaslServer(this.mechanism, this.sasl!.deps);
    this.state = 'authenticate';
    this.rawTokens = version === 0;
    return { errorCode: 0, mechanisms: enabled };
  }

  async authenticate(token: Uint8Array): Promise<{ errorCode: number; errorMessage: string | null; authBytes: Uint8Array; sessionLifetimeMs: bigint }> {
    const none = new Uint8Array(0);
    if (this.state !== 'authenticate' || this.server === null) {
      return {
        errorCode: ErrorCode.ILLEGAL_SASL_STATE,
        errorMessage: 'SaslAuthenticate without a SaslHandshake before it',
        authBytes: none,
        sessionLifetimeMs: 0n,
      };
    }
    let step;
    try {
      step = await this.server.evaluate(token);
    } catch (error) {
      if (!(error instanceof AuthenticationFailed)) throw error;
      this.closeAfterResponse = `${this.mechanism} authentication failed: ${error.message}`;
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: error.message, authBytes: none, sessionLifetimeMs: 0n };
    }
    if (!step.complete) return { errorCode: 0, errorMessage: null, authBytes: step.response, sessionLifetimeMs: 0n };
    const principal = `User:${step.user}`;
    if (this.reauthenticating && principal !== this.principal) {
      const message = `Cannot change principals during re-authentication from ${this.principal} to ${principal}`;
      this.closeAfterResponse = message;
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: none, sessionLifetimeMs: 0n };
    }
    this.principal = principal;
    this.state = 'authenticated';
    this.rawTokens = false;
    this.reauthenticating = false;
    this.server = null;
    const lifetime = this.sessionLifetime(step.credentialExpiresAtMs);
    this.expiresAt = lifetime > 0 ? this.now() + lifetime : 0;
    return { errorCode: 0, errorMessage: null, authBytes: step.response, sessionLifetimeMs: BigInt(lifetime) };
  }

  /** Kafka's rule: the smaller of connections.max.reauth.ms and what is left of the credential, 0 when neither applies. */
  private sessionLifetime(credentialExpiresAtMs: number | undefined): number {
    const max = this.sasl!.connectionsMaxReauthMs;
    const left = credentialExpiresAtMs === undefined ? undefined : Math.max(0, credentialExpiresAtMs - this.now());
    if (left === undefined) return max > 0 ? max : 0;
    // A credential that expires now still needs a non-zero lifetime: 0 means "no limit".
    return Math.max(1, max > 0 ? Math.min(max, left) : left);
  }
}
