/**
 * Lenient UTF-8 decoding that replaces ill-formed bytes as Kafka does. Kafka
 * reads strings with `new String(bytes, UTF_8)` (clients' Utils.utf8 via
 * ByteBufferAccessor.readString), and Java's decoder (java.lang.String's
 * UTF-8 path) agrees with the WHATWG decoder (TextDecoder: one U+FFFD per
 * maximal ill-formed subpart) except for UTF-16 surrogates encoded as UTF-8
 * (ED A0..BF xx): Java takes ED A0..BF as the start of a three-byte sequence
 * and replaces it, with its continuation byte if there is one, by a single
 * U+FFFD, where TextDecoder gives one per byte. Found by
 * test/kafka/conformance.test.ts (random ill-formed strings read by Kafka 4.4).
 */

// ignoreBOM: a leading U+FEFF is part of the string, not a marker to strip.
const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80;

/** `bytes` as a string, each ill-formed sequence replaced by U+FFFD as Java's decoder replaces it. */
export function decodeUtf8Lenient(bytes: Uint8Array): string {
  let surrogate = bytes.indexOf(0xed);
  while (surrogate >= 0 && !(bytes[surrogate + 1]! >= 0xa0 && bytes[surrogate + 1]! <= 0xbf)) surrogate = bytes.indexOf(0xed, surrogate + 1);
  if (surrogate < 0) return decoder.decode(bytes);
  // 0xED is never a continuation byte, so whatever precedes it decodes the same on its own.
  let out = '';
  let from = 0;
  let at = surrogate;
  while (at >= 0) {
    out += decoder.decode(bytes.subarray(from, at));
    out += '\uFFFD';
    from = at + (isContinuation(bytes[at + 2]) ? 3 : 2);
    at = bytes.indexOf(0xed, from);
    while (at >= 0 && !(bytes[at + 1]! >= 0xa0 && bytes[at + 1]! <= 0xbf)) at = bytes.indexOf(0xed, at + 1);
  }
  return out + decoder.decode(bytes.subarray(from));
}
