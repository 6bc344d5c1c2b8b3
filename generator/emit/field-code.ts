import type { FieldType, PrimitiveName } from '../field-type.js';
import type { FieldSpec } from '../spec.js';
import { choose, type Condition } from './conditions.js';

/**
 * TypeScript expressions for one field's value: its type, default, and how
 * it is read, sized, written, compared with its default and converted to and
 * from JSON. `compact` and `nullable` are conditions already simplified for
 * the struct's versions; `v` is the expression holding the value.
 */

const FIXED_SIZE: Partial<Record<PrimitiveName, number>> = {
  bool: 1,
  int8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  float64: 8,
  uuid: 16,
};

const CAPITALIZED: Record<PrimitiveName, string> = {
  bool: 'Bool',
  int8: 'Int8',
  int16: 'Int16',
  uint16: 'Uint16',
  int32: 'Int32',
  uint32: 'Uint32',
  int64: 'Int64',
  float64: 'Float64',
  string: 'String',
  bytes: 'Bytes',
  records: 'Records',
  uuid: 'Uuid',
};

const READER_METHOD: Partial<Record<PrimitiveName, string>> = {
  bool: 'bool',
  int8: 'int8',
  int16: 'int16',
  uint16: 'uint16',
  int32: 'int32',
  uint32: 'uint32',
  int64: 'int64',
  float64: 'float64',
  uuid: 'uuid',
};

/** The encoded width of a field that is a single fixed-width primitive, else undefined. */
export function fixedWidth(field: FieldSpec): number | undefined {
  return field.type.kind === 'primitive' ? FIXED_SIZE[field.type.name] : undefined;
}

/** Runtime names a module uses; collected so that only those are imported. */
export class RuntimeImports {
  readonly used = new Set<string>();
  use(name: string): string {
    this.used.add(name);
    return name;
  }
}

export function tsType(field: FieldSpec): string {
  const base = baseTsType(field.type);
  const nullable = !field.nullableVersions.empty || field.defaultValue.kind === 'null';
  return nullable && !base.endsWith('| null') ? `${base} | null` : base;
}

function baseTsType(type: FieldType): string {
  if (type.kind === 'array') return `${elementTsType(type.element)}[]`;
  return elementTsType(type);
}

function elementTsType(type: { kind: 'primitive'; name: PrimitiveName } | { kind: 'struct'; name: string }): string {
  if (type.kind === 'struct') return type.name;
  switch (type.name) {
    case 'bool':
      return 'boolean';
    case 'int64':
      return 'bigint';
    case 'string':
    case 'uuid':
      return 'string';
    case 'bytes':
      return 'Uint8Array';
    case 'records':
      return 'Uint8Array | null';
    default:
      return 'number';
  }
}

export function defaultExpression(field: FieldSpec, rt: RuntimeImports): string {
  const d = field.defaultValue;
  switch (d.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return String(d.value);
    case 'number':
      return Object.is(d.value, -0) ? '-0' : Number.isFinite(d.value) ? String(d.value) : d.value > 0 ? 'Infinity' : d.value < 0 ? '-Infinity' : 'NaN';
    case 'bigint':
      return `${d.value}n`;
    case 'string':
    case 'uuid':
      return JSON.stringify(d.value);
    case 'empty':
      if (field.type.kind === 'array') return '[]';
      if (field.type.kind === 'struct') return `create${field.type.name}()`;
      return rt.use('EMPTY_BYTES');
  }
}

/** Expression reading the value. */
export function readExpression(field: FieldSpec, compact: Condition, nullable: Condition, rt: RuntimeImports): string {
  const type = field.type;
  if (type.kind === 'struct') {
    const read = `read${type.name}(r, version)`;
    return choose(nullable, `r.structPresent() ? ${read} : null`, read);
  }
  if (type.kind === 'array') {
    const length = `r.arrayLength(${compact})`;
    if (type.element.kind === 'primitive' && FIXED_SIZE[type.element.name] !== undefined) {
      const name = type.element.name;
      return choose(nullable, `r.nullable${name.charAt(0).toUpperCase()}${name.slice(1)}Array(${compact})`, `r.${name}Array(${compact})`);
    }
    const element = elementReader(type.element, compact, rt);
    return choose(
      nullable,
      `${rt.use('readNullableArray')}(r, ${length}, version, ${element})`,
      `${rt.use('readArray')}(r, ${length}, version, ${element})`,
    );
  }
  switch (type.name) {
    case 'string':
      return choose(nullable, `r.nullableString(${compact})`, `r.string(${compact})`);
    case 'bytes':
    case 'records':
      return choose(nullable, `r.nullableBytes(${compact})`, `r.bytes(${compact})`);
    default:
      return `r.${READER_METHOD[type.name]!}()`;
  }
}

function elementReader(element: { kind: 'primitive'; name: PrimitiveName } | { kind: 'struct'; name: string }, compact: Condition, rt: RuntimeImports): string {
  if (element.kind === 'struct') return `read${element.name}`;
  if (element.name === 'string' || element.name === 'bytes') {
    const name = CAPITALIZED[element.name];
    return choose(compact, rt.use(`readCompact${name}Element`), rt.use(`read${name}Element`));
  }
  return rt.use(`read${CAPITALIZED[element.name]}Element`);
}

/** Expression for the encoded size of the value `v`. */
export function sizeExpression(field: FieldSpec, v: string, compact: Condition, nullable: Condition, rt: RuntimeImports): string {
  const type = field.type;
  if (type.kind === 'struct') {
    const size = `sizeOf${type.name}(${nonNull(field, v, rt)}, version)`;
    return choose(nullable, `(${v} === null ? 1 : 1 + sizeOf${type.name}(${v}, version))`, size);
  }
  if (type.kind === 'array') {
    const element = type.element;
    const fixed = element.kind === 'primitive' ? FIXED_SIZE[element.name] : undefined;
    if (fixed !== undefined) {
      return choose(
        nullable,
        `${rt.use('sizeOfNullableFixedArray')}(${v}, ${compact}, ${fixed})`,
        `${rt.use('sizeOfFixedArray')}(${v}, ${compact}, ${fixed})`,
      );
    }
    const sizer =
      element.kind === 'struct'
        ? `sizeOf${element.name}`
        : choose(compact, rt.use(`sizeOfCompact${CAPITALIZED[element.name]}Element`), rt.use(`sizeOf${CAPITALIZED[element.name]}Element`));
    return choose(
      nullable,
      `${rt.use('sizeOfNullableArray')}(${v}, version, ${compact}, ${sizer})`,
      `${rt.use('sizeOfArray')}(${v}, version, ${compact}, ${sizer})`,
    );
  }
  const fixed = FIXED_SIZE[type.name];
  if (fixed !== undefined) return String(fixed);
  if (type.name === 'string') {
    return choose(nullable, `${rt.use('sizeOfNullableString')}(${v}, ${compact})`, `${rt.use('sizeOfString')}(${v}, ${compact})`);
  }
  return choose(nullable, `${rt.use('sizeOfNullableBytes')}(${v}, ${compact})`, `${rt.use('sizeOfBytes')}(${v}, ${compact})`);
}

/** Statement writing the value `v`. */
export function writeStatement(field: FieldSpec, v: string, compact: Condition, nullable: Condition, rt: RuntimeImports): string {
  const type = field.type;
  if (type.kind === 'struct') {
    const write = `write${type.name}(w, ${nonNull(field, v, rt)}, version)`;
    return choose(nullable, `${rt.use('writeNullableStruct')}(w, ${v}, version, write${type.name})`, write) + ';';
  }
  if (type.kind === 'array') {
    const element = type.element;
    if (element.kind === 'primitive' && FIXED_SIZE[element.name] !== undefined) {
      return `w.fixedArray(${v}, ${compact}, '${element.name}');`;
    }
    const writer =
      element.kind === 'struct'
        ? `write${element.name}`
        : element.name === 'string' || element.name === 'bytes'
          ? choose(compact, rt.use(`writeCompact${CAPITALIZED[element.name]}Element`), rt.use(`write${CAPITALIZED[element.name]}Element`))
          : rt.use(`write${CAPITALIZED[element.name]}Element`);
    return `${rt.use('writeArray')}(w, ${v}, version, ${compact}, ${writer});`;
  }
  switch (type.name) {
    case 'string':
      return choose(nullable, `w.nullableString(${v}, ${compact})`, `w.string(${v}, ${compact})`) + ';';
    case 'bytes':
    case 'records':
      return choose(nullable, `w.nullableBytes(${v}, ${compact})`, `w.bytes(${v}, ${compact})`) + ';';
    default:
      return `w.${READER_METHOD[type.name]!}(${v});`;
  }
}

/** Condition that the value `v` differs from the field's default (Kafka's non-default check). */
export function nonDefaultCondition(field: FieldSpec, v: string, rt: RuntimeImports): string {
  const d = field.defaultValue;
  const type = field.type;
  const canBeNull = tsType(field).endsWith('| null');
  if (d.kind === 'null') return `${v} !== null`;
  if (d.kind === 'empty') {
    if (type.kind === 'struct') return `!${rt.use('deepEqual')}(${v}, create${type.name}())`;
    return canBeNull ? `(${v} === null || ${v}.length !== 0)` : `${v}.length !== 0`;
  }
  return `${v} !== ${defaultExpression(field, rt)}`;
}

/** Expression converting the value `v` to its JSON form. */
export function toJsonExpression(field: FieldSpec, v: string, rt: RuntimeImports): string {
  const canBeNull = tsType(field).endsWith('| null');
  const type = field.type;
  let expr: string;
  if (type.kind === 'array') {
    const element = type.element;
    if (element.kind === 'struct') expr = `${v}.map((e) => ${lowerFirst(element.name)}ToJson(e, version))`;
    else if (element.name === 'int64') expr = `${v}.map((e) => e.toString())`;
    else if (element.name === 'bytes') expr = `${v}.map(${rt.use('bytesToJson')})`;
    else expr = `${v}.slice()`;
  } else if (type.kind === 'struct') {
    expr = `${lowerFirst(type.name)}ToJson(${v}, version)`;
  } else if (type.name === 'int64') {
    expr = `${v}.toString()`;
  } else if (type.name === 'bytes' || type.name === 'records') {
    expr = `${rt.use('bytesToJson')}(${v})`;
  } else {
    return v;
  }
  return canBeNull ? `${v} === null ? null : ${expr}` : expr;
}

/** Expression converting the JSON value `j` (at JSON path `p`) to the field's value. */
export function fromJsonExpression(field: FieldSpec, j: string, p: string, rt: RuntimeImports): string {
  const canBeNull = tsType(field).endsWith('| null');
  const type = field.type;
  let expr: string;
  if (type.kind === 'array') {
    const element = type.element;
    const each =
      element.kind === 'struct'
        ? `${lowerFirst(element.name)}FromJson(e, version, \`\${${p}}[\${i}]\`)`
        : primitiveFromJson(element.name, 'e', `\`\${${p}}[\${i}]\``, rt);
    expr = `${rt.use('jsonArray')}(${j}, ${p}).map((e, i) => ${each})`;
  } else if (type.kind === 'struct') {
    expr = `${lowerFirst(type.name)}FromJson(${j}, version, ${p})`;
  } else {
    expr = primitiveFromJson(type.name, j, p, rt);
  }
  return canBeNull ? `${j} === null ? null : ${expr}` : expr;
}

function primitiveFromJson(name: PrimitiveName, j: string, p: string, rt: RuntimeImports): string {
  switch (name) {
    case 'bool':
      return `${rt.use('jsonBool')}(${j}, ${p})`;
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
      return `${rt.use('jsonInt')}(${j}, ${p}, '${name}')`;
    case 'int64':
      return `${rt.use('jsonInt64')}(${j}, ${p})`;
    case 'float64':
      return `${rt.use('jsonFloat64')}(${j}, ${p})`;
    case 'string':
      return `${rt.use('jsonString')}(${j}, ${p})`;
    case 'uuid':
      return `${rt.use('jsonUuid')}(${j}, ${p})`;
    case 'bytes':
    case 'records':
      return `${rt.use('jsonBytes')}(${j}, ${p})`;
  }
}

/** A struct value in a version where it may not be null; the runtime check names the problem. */
function nonNull(field: FieldSpec, v: string, rt: RuntimeImports): string {
  return tsType(field).endsWith('| null') ? `${rt.use('requireStruct')}(${v})` : v;
}

export function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}
