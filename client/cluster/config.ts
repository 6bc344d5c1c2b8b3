/**
 * The settings every client shares (Kafka's CommonClientConfigs), their
 * defaults, and the loggers.
 */
import type { TlsOptions } from '../../connection/connection.js';
import { ConfigError } from '../errors.js';
import type { SaslConfig } from '../sasl/mechanisms.js';

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** What `logger: null` gives: nothing logged. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Logs warnings and errors to stderr, as Kafka's default log4j setup does. */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (m) => console.warn(`[kipgen] WARN ${m}`),
  error: (m) => console.error(`[kipgen] ERROR ${m}`),
};

/** Settings every client shares (Kafka's CommonClientConfigs), in milliseconds. */
export interface CommonClientConfig {
  /** `host:port` list, or a comma-separated string (bootstrap.servers). */
  bootstrapServers: string | readonly string[];
  clientId?: string;
  /** request.timeout.ms: one request's timeout. Default 30 000. */
  requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms. Default 10 000. */
  connectTimeoutMs?: number;
  /** retry.backoff.ms / retry.backoff.max.ms. Defaults 100 / 1 000. */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /** reconnect.backoff.ms / reconnect.backoff.max.ms. Defaults 50 / 1 000. */
  reconnectBackoffMs?: number;
  reconnectBackoffMaxMs?: number;
  /** metadata.max.age.ms. Default 300 000. */
  metadataMaxAgeMs?: number;
  /** The largest response accepted. Default 100 MiB. */
  maxFrameBytes?: number;
  /** Default: warnings and errors to stderr. `null` silences the client. */
  logger?: Logger | null;
  /**
   * TLS (security.protocol SSL / SASL_SSL): `true` for the system's trusted
   * CAs, or node:tls options (ca, cert, key, passphrase, servername,
   * rejectUnauthorized, ...). Absent or false: plain TCP.
   */
  ssl?: boolean | SslConfig;
  /**
   * SASL (security.protocol SASL_PLAINTEXT / SASL_SSL): `{ mechanism: 'PLAIN' |
   * 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username, password }` or `{ mechanism:
   * 'OAUTHBEARER', oauthBearerProvider }`. Every connection authenticates
   * after ApiVersions and re-authenticates before the session lifetime the
   * broker returns (KIP-368).
   */
  sasl?: SaslConfig;
}

/** node:tls options for the client's connections. */
export type SslConfig = TlsOptions;

/** The timing settings with their defaults applied. */
export type ClientTimings = Required<Omit<CommonClientConfig, 'logger' | 'clientId' | 'bootstrapServers' | 'ssl' | 'sasl'>>;

export function clientTimings(config: CommonClientConfig): ClientTimings {
  return {
    requestTimeoutMs: config.requestTimeoutMs ?? 30_000,
    connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
    retryBackoffMs: config.retryBackoffMs ?? 100,
    retryBackoffMaxMs: config.retryBackoffMaxMs ?? 1_000,
    reconnectBackoffMs: config.reconnectBackoffMs ?? 50,
    reconnectBackoffMaxMs: config.reconnectBackoffMaxMs ?? 1_000,
    metadataMaxAgeMs: config.metadataMaxAgeMs ?? 300_000,
    maxFrameBytes: config.maxFrameBytes ?? 100 * 1024 * 1024,
  };
}

/** bootstrap.servers as addresses; ConfigError naming the entry that is not `host:port`. */
export function parseBootstrap(servers: string | readonly string[]): Array<{ host: string; port: number }> {
  const list = (typeof servers === 'string' ? servers.split(',') : servers).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new ConfigError('bootstrapServers must name at least one host:port');
  return list.map((entry) => {
    const at = entry.lastIndexOf(':');
    const port = Number(entry.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
      throw new ConfigError(`bootstrapServers entry ${JSON.stringify(entry)} is not host:port`);
    }
    return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
  });
}
