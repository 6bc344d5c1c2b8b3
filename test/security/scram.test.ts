/**
 * SCRAM arithmetic (runtime/scram.ts) against RFC 7677's SCRAM-SHA-256
 * example, and the broker's credential store: no password kept, PLAIN checked
 * against the SCRAM credential.
 */
import { describe, expect, it } from 'vitest';
import { CredentialStore, userConfig } from '../../coordinator/auth/credentials.js';
import { SCRAM_ALGORITHMS, clientKey, hash, hmac, saltedPassword, scramCredential, serverKey, xor } from '../../runtime/scram.js';

describe('SCRAM-SHA-256 (RFC 7677 §3)', () => {
  const algorithm = SCRAM_ALGORITHMS['SCRAM-SHA-256'];
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const clientFirstBare = 'n=user,r=rOprNGfwEbeRWgbNEkqO';
  const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
  const withoutProof = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
  const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;

  it('derives the client proof and the server signature of the RFC example', () => {
    const salted = saltedPassword(algorithm, 'pencil', salt, 4096);
    const key = clientKey(algorithm, salted);
    const proof = xor(key, hmac(algorithm, hash(algorithm, key), authMessage));
    expect(proof.toString('base64')).toBe('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
    expect(hmac(algorithm, serverKey(algorithm, salted), authMessage).toString('base64')).toBe('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
  });

  it('a stored credential holds StoredKey and ServerKey of that password', () => {
    const credential = scramCredential('SCRAM-SHA-256', 'pencil', { salt, iterations: 4096 });
    const salted = saltedPassword(algorithm, 'pencil', salt, 4096);
    expect(Buffer.from(credential.storedKey)).toEqual(hash(algorithm, clientKey(algorithm, salted)));
    expect(Buffer.from(credential.serverKey)).toEqual(serverKey(algorithm, salted));
    expect(() => scramCredential('SCRAM-SHA-512', 'x', { iterations: 100 })).toThrow(/at least 4096/);
  });
});

describe('CredentialStore', () => {
  it('keeps no password, checks PLAIN against the SCRAM credential, refuses clear-text config', () => {
    const user = userConfig('alice', 'alice-secret');
    expect(JSON.stringify(user)).not.toContain('alice-secret');
    const store = new CredentialStore([user]);
    expect(store.checkPassword('alice', 'alice-secret')).toBe(true);
    expect(store.checkPassword('alice', 'wrong')).toBe(false);
    expect(store.checkPassword('nobody', 'alice-secret')).toBe(false);
    expect(() => new CredentialStore([{ name: 'bob', password: 'x' } as never])).toThrow(/clear-text passwords are not accepted/);
    expect(() => new CredentialStore([{ name: 'bob', 'SCRAM-SHA-256': { salt: '!!', iterations: 4096, storedKey: 'AA==', serverKey: 'AA==' } }])).toThrow(
      /salt must be base64/,
    );
  });
});
