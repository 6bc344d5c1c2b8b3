import type { SpecType } from '../runtime/codec.js';
import { Versions } from './versions.js';
import type { FieldType, PrimitiveName } from './field-type.js';
import type { JsonPath } from './source.js';

/**
 * The checked model of a schema file, after load → shape check → semantic
 * check. Generators read only this, never the raw JSON.
 */

/** One SpecType for the generator and the codecs it emits: the runtime's. */
export type { SpecType };

export type EntityType = 'unknown' | 'transactionalId' | 'producerId' | 'groupId' | 'topicName' | 'brokerId';

/** A field's default, already parsed for its type. */
export type DefaultValue =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number'; value: number }
  | { kind: 'bigint'; value: bigint }
  | { kind: 'string'; value: string }
  | { kind: 'uuid'; value: string }
  /** Empty bytes, empty array, or the all-defaults struct. */
  | { kind: 'empty' };

export interface FieldSpec {
  /** The schema name, e.g. `ProducerId`. */
  readonly name: string;
  /** The TypeScript property and JSON key: the name with its first letter lower-cased. */
  readonly propertyName: string;
  readonly type: FieldType;
  readonly versions: Versions;
  readonly nullableVersions: Versions;
  readonly taggedVersions: Versions;
  readonly tag: number | undefined;
  /** Field-level override of the message's flexible versions (string and bytes only). */
  readonly flexibleVersions: Versions | undefined;
  readonly defaultValue: DefaultValue;
  readonly ignorable: boolean;
  readonly mapKey: boolean;
  readonly zeroCopy: boolean;
  readonly entityType: EntityType;
  readonly about: string;
  /** Where the field is declared, for diagnostics. */
  readonly jsonPath: JsonPath;
}

export interface StructSpec {
  readonly name: string;
  readonly versions: Versions;
  readonly fields: readonly FieldSpec[];
  readonly isCommon: boolean;
  readonly jsonPath: JsonPath;
}

export interface MessageSpec {
  readonly file: string;
  readonly name: string;
  readonly type: SpecType;
  readonly apiKey: number | undefined;
  readonly validVersions: Versions;
  readonly deprecatedVersions: Versions;
  readonly flexibleVersions: Versions;
  readonly latestVersionUnstable: boolean;
  readonly listeners: readonly string[];
  /** Header versions declared by the spec itself (API version range → header version), if any. */
  readonly headerVersions: readonly { versions: Versions; headerVersion: number }[] | undefined;
  /** The top-level struct: the message's own fields, named after the message. */
  readonly struct: StructSpec;
  /** Every struct of the message by name: inline ones and commonStructs. */
  readonly structs: ReadonlyMap<string, StructSpec>;
}

export function isPrimitive(type: FieldType, name: PrimitiveName): boolean {
  return type.kind === 'primitive' && type.name === name;
}

/** True for a struct (not array) field or struct elements; the struct is found in MessageSpec.structs. */
export function structOf(message: MessageSpec, field: FieldSpec): StructSpec | undefined {
  const type = field.type;
  const name = type.kind === 'struct' ? type.name : type.kind === 'array' && type.element.kind === 'struct' ? type.element.name : undefined;
  return name === undefined ? undefined : message.structs.get(name);
}

/** Whether the field is written as a tagged field in `version`. */
export function isTaggedIn(field: FieldSpec, version: number): boolean {
  return field.taggedVersions.contains(version);
}

/** Whether the field exists in `version` at all (tagged or not). */
export function existsIn(field: FieldSpec, version: number): boolean {
  return field.versions.contains(version);
}

/** The requests and responses among `specs`, paired by API key; other spec types are left out. */
export function pairByApiKey<T extends { type: SpecType; apiKey: number | undefined }>(specs: Iterable<T>): Map<number, { request?: T; response?: T }> {
  const pairs = new Map<number, { request?: T; response?: T }>();
  for (const spec of specs) {
    if ((spec.type !== 'request' && spec.type !== 'response') || spec.apiKey === undefined) continue;
    const pair = pairs.get(spec.apiKey) ?? {};
    pair[spec.type] = spec;
    pairs.set(spec.apiKey, pair);
  }
  return pairs;
}
