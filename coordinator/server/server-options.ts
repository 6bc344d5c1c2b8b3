/**
 * What a KafkaServer is configured with: its listeners, its bounds, the
 * registry of APIs it serves and the authorization hook around every handler.
 * Apart from the server so the connection and the dispatcher can name them
 * without importing the server that creates them.
 */
import type { RequestContext } from '../broker-context.js';
import type { Metrics } from '../metrics.js';
import type { AuthorizationRule } from '../auth/rule-kit.js';
import type { SaslSettings, SecurityProtocol } from '../auth/session.js';
import type { ApiRegistry } from './api-registry.js';
import type { TlsListenerSettings } from './tls-listener.js';
import type { RequestBudget } from './request-budget.js';

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
