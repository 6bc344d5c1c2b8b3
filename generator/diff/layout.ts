import { typeToString } from '../field-type.js';
import type { JsonPath } from '../source.js';
import type { DefaultValue, FieldSpec, MessageSpec, SpecType } from '../spec.js';
import { Versions } from '../versions.js';
import { compactVersions, hasCompactForm, headerVersion, isFlexible, nullableVersions, taggedVersions } from '../wire-rules.js';
import type { LoadedSpec } from './load-tree.js';

/**
 * The wire layout of a message, version by version: what `kipgen diff` and the
 * baseline compare. For each version, the regular fields in wire order (type,
 * nullable in that version, compact encoding or not, default) and the set of
 * tagged fields by tag, recursively for structs; plus whether the version is
 * flexible and, for requests and responses, its header version. Names are kept
 * to explain changes, never to decide whether the bytes differ.
 */

export interface FieldLayout {
  name: string;
  /** Kafka's type string: int32, string, []int32, a struct name, or []StructName. */
  type: string;
  nullable?: true;
  /** Written in the compact (flexible) form: strings, bytes, records and arrays of flexible versions. */
  compact?: true;
  /** The default, when it is not the type's natural zero (0, false, "", empty, the zero uuid). */
  default?: string;
  /** Set on tagged fields only. */
  tag?: number;
  /** Regular fields of a struct or struct-array element, in wire order; present exactly for struct types. */
  fields?: FieldLayout[];
  /** Tagged fields of that struct, by ascending tag; omitted when there are none. */
  tagged?: FieldLayout[];
}

export interface StructLayout {
  fields: FieldLayout[];
  tagged?: FieldLayout[];
}

export interface VersionLayout extends StructLayout {
  flexible: boolean;
  /** Request or response header version used with this API version. */
  header?: number;
}

export interface MessageLayout {
  name: string;
  type: SpecType;
  apiKey: number | undefined;
  validVersions: Versions;
  flexibleVersions: Versions;
  deprecatedVersions: Versions;
  latestVersionUnstable: boolean;
  versions: Map<number, VersionLayout>;
  /** Where the message is defined (a path or git:REF:path), when it came from a schema file. */
  file?: string;
  /** `file:line:column` of a JSON path in the schema, when it came from a schema file. */
  locate?: (path: JsonPath) => string;
}

const locations = new WeakMap<object, string>();

/** `file:line:column` where a field of a layout built from a schema is declared. */
export function locationOf(field: FieldLayout): string | undefined {
  return locations.get(field);
}

export function isStruct(field: FieldLayout): boolean {
  return field.fields !== undefined;
}

export function isArray(field: FieldLayout): boolean {
  return field.type.startsWith('[]');
}

/** Builds the layout of every valid version of a loaded spec. */
export function messageLayout(loaded: LoadedSpec): MessageLayout {
  const spec = loaded.spec;
  const locate = (path: JsonPath): string => {
    const { line, column } = loaded.locate(path);
    return `${loaded.file}:${line}:${column}`;
  };
  const layout = emptyLayout(spec);
  layout.file = loaded.file;
  layout.locate = locate;
  for (const version of spec.validVersions) layout.versions.set(version, versionLayout(spec, version, locate));
  return layout;
}

/** The layout of a spec that did not come from a file (tests, tools). */
export function specLayout(spec: MessageSpec): MessageLayout {
  const layout = emptyLayout(spec);
  for (const version of spec.validVersions) layout.versions.set(version, versionLayout(spec, version));
  return layout;
}

function emptyLayout(spec: MessageSpec): MessageLayout {
  return {
    name: spec.name,
    type: spec.type,
    apiKey: spec.apiKey,
    validVersions: spec.validVersions,
    flexibleVersions: spec.flexibleVersions,
    deprecatedVersions: spec.deprecatedVersions,
    latestVersionUnstable: spec.latestVersionUnstable,
    versions: new Map(),
  };
}

export function versionLayout(spec: MessageSpec, version: number, locate?: (path: JsonPath) => string): VersionLayout {
  const flexible = isFlexible(spec, version);
  const struct = structLayout(spec, spec.struct.fields, version, flexible, locate);
  const layout: VersionLayout = { flexible, ...struct };
  const header = headerVersion(spec, version);
  if (header !== undefined) layout.header = header;
  return layout;
}

function structLayout(
  spec: MessageSpec,
  fields: readonly FieldSpec[],
  version: number,
  flexible: boolean,
  locate: ((path: JsonPath) => string) | undefined,
): StructLayout {
  const regular: FieldLayout[] = [];
  const tagged: FieldLayout[] = [];
  for (const field of fields) {
    if (!field.versions.contains(version)) continue;
    const isTagged = taggedVersions(field).contains(version);
    const layout = fieldLayout(spec, field, version, flexible, locate);
    if (isTagged) {
      tagged.push({ ...layout, tag: field.tag });
      if (locate) locations.set(tagged[tagged.length - 1]!, locate(field.jsonPath));
    } else {
      regular.push(layout);
    }
  }
  tagged.sort((a, b) => a.tag! - b.tag!);
  return tagged.length > 0 ? { fields: regular, tagged } : { fields: regular };
}

function fieldLayout(spec: MessageSpec, field: FieldSpec, version: number, flexible: boolean, locate: ((path: JsonPath) => string) | undefined): FieldLayout {
  const type = field.type;
  const layout: FieldLayout = { name: field.name, type: typeToString(type) };
  if (nullableVersions(field).contains(version)) layout.nullable = true;
  if (hasCompactForm(field) && compactVersions(spec, field).contains(version)) layout.compact = true;
  const text = defaultText(field.defaultValue, type.kind === 'primitive' ? type.name : type.kind);
  if (text !== undefined) layout.default = text;
  const structName = type.kind === 'struct' ? type.name : type.kind === 'array' && type.element.kind === 'struct' ? type.element.name : undefined;
  if (structName !== undefined) {
    const struct = spec.structs.get(structName);
    const nested = structLayout(spec, struct?.fields ?? [], version, flexible, locate);
    layout.fields = nested.fields;
    if (nested.tagged) layout.tagged = nested.tagged;
  }
  if (locate) locations.set(layout, locate(field.jsonPath));
  return layout;
}

/** The default as text, or undefined when it is the natural zero of the type. */
export function defaultText(value: DefaultValue, typeName: string): string | undefined {
  switch (value.kind) {
    case 'null':
      return typeName === 'records' ? undefined : 'null';
    case 'bool':
      return value.value ? 'true' : undefined;
    case 'number':
      return Object.is(value.value, 0) ? undefined : String(value.value);
    case 'bigint':
      return value.value === 0n ? undefined : String(value.value);
    case 'string':
      return value.value === '' ? undefined : value.value;
    case 'uuid':
      return value.value === 'AAAAAAAAAAAAAAAAAAAAAA' ? undefined : value.value;
    case 'empty':
      return undefined;
  }
}

/**
 * The layout as the wire sees it: no names, struct types reduced to `struct`.
 * Two versions with the same signature produce and accept the same bytes.
 */
export function wireSignature(layout: StructLayout & { flexible?: boolean; header?: number }): string {
  const head = layout.flexible === undefined ? '' : `${layout.flexible ? 'flexible' : 'fixed'}${layout.header === undefined ? '' : ` h${layout.header}`} `;
  return head + structSignature(layout);
}

function structSignature(struct: StructLayout): string {
  const regular = struct.fields.map(fieldSignature).join(',');
  const tagged = (struct.tagged ?? []).map((f) => `${f.tag}:${fieldSignature(f)}`).join(',');
  return tagged === '' ? `(${regular})` : `(${regular}|${tagged})`;
}

export function fieldSignature(field: FieldLayout): string {
  const base = isStruct(field) ? (isArray(field) ? '[]struct' : 'struct') : field.type;
  let text = base;
  if (field.nullable) text += '?';
  if (field.compact) text += '~';
  if (field.default !== undefined) text += `=${JSON.stringify(field.default)}`;
  if (isStruct(field)) text += structSignature({ fields: field.fields!, tagged: field.tagged });
  return text;
}

/** How a field's type reads in a report: `nullable string`, `[]Topic`, `int32` (the encoding is reported on its own). */
export function typeText(field: FieldLayout): string {
  return field.nullable ? `nullable ${field.type}` : field.type;
}

/** Formats a set of versions as ranges: `0-2, 5`. */
export function versionRanges(versions: Iterable<number>): string {
  const sorted = [...new Set(versions)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

export { Versions };
