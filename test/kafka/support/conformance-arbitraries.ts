/**
 * Random messages for the conformance run against Kafka's own codecs
 * (../conformance.test.ts), built from the checked schema model so that every
 * spec and version gets them without hand-written generators. The values aim
 * at the edges where two codecs can disagree: nulls where nullable, empty and
 * large arrays, strings and bytes past the one-byte varint length (127), the
 * bounds of every integer type, multi-byte and NUL characters, records fields
 * holding real record batches, tagged fields at and off their defaults, and
 * tagged fields neither side knows (`$unknown`, attached to the decoded
 * message by `withUnknownTaggedFields`, since JSON cannot carry them).
 */
import fc from 'fast-check';
import type { FieldType, PrimitiveName } from '../../../generator/field-type.js';
import type { FieldSpec, MessageSpec, StructSpec } from '../../../generator/spec.js';
import { encodeRecordBatch, type RawTaggedField } from '../../../runtime/index.js';

/** The key under which a random struct carries its unknown tagged fields: `[{ tag, data (base64) }]`. */
export const UNKNOWN = '$unknown';

const INT_RANGES: Partial<Record<PrimitiveName, [number, number]>> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
};

/** An integer in [min, max], a third of the time one of the values codecs get wrong: the bounds, 0, -1, the varint steps. */
function integer(min: number, max: number): fc.Arbitrary<number> {
  const edges = [min, max, 0, -1, 1, 127, 128, 255, 256, 16383, 16384, 32767, 65535].filter((n) => n >= min && n <= max);
  return fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 2 }, { arbitrary: fc.constantFrom(...edges), weight: 1 });
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const int64 = fc
  .oneof(
    { arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), weight: 2 },
    { arbitrary: fc.bigInt({ min: -1000n, max: 1000n }), weight: 1 },
    { arbitrary: fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 53n + 1n), weight: 1 },
  )
  .map(String);

const float64 = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1, -1.5, Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, 0.1, 1e21, 1e-7),
);

// ASCII, 2-, 3- and 4-byte UTF-8, NUL, a BOM and JSON's escapes, so that UTF-8 and UTF-16 lengths differ.
const unit = fc.oneof(
  { arbitrary: fc.constantFrom('a', 'Z', '0', '-', '_', ' ', '.'), weight: 4 },
  { arbitrary: fc.constantFrom('é', 'Ж', '中', '😀', '\u0000', '\uFEFF', '"', '\\', '\n', '\u2028', '\u007f'), weight: 1 },
);
const shortText = fc.string({ maxLength: 12, unit });
// Past 127 UTF-8 bytes a compact length takes two varint bytes; repeating a short string gets there cheaply.
const text = fc.oneof(
  { arbitrary: shortText, weight: 6 },
  { arbitrary: fc.tuple(shortText, fc.integer({ min: 12, max: 60 })).map(([s, times]) => (s === '' ? 'é' : s).repeat(times)), weight: 1 },
);

/** `length` bytes from a small generator seeded by `seed`: long values without drawing every byte from fast-check. */
function filler(length: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const longBytes = (min: number, max: number) => fc.tuple(fc.integer({ min, max }), fc.integer()).map(([n, seed]) => filler(n, seed).toString('base64'));
const bytesOf = (maxLength: number) => fc.uint8Array({ maxLength }).map((b) => Buffer.from(b).toString('base64'));
const bytes = fc.oneof({ arbitrary: bytesOf(24), weight: 6 }, { arbitrary: longBytes(120, 300), weight: 1 });

const uuid = fc.oneof(
  { arbitrary: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url')), weight: 4 },
  { arbitrary: fc.constant('AAAAAAAAAAAAAAAAAAAAAA'), weight: 1 },
);

/**
 * Valid batches for records fields, made once with our runtime's writer (plain
 * and gzip, one to three records): what a batch holds is the record-batch
 * test's business; here they only have to be real, and drawing them from a
 * pool keeps the many records fields of a run cheap.
 */
const BATCHES: Buffer[] = Array.from({ length: 32 }, (_, i) =>
  Buffer.from(
    encodeRecordBatch({
      baseOffset: BigInt(i * 1000),
      compression: i % 4 === 3 ? 'gzip' : 'none',
      producerId: i % 2 === 0 ? -1n : BigInt(i),
      producerEpoch: i % 2 === 0 ? -1 : 0,
      baseSequence: i % 2 === 0 ? -1 : i,
      records: Array.from({ length: 1 + (i % 3) }, (_, r) => ({
        timestamp: 1_700_000_000_000n + BigInt(i * 10 + r),
        key: r === 0 ? null : filler(r * 3, i + r),
        value: filler((i * 7 + r) % 90, i * 31 + r),
        headers: r === 1 ? [{ key: 'hé', value: filler(4, i) }] : [],
      })),
    }),
  ),
);

/** A records field: one or two valid batches most of the time, empty or opaque bytes (a codec must not look inside) otherwise. */
const records = fc.oneof(
  {
    arbitrary: fc
      .array(fc.integer({ min: 0, max: BATCHES.length - 1 }), { minLength: 1, maxLength: 2 })
      .map((picks) => Buffer.concat(picks.map((p) => BATCHES[p]!)).toString('base64')),
    weight: 4,
  },
  { arbitrary: fc.constant(''), weight: 1 },
  { arbitrary: bytesOf(40), weight: 1 },
);

function primitive(name: PrimitiveName): fc.Arbitrary<unknown> {
  const range = INT_RANGES[name];
  if (range) return integer(range[0], range[1]);
  switch (name) {
    case 'bool':
      return fc.boolean();
    case 'int64':
      return int64;
    case 'float64':
      return float64;
    case 'string':
      return text;
    case 'uuid':
      return uuid;
    case 'records':
      return records;
    case 'bytes':
      return bytes;
  }
  throw new Error(`no arbitrary for type ${name}`);
}

/** Tags a struct declares in any version: an unknown tag must be none of them, or Kafka would read it as the field. */
function knownTags(struct: StructSpec): Set<number> {
  return new Set(struct.fields.map((f) => f.tag).filter((t): t is number => t !== undefined));
}

/** One to three tagged fields with ascending tags (Kafka's RawTaggedFieldWriter refuses any other order). */
function unknownTaggedFields(struct: StructSpec): fc.Arbitrary<{ tag: number; data: string }[]> {
  const known = knownTags(struct);
  const tag = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 13, max: 2 ** 28 })).filter((t) => !known.has(t));
  return fc
    .uniqueArray(fc.record({ tag, data: fc.oneof({ arbitrary: bytesOf(8), weight: 4 }, { arbitrary: longBytes(128, 140), weight: 1 }) }), {
      minLength: 1,
      maxLength: 3,
      selector: (f) => f.tag,
    })
    .map((list) => list.sort((a, b) => a.tag - b.tag));
}

/** Random JSON (our form: int64 as decimal strings, records and bytes as base64) of `spec` at `version`, with `$unknown` keys in flexible versions. */
export function messageArbitrary(spec: MessageSpec, version: number): fc.Arbitrary<Record<string, unknown>> {
  return structArbitrary(spec, spec.struct, version, 0);
}

function structArbitrary(spec: MessageSpec, struct: StructSpec, version: number, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const field of struct.fields) {
    if (!field.versions.contains(version)) continue;
    entries[field.propertyName] = fieldArbitrary(spec, field, version, depth);
    if (!field.taggedVersions.contains(version)) required.push(field.propertyName);
  }
  const record = fc.record(entries, { requiredKeys: required });
  if (!spec.flexibleVersions.contains(version)) return record;
  return fc
    .tuple(record, fc.option(unknownTaggedFields(struct), { nil: undefined, freq: 6 }))
    .map(([json, unknown]) => (unknown === undefined ? json : { ...json, [UNKNOWN]: unknown }));
}

function fieldArbitrary(spec: MessageSpec, field: FieldSpec, version: number, depth: number): fc.Arbitrary<unknown> {
  const value = typeArbitrary(spec, field.type, version, depth);
  return field.nullableVersions.contains(version) ? fc.option(value, { nil: null, freq: 5 }) : value;
}

function typeArbitrary(spec: MessageSpec, type: FieldType, version: number, depth: number): fc.Arbitrary<unknown> {
  if (type.kind === 'array') {
    const element = typeArbitrary(spec, type.element, version, depth + 1);
    // Large arrays only near the top, so that a message stays a few KiB; past 127 elements a compact length takes two bytes.
    if (depth === 0)
      return fc.oneof(
        { arbitrary: fc.array(element, { maxLength: 3 }), weight: 8 },
        {
          arbitrary: fc.array(element, { minLength: type.element.kind === 'struct' ? 8 : 20, maxLength: type.element.kind === 'struct' ? 16 : 140 }),
          weight: 1,
        },
      );
    return fc.array(element, { maxLength: depth > 2 ? 1 : 2 });
  }
  if (type.kind === 'struct') return structArbitrary(spec, spec.structs.get(type.name)!, version, depth + 1);
  return primitive(type.name);
}

/** The JSON without its `$unknown` keys: what our fromJson and Kafka's JsonConverter take. */
export function withoutUnknown(json: unknown): unknown {
  if (Array.isArray(json)) return json.map(withoutUnknown);
  if (json === null || typeof json !== 'object') return json;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) if (k !== UNKNOWN) out[k] = withoutUnknown(v);
  return out;
}

/** Puts each struct's `$unknown` fields on the matching struct of `message` (made from the same JSON by fromJson). */
export function withUnknownTaggedFields(spec: MessageSpec, version: number, json: Record<string, unknown>, message: Record<string, unknown>): void {
  attach(spec, spec.struct, version, json, message);
}

function attach(spec: MessageSpec, struct: StructSpec, version: number, json: Record<string, unknown>, message: Record<string, unknown>): void {
  const unknown = json[UNKNOWN] as { tag: number; data: string }[] | undefined;
  if (unknown !== undefined)
    message._unknownTaggedFields = unknown.map((f): RawTaggedField => ({ tag: f.tag, data: new Uint8Array(Buffer.from(f.data, 'base64')) }));
  for (const field of struct.fields) {
    const inner = structNameOf(field.type);
    if (inner === undefined) continue;
    const j = json[field.propertyName];
    const m = message[field.propertyName];
    if (j === undefined || j === null || m === null || m === undefined) continue;
    const innerStruct = spec.structs.get(inner)!;
    if (field.type.kind === 'array')
      (j as Record<string, unknown>[]).forEach((e, i) => attach(spec, innerStruct, version, e, (m as Record<string, unknown>[])[i]!));
    else attach(spec, innerStruct, version, j as Record<string, unknown>, m as Record<string, unknown>);
  }
}

function structNameOf(type: FieldType): string | undefined {
  if (type.kind === 'struct') return type.name;
  if (type.kind === 'array' && type.element.kind === 'struct') return type.element.name;
  return undefined;
}
