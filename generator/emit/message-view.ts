import { basename } from 'node:path';
import { structNameOf } from '../field-type.js';
import type { MessageSpec, StructSpec } from '../spec.js';
import { Versions } from '../versions.js';
import { headerRanges } from '../wire-rules.js';
import { RuntimeImports } from './field-code.js';
import { defaultTestBody, structView, type StructView } from './struct-view.js';

/** Everything templates/message.hbs needs to render one message module. */
export interface MessageView {
  name: string;
  sourceFile: string;
  type: string;
  description: string;
  apiKey: string;
  validVersions: string;
  flexibleVersions: string;
  isApi: boolean;
  headerVersionBody: string;
  structs: StructView[];
  top: StructView;
  /** Runtime names the module's code uses, registered as it was emitted; render.ts imports them. */
  runtimeNames: string[];
  typeOnlyRuntimeNames: string[];
  runtimeModule: string;
}

const TYPE_ONLY = ['RawTaggedField', 'ApiMessageCodec', 'MessageCodec', 'JsonObject'];

export function messageView(spec: MessageSpec, runtimeModule: string): MessageView {
  const rt = new RuntimeImports();
  const ranges = structRanges(spec);
  const top = structView(spec, spec.struct, spec.validVersions, true, rt);
  const nestedSpecs = emittedStructs(spec, ranges);
  const nested = nestedSpecs.map((s) => structView(spec, s, ranges.get(s.name) ?? spec.validVersions, false, rt));
  addDefaultTests(nestedSpecs, nested, rt);
  const isApi = spec.type === 'request' || spec.type === 'response';
  rt.use(isApi ? 'defineApiCodec' : 'defineCodec');
  rt.use('decodeErrorAt');
  rt.use('jsonObject');
  rt.use('Reader');
  rt.use('Writer');
  rt.use('JsonObject');
  // The declarations and readers of structs with a tagged-field section name the type.
  if ([top, ...nested].some((view) => view.hasTaggedSection)) rt.use('RawTaggedField');
  const used = [...rt.used].sort();
  return {
    name: spec.name,
    sourceFile: basename(spec.file),
    type: spec.type,
    description: describe(spec),
    apiKey: spec.apiKey === undefined ? 'null' : String(spec.apiKey),
    validVersions: `{ lowest: ${spec.validVersions.lowest}, highest: ${spec.validVersions.highest} }`,
    flexibleVersions: spec.flexibleVersions.empty
      ? 'null'
      : `{ lowest: ${spec.flexibleVersions.lowest}, highest: ${Math.max(spec.flexibleVersions.highest, spec.validVersions.highest)} }`,
    isApi,
    headerVersionBody: headerVersionBody(spec),
    structs: nested,
    top,
    runtimeNames: used,
    typeOnlyRuntimeNames: [...TYPE_ONLY, 'Reader', 'Writer'],
    runtimeModule,
  };
}

/** The nested structs a message's module declares (and exports with their create functions). */
export function emittedStructs(spec: MessageSpec, ranges: Map<string, Versions> = structRanges(spec)): StructSpec[] {
  return [...spec.structs.values()].filter((s) => ranges.has(s.name) || s.isCommon);
}

/**
 * Gives each struct whose default test the module calls its `isDefault…` body.
 * A body may call the tests of the structs of its fields in turn; a Set's
 * iterator also visits names added while it runs, so one loop covers them.
 */
function addDefaultTests(specs: StructSpec[], views: StructView[], rt: RuntimeImports): void {
  for (const name of rt.defaultTests) {
    const i = specs.findIndex((s) => s.name === name);
    // A struct without a view has no create function either: the type check reports it.
    if (i >= 0) views[i]!.defaultTest = defaultTestBody(specs[i]!, views[i]!.hasTaggedSection, rt);
  }
}

/**
 * The versions each nested struct can be read or written in: the versions of
 * the fields that lead to it, intersected down the tree and joined over its uses.
 */
export function structRanges(spec: MessageSpec): Map<string, Versions> {
  const ranges = new Map<string, Versions>();
  const visit = (struct: StructSpec, within: Versions, depth: number): void => {
    if (depth > 64) return;
    for (const field of struct.fields) {
      const name = structNameOf(field.type);
      if (name === undefined) continue;
      const child = spec.structs.get(name);
      if (child === undefined) continue;
      const range = field.versions.intersect(within);
      if (range.empty) continue;
      const seen = ranges.get(name);
      const joined = seen === undefined ? range : new Versions(Math.min(seen.lowest, range.lowest), Math.max(seen.highest, range.highest));
      if (seen !== undefined && seen.equals(joined)) continue;
      ranges.set(name, joined);
      visit(child, joined, depth + 1);
    }
  };
  visit(spec.struct, spec.validVersions, 0);
  return ranges;
}

/** The body of `headerVersion(version)`: the ranges of generator/wire-rules.ts, tested from the lowest. */
function headerVersionBody(spec: MessageSpec): string {
  const ranges = headerRanges(spec);
  const lines: string[] = [];
  ranges.forEach((range, i) => {
    if (range.reason !== undefined && range.reason !== ranges[i - 1]?.reason) lines.push(`// ${range.reason}.`);
    const last = i === ranges.length - 1;
    lines.push(last ? `return ${range.header};` : `if (version <= ${range.versions.highest}) return ${range.header};`);
  });
  return lines.join('\n');
}

function describe(spec: MessageSpec): string {
  const parts = [`${spec.type}`];
  if (spec.apiKey !== undefined) parts.push(spec.type.startsWith('coordinator') ? `record type ${spec.apiKey}` : `API key ${spec.apiKey}`);
  parts.push(`versions ${spec.validVersions}`);
  parts.push(`flexible ${spec.flexibleVersions}`);
  if (!spec.deprecatedVersions.empty) parts.push(`deprecated ${spec.deprecatedVersions}`);
  if (spec.latestVersionUnstable) parts.push('latest version unstable');
  return parts.join(', ');
}
