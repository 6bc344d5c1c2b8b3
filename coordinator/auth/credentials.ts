/**
 * The broker's user store: SCRAM credentials per user and mechanism, kept as
 * Kafka keeps them (salt, iterations, StoredKey, ServerKey — never the
 * password). PLAIN is checked against the same credentials: the password is
 * salted and hashed as SCRAM would and compared with the StoredKey. Kafka's
 * PLAIN reads clear-text passwords from its JAAS file; kipgen keeps no clear
 * password anywhere, at the cost of one PBKDF2 per PLAIN login.
 */
import {
  SCRAM_ALGORITHMS,
  clientKey,
  constantTimeEqual,
  hash,
  isScramMechanism,
  saltedPassword,
  scramCredential,
  type ScramCredential,
  type ScramMechanismName,
} from '../../runtime/scram.js';

/** One user as written in the broker config (binary values in base64). */
export interface UserConfig {
  name: string;
  'SCRAM-SHA-256'?: StoredScramCredential;
  'SCRAM-SHA-512'?: StoredScramCredential;
}

export interface StoredScramCredential {
  salt: string;
  iterations: number;
  storedKey: string;
  serverKey: string;
}

/** A config entry for `name` with `password` (use it to write a broker config; the password is not kept). */
export function userConfig(
  name: string,
  password: string,
  mechanisms: readonly ScramMechanismName[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'],
  iterations = 4096,
): UserConfig {
  const user: UserConfig = { name };
  for (const mechanism of mechanisms) {
    const c = scramCredential(mechanism, password, { iterations });
    user[mechanism] = {
      salt: Buffer.from(c.salt).toString('base64'),
      iterations: c.iterations,
      storedKey: Buffer.from(c.storedKey).toString('base64'),
      serverKey: Buffer.from(c.serverKey).toString('base64'),
    };
  }
  return user;
}

export class CredentialStore {
  private readonly users = new Map<string, Map<ScramMechanismName, ScramCredential>>();

  constructor(users: readonly UserConfig[]) {
    users.forEach((user, i) => {
      if (typeof user.name !== 'string' || user.name === '') throw new Error(`config: sasl.users[${i}].name must be a non-empty string`);
      if (this.users.has(user.name)) throw new Error(`config: sasl.users: user ${user.name} appears twice`);
      const credentials = new Map<ScramMechanismName, ScramCredential>();
      for (const [key, value] of Object.entries(user)) {
        if (key === 'name') continue;
        if (key === 'password')
          throw new Error(`config: sasl.users[${user.name}]: clear-text passwords are not accepted; store SCRAM credentials (kipgen scram-credential)`);
        if (!isScramMechanism(key)) throw new Error(`config: sasl.users[${user.name}]: unknown key ${key} (expected SCRAM-SHA-256 or SCRAM-SHA-512)`);
        credentials.set(key, decodeCredential(value as StoredScramCredential, `sasl.users[${user.name}].${key}`));
      }
      if (credentials.size === 0) throw new Error(`config: sasl.users[${user.name}] has no SCRAM-SHA-256 or SCRAM-SHA-512 credential`);
      this.users.set(user.name, credentials);
    });
  }

  scram(user: string, mechanism: ScramMechanismName): ScramCredential | undefined {
    return this.users.get(user)?.get(mechanism);
  }

  /** PLAIN: does `password` derive the user's stored key (under any of its SCRAM credentials)? */
  checkPassword(user: string, password: string): boolean {
    const credentials = this.users.get(user);
    if (!credentials) return false;
    const [mechanism, credential] = credentials.entries().next().value as [ScramMechanismName, ScramCredential];
    const algorithm = SCRAM_ALGORITHMS[mechanism];
    const salted = saltedPassword(algorithm, password, credential.salt, credential.iterations);
    return constantTimeEqual(hash(algorithm, clientKey(algorithm, salted)), credential.storedKey);
  }
}

function decodeCredential(value: StoredScramCredential, where: string): ScramCredential {
  if (typeof value !== 'object' || value === null) throw new Error(`config: ${where} must be { salt, iterations, storedKey, serverKey }`);
  for (const key of ['salt', 'storedKey', 'serverKey'] as const) {
    if (typeof value[key] !== 'string' || !/^[A-Za-z0-9+/]+=*$/.test(value[key])) throw new Error(`config: ${where}.${key} must be base64`);
  }
  if (!Number.isInteger(value.iterations) || value.iterations < 4096) throw new Error(`config: ${where}.iterations must be an integer of at least 4096`);
  return {
    salt: Buffer.from(value.salt, 'base64'),
    iterations: value.iterations,
    storedKey: Buffer.from(value.storedKey, 'base64'),
    serverKey: Buffer.from(value.serverKey, 'base64'),
  };
}
