import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { MessageCodec } from '../../runtime/index.js';

/** One line of a conformance vector file (see test/fixtures/vectors/README.md). */
export interface Vector {
  name: string;
  type: string;
  apiKey: number | null;
  version: number;
  flexible: boolean;
  json: unknown;
  hex: string;
}

export function readVectors(dir: string): Map<string, Vector[]> {
  const out = new Map<string, Vector[]>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    const lines = readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    out.set(
      file.replace(/\.jsonl$/, ''),
      lines.map((l) => JSON.parse(l) as Vector),
    );
  }
  return out;
}

/** Where ../shared is, if this checkout has it (CI does; a user's fresh clone may not). */
export function sharedDir(): string | undefined {
  const candidates = [process.env.KIPGEN_SHARED, join(process.cwd(), '..', 'shared')].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(join(p, 'conformance')));
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/**
 * Deep equality for the JSON form: like JSON but telling -0 from 0, as the
 * vectors' README asks. Returns the first differing path, or undefined.
 */
export function jsonDifference(actual: unknown, expected: unknown, path = ''): string | undefined {
  if (typeof expected === 'number' && typeof actual === 'number') {
    return Object.is(actual, expected) ? undefined : `${path}: ${actual} !== ${expected}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${path}: ${JSON.stringify(actual)?.slice(0, 200)} !== ${JSON.stringify(expected).slice(0, 200)}`;
    for (let i = 0; i < expected.length; i++) {
      const d = jsonDifference(actual[i], expected[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: not an object`;
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const keys = new Set([...Object.keys(a), ...Object.keys(e)]);
    for (const k of keys) {
      if (!(k in e)) return `${path}.${k}: unexpected key (value ${JSON.stringify(a[k])?.slice(0, 100)})`;
      if (!(k in a)) return `${path}.${k}: missing`;
      const d = jsonDifference(a[k], e[k], `${path}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return isDeepStrictEqual(actual, expected) ? undefined : `${path}: ${JSON.stringify(actual)} !== ${JSON.stringify(expected)}`;
}

/** Checks one vector both ways; returns a description of the first failure, or undefined. */
export function checkVector(codec: MessageCodec<unknown>, vector: Vector): string | undefined {
  const bytes = fromHex(vector.hex);
  let decoded: unknown;
  try {
    decoded = codec.decode(bytes, vector.version);
  } catch (error) {
    return `decode v${vector.version} threw: ${(error as Error).message}`;
  }
  const diff = jsonDifference(codec.toJson(decoded, vector.version), vector.json);
  if (diff) return `decode v${vector.version}: toJson differs at ${diff}`;
  let encoded: Uint8Array;
  let chunks: Uint8Array[];
  try {
    const message = codec.fromJson(vector.json, vector.version);
    encoded = codec.encode(message, vector.version);
    chunks = codec.encodeChunks(message, vector.version);
  } catch (error) {
    return `encode v${vector.version} threw: ${(error as Error).message}`;
  }
  const hex = toHex(encoded);
  if (hex !== vector.hex) return `encode v${vector.version}: got ${hex.slice(0, 120)}… expected ${vector.hex.slice(0, 120)}…`;
  const joined = toHex(Buffer.concat(chunks));
  if (joined !== vector.hex) return `encodeChunks v${vector.version}: got ${joined.slice(0, 120)}… expected ${vector.hex.slice(0, 120)}…`;
  return undefined;
}
