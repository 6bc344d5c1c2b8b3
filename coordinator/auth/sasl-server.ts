/**
 * The broker half of each SASL mechanism (Kafka's PlainSaslServer,
 * ScramSaslServer, OAuthBearerSaslServer). `evaluate(token)` returns the
 * token to send back, and once `complete` the authenticated user; a refused
 * login throws AuthenticationFailed with the message the client is sent.
 */
import { randomBytes } from 'node:crypto';
import {
  SCRAM_ALGORITHMS,
  constantTimeEqual,
  hash,
  hmac,
  isScramMechanism,
  parseScramAttributes,
  unescapeSaslName,
  xor,
  type ScramAlgorithm,
} from '../../runtime/scram.js';
import type { CredentialStore } from './credentials.js';
import type { OAuthBearerValidator } from './oauth.js';

export const SUPPORTED_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
export type ServerMechanismName = (typeof SUPPORTED_MECHANISMS)[number];

export class AuthenticationFailed extends Error {}

export interface SaslStep {
  response: Uint8Array;
  /** Set once the exchange succeeded. */
  complete: boolean;
  /** The user name (the principal is `User:<name>`), when complete. */
  user?: string;
  /** When the credential itself expires (OAuth tokens), epoch ms. */
  credentialExpiresAtMs?: number;
}

export interface SaslServer {
  evaluate(token: Uint8Array): Promise<SaslStep>;
}

export interface MechanismDeps {
  credentials: CredentialStore;
  oauthBearerValidator: OAuthBearerValidator;
}

const EMPTY = new Uint8Array(0);
const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const text = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
/** One message for a wrong password and an unknown user, so that user names cannot be probed (as Kafka). */
const INVALID_CREDENTIALS = 'Authentication failed: Invalid username or password';

export function createSaslServer(mechanism: ServerMechanismName, deps: MechanismDeps): SaslServer {
  if (mechanism === 'PLAIN') return new PlainServer(deps.credentials);
  if (mechanism === 'OAUTHBEARER') return new OAuthBearerServer(deps.oauthBearerValidator);
  if (isScramMechanism(mechanism)) return new ScramServer(SCRAM_ALGORITHMS[mechanism], deps.credentials);
  throw new Error(`no SASL server for ${mechanism as string}`);
}

class PlainServer implements SaslServer {
  constructor(private readonly credentials: CredentialStore) {}
  async evaluate(token: Uint8Array): Promise<SaslStep> {
    const parts = text(token).split('\u0000');
    if (parts.length !== 3) throw new AuthenticationFailed('Invalid SASL/PLAIN response: expected 3 tokens separated by NUL');
    const [authzid, user, password] = parts as [string, string, string];
    if (user === '') throw new AuthenticationFailed('Authentication failed: username not specified');
    if (password === '') throw new AuthenticationFailed('Authentication failed: password not specified');
    if (authzid !== '' && authzid !== user) {
      throw new AuthenticationFailed('Authentication failed: Client requested an authorization id that is different from username');
    }
    if (!this.credentials.checkPassword(user, password)) throw new AuthenticationFailed(INVALID_CREDENTIALS);
    return { response: EMPTY, complete: true, user };
  }
}

class ScramServer implements SaslServer {
  private state: 'first' | 'final' | 'done' = 'first';
  private user = '';
  private nonce = '';
  private gs2Header = '';
  private authMessagePrefix = '';
  private storedKey: Uint8Array = EMPTY;
  private serverKeyBytes: Uint8Array = EMPTY;

  constructor(
    private readonly algorithm: ScramAlgorithm,
    private readonly credentials: CredentialStore,
  ) {}

  async evaluate(token: Uint8Array): Promise<SaslStep> {
    const message = text(token);
    if (this.state === 'first') return this.first(message);
    if (this.state === 'final') return this.final(message);
    throw new AuthenticationFailed(`${this.algorithm.mechanism}: unexpected token after the exchange completed`);
  }

  private first(message: string): SaslStep {
    // gs2-header: "n,," (no channel binding) or "y,,"; an authzid must equal the user.
    const match = /^([ny]),(a=[^,]*)?,(.*)$/s.exec(message);
    if (!match) throw new AuthenticationFailed(`Invalid SCRAM client first message: ${JSON.stringify(message.slice(0, 80))}`);
    this.gs2Header = `${match[1]},${match[2] ?? ''},`;
    const bare = match[3]!;
    const attributes = this.parse(bare, 'client-first-message');
    const user = attributes.get('n');
    const clientNonce = attributes.get('r');
    if (user === undefined || clientNonce === undefined || clientNonce === '')
      throw new AuthenticationFailed('Invalid SCRAM client first message: n and r are required');
    try {
      this.user = unescapeSaslName(user);
    } catch (error) {
      throw new AuthenticationFailed((error as Error).message);
    }
    if (match[2] && match[2].slice(2) !== this.user)
      throw new AuthenticationFailed('Authentication failed: Client requested an authorization id that is different from username');
    const credential = this.credentials.scram(this.user, this.algorithm.mechanism);
    if (!credential) throw new AuthenticationFailed(INVALID_CREDENTIALS);
    this.storedKey = credential.storedKey;
    this.serverKeyBytes = credential.serverKey;
    this.nonce = clientNonce + randomBytes(18).toString('base64');
    const serverFirst = `r=${this.nonce},s=${Buffer.from(credential.salt).toString('base64')},i=${credential.iterations}`;
    this.authMessagePrefix = `${bare},${serverFirst}`;
    this.state = 'final';
    return { response: utf8(serverFirst), complete: false };
  }

  private final(message: string): SaslStep {
    const proofAt = message.lastIndexOf(',p=');
    if (proofAt < 0) throw new AuthenticationFailed('Invalid SCRAM client final message: no proof');
    const withoutProof = message.slice(0, proofAt);
    const attributes = this.parse(message, 'client-final-message');
    if (attributes.get('c') !== Buffer.from(this.gs2Header).toString('base64'))
      throw new AuthenticationFailed('Invalid SCRAM client final message: channel binding does not match the first message');
    // Kafka's ScramSaslServer accepts a final nonce that ends with the server's (librdkafka
    // sends its client nonce once more in front), so kipgen does too.
    if (!(attributes.get('r') ?? '').endsWith(this.nonce)) throw new AuthenticationFailed('Invalid client nonce in the final client message.');
    const proof = Buffer.from(attributes.get('p') ?? '', 'base64');
    const authMessage = `${this.authMessagePrefix},${withoutProof}`;
    const signature = hmac(this.algorithm, this.storedKey, authMessage);
    if (proof.length !== signature.length || !constantTimeEqual(hash(this.algorithm, xor(proof, signature)), this.storedKey)) {
      throw new AuthenticationFailed(INVALID_CREDENTIALS);
    }
    this.state = 'done';
    const verifier = hmac(this.algorithm, this.serverKeyBytes, authMessage).toString('base64');
    return { response: utf8(`v=${verifier}`), complete: true, user: this.user };
  }

  private parse(message: string, what: string): Map<string, string> {
    try {
      return parseScramAttributes(message, what);
    } catch (error) {
      throw new AuthenticationFailed((error as Error).message);
    }
  }
}

const SEPARATOR = '\u0001';

class OAuthBearerServer implements SaslServer {
  private refusal: string | null = null;
  private done = false;

  constructor(private readonly validator: OAuthBearerValidator) {}

  async evaluate(token: Uint8Array): Promise<SaslStep> {
    const message = text(token);
    if (this.refusal !== null) {
      // RFC 7628 §3.2.3: after our error JSON the client sends a lone %x01; then we fail.
      throw new AuthenticationFailed(`Authentication failed: ${this.refusal}`);
    }
    if (this.done) throw new AuthenticationFailed('OAUTHBEARER: unexpected token after the exchange completed');
    const match = /^([ny]),(a=[^,]*)?,\u0001(.*)\u0001\u0001$/s.exec(message);
    if (!match) throw new AuthenticationFailed('Invalid OAUTHBEARER client first message');
    const fields = new Map<string, string>();
    for (const kv of match[3]!.split(SEPARATOR)) {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new AuthenticationFailed(`Invalid OAUTHBEARER client first message: ${JSON.stringify(kv)} is not key=value`);
      fields.set(kv.slice(0, eq), kv.slice(eq + 1));
    }
    const auth = fields.get('auth');
    if (!auth || !/^Bearer /i.test(auth)) throw new AuthenticationFailed('Invalid OAUTHBEARER client first message: no auth=Bearer <token>');
    fields.delete('auth');
    let validated;
    try {
      validated = await this.validator(auth.slice(7).trim(), Object.fromEntries(fields));
    } catch (error) {
      this.refusal = (error as Error).message;
      return { response: utf8(JSON.stringify({ status: 'invalid_token' })), complete: false };
    }
    // An authorization id is allowed only when it names the token's own principal
    // (Kafka's OAuthBearerSaslServer.process; compared as sent, as Kafka does).
    const authzid = match[2] === undefined ? '' : match[2].slice(2);
    if (authzid !== '' && authzid !== validated.principal) {
      throw new AuthenticationFailed(
        `Authentication failed: the authorization id ${JSON.stringify(authzid)} is not the token's principal ${JSON.stringify(validated.principal)}`,
      );
    }
    this.done = true;
    return { response: EMPTY, complete: true, user: validated.principal, credentialExpiresAtMs: validated.expiresAtMs };
  }
}
