/**
 * The type of a schema field, parsed from its "type" string: a primitive, a
 * struct name, or an array ("[]T") of either.
 */

export const PRIMITIVE_TYPES = ['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'records', 'uuid'] as const;

export type PrimitiveName = (typeof PRIMITIVE_TYPES)[number];

export type FieldType =
  | { kind: 'primitive'; name: PrimitiveName }
  | { kind: 'struct'; name: string }
  | { kind: 'array'; element: { kind: 'primitive'; name: PrimitiveName } | { kind: 'struct'; name: string } };

const STRUCT_NAME = /^[A-Z][A-Za-z0-9]*$/;

/** Parses a type string, or throws a RangeError saying why it is not one. */
export function parseFieldType(text: string): FieldType {
  if (text.startsWith('[]')) {
    let element: FieldType;
    try {
      element = parseFieldType(text.slice(2));
    } catch {
      throw new RangeError(`Can't parse type ${text}`);
    }
    if (element.kind === 'array') throw new RangeError(`Can't parse type ${text}: arrays of arrays are not supported`);
    if (element.kind === 'primitive' && element.name === 'records') {
      throw new RangeError(`Can't parse type ${text}: records cannot be an array element`);
    }
    return { kind: 'array', element };
  }
  if ((PRIMITIVE_TYPES as readonly string[]).includes(text)) return { kind: 'primitive', name: text as PrimitiveName };
  if (STRUCT_NAME.test(text)) return { kind: 'struct', name: text };
  throw new RangeError(`Can't parse type ${text}`);
}

export function typeToString(type: FieldType): string {
  return type.kind === 'array' ? `[]${type.element.name}` : type.name;
}

/** Kafka allows null for strings, bytes, records, arrays and structs. */
export function canBeNullable(type: FieldType): boolean {
  if (type.kind !== 'primitive') return true;
  return type.name === 'string' || type.name === 'bytes' || type.name === 'records';
}

export function isStructLike(type: FieldType): boolean {
  return type.kind === 'struct' || (type.kind === 'array' && type.element.kind === 'struct');
}

/** The struct a field holds, directly or as array elements. */
export function structNameOf(type: FieldType): string | undefined {
  if (type.kind === 'struct') return type.name;
  if (type.kind === 'array' && type.element.kind === 'struct') return type.element.name;
  return undefined;
}
