import type { FieldType, PrimitiveName } from '../field-type.js';
import type { FieldSpec } from '../spec.js';
import { choose, mentionsFlexible, printCondition, type Condition } from './conditions.js';

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

/** The encoded width of a field that is a single fixed-width primitive, else undefined. */
export function fixedWidth(field: FieldSpec): number | undefined {
  return field.type.kind === 'primitive' ? FIXED_SIZE[field.type.name] : undefined;
}

/**
 * What a module's emitted code refers to, registered as it is emitted: runtime
 * names (the module imports exactly these), the structs whose default test
 * (`isDefault…`) it calls, and whether the function body being built tests
 * its `flexible` local (so that the local is declared only where it is read).
 */
export class RuntimeImports {
  readonly used = new Set<string>();
  readonly defaultTests = new Set<string>();
  private flexibleRead = false;
  use(name: string): string {
    this.used.add(name);
    return name;
  }
  /** Prints a condition into the code being emitted. */
  cond(c: Condition): string {
    if (mentionsFlexible(c)) this.flexibleRead = true;
    return printCondition(c);
  }
  /** Prints the compact-or-classic argument of a length or count: by name when it is fixed, else its test. */
  form(compact: Condition): string {
    if (compact.kind === 'always') return this.use('COMPACT');
    if (compact.kind === 'never') return this.use('CLASSIC');
    return this.cond(compact);
  }
  /** Builds one function body, telling whether it reads `flexible`. */
  body<T>(build: () => T): { result: T; readsFlexible: boolean } {
    const outer = this.flexibleRead;
    this.flexibleRead = false;
    const result = build();
    const readsFlexible = this.flexibleRead;
    this.flexibleRead = outer;
    return { result, readsFlexible };
  }
  /** The function that tests whether a `name` struct has every field at its default. */
  defaultTest(name: string): string {
    this.defaultTests.add(name);
    return `isDefault${name}`;
  }
}

/** Whether the field's value can be null in some version (or by default): its type then includes `| null`. */
export function holdsNull(field: FieldSpec): boolean {
  const records = field.type.kind === 'primitive' && field.type.name === 'records';
  return records || !field.nullableVersions.empty || field.defaultValue.kind === 'null';
}

export function tsType(field: FieldSpec): string {
  const base = baseTsType(field.type);
  const records = field.type.kind === 'primitive' && field.type.name === 'records';
  // records already is `Uint8Array | null`.
  return holdsNull(field) && !records ? `${base} | null` : base;
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

/**
 * The type a field takes in create()'s input: a nested struct, alone or as
 * array elements, as that struct's own Init type, so that a partial object
 * may be given at any depth (as protobuf-es's `create` takes one).
 */
export function initTsType(field: FieldSpec): string {
  const type = field.type;
  const struct = type.kind === 'struct' ? type.name : type.kind === 'array' && type.element.kind === 'struct' ? type.element.name : undefined;
  if (struct === undefined) return tsType(field);
  const init = type.kind === 'array' ? `${struct}Init[]` : `${struct}Init`;
  return holdsNull(field) ? `${init} | null` : init;
}

/**
 * What create() stores in a field, given the caller's `given` (undefined when
 * left out): the default, the value itself, or for nested structs the value
 * completed by the struct's own create. `null` is a value where the field can
 * hold it, never "left out" (and where it cannot, encode names the mistake).
 */
export function initExpression(field: FieldSpec, given: string, rt: RuntimeImports): string {
  const type = field.type;
  const fallback = defaultExpression(field, rt);
  let complete: string | undefined;
  if (type.kind === 'struct') complete = `create${type.name}(${given})`;
  else if (type.kind === 'array' && type.element.kind === 'struct') complete = `${given}.map(create${type.element.name})`;
  // `=== undefined`, not `??`: a null given to a field that cannot hold it must reach encode's error, not become the default.
  if (complete === undefined) return `${given} === undefined ? ${fallback} : ${given}`;
  // A struct's own create fills its defaults when given nothing.
  if (type.kind === 'struct' && !holdsNull(field)) return complete;
  if (!holdsNull(field)) return `${given} === undefined ? ${fallback} : ${complete}`;
  return `${given} === undefined ? ${fallback} : ${given} === null ? null : ${complete}`;
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
    return choose(
      nullable,
      () => `r.structPresent() ? ${read} : null`,
      () => read,
    );
  }
  if (type.kind === 'array') {
    if (type.element.kind === 'primitive' && FIXED_SIZE[type.element.name] !== undefined) {
      const name = type.element.name;
      return choose(
        nullable,
        () => `r.nullable${CAPITALIZED[name]}Array(${rt.form(compact)})`,
        () => `r.${name}Array(${rt.form(compact)})`,
      );
    }
    const element = type.element;
    const length = (): string => `r.arrayLength(${rt.form(compact)})`;
    return choose(
      nullable,
      () => `${rt.use('readNullableArray')}(r, ${length()}, version, ${elementFunction(element, 'read', compact, rt)})`,
      () => `${rt.use('readArray')}(r, ${length()}, version, ${elementFunction(element, 'read', compact, rt)})`,
    );
  }
  switch (type.name) {
    case 'string':
      return choose(
        nullable,
        () => `r.nullableString(${rt.form(compact)})`,
        () => `r.string(${rt.form(compact)})`,
      );
    case 'bytes':
    case 'records':
      return choose(
        nullable,
        () => `r.nullableBytes(${rt.form(compact)})`,
        () => `r.bytes(${rt.form(compact)})`,
      );
    default:
      // A fixed-width primitive: the Reader method has the type's name.
      return `r.${type.name}()`;
  }
}

/**
 * The element function of an array that is neither of fixed-width primitives
 * (read, sized and written in one loop) nor of records (not allowed): a struct
 * function, or the runtime's for strings and bytes, e.g. `readCompactStringElement`.
 */
function elementFunction(
  element: { kind: 'primitive'; name: PrimitiveName } | { kind: 'struct'; name: string },
  verb: 'read' | 'write' | 'sizeOf',
  compact: Condition,
  rt: RuntimeImports,
): string {
  if (element.kind === 'struct') return `${verb}${element.name}`;
  const name = CAPITALIZED[element.name];
  return choose(
    compact,
    () => rt.use(`${verb}Compact${name}Element`),
    () => rt.use(`${verb}${name}Element`),
  );
}

/** Expression for the encoded size of the value `v`. */
export function sizeExpression(field: FieldSpec, v: string, compact: Condition, nullable: Condition, rt: RuntimeImports): string {
  const type = field.type;
  if (type.kind === 'struct') {
    return choose(
      nullable,
      () => `(${v} === null ? 1 : 1 + sizeOf${type.name}(${v}, version))`,
      () => `sizeOf${type.name}(${nonNull(field, v, rt)}, version)`,
    );
  }
  if (type.kind === 'array') {
    const element = type.element;
    const fixed = element.kind === 'primitive' ? FIXED_SIZE[element.name] : undefined;
    if (fixed !== undefined) {
      return choose(
        nullable,
        () => `${rt.use('sizeOfNullableFixedArray')}(${v}, ${rt.form(compact)}, ${fixed})`,
        () => `${rt.use('sizeOfFixedArray')}(${v}, ${rt.form(compact)}, ${fixed})`,
      );
    }
    return choose(
      nullable,
      () => `${rt.use('sizeOfNullableArray')}(${v}, version, ${rt.form(compact)}, ${elementFunction(element, 'sizeOf', compact, rt)})`,
      () => `${rt.use('sizeOfArray')}(${v}, version, ${rt.form(compact)}, ${elementFunction(element, 'sizeOf', compact, rt)})`,
    );
  }
  const fixed = FIXED_SIZE[type.name];
  if (fixed !== undefined) return String(fixed);
  if (type.name === 'string') {
    return choose(
      nullable,
      () => `${rt.use('sizeOfNullableString')}(${v}, ${rt.form(compact)})`,
      () => `${rt.use('sizeOfString')}(${v}, ${rt.form(compact)})`,
    );
  }
  return choose(
    nullable,
    () => `${rt.use('sizeOfNullableBytes')}(${v}, ${rt.form(compact)})`,
    () => `${rt.use('sizeOfBytes')}(${v}, ${rt.form(compact)})`,
  );
}

/** Statement writing the value `v`. */
export function writeStatement(field: FieldSpec, v: string, compact: Condition, nullable: Condition, rt: RuntimeImports): string {
  const type = field.type;
  if (type.kind === 'struct') {
    return (
      choose(
        nullable,
        () => `${rt.use('writeNullableStruct')}(w, ${v}, version, write${type.name})`,
        () => `write${type.name}(w, ${nonNull(field, v, rt)}, version)`,
      ) + ';'
    );
  }
  if (type.kind === 'array') {
    const element = type.element;
    if (element.kind === 'primitive' && FIXED_SIZE[element.name] !== undefined) {
      return `w.fixedArray(${v}, ${rt.form(compact)}, '${element.name}');`;
    }
    const writer = elementFunction(element, 'write', compact, rt);
    return `${rt.use('writeArray')}(w, ${v}, version, ${rt.form(compact)}, ${writer});`;
  }
  switch (type.name) {
    case 'string':
      return (
        choose(
          nullable,
          () => `w.nullableString(${v}, ${rt.form(compact)})`,
          () => `w.string(${v}, ${rt.form(compact)})`,
        ) + ';'
      );
    case 'bytes':
    case 'records':
      return (
        choose(
          nullable,
          () => `w.nullableBytes(${v}, ${rt.form(compact)})`,
          () => `w.bytes(${v}, ${rt.form(compact)})`,
        ) + ';'
      );
    default:
      return `w.${type.name}(${v});`;
  }
}

/** Condition that the value `v` differs from the field's default (Kafka's non-default check). */
export function nonDefaultCondition(field: FieldSpec, v: string, rt: RuntimeImports): string {
  return defaultComparison(field, v, rt, false);
}

/** Condition that the value `v` equals the field's default: the negation of nonDefaultCondition. */
export function defaultCondition(field: FieldSpec, v: string, rt: RuntimeImports): string {
  return defaultComparison(field, v, rt, true);
}

/** Both conditions, written out positively (no `!(…)` around a whole test) so they read naturally. */
function defaultComparison(field: FieldSpec, v: string, rt: RuntimeImports, equal: boolean): string {
  const [is, isNot] = equal ? ['===', '!=='] : ['!==', '==='];
  const d = field.defaultValue;
  const type = field.type;
  const canBeNull = holdsNull(field);
  if (d.kind === 'null') return `${v} ${is} null`;
  if (d.kind === 'empty') {
    const empty = type.kind === 'struct' ? `${equal ? '' : '!'}${rt.defaultTest(type.name)}(${v})` : `${v}.length ${is} 0`;
    return canBeNull ? `(${v} ${isNot} null ${equal ? '&&' : '||'} ${empty})` : empty;
  }
  // NaN equals nothing, itself included (Kafka's Java has the same trap and so always writes the field).
  if (d.kind === 'number' && Number.isNaN(d.value)) return `${equal ? '' : '!'}Number.isNaN(${v})`;
  return `${v} ${is} ${defaultExpression(field, rt)}`;
}

/** Expression converting the value `v` to its JSON form. */
export function toJsonExpression(field: FieldSpec, v: string, rt: RuntimeImports): string {
  const canBeNull = holdsNull(field);
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
  const canBeNull = holdsNull(field);
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
  return holdsNull(field) ? `${rt.use('requireStruct')}(${v})` : v;
}

export function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}
