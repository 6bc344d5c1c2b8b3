/**
 * Kafka's Uuid text form: URL-safe base64 of the 16 bytes without padding,
 * always 22 characters. Hand-written because it sits on the decode hot path.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const CHAR_TO_SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) CHAR_TO_SEXTET[ALPHABET.charCodeAt(i)] = i;

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** Formats the 16 bytes at `offset` of `bytes` as Kafka's 22-character uuid. */
export function uuidToString(bytes: Uint8Array, offset: number): string {
  let out = '';
  let i = offset;
  const end = offset + 15;
  for (; i < end; i += 3) {
    const triple = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[triple >>> 18]! + ALPHABET[(triple >>> 12) & 63]! + ALPHABET[(triple >>> 6) & 63]! + ALPHABET[triple & 63]!;
  }
  const last = bytes[i]!;
  return out + ALPHABET[last >>> 2]! + ALPHABET[(last & 3) << 4]!;
}

/** True when `value` is a well-formed 22-character uuid string. */
export function isUuidString(value: string): boolean {
  if (value.length !== 22) return false;
  for (let i = 0; i < 22; i++) {
    const code = value.charCodeAt(i);
    if (code >= 128 || CHAR_TO_SEXTET[code]! < 0) return false;
  }
  // The last character carries 2 significant bits; the other 4 must be zero.
  return (CHAR_TO_SEXTET[value.charCodeAt(21)]! & 15) === 0;
}

/** Writes the uuid `value` as 16 bytes at `offset`; the caller has validated it with isUuidString. */
export function writeUuidBytes(value: string, target: Uint8Array, offset: number): void {
  let o = offset;
  let c = 0;
  for (; c < 20; c += 4) {
    const quad =
      (CHAR_TO_SEXTET[value.charCodeAt(c)]! << 18) |
      (CHAR_TO_SEXTET[value.charCodeAt(c + 1)]! << 12) |
      (CHAR_TO_SEXTET[value.charCodeAt(c + 2)]! << 6) |
      CHAR_TO_SEXTET[value.charCodeAt(c + 3)]!;
    target[o++] = quad >>> 16;
    target[o++] = (quad >>> 8) & 255;
    target[o++] = quad & 255;
  }
  target[o] = (CHAR_TO_SEXTET[value.charCodeAt(20)]! << 2) | (CHAR_TO_SEXTET[value.charCodeAt(21)]! >>> 4);
}
