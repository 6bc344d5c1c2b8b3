/**
 * Authenticates one connection: SaslHandshake v1 names the mechanism, then
 * SaslAuthenticate (v0–2) carries the tokens until the exchange completes
 * (Kafka's SaslClientAuthenticator). Returns the session lifetime the broker
 * gave (KIP-368), 0 when it set none.
 *
 * Failures are SaslAuthenticationError, naming the mechanism: they are not
 * retriable, so a wrong password fails the operation at once instead of
 * looping through reconnects.
 */
import { SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse } from '../../generated/index.js';
import type { KafkaConnection } from '../../connection/connection.js';
import { ErrorCode, errorCodeName } from '../../runtime/error-codes.js';
import { SaslAuthenticationError } from '../errors.js';
import { createExchange, mechanismName, type SaslConfig } from './mechanisms.js';

export interface SaslVersions {
  /** The broker's SaslAuthenticate range, undefined when it does not advertise it. */
  authenticate: readonly [number, number] | undefined;
  handshake: readonly [number, number] | undefined;
}

export interface SaslOutcome {
  mechanism: string;
  /** 0: the broker set no limit. */
  sessionLifetimeMs: number;
}

export async function authenticate(
  connection: KafkaConnection,
  config: SaslConfig,
  versions: SaslVersions,
  sendOptions: { exclusive?: boolean } = {},
): Promise<SaslOutcome> {
  const mechanism = mechanismName(config);
  const where = `${connection.host}:${connection.port}`;
  if (!versions.handshake || versions.handshake[1] < 1 || !versions.authenticate) {
    throw new SaslAuthenticationError(
      mechanism,
      `${mechanism}: the broker at ${where} does not offer SASL (SaslHandshake v1 and SaslAuthenticate are not in its ApiVersions); is this a SASL listener?`,
    );
  }
  const handshake = await connection.send(SaslHandshakeRequest, SaslHandshakeRequest.create({ mechanism }), 1, SaslHandshakeResponse, sendOptions);
  if (handshake.errorCode !== 0) {
    const offered = handshake.mechanisms.length > 0 ? handshake.mechanisms.join(', ') : 'none';
    throw new SaslAuthenticationError(
      mechanism,
      `${mechanism}: the broker at ${where} refused the mechanism with ${errorCodeName(handshake.errorCode)}; it enables: ${offered}`,
      undefined,
      handshake.errorCode,
    );
  }
  const version = Math.min(versions.authenticate[1], SaslAuthenticateRequest.validVersions.highest);
  const exchange = createExchange(config);
  let token: Uint8Array | null = await exchange.start();
  let sessionLifetimeMs = 0;
  while (token !== null) {
    const response = await connection.send(
      SaslAuthenticateRequest,
      SaslAuthenticateRequest.create({ authBytes: token }),
      version,
      SaslAuthenticateResponse,
      sendOptions,
    );
    if (response.errorCode !== 0) {
      const reason = response.errorMessage ?? errorCodeName(response.errorCode);
      const rejection = (exchange as { rejection?: string | null }).rejection;
      throw new SaslAuthenticationError(
        mechanism,
        `${mechanism} authentication to ${where} failed: ${reason}` +
          (rejection ? ` (${rejection})` : '') +
          (response.errorCode === ErrorCode.SASL_AUTHENTICATION_FAILED ? '; check the sasl settings' : ''),
        undefined,
        response.errorCode,
      );
    }
    sessionLifetimeMs = Number(response.sessionLifetimeMs);
    token = exchange.next(response.authBytes);
  }
  return { mechanism, sessionLifetimeMs };
}

/**
 * When to re-authenticate, as Kafka's client: at a random point between 85%
 * and 95% of the session lifetime, so that many connections do not all
 * re-authenticate at once and none is caught expired.
 */
export function reauthenticationDelay(sessionLifetimeMs: number): number {
  return Math.floor(sessionLifetimeMs * (0.85 + Math.random() * 0.1));
}
