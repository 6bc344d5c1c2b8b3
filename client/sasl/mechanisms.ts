/**
 * The client half of each SASL mechanism, as a small state machine: `start()`
 * gives the first token, `next(serverToken)` the following one, or null once
 * the exchange is complete on the client's side. Errors thrown here are
 * SaslAuthenticationError (wrong server proof, malformed token).
 *
 * PLAIN: RFC 4616. SCRAM-SHA-256/512: RFC 5802 / RFC 7677 (Kafka's
 * ScramSaslClient). OAUTHBEARER: RFC 7628 (Kafka's OAuthBearerSaslClient),
 * the token coming from the application's provider callback.
 */
import {
  SCRAM_ALGORITHMS,
  clientKey,
  constantTimeEqual,
  escapeSaslName,
  hash,
  hmac,
  parseScramAttributes,
  saltedPassword,
  scramNonce,
  serverKey,
  xor,
  type ScramMechanismName,
} from '../../runtime/scram.js';
import { SaslAuthenticationError } from '../errors.js';

export type SaslMechanismName = 'PLAIN' | ScramMechanismName | 'OAUTHBEARER';

/** A token from an OAuth provider: its compact JWS, and SASL extensions to send (KIP-342). */
export interface OAuthBearerToken {
  value: string;
  extensions?: Record<string, string>;
}

export type SaslConfig =
  | { mechanism: 'PLAIN' | ScramMechanismName | Lowercase<'PLAIN' | ScramMechanismName>; username: string; password: string }
  | {
      mechanism: 'OAUTHBEARER' | 'oauthbearer';
      /** Called before every authentication and re-authentication (kafkajs's oauthBearerProvider). */
      oauthBearerProvider: () => Promise<OAuthBearerToken> | OAuthBearerToken;
    };

export interface SaslExchange {
  readonly mechanism: SaslMechanismName;
  start(): Promise<Uint8Array>;
  next(serverToken: Uint8Array): Uint8Array | null;
}

export function mechanismName(config: SaslConfig): SaslMechanismName {
  const name = config.mechanism.toUpperCase();
  if (name === 'PLAIN' || name === 'SCRAM-SHA-256' || name === 'SCRAM-SHA-512' || name === 'OAUTHBEARER') return name;
  throw new TypeError(`sasl.mechanism ${JSON.stringify(config.mechanism)} is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER`);
}

export function createExchange(config: SaslConfig): SaslExchange {
  const mechanism = mechanismName(config);
  if (mechanism === 'OAUTHBEARER') {
    if (!('oauthBearerProvider' in config) || typeof config.oauthBearerProvider !== 'function') {
      throw new TypeError('sasl: OAUTHBEARER needs an oauthBearerProvider callback');
    }
    return new OAuthBearerExchange(config.oauthBearerProvider);
  }
  if (!('username' in config) || typeof config.username !== 'string' || typeof config.password !== 'string') {
    throw new TypeError(`sasl: ${mechanism} needs a username and a password (strings)`);
  }
  return mechanism === 'PLAIN' ? new PlainExchange(config.username, config.password) : new ScramExchange(mechanism, config.username, config.password);
}

const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const text = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');

class PlainExchange implements SaslExchange {
  readonly mechanism = 'PLAIN' as const;
  constructor(
    private readonly username: string,
    private readonly password: string,
  ) {}
  async start(): Promise<Uint8Array> {
    return utf8(`\u0000${this.username}\u0000${this.password}`);
  }
  next(): Uint8Array | null {
    return null;
  }
}

class ScramExchange implements SaslExchange {
  private readonly algorithm;
  private readonly nonce = scramNonce();
  private clientFirstBare = '';
  private expectedServerSignature: Buffer | null = null;
  private state: 'first' | 'final' | 'done' = 'first';

  constructor(
    readonly mechanism: ScramMechanismName,
    private readonly username: string,
    private readonly password: string,
  ) {
    this.algorithm = SCRAM_ALGORITHMS[mechanism];
  }

  async start(): Promise<Uint8Array> {
    this.clientFirstBare = `n=${escapeSaslName(this.username)},r=${this.nonce}`;
    return utf8(`n,,${this.clientFirstBare}`);
  }

  next(serverToken: Uint8Array): Uint8Array | null {
    const message = text(serverToken);
    if (this.state === 'first') {
      this.state = 'final';
      return this.clientFinal(message);
    }
    if (this.state === 'final') {
      this.state = 'done';
      this.verifyServerFinal(message);
      return null;
    }
    throw this.fail('the broker sent a token after the exchange was complete');
  }

  private clientFinal(serverFirst: string): Uint8Array {
    const attributes = this.parse(serverFirst, 'server-first-message');
    const nonce = attributes.get('r');
    const salt = attributes.get('s');
    const iterations = Number(attributes.get('i'));
    if (attributes.has('e')) throw this.fail(`the broker refused: ${attributes.get('e')}`);
    if (nonce === undefined || salt === undefined || !Number.isInteger(iterations)) {
      throw this.fail(`server-first-message ${JSON.stringify(serverFirst)} lacks r, s or i`);
    }
    if (!nonce.startsWith(this.nonce) || nonce.length === this.nonce.length) {
      throw this.fail("the broker's nonce does not extend the client's (RFC 5802 §5.1)");
    }
    if (iterations < this.algorithm.minIterations) {
      throw this.fail(`the broker asks for ${iterations} iterations, fewer than the minimum ${this.algorithm.minIterations}`);
    }
    const salted = saltedPassword(this.algorithm, this.password, Buffer.from(salt, 'base64'), iterations);
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const key = clientKey(this.algorithm, salted);
    const signature = hmac(this.algorithm, hash(this.algorithm, key), authMessage);
    this.expectedServerSignature = hmac(this.algorithm, serverKey(this.algorithm, salted), authMessage);
    return utf8(`${withoutProof},p=${xor(key, signature).toString('base64')}`);
  }

  private verifyServerFinal(serverFinal: string): void {
    const attributes = this.parse(serverFinal, 'server-final-message');
    if (attributes.has('e')) throw this.fail(`the broker refused: ${attributes.get('e')}`);
    const verifier = attributes.get('v');
    if (verifier === undefined || !constantTimeEqual(Buffer.from(verifier, 'base64'), this.expectedServerSignature!)) {
      throw this.fail("the broker's signature is wrong: it does not know this user's credential (or is not the broker it claims to be)");
    }
  }

  private parse(message: string, what: string): Map<string, string> {
    try {
      return parseScramAttributes(message, what);
    } catch (error) {
      throw this.fail((error as Error).message);
    }
  }

  private fail(reason: string): SaslAuthenticationError {
    return new SaslAuthenticationError(this.mechanism, `${this.mechanism}: ${reason}`);
  }
}

const SEPARATOR = '\u0001';

class OAuthBearerExchange implements SaslExchange {
  readonly mechanism = 'OAUTHBEARER' as const;
  private sentFirst = false;
  private serverError: string | null = null;

  constructor(private readonly provider: () => Promise<OAuthBearerToken> | OAuthBearerToken) {}

  async start(): Promise<Uint8Array> {
    let token: OAuthBearerToken;
    try {
      token = await this.provider();
    } catch (error) {
      throw new SaslAuthenticationError('OAUTHBEARER', `OAUTHBEARER: the token provider failed: ${(error as Error).message}`, error);
    }
    if (!token || typeof token.value !== 'string' || token.value === '') {
      throw new SaslAuthenticationError('OAUTHBEARER', 'OAUTHBEARER: the token provider returned no token value');
    }
    const extensions = Object.entries(token.extensions ?? {})
      .map(([k, v]) => `${SEPARATOR}${k}=${v}`)
      .join('');
    this.sentFirst = true;
    return utf8(`n,,${SEPARATOR}auth=Bearer ${token.value}${extensions}${SEPARATOR}${SEPARATOR}`);
  }

  /**
   * A broker that rejects the token answers with an error JSON (RFC 7628
   * §3.2.2), to which the client replies with a lone %x01; the broker then
   * fails the exchange with SASL_AUTHENTICATION_FAILED, whose message the
   * caller reports. The JSON is kept for that report.
   */
  next(serverToken: Uint8Array): Uint8Array | null {
    if (!this.sentFirst || serverToken.length === 0) return null;
    this.serverError = text(serverToken);
    return utf8(SEPARATOR);
  }

  get rejection(): string | null {
    return this.serverError;
  }
}
