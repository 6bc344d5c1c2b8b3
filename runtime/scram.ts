/**
 * SCRAM (RFC 5802, RFC 7677) arithmetic shared by the client's SCRAM exchange
 * and the broker's: the key derivations, the attribute syntax and the
 * credential Kafka stores (salt, iterations, StoredKey, ServerKey — never the
 * password). Only node:crypto; the message flow lives with each side.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface ScramAlgorithm {
  readonly mechanism: ScramMechanismName;
  /** node:crypto digest name. */
  readonly digest: 'sha256' | 'sha512';
  /** Digest length in bytes (the key length of Hi). */
  readonly keyLength: number;
  /** Kafka refuses fewer iterations than this (ScramMechanism.minIterations). */
  readonly minIterations: number;
}

export const SCRAM_ALGORITHMS: Readonly<Record<ScramMechanismName, ScramAlgorithm>> = {
  'SCRAM-SHA-256': { mechanism: 'SCRAM-SHA-256', digest: 'sha256', keyLength: 32, minIterations: 4096 },
  'SCRAM-SHA-512': { mechanism: 'SCRAM-SHA-512', digest: 'sha512', keyLength: 64, minIterations: 4096 },
};

export function isScramMechanism(name: string): name is ScramMechanismName {
  return name === 'SCRAM-SHA-256' || name === 'SCRAM-SHA-512';
}

/** What a broker keeps for one user and mechanism (Kafka's ScramCredential). */
export interface ScramCredential {
  readonly salt: Uint8Array;
  readonly iterations: number;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
}

export function hmac(algorithm: ScramAlgorithm, key: Uint8Array, data: Uint8Array | string): Buffer {
  return createHmac(algorithm.digest, key).update(data).digest();
}

export function hash(algorithm: ScramAlgorithm, data: Uint8Array): Buffer {
  return createHash(algorithm.digest).update(data).digest();
}

/** Hi(password, salt, i) of RFC 5802 §2.2: PBKDF2 with HMAC of the mechanism's hash. */
export function saltedPassword(algorithm: ScramAlgorithm, password: string, salt: Uint8Array, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password.normalize('NFKC'), 'utf8'), salt, iterations, algorithm.keyLength, algorithm.digest);
}

export function clientKey(algorithm: ScramAlgorithm, salted: Uint8Array): Buffer {
  return hmac(algorithm, salted, 'Client Key');
}

export function serverKey(algorithm: ScramAlgorithm, salted: Uint8Array): Buffer {
  return hmac(algorithm, salted, 'Server Key');
}

export function xor(a: Uint8Array, b: Uint8Array): Buffer {
  if (a.length !== b.length) throw new Error(`SCRAM: cannot xor ${a.length} and ${b.length} bytes`);
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** Equal without leaking where they differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The credential a broker stores for `password` (Kafka's ScramFormatter.generateCredential). */
export function scramCredential(mechanism: ScramMechanismName, password: string, options: { salt?: Uint8Array; iterations?: number } = {}): ScramCredential {
  const algorithm = SCRAM_ALGORITHMS[mechanism];
  const iterations = options.iterations ?? 4096;
  if (!Number.isInteger(iterations) || iterations < algorithm.minIterations) {
    throw new Error(`${mechanism}: iterations must be an integer of at least ${algorithm.minIterations}, got ${iterations}`);
  }
  const salt = options.salt ?? randomBytes(32);
  const salted = saltedPassword(algorithm, password, salt, iterations);
  return { salt, iterations, storedKey: hash(algorithm, clientKey(algorithm, salted)), serverKey: serverKey(algorithm, salted) };
}

/** A fresh printable nonce (RFC 5802: any printable ASCII but ','). */
export function scramNonce(): string {
  return randomBytes(24).toString('base64');
}

/** saslname of RFC 5802 §5.1: ',' and '=' escaped. */
export function escapeSaslName(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

export function unescapeSaslName(name: string): string {
  if (/=(?!2C|3D)/.test(name)) throw new Error(`SCRAM: invalid escape in username ${JSON.stringify(name)}`);
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/**
 * `a=1,b=2` → Map. Attribute names are single letters (RFC 5802 §5.1), and
 * extension attributes (Kafka's `tokenauth=true`) keep their full name.
 */
export function parseScramAttributes(message: string, what: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const part of message.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`SCRAM: malformed ${what}: attribute ${JSON.stringify(part)} is not name=value`);
    attributes.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return attributes;
}

/** ServerKey and StoredKey derived the same way on both sides: the signature the server proves itself with. */
export function serverSignature(algorithm: ScramAlgorithm, serverKeyBytes: Uint8Array, authMessage: string): Buffer {
  return hmac(algorithm, serverKeyBytes, authMessage);
}
