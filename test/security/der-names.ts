/**
 * A tiny DER encoder for X.500 Names, so tests can make subjects no
 * certificate library would (repeated and multi-valued attributes in a chosen
 * order, odd string types, escapes) and feed them to coordinator/auth/x500-name.ts.
 */
function length(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return [0x80 | bytes.length, ...bytes];
}

export function tlv(tag: number, content: Uint8Array | number[]): Uint8Array {
  const body = [...content];
  return Uint8Array.from([tag, ...length(body.length), ...body]);
}

function oid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [];
  const arc = (n: number): void => {
    const groups: number[] = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f));
    out.push(...groups);
  };
  arc(arcs[0]! * 40 + arcs[1]!);
  for (const a of arcs.slice(2)) arc(a);
  return tlv(0x06, out);
}

export const UTF8 = 0x0c;
export const PRINTABLE = 0x13;
export const IA5 = 0x16;
export const BMP = 0x1e;

/** A string value of the given DER string type (BMPString as UTF-16BE, others as UTF-8 bytes). */
export function str(value: string, tag = UTF8): Uint8Array {
  const bytes = tag === BMP ? Buffer.from(value, 'utf16le').swap16() : Buffer.from(value, 'utf8');
  return tlv(tag, bytes);
}

export type Ava = [oid: string, value: Uint8Array];

/** A DER Name from RDNs in encoded order (least specific first); each RDN is one or more attributes. */
export function derName(rdns: Ava[][]): Uint8Array {
  const sets = rdns.map((rdn) =>
    tlv(
      0x31,
      rdn.flatMap(([type, value]) => [...tlv(0x30, [...oid(type), ...value])]),
    ),
  );
  return tlv(
    0x30,
    sets.flatMap((s) => [...s]),
  );
}
