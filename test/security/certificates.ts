/**
 * Test certificates made during the run (never committed keys): a CA, a
 * server certificate for 127.0.0.1 / localhost signed by it, a client
 * certificate signed by it, and an untrusted self-signed server certificate.
 * @peculiar/x509 over node's WebCrypto, ECDSA P-256: no openssl needed.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface KeyAndCert {
  key: string;
  cert: string;
}

export interface TestPki {
  ca: string;
  server: KeyAndCert;
  client: KeyAndCert;
  /** A self-signed server certificate no one trusts. */
  untrusted: KeyAndCert;
  /** A client certificate for `subject` (a DN string, or RDNs in encoded order), signed by the CA. */
  issueClient(subject: string | x509.JsonName): Promise<KeyAndCert>;
  /** A self-signed client certificate for `subject`: trusted by no one. */
  selfSignedClient(subject: string | x509.JsonName): Promise<KeyAndCert>;
}

async function keyPem(keys: CryptoKeyPair): Promise<string> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as webcrypto.CryptoKey);
  return x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
}

const validity = (): { notBefore: Date; notAfter: Date } => ({
  notBefore: new Date(Date.now() - 60_000),
  notAfter: new Date(Date.now() + 24 * 3600_000),
});

async function leaf(
  name: string | x509.JsonName,
  issuer: { cert: x509.X509Certificate; keys: CryptoKeyPair },
  extensions: x509.Extension[],
): Promise<KeyAndCert> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: name,
    issuer: issuer.cert.subject,
    ...validity(),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true), ...extensions],
  });
  return { key: await keyPem(keys), cert: cert.toString('pem') };
}

export async function makeTestPki(): Promise<TestPki> {
  const caKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=kipgen test CA',
    ...validity(),
    signingAlgorithm: ALGORITHM,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const issuer = { cert: caCert, keys: caKeys };
  const serverNames = new x509.SubjectAlternativeNameExtension([
    { type: 'ip', value: '127.0.0.1' },
    { type: 'dns', value: 'localhost' },
  ]);
  const server = await leaf('CN=localhost', issuer, [serverNames, new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])]);
  const client = await leaf('CN=alice-cert,O=kipgen', issuer, [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]);
  const selfKeys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const untrustedCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=localhost',
    ...validity(),
    signingAlgorithm: ALGORITHM,
    keys: selfKeys,
    extensions: [serverNames],
  });
  const clientAuth = new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]);
  return {
    ca: caCert.toString('pem'),
    server,
    client,
    untrusted: { key: await keyPem(selfKeys), cert: untrustedCert.toString('pem') },
    issueClient: (subject) => leaf(subject, issuer, [clientAuth]),
    async selfSignedClient(subject) {
      const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: serial(),
        name: subject,
        ...validity(),
        signingAlgorithm: ALGORITHM,
        keys,
        extensions: [clientAuth],
      });
      return { key: await keyPem(keys), cert: cert.toString('pem') };
    },
  };
}
