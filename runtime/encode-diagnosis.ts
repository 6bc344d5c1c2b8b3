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
 * pass through, as does anything this cannot pin on a field — except Kafka's
 * "non-default field at a version without it" when the field is simply missing
 * (undefined is not the default): that names the missing field instead.
 */
export interface JsonConversions<T> {
  toJson(message: T, version: number): JsonObject;
  fromJson(json: unknown, version: number): T;
  /** The codec's create(), which fills omitted fields with their defaults at any depth. */
  create?(fields: never): T;
}

const NON_DEFAULT = /^Attempted to write a non-default (\w+) at version \d+$/;

export function explainEncodeFailure<T>(error: unknown, name: string, codec: JsonConversions<T>, message: T, version: number): unknown {
  if (error instanceof UnsupportedVersionError) return explainNonDefault(error, name, codec, message, version);
  let found: { path: string; reason: string } | undefined;
  try {
    found = findBadField(codec, message, version);
  } catch {
    found = undefined;
  }
  if (found === undefined) return error;
  // The encoder's own EncodeError ("not a Kafka uuid …: \"\"") and a TypeError from
  // inside it say again, less clearly, what the reason says: they stay as `cause`.
  const repeats = error instanceof EncodeError || error instanceof TypeError;
  const why = repeats ? '' : ` (${error instanceof Error ? error.message : String(error)})`;
  return new EncodeError(`${name}${found.path === '' ? '' : `.${found.path}`}: ${found.reason}${why}`, { cause: error });
}

/**
 * The generated encoders refuse a value other than the default in a field the
 * version lacks; a JavaScript caller who left the field out gets there too,
 * since undefined is not the default. When the named field is undefined
 * somewhere in the message where create() would put a value, say that.
 */
function explainNonDefault<T>(error: UnsupportedVersionError, name: string, codec: JsonConversions<T>, message: T, version: number): unknown {
  const field = NON_DEFAULT.exec(error.message)?.[1];
  if (field === undefined || codec.create === undefined) return error;
  let found: { path: string; value: unknown } | undefined;
  try {
    found = firstMissing(message, codec.create(message as never), field, '');
  } catch {
    found = undefined;
  }
  if (found === undefined) return error;
  return new EncodeError(
    `${name}.${found.path}: missing (undefined); version ${version} has no ${field} field, so it must hold the default ` +
      `${defaultText(found.value)} (${name}.create() fills every omitted field with its default)`,
    { cause: error },
  );
}

/** The first path ending in `field` where `given` has undefined and `filled` a value. */
function firstMissing(given: unknown, filled: unknown, field: string, path: string): { path: string; value: unknown } | undefined {
  if (typeof given !== 'object' || given === null || typeof filled !== 'object' || filled === null) return undefined;
  if (given instanceof Uint8Array) return undefined;
  if (Array.isArray(given)) {
    if (!Array.isArray(filled)) return undefined;
    for (let i = 0; i < Math.min(given.length, filled.length); i++) {
      const found = firstMissing(given[i], filled[i], field, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  const g = given as Record<string, unknown>;
  const f = filled as Record<string, unknown>;
  if (g[field] === undefined && f[field] !== undefined) return { path: path === '' ? field : `${path}.${field}`, value: f[field] };
  for (const key of Object.keys(f)) {
    const found = firstMissing(g[key], f[key], field, path === '' ? key : `${path}.${key}`);
    if (found) return found;
  }
  return undefined;
}

function defaultText(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Uint8Array) return `(${value.length} bytes)`;
  return JSON.stringify(value) ?? String(value);
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
