/**
 * The subject of an X.509 certificate as Java's X500Principal.getName()
 * writes it (RFC 2253 form), which is what Kafka's SSL principal builder
 * starts from (DefaultKafkaPrincipalBuilder.applySslPrincipalMapper, with
 * sslSession.getPeerPrincipal(); the formatting is the JDK's
 * sun.security.x509.AVA.toRFC2253String and X500Name.getRFC2253Name).
 *
 * Node's `peerCertificate.subject` object cannot be used for this: it loses
 * the order of the attributes, merges repeated ones and carries no escaping,
 * so `CN=admin,O=Acme` and a single CN `admin,O=Acme` came out alike. We read
 * the subject from the certificate's DER instead; this module parses just
 * enough DER for that (the Name, and the path to it through the
 * certificate) and refuses anything malformed rather than guessing.
 *
 * What Java does, and so this module:
 *  - RDNs in reverse order of the encoded sequence (most specific first),
 *    joined by `,`; the values of a multi-valued RDN in their encoded order,
 *    joined by `+`;
 *  - keywords CN, C, L, ST, O, OU, STREET, DC, UID; any other type as its
 *    dotted OID, with the value as `#` and the hex of its whole DER encoding
 *    (also the value of a keyword type that is not a directory string);
 *  - string values (PrintableString, T61String, IA5String, GeneralString,
 *    UTF8String, BMPString) decoded as UTF-8 (the JDK decodes them all so),
 *    with `, = + < > # ; " \` escaped by a backslash anywhere (the JDK escapes
 *    `=` and `#` everywhere, beyond RFC 2253's leading `#`), NUL written
 *    `\00`, and leading and trailing spaces (and CRs) escaped.
 * The unit test's expected strings were checked against Java 17's X500Principal.
 */

export class DerError extends Error {}

interface Tlv {
  tag: number;
  /** Offset of the first content byte. */
  start: number;
  /** Offset after the last content byte. */
  end: number;
  /** Offset of the tag byte (start of the whole encoding). */
  from: number;
}

const SEQUENCE = 0x30;
const SET = 0x31;
const OID = 0x06;
const INTEGER = 0x02;
const EXPLICIT_0 = 0xa0;

/** Directory string tags the JDK writes as text (DerValue tags, AVA.isDerString non-canonical). */
const STRING_TAGS = new Set([
  0x13 /* PrintableString */, 0x14 /* T61String */, 0x16 /* IA5String */, 0x1b /* GeneralString */, 0x0c /* UTF8String */, 0x1e /* BMPString */,
]);

/** The JDK's RFC 2253 keywords (AVAKeyword entries marked rfc2253Compliant). */
const KEYWORDS = new Map<string, string>([
  ['2.5.4.3', 'CN'],
  ['2.5.4.6', 'C'],
  ['2.5.4.7', 'L'],
  ['2.5.4.8', 'ST'],
  ['2.5.4.10', 'O'],
  ['2.5.4.11', 'OU'],
  ['2.5.4.9', 'STREET'],
  ['0.9.2342.19200300.100.1.25', 'DC'],
  ['0.9.2342.19200300.100.1.1', 'UID'],
]);

const ESCAPED = new Set([',', '=', '+', '<', '>', '#', ';', '"', '\\']);

function readTlv(der: Uint8Array, at: number, limit: number, what: string): Tlv {
  if (at + 2 > limit) throw new DerError(`${what}: truncated at byte ${at}`);
  const tag = der[at]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError(`${what}: multi-byte tags are not used in a Name (byte ${at})`);
  let length = der[at + 1]!;
  let start = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0) throw new DerError(`${what}: indefinite length is not DER (byte ${at})`);
    if (count > 4) throw new DerError(`${what}: length of ${count} bytes is too long (byte ${at})`);
    if (start + count > limit) throw new DerError(`${what}: truncated length at byte ${at}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new DerError(`${what}: ${length} content bytes run past the end (byte ${at})`);
  return { tag, start, end, from: at };
}

function expect(tlv: Tlv, tag: number, what: string): Tlv {
  if (tlv.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${tlv.tag.toString(16)} at byte ${tlv.from}`);
  return tlv;
}

/** The DER of the subject Name of a DER certificate (Certificate → tbsCertificate → subject). */
export function certificateSubject(certificate: Uint8Array): Uint8Array {
  const cert = expect(readTlv(certificate, 0, certificate.length, 'certificate'), SEQUENCE, 'certificate');
  const tbs = expect(readTlv(certificate, cert.start, cert.end, 'tbsCertificate'), SEQUENCE, 'tbsCertificate');
  let at = tbs.start;
  const next = (what: string): Tlv => {
    const tlv = readTlv(certificate, at, tbs.end, what);
    at = tlv.end;
    return tlv;
  };
  let field = next('tbsCertificate field');
  if (field.tag === EXPLICIT_0) field = next('serialNumber'); // the optional version
  expect(field, INTEGER, 'serialNumber');
  expect(next('signature'), SEQUENCE, 'signature');
  expect(next('issuer'), SEQUENCE, 'issuer');
  expect(next('validity'), SEQUENCE, 'validity');
  const subject = expect(next('subject'), SEQUENCE, 'subject');
  return certificate.subarray(subject.from, subject.end);
}

/** One attribute of a Name: its OID and its value's DER (tag, length, content). */
export interface Attribute {
  oid: string;
  value: Uint8Array;
}

/** The RDNs of a DER Name in encoded order (least specific first), each a list of attributes. */
export function parseName(name: Uint8Array): Attribute[][] {
  const outer = expect(readTlv(name, 0, name.length, 'Name'), SEQUENCE, 'Name');
  if (outer.end !== name.length) throw new DerError(`Name: ${name.length - outer.end} bytes after its end`);
  const rdns: Attribute[][] = [];
  for (let at = outer.start; at < outer.end;) {
    const set = expect(readTlv(name, at, outer.end, 'RelativeDistinguishedName'), SET, 'RelativeDistinguishedName');
    const rdn: Attribute[] = [];
    for (let a = set.start; a < set.end;) {
      const ava = expect(readTlv(name, a, set.end, 'AttributeTypeAndValue'), SEQUENCE, 'AttributeTypeAndValue');
      const oid = expect(readTlv(name, ava.start, ava.end, 'attribute type'), OID, 'attribute type');
      const value = readTlv(name, oid.end, ava.end, 'attribute value');
      if (value.end !== ava.end) throw new DerError(`AttributeTypeAndValue: extra bytes after the value at byte ${value.end}`);
      rdn.push({ oid: decodeOid(name.subarray(oid.start, oid.end), oid.from), value: name.subarray(value.from, value.end) });
      a = ava.end;
    }
    if (rdn.length === 0) throw new DerError(`RelativeDistinguishedName: empty at byte ${set.from}`);
    rdns.push(rdn);
    at = set.end;
  }
  return rdns;
}

function decodeOid(bytes: Uint8Array, from: number): string {
  if (bytes.length === 0) throw new DerError(`attribute type: empty OID at byte ${from}`);
  const arcs: bigint[] = [];
  let value = 0n;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (value === 0n && byte === 0x80) throw new DerError(`attribute type: OID arc with a leading 0x80 at byte ${from}`);
    value = (value << 7n) | BigInt(byte & 0x7f);
    if ((byte & 0x80) === 0) {
      arcs.push(value);
      value = 0n;
    } else if (i === bytes.length - 1) {
      throw new DerError(`attribute type: OID ends inside an arc at byte ${from}`);
    }
  }
  const first = arcs.shift()!;
  const head = first < 40n ? [0n, first] : first < 80n ? [1n, first - 40n] : [2n, first - 80n];
  return [...head, ...arcs].join('.');
}

const utf8 = new TextDecoder('utf-8');

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** One attribute as the JDK's AVA.toRFC2253String writes it. */
export function attributeToRfc2253(attribute: Attribute): string {
  const keyword = KEYWORDS.get(attribute.oid);
  const tag = attribute.value[0]!;
  if (keyword === undefined || !STRING_TAGS.has(tag)) return `${keyword ?? attribute.oid}=#${hex(attribute.value)}`;
  const content = readTlv(attribute.value, 0, attribute.value.length, 'attribute value');
  const text = utf8.decode(attribute.value.subarray(content.start, content.end));
  let escaped = '';
  for (const c of text) {
    if (ESCAPED.has(c)) escaped += `\\${c}`;
    else if (c === '\u0000') escaped += '\\00';
    else escaped += c;
  }
  // Leading and trailing blanks (space, CR) are escaped one by one, as the JDK does.
  const chars = [...escaped];
  const blank = (c: string): boolean => c === ' ' || c === '\r';
  let lead = 0;
  while (lead < chars.length && blank(chars[lead]!)) lead++;
  let trail = chars.length - 1;
  while (trail >= 0 && blank(chars[trail]!)) trail--;
  return `${keyword}=${chars.map((c, i) => (i < lead || i > trail ? `\\${c}` : c)).join('')}`;
}

/** A DER Name as Java's X500Principal.getName() (RFC 2253). */
export function nameToRfc2253(name: Uint8Array): string {
  return parseName(name)
    .reverse()
    .map((rdn) => rdn.map(attributeToRfc2253).join('+'))
    .join(',');
}

/** The subject of a DER certificate as Java's X500Principal.getName(). */
export function certificateSubjectRfc2253(certificate: Uint8Array): string {
  return nameToRfc2253(certificateSubject(certificate));
}
