/**
 * OAUTHBEARER token validation on the broker. The validator is pluggable;
 * the default one checks unsecured JWS tokens (`alg: none`) as Kafka's
 * OAuthBearerUnsecuredValidatorCallbackHandler does: for tests and
 * development only, since anyone can mint such a token.
 */

/** What a valid token says: who, and until when (epoch ms). */
export interface ValidatedToken {
  principal: string;
  expiresAtMs: number;
}

/** Throws an Error whose message says why the token is refused. */
export type OAuthBearerValidator = (token: string, extensions: Record<string, string>) => ValidatedToken | Promise<ValidatedToken>;

export interface UnsecuredValidatorOptions {
  /** The claim holding the principal (Kafka's unsecuredValidatorPrincipalClaimName, default `sub`). */
  principalClaim?: string;
  /** Clock skew tolerated on `exp` and `iat` (Kafka's unsecuredValidatorAllowableClockSkewMs, default 0). */
  allowableClockSkewMs?: number;
  now?: () => number;
}

export function unsecuredJwsValidator(options: UnsecuredValidatorOptions = {}): OAuthBearerValidator {
  const claim = options.principalClaim ?? 'sub';
  const skew = options.allowableClockSkewMs ?? 0;
  const now = options.now ?? Date.now;
  return (token) => {
    const parts = token.split('.');
    if (parts.length !== 3) throw new Error('the token is not a compact JWS (three dot-separated parts)');
    if (parts[2] !== '') throw new Error('an unsecured JWS must have an empty signature');
    const header = decodePart(parts[0]!, 'header');
    if (header.alg !== 'none') throw new Error(`the token's alg is ${JSON.stringify(header.alg)}, not "none"`);
    const payload = decodePart(parts[1]!, 'payload');
    const principal = payload[claim];
    if (typeof principal !== 'string' || principal === '') throw new Error(`the token has no ${claim} claim (a non-empty string)`);
    const exp = payload.exp;
    if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new Error('the token has no exp claim (a number of seconds)');
    const expiresAtMs = Math.round(exp * 1000);
    const at = now();
    if (expiresAtMs + skew <= at) throw new Error(`the token expired at ${new Date(expiresAtMs).toISOString()}`);
    if (typeof payload.iat === 'number' && payload.iat * 1000 - skew > at) throw new Error('the token is issued in the future (iat)');
    return { principal, expiresAtMs };
  };
}

function decodePart(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new Error(`the token's ${what} is not base64url JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`the token's ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** An unsecured JWS for `principal`, valid for `lifetimeMs` (tests and examples; Kafka's unsecured login module mints the same). */
export function unsecuredJws(principal: string, lifetimeMs: number, now = Date.now()): string {
  const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none' })}.${encode({ sub: principal, iat: now / 1000, exp: (now + lifetimeMs) / 1000 })}.`;
}
