/**
 * The RFC 2253 form of certificate subjects (coordinator/auth/x500-name.ts).
 * Every expected string below is what Java 17's X500Principal.getName()
 * printed for the same DER (checked when the test was written), since that
 * is the string Kafka's principal builder and mapping rules see.
 */
import { describe, expect, it } from 'vitest';
import { certificateSubjectRfc2253, DerError, nameToRfc2253 } from '../../coordinator/auth/x500-name.js';
import { BMP, derName, IA5, PRINTABLE, str, tlv, type Ava } from './der-names.js';
import { testPki } from './support.js';

const CN = '2.5.4.3';
const O = '2.5.4.10';
const OU = '2.5.4.11';
const C = '2.5.4.6';
const DC = '0.9.2342.19200300.100.1.25';
const UID = '0.9.2342.19200300.100.1.1';
const EMAIL = '1.2.840.113549.1.9.1';
const SERIAL = '2.5.4.5';

const cases: Array<[string, Ava[][], string]> = [
  ['a comma and "=" inside a value are escaped', [[[CN, str('admin,O=Acme')]]], 'CN=admin\\,O\\=Acme'],
  ['RDNs most specific first', [[[O, str('Acme')]], [[CN, str('admin')]]], 'CN=admin,O=Acme'],
  ['encoded order kept (a CN before the O)', [[[CN, str('admin')]], [[O, str('Acme')]]], 'O=Acme,CN=admin'],
  [
    'repeated and multi-valued attributes keep their order',
    [
      [[C, str('US', PRINTABLE)]],
      [[O, str('Acme')]],
      [
        [OU, str('a')],
        [OU, str('b')],
      ],
      [[CN, str('x')]],
    ],
    'CN=x,OU=a+OU=b,O=Acme,C=US',
  ],
  ['leading and trailing spaces and "#" escaped', [[[CN, str(' #lead and trail  ')]]], 'CN=\\ \\#lead and trail\\ \\ '],
  ['every special character escaped', [[[CN, str('a\\b"c<d>e;f+g=h#i')]]], 'CN=a\\\\b\\"c\\<d\\>e\\;f\\+g\\=h\\#i'],
  ['NUL as \\00, a trailing CR escaped', [[[CN, str('nul\u0000x\r')]]], 'CN=nul\\00x\\\r'],
  ['a leading CR escaped', [[[CN, str('\r x')]]], 'CN=\\\r\\ x'],
  ['UTF-8 kept as is', [[[CN, str('été ü 漢字')]]], 'CN=été ü 漢字'],
  ['a BMPString read as UTF-8, as the JDK does', [[[CN, str('bmp', BMP)]]], 'CN=\\00b\\00m\\00p'],
  ['an IA5String CN', [[[CN, str('ia5@x', IA5)]]], 'CN=ia5@x'],
  [
    'other types as their OID and #hex DER',
    [[[EMAIL, str('a@b.c', IA5)]], [[SERIAL, str('12', PRINTABLE)]]],
    '2.5.4.5=#13023132,1.2.840.113549.1.9.1=#16056140622e63',
  ],
  ['a keyword type with a non-string value as #hex', [[[CN, tlv(0x04, [1, 2, 3])]]], 'CN=#0403010203'],
  [
    'DC and UID keywords, multi-valued RDN in encoded order',
    [
      [
        [DC, str('com', IA5)],
        [UID, str('u')],
      ],
      [[DC, str('example', IA5)]],
    ],
    'DC=example,DC=com+UID=u',
  ],
  ['an empty value', [[[CN, str('')]]], 'CN='],
  ['a large OID arc', [[['1.2.3.4.5000000', str('big arc')]]], '1.2.3.4.5000000=#0c0762696720617263'],
];

describe('nameToRfc2253 writes what Java X500Principal.getName() writes', () => {
  for (const [what, rdns, expected] of cases) {
    it(what, () => {
      expect(nameToRfc2253(derName(rdns))).toBe(expected);
    });
  }
});

describe('malformed DER is refused, not guessed', () => {
  const good = derName([[[CN, str('x')]]]);
  it('a truncated Name', () => {
    expect(() => nameToRfc2253(good.subarray(0, good.length - 1))).toThrow(DerError);
  });
  it('trailing bytes after the Name', () => {
    expect(() => nameToRfc2253(Uint8Array.from([...good, 0]))).toThrow(/after its end/);
  });
  it('an indefinite length', () => {
    expect(() => nameToRfc2253(Uint8Array.from([0x30, 0x80, 0, 0]))).toThrow(/indefinite length/);
  });
  it('a length running past the end', () => {
    expect(() => nameToRfc2253(Uint8Array.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff]))).toThrow(/run past the end/);
  });
  it('an empty RDN', () => {
    expect(() => nameToRfc2253(tlv(0x30, [0x31, 0x00]))).toThrow(/empty/);
  });
  it('an RDN that is not a SET', () => {
    expect(() => nameToRfc2253(tlv(0x30, tlv(0x30, [])))).toThrow(/expected tag 0x31/);
  });
});

describe('certificateSubjectRfc2253', () => {
  it('finds the subject in a real certificate (after version, serial, signature, issuer, validity)', async () => {
    const pki = await testPki();
    const issued = await pki.issueClient([{ O: ['Acme'] }, { CN: ['admin,O=Acme'] }]);
    const der = new (await import('node:crypto')).X509Certificate(issued.cert).raw;
    expect(certificateSubjectRfc2253(der)).toBe('CN=admin\\,O\\=Acme,O=Acme');
  });
});
