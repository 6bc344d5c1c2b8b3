import { EncodeError, JsonFormatError, UnsupportedVersionError } from './errors.js';
import type { JsonObject } from './json.js';

/**
 * When an encode fails on a value the types do not allow (a field missing or of
 * the wrong type, which JavaScript callers can pass), says which field, by its
 * path: `MetadataRequest.topics[0].topicId: missing (undefined)`. The generated
 * encoders do not check types field by field — that would slow every encode —
 * so this runs only after one has thrown, and works from the codec's own JSON
 * conversions:
 *
 * 1. toJson on a proxy of the message that remembers the last property read:
 *    if toJson throws, that property is the bad one;
 * 2. fromJson on toJson's output: it checks every field the version has, and
 *    names a missing or mistyped one;
 * 3. the message fromJson rebuilt is well typed: the first path where the
 *    caller's message has a value of another type is the bad one.
 *
 * Errors that already say what is wrong in Kafka's terms (UnsupportedVersionError)
 * pass through, as does anything this cannot pin on a field.
 */
export interface JsonConversions<T> {
  toJson(message: T, version: number): JsonObject;
  fromJson(json: unknown, version: number): T;
}

export function explainEncodeFailure<T>(error: unknown, name: string, codec: JsonConversions<T>, message: T, version: number): unknown {
  if (error instanceof UnsupportedVersionError) return error;
  let found: { path: string; reason: string } | undefined;
  try {
    found = findBadField(codec, message, version);
  } catch {
    found = undefined;
  }
  if (found === undefined) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new EncodeError(`${name}${found.path === '' ? '' : `.${found.path}`}: ${found.reason} (${why})`, { cause: error });
}

function findBadField<T>(codec: JsonConversions<T>, message: T, version: number): { path: string; reason: string } | undefined {
  const last = { path: '', value: undefined as unknown };
  let json: JsonObject;
  try {
    json = codec.toJson(tracked(message, '', last) as T, version);
  } catch {
    return last.path === '' ? undefined : { path: last.path, reason: describe(last.value) };
  }
  let normal: T;
  try {
    normal = codec.fromJson(json, version);
  } catch (error) {
    if (!(error instanceof JsonFormatError)) return undefined;
    if (error.field !== undefined) return { path: error.field, reason: `missing (undefined); version ${version} writes it` };
    return { path: error.path, reason: error.message.slice(error.path.length + 2) };
  }
  return firstMismatch(message, normal, '');
}

/** A read-only view of `value` that records in `last` the path and value of the latest property read. */
function tracked(value: unknown, path: string, last: { path: string; value: unknown }): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value;
  return new Proxy(value as object, {
    get(target, key, receiver) {
      const v: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || typeof v === 'function') return v;
      const child = Array.isArray(target) ? (/^\d+$/.test(key) ? `${path}[${key}]` : path) : path === '' ? key : `${path}.${key}`;
      if (Array.isArray(target) && !/^\d+$/.test(key)) return v; // length and the like
      last.path = child;
      last.value = v;
      return tracked(v, child, last);
    },
  });
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Uint8Array) return 'bytes';
  return typeof value;
}

function firstMismatch(given: unknown, expected: unknown, path: string): { path: string; reason: string } | undefined {
  const want = kind(expected);
  const got = kind(given);
  if (want !== got && !(want === 'null' || got === 'null')) return { path, reason: `expected ${article(want)}, got ${describe(given)}` };
  if (want === 'array' && got === 'array') {
    const a = given as unknown[];
    const b = expected as unknown[];
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const found = firstMismatch(a[i], b[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (want === 'object' && got === 'object') {
    for (const key of Object.keys(expected as object)) {
      if (key === '_unknownTaggedFields') continue;
      const found = firstMismatch((given as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key], path === '' ? key : `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

function article(kindName: string): string {
  return kindName === 'array' || kindName === 'object' ? `an ${kindName}` : kindName === 'bytes' ? 'a Uint8Array' : `a ${kindName}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing (undefined)';
  if (typeof value === 'bigint') return `${value}n (a bigint)`;
  if (typeof value === 'string') return `${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)} (a string)`;
  if (value === null) return 'null';
  return `${String(value).slice(0, 40)} (${kind(value)})`;
}
