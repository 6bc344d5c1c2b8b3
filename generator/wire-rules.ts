import type { FieldSpec, MessageSpec } from './spec.js';
import { Versions } from './versions.js';

/**
 * The wire rules of Kafka's protocol that depend on a spec, in one place: the
 * header version of each API version, and in which versions a field is on the
 * wire, tagged, nullable and in the compact (flexible) form. The emitter
 * (generator/emit/) turns them into code; `kipgen diff` and the baseline
 * (generator/diff/layout.ts) describe versions with them; test/generator/wire-rules.test.ts
 * checks that the two agree byte for byte.
 */

/** One run of API versions sharing a header version, and why, when it is an exception. */
export interface HeaderRange {
  versions: Versions;
  header: number;
  reason?: string;
}

/** ApiVersions' key: its response always has header v0 (KIP-511). */
export const API_VERSIONS_KEY = 18;
const CONTROLLED_SHUTDOWN = 7;

/**
 * The header versions of a request or response over its valid versions, as
 * ascending contiguous ranges; empty for other specs. A spec's own
 * `headerVersions` map decides; otherwise requests use RequestHeader v2 in
 * flexible versions and v1 before, responses ResponseHeader v1 and v0, except
 * that ApiVersionsResponse always uses v0 (KIP-511: any client can read it)
 * and ControlledShutdown v0 uses RequestHeader v0 (it predates the client id).
 */
export function headerRanges(spec: MessageSpec): HeaderRange[] {
  if (spec.type !== 'request' && spec.type !== 'response') return [];
  const ranges: HeaderRange[] = [];
  for (const version of spec.validVersions) {
    const { header, reason } = headerRule(spec, version);
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.header === header && last.reason === reason) {
      ranges[ranges.length - 1] = { ...last, versions: new Versions(last.versions.lowest, version) };
    } else {
      ranges.push(reason === undefined ? { versions: new Versions(version, version), header } : { versions: new Versions(version, version), header, reason });
    }
  }
  return ranges;
}

/** The header version of one API version, or undefined for specs that are not requests or responses. */
export function headerVersion(spec: MessageSpec, version: number): number | undefined {
  if (spec.type !== 'request' && spec.type !== 'response') return undefined;
  return headerRule(spec, version).header;
}

function headerRule(spec: MessageSpec, version: number): { header: number; reason?: string } {
  const declared = spec.headerVersions?.find((h) => h.versions.contains(version));
  if (declared !== undefined) return { header: declared.headerVersion, reason: 'as the schema declares' };
  if (spec.type === 'response' && spec.apiKey === API_VERSIONS_KEY)
    return { header: 0, reason: 'ApiVersionsResponse always uses header v0, so that any client can read it (KIP-511)' };
  if (spec.type === 'request' && spec.apiKey === CONTROLLED_SHUTDOWN && version === 0)
    return { header: 0, reason: 'ControlledShutdown v0 predates the client id in the header' };
  const flexible = spec.flexibleVersions.contains(version);
  if (spec.type === 'request') return { header: flexible ? 2 : 1 };
  return { header: flexible ? 1 : 0 };
}

/** The versions in which a field is a regular (untagged) field: its versions before its tagged versions begin. */
export function regularVersions(field: FieldSpec): Versions {
  if (field.taggedVersions.empty) return field.versions;
  return field.versions.intersect(new Versions(0, field.taggedVersions.lowest - 1));
}

/** The versions in which a field is in the tagged-field section. */
export function taggedVersions(field: FieldSpec): Versions {
  return field.taggedVersions.intersect(field.versions);
}

/** The versions in which a field may be null on the wire. */
export function nullableVersions(field: FieldSpec): Versions {
  return field.nullableVersions;
}

/**
 * The versions in which a field's lengths and counts use the compact
 * (unsigned varint) form: the message's flexible versions, or a string or
 * bytes field's own override. Only strings, bytes, records and arrays have a
 * compact form; fixed-width types and structs are the same in every version.
 */
export function compactVersions(spec: MessageSpec, field: FieldSpec): Versions {
  return field.flexibleVersions ?? spec.flexibleVersions;
}

/** Whether the field's type has a length or count whose form compactVersions decides. */
export function hasCompactForm(field: FieldSpec): boolean {
  const type = field.type;
  return type.kind === 'array' || (type.kind === 'primitive' && (type.name === 'string' || type.name === 'bytes' || type.name === 'records'));
}

/** Whether a struct of the message has a tagged-field section in `version`. */
export function isFlexible(spec: MessageSpec, version: number): boolean {
  return spec.flexibleVersions.contains(version);
}
