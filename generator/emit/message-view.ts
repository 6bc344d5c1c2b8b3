import { basename } from 'node:path';
import { structNameOf } from '../field-type.js';
import type { MessageSpec, StructSpec } from '../spec.js';
import { Versions } from '../versions.js';
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
  /** Runtime names the module may use; render.ts imports those it really does. */
  runtimeCandidates: string[];
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
  if (!spec.flexibleVersions.empty) rt.use('RawTaggedField');
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
    runtimeCandidates: used,
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
function structRanges(spec: MessageSpec): Map<string, Versions> {
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

function headerVersionBody(spec: MessageSpec): string {
  if (spec.headerVersions !== undefined && spec.headerVersions.length > 0) {
    const cases = spec.headerVersions.map((h) => `if (version >= ${h.versions.lowest} && version <= ${h.versions.highest}) return ${h.headerVersion};`);
    return [...cases, `return ${fallbackHeader(spec, 'flexible')};`].join('\n');
  }
  if (spec.type === 'response' && spec.apiKey === 18) return '// ApiVersionsResponse always uses header v0, so that any client can read it (KIP-511).\nreturn 0;';
  const flexible = spec.flexibleVersions.empty ? 'false' : `version >= ${spec.flexibleVersions.lowest}`;
  if (spec.type === 'request' && spec.apiKey === 7) {
    return `// ControlledShutdown v0 predates the client id in the header.\nif (version === 0) return 0;\nreturn ${fallbackHeader(spec, flexible)};`;
  }
  return `return ${fallbackHeader(spec, flexible)};`;
}

function fallbackHeader(spec: MessageSpec, flexible: string): string {
  const [plain, withTags] = spec.type === 'request' ? [1, 2] : [0, 1];
  if (flexible === 'false') return String(plain);
  return `${flexible} ? ${withTags} : ${plain}`;
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
