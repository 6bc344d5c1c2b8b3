/**
 * Between our JSON form (docs/DESIGN.md §2) and what Kafka's generated
 * JsonConverters read and write. Only what JSON itself cannot carry is
 * translated:
 *
 * - int64: ours are decimal strings; Kafka's MessageUtil.jsonNodeToLong
 *   refuses strings, so the text sent to Kafka has them as bare numbers. Kafka's
 *   answers come back with every int64 as a string (the Java side does that,
 *   dev/kipgen/codec/CodecServer.int64AsText) because JSON.parse would round them.
 * - float64: MessageUtil.jsonNodeToDouble wants a floating-point token, so an
 *   integral double is sent as `1.0`, and negative zero as `-0.0`
 *   (JSON.stringify prints `1` and `0`).
 * - records: Kafka's converter writes any non-null records as `""`
 *   (JsonConverterGenerator: `new BinaryNode(new byte[]{})` when serializing
 *   records), so our base64 is compared as `""` there.
 */
import type { FieldType } from '../../../generator/field-type.js';
import type { MessageSpec, StructSpec } from '../../../generator/spec.js';
import { UNKNOWN } from './conformance-arbitraries.js';

/** JSON text of our JSON `json` of `spec` at `version` that Kafka's `<Name>JsonConverter.read` takes. */
export function kafkaJsonText(spec: MessageSpec, json: unknown): string {
  return structText(spec, spec.struct, json);
}

function structText(spec: MessageSpec, struct: StructSpec, json: unknown): string {
  const o = json as Record<string, unknown>;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(o)) {
    if (key === UNKNOWN) continue;
    const field = struct.fields.find((f) => f.propertyName === key);
    if (field === undefined) throw new Error(`${spec.name}.${struct.name}: no field ${key}`);
    parts.push(`${JSON.stringify(key)}:${valueText(spec, field.type, value)}`);
  }
  return `{${parts.join(',')}}`;
}

function valueText(spec: MessageSpec, type: FieldType, value: unknown): string {
  if (value === null) return 'null';
  if (type.kind === 'array') {
    const element = type.element;
    return `[${(value as unknown[]).map((e) => valueText(spec, element, e)).join(',')}]`;
  }
  if (type.kind === 'struct') return structText(spec, spec.structs.get(type.name)!, value);
  if (type.name === 'int64') return String(value);
  if (type.name === 'float64') return doubleText(value as number);
  return JSON.stringify(value);
}

function doubleText(n: number): string {
  if (Object.is(n, -0)) return '-0.0';
  const s = JSON.stringify(n);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** Our toJson output as Kafka's JsonConverter.write prints the same message: records as "". */
export function asKafkaWrites(spec: MessageSpec, json: unknown): unknown {
  return structAsKafka(spec, spec.struct, json);
}

function structAsKafka(spec: MessageSpec, struct: StructSpec, json: unknown): unknown {
  const o = json as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) {
    const field = struct.fields.find((f) => f.propertyName === key);
    out[key] = field === undefined ? value : valueAsKafka(spec, field.type, value);
  }
  return out;
}

function valueAsKafka(spec: MessageSpec, type: FieldType, value: unknown): unknown {
  if (value === null) return null;
  if (type.kind === 'array') {
    const element = type.element;
    return (value as unknown[]).map((e) => valueAsKafka(spec, element, e));
  }
  if (type.kind === 'struct') return structAsKafka(spec, spec.structs.get(type.name)!, value);
  if (type.name === 'records') return '';
  return value;
}
