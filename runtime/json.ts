import { JsonFormatError } from './errors.js';
import { isUuidString } from './uuid.js';

/**
 * Conversions between message values and the JSON form of docs/DESIGN.md §2
 * (Kafka's JsonConverter, with int64 as decimal strings and records as base64).
 * The readers validate and name the JSON path of anything wrong.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const INT_RANGES = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
} as const;

export type IntType = keyof typeof INT_RANGES;

export function jsonObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new JsonFormatError(path, `expected an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

export function jsonArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new JsonFormatError(path, `expected an array, got ${describe(value)}`);
  return value;
}

export function jsonBool(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw new JsonFormatError(path, `expected a boolean, got ${describe(value)}`);
  return value;
}

export function jsonInt(value: unknown, path: string, type: IntType): number {
  const [min, max] = INT_RANGES[type];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new JsonFormatError(path, `expected an ${type} (${min} to ${max}), got ${describe(value)}`);
  }
  return value;
}

/** An int64: a decimal string (our JSON form) or a safe integer number. */
export function jsonInt64(value: unknown, path: string): bigint {
  let parsed: bigint | undefined;
  if (typeof value === 'string' && /^-?\d{1,19}$/.test(value)) parsed = BigInt(value);
  else if (typeof value === 'number' && Number.isSafeInteger(value)) parsed = BigInt(value);
  if (parsed === undefined || BigInt.asIntN(64, parsed) !== parsed) {
    throw new JsonFormatError(path, `expected an int64 as a decimal string, got ${describe(value)}`);
  }
  return parsed;
}

export function jsonFloat64(value: unknown, path: string): number {
  if (typeof value !== 'number') throw new JsonFormatError(path, `expected a number, got ${describe(value)}`);
  return value;
}

export function jsonString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new JsonFormatError(path, `expected a string, got ${describe(value)}`);
  return value;
}

export function jsonUuid(value: unknown, path: string): string {
  if (typeof value !== 'string' || !isUuidString(value)) {
    throw new JsonFormatError(path, `expected a uuid (22 base64url characters), got ${describe(value)}`);
  }
  return value;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function jsonBytes(value: unknown, path: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) {
    throw new JsonFormatError(path, `expected standard base64, got ${describe(value)}`);
  }
  return new Uint8Array(Buffer.from(value, 'base64'));
}

export function bytesToJson(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
}

/** The JSON path of a key below `path`. */
export function jsonChild(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** The error for a key that `version` makes mandatory but the JSON lacks (the generated readers decide which keys are). */
export function missingField(path: string, name: string, version: number): JsonFormatError {
  return new JsonFormatError(path, `field '${name}' is mandatory in version ${version}`, jsonChild(path, name));
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
