import fc from 'fast-check';
import type { FieldType, PrimitiveName } from '../../generator/field-type.js';
import type { FieldSpec, MessageSpec, StructSpec } from '../../generator/spec.js';

/**
 * fast-check arbitraries of a message's JSON form at one version, derived from
 * the checked schema model — so every spec, ours or Kafka's, gets random
 * messages without hand-written generators.
 */

const INT_RANGES: Partial<Record<PrimitiveName, [number, number]>> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
};

const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url'));
const base64 = fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b).toString('base64'));
// Strings mix ASCII with multi-byte characters so that UTF-8 lengths differ from UTF-16 lengths.
const text = fc.string({ maxLength: 12, unit: fc.oneof(fc.constantFrom('a', 'Z', '0', '-', '_'), fc.constantFrom('é', 'Ж', '中', '😀', '\u0000', '\uFEFF')) });

function primitive(name: PrimitiveName): fc.Arbitrary<unknown> {
  const range = INT_RANGES[name];
  if (range) return fc.integer({ min: range[0], max: range[1] });
  switch (name) {
    case 'bool':
      return fc.boolean();
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
    case 'float64':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'string':
      return text;
    case 'uuid':
      return uuid;
    default:
      return base64;
  }
}

export function messageArbitrary(spec: MessageSpec, version: number): fc.Arbitrary<Record<string, unknown>> {
  return structArbitrary(spec, spec.struct, version, 0);
}

function structArbitrary(spec: MessageSpec, struct: StructSpec, version: number, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  const optional: string[] = [];
  for (const field of struct.fields) {
    if (!field.versions.contains(version)) continue;
    entries[field.propertyName] = fieldArbitrary(spec, field, version, depth);
    if (field.taggedVersions.contains(version)) optional.push(field.propertyName);
  }
  return fc.record(entries, { requiredKeys: Object.keys(entries).filter((k) => !optional.includes(k)) });
}

function fieldArbitrary(spec: MessageSpec, field: FieldSpec, version: number, depth: number): fc.Arbitrary<unknown> {
  const value = typeArbitrary(spec, field.type, version, depth);
  return field.nullableVersions.contains(version) ? fc.option(value, { nil: null, freq: 4 }) : value;
}

function typeArbitrary(spec: MessageSpec, type: FieldType, version: number, depth: number): fc.Arbitrary<unknown> {
  if (type.kind === 'array') {
    // Deeply nested arrays are kept short so that a run stays small.
    return fc.array(typeArbitrary(spec, type.element, version, depth + 1), { maxLength: depth > 2 ? 1 : 3 });
  }
  if (type.kind === 'struct') return structArbitrary(spec, spec.structs.get(type.name)!, version, depth + 1);
  return primitive(type.name);
}
