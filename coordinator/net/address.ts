/**
 * Client addresses as Kafka sees them. Kafka takes the client's host from
 * InetAddress.getHostAddress() (RequestContext.clientAddress; the authorizer
 * compares ACL hosts with it: metadata/src/main/java/org/apache/kafka/metadata/authorizer/StandardAuthorizerData.java).
 * Java turns an IPv4-mapped IPv6 address (::ffff:a.b.c.d) into an
 * Inet4Address, so an IPv4 client on a dual-stack socket is `a.b.c.d`, and
 * writes other IPv6 addresses in full, uncompressed form
 * (`0:0:0:0:0:0:0:1`). Node reports `::ffff:127.0.0.1` and `::1`: without
 * this, an ACL for host 127.0.0.1 never applied to such a client (a DENY was
 * bypassed).
 */
import * as net from 'node:net';

/** An IP address as Java's getHostAddress() writes it; anything else (a name, `*`) unchanged. */
export function canonicalHost(host: string): string {
  if (net.isIPv4(host)) return host;
  const zoneAt = host.indexOf('%');
  const address = zoneAt < 0 ? host : host.slice(0, zoneAt);
  if (!net.isIPv6(address)) return host;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return groups.map((g) => g.toString(16)).join(':') + (zoneAt < 0 ? '' : host.slice(zoneAt));
}

/** `host:port` for logs, the host canonical, an IPv6 host in brackets. */
export function peerAddress(host: string | undefined, port: number | undefined): string {
  if (host === undefined) return `unknown:${port ?? '?'}`;
  const canonical = canonicalHost(host);
  return canonical.includes(':') ? `[${canonical}]:${port}` : `${canonical}:${port}`;
}

/** The eight 16-bit groups of a valid IPv6 literal (net.isIPv6 checked it). */
function ipv6Groups(address: string): number[] {
  // A trailing dotted IPv4 part stands for the last two groups.
  const text = address.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_, a: string, b: string, c: string, d: string) => `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const gap = text.indexOf('::');
  if (gap < 0) return parse(text);
  const head = parse(text.slice(0, gap));
  const rest = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}
