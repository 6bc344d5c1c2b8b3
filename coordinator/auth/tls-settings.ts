/**
 * `ssl.cipher.suites` and `ssl.enabled.protocols` of the broker's TLS
 * listeners, turned into Node's TLS options (Kafka sets them on each
 * SSLEngine: clients/src/main/java/org/apache/kafka/common/security/ssl/DefaultSslEngineFactory.java,
 * createSslEngine).
 *
 * Names are Kafka's (the IANA/JSSE names, e.g.
 * TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or OpenSSL's (ECDHE-RSA-AES128-GCM-SHA256).
 *
 * Defaults: Kafka's ssl.enabled.protocols default, TLSv1.2 and TLSv1.3.
 * Kafka leaves ssl.cipher.suites to the JVM; kipgen does not leave it to
 * Node, whose default list still offers TLS 1.2 CBC suites: by default only
 * the TLS 1.3 suites and TLS 1.2's ECDHE AES-GCM suites are offered.
 */
import * as tls from 'node:tls';

/** IANA (Kafka/JSSE) name → OpenSSL name, for the TLS 1.2 suites Node's OpenSSL offers. */
const IANA_TO_OPENSSL: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_DHE_RSA_WITH_AES_128_GCM_SHA256: 'DHE-RSA-AES128-GCM-SHA256',
  TLS_DHE_RSA_WITH_AES_256_GCM_SHA384: 'DHE-RSA-AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384: 'ECDHE-ECDSA-AES256-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384: 'ECDHE-RSA-AES256-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
};

export const DEFAULT_CIPHER_SUITES: readonly string[] = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
];

export const DEFAULT_ENABLED_PROTOCOLS: readonly string[] = ['TLSv1.2', 'TLSv1.3'];

const PROTOCOLS = ['TLSv1.2', 'TLSv1.3'] as const;

export interface TlsProtocolOptions {
  ciphers: string;
  minVersion: tls.SecureVersion;
  maxVersion: tls.SecureVersion;
}

/** Node's options for the given lists; throws an Error naming a bad entry. */
export function tlsProtocolOptions(
  cipherSuites: readonly string[] = DEFAULT_CIPHER_SUITES,
  enabledProtocols: readonly string[] = DEFAULT_ENABLED_PROTOCOLS,
): TlsProtocolOptions {
  if (!Array.isArray(cipherSuites) || cipherSuites.length === 0) throw new Error('config: ssl.cipherSuites must be a non-empty list of cipher suite names');
  if (!Array.isArray(enabledProtocols) || enabledProtocols.length === 0)
    throw new Error(`config: ssl.enabledProtocols must be a non-empty list of ${PROTOCOLS.join(', ')}`);
  const known = new Set(tls.getCiphers().map((c) => c.toUpperCase()));
  const ciphers = cipherSuites.map((name) => {
    if (typeof name !== 'string') throw new Error(`config: ssl.cipherSuites: ${JSON.stringify(name)} is not a cipher suite name`);
    const openssl = IANA_TO_OPENSSL[name] ?? name.toUpperCase();
    if (!known.has(openssl)) throw new Error(`config: ssl.cipherSuites: ${name} is not a cipher suite this Node (OpenSSL) offers`);
    return openssl.startsWith('TLS_') ? name.toUpperCase() : openssl;
  });
  for (const p of enabledProtocols) {
    if (!(PROTOCOLS as readonly string[]).includes(p))
      throw new Error(`config: ssl.enabledProtocols: ${JSON.stringify(p)} is not one of ${PROTOCOLS.join(', ')} (older protocols are not offered)`);
  }
  const chosen = PROTOCOLS.filter((p) => enabledProtocols.includes(p));
  return { ciphers: ciphers.join(':'), minVersion: chosen[0]!, maxVersion: chosen[chosen.length - 1]! };
}
