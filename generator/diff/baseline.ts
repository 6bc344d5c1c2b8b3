import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { Versions } from '../versions.js';
import { compareTrees, type DiffReport } from './compare.js';
import { messageLayout, type FieldLayout, type MessageLayout, type VersionLayout } from './layout.js';
import { loadTree } from './load-tree.js';
import type { SpecType } from '../spec.js';

/**
 * The committed baseline, message-schemas.lock.json: the released wire layout
 * of every message-schema version. `kipgen baseline --check` fails when the
 * schemas differ from it in a breaking way; `kipgen baseline --update` is the
 * deliberate, reviewed step that moves it.
 *
 * Format (version 1): `messages` by name, sorted; for each its type, apiKey,
 * validVersions, flexibleVersions, deprecatedVersions and latestVersionUnstable
 * when set, and `layouts`: runs of consecutive versions with the same layout
 * (`versions` "0-2"), each with `flexible`, the header version of requests and
 * responses, and the regular `fields` in wire order and the `tagged` fields by
 * tag, recursively. Field keys: name, type, nullable, compact, default, tag,
 * fields, tagged (see layout.ts); a key is left out when false or the type's zero.
 */

export const DEFAULT_BASELINE = 'message-schemas.lock.json';
export const DEFAULT_BASELINE_SCHEMAS = ['message-schemas'];
const FORMAT = 1;

/** The lock file is missing, unreadable or not in the expected format: bad input. */
export class BaselineError extends Error {
  override name = 'BaselineError';
}

export interface BaselineResult {
  /** Baseline → current schemas; undefined when the schemas or the baseline could not be read. */
  report: DiffReport | undefined;
  /** Loader diagnostics of the current schemas (errors mean bad input). */
  diagnostics: Diagnostic[];
  /** Set when the baseline file itself is the problem. */
  error?: string;
  /** Messages in the current schemas. */
  messages: number;
}

/** Loads the schemas (every file, including specs whose versions are "none") and builds their layouts. */
export function currentLayouts(schemas: readonly string[], cwd = process.cwd()): { layouts: MessageLayout[]; diagnostics: Diagnostic[] } {
  const tree = loadTree(schemas, { cwd });
  return { layouts: tree.specs.map(messageLayout), diagnostics: tree.diagnostics };
}

/**
 * The check CI runs: the schemas against the committed baseline. A breaking
 * difference is a failure; compatible ones (a new version, a new message) are
 * reported and pass until `kipgen baseline --update` records them.
 */
export function checkBaseline(options: { schemas?: readonly string[]; baseline?: string; cwd?: string } = {}): BaselineResult {
  const schemas = options.schemas ?? DEFAULT_BASELINE_SCHEMAS;
  const file = resolve(options.cwd ?? process.cwd(), options.baseline ?? DEFAULT_BASELINE);
  const { layouts, diagnostics } = currentLayouts(schemas, options.cwd);
  if (diagnostics.some((d) => d.severity === 'error')) return { report: undefined, diagnostics, messages: layouts.length };
  let baseline: MessageLayout[];
  try {
    baseline = readBaseline(file, options.baseline ?? DEFAULT_BASELINE);
  } catch (error) {
    if (error instanceof BaselineError) return { report: undefined, diagnostics, error: error.message, messages: layouts.length };
    throw error;
  }
  return { report: compareTrees(baseline, layouts), diagnostics, messages: layouts.length };
}

/** Rewrites the baseline from the schemas; returns what moved (undefined when there was no baseline before). */
export function updateBaseline(options: { schemas?: readonly string[]; baseline?: string; cwd?: string } = {}): BaselineResult & { written: boolean } {
  const schemas = options.schemas ?? DEFAULT_BASELINE_SCHEMAS;
  const file = resolve(options.cwd ?? process.cwd(), options.baseline ?? DEFAULT_BASELINE);
  const { layouts, diagnostics } = currentLayouts(schemas, options.cwd);
  if (diagnostics.some((d) => d.severity === 'error')) return { report: undefined, diagnostics, messages: layouts.length, written: false };
  let report: DiffReport | undefined;
  if (existsSync(file)) {
    try {
      report = compareTrees(readBaseline(file, options.baseline ?? DEFAULT_BASELINE), layouts);
    } catch (error) {
      if (!(error instanceof BaselineError)) throw error;
    }
  }
  const text = serializeBaseline(layouts);
  const written = !existsSync(file) || readFileSync(file, 'utf8') !== text;
  if (written) writeFileSync(file, text);
  return { report, diagnostics, messages: layouts.length, written };
}

// ---------------------------------------------------------------- writing

/** The lock file's text: deterministic (sorted messages, fixed key order), pretty-printed, ending in a newline. */
export function serializeBaseline(layouts: readonly MessageLayout[]): string {
  const messages: Record<string, unknown> = {};
  for (const layout of [...layouts].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) messages[layout.name] = messageJson(layout);
  const doc = {
    $comment:
      'The released wire layout of every message schema, version by version. Written by `kipgen baseline --update`, the reviewed step that moves it; `kipgen baseline --check` (CI) fails when message-schemas/ differs from it in a breaking way. Do not edit by hand.',
    format: FORMAT,
    messages,
  };
  return `${pretty(doc, '')}\n`;
}

function messageJson(layout: MessageLayout): Record<string, unknown> {
  const out: Record<string, unknown> = { type: layout.type };
  if (layout.apiKey !== undefined) out.apiKey = layout.apiKey;
  out.validVersions = layout.validVersions.toString();
  out.flexibleVersions = layout.flexibleVersions.toString();
  if (!layout.deprecatedVersions.empty) out.deprecatedVersions = layout.deprecatedVersions.toString();
  if (layout.latestVersionUnstable) out.latestVersionUnstable = true;
  const runs: Record<string, unknown>[] = [];
  let run: { from: number; to: number; json: string; layout: VersionLayout } | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    runs.push({ versions: run.from === run.to ? `${run.from}` : `${run.from}-${run.to}`, ...versionJson(run.layout) });
  };
  for (const v of [...layout.versions.keys()].sort((a, b) => a - b)) {
    const vl = layout.versions.get(v)!;
    const json = JSON.stringify(versionJson(vl));
    if (run !== undefined && run.to === v - 1 && run.json === json) {
      run.to = v;
      continue;
    }
    flush();
    run = { from: v, to: v, json, layout: vl };
  }
  flush();
  out.layouts = runs;
  return out;
}

function versionJson(layout: VersionLayout): Record<string, unknown> {
  const out: Record<string, unknown> = { flexible: layout.flexible };
  if (layout.header !== undefined) out.header = layout.header;
  out.fields = layout.fields.map(fieldJson);
  if (layout.tagged !== undefined && layout.tagged.length > 0) out.tagged = layout.tagged.map(fieldJson);
  return out;
}

function fieldJson(field: FieldLayout): Record<string, unknown> {
  const out: Record<string, unknown> = { name: field.name, type: field.type };
  if (field.nullable) out.nullable = true;
  if (field.compact) out.compact = true;
  if (field.default !== undefined) out.default = field.default;
  if (field.tag !== undefined) out.tag = field.tag;
  if (field.fields !== undefined) out.fields = field.fields.map(fieldJson);
  if (field.tagged !== undefined && field.tagged.length > 0) out.tagged = field.tagged.map(fieldJson);
  return out;
}

const WIDTH = 120;

/** JSON with two-space indents, where a container of scalars that fits on a line is written on one line. */
function pretty(value: unknown, indent: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries: [string | undefined, unknown][] = Array.isArray(value) ? value.map((v) => [undefined, v]) : Object.entries(value);
  const open = Array.isArray(value) ? '[' : '{';
  const close = Array.isArray(value) ? ']' : '}';
  if (entries.length === 0) return `${open}${close}`;
  const flat = entries.every(([, v]) => v === null || typeof v !== 'object');
  if (flat) {
    const inline = `${open}${Array.isArray(value) ? '' : ' '}${entries.map(([k, v]) => (k === undefined ? '' : `${JSON.stringify(k)}: `) + JSON.stringify(v)).join(', ')}${Array.isArray(value) ? '' : ' '}${close}`;
    if (indent.length + inline.length <= WIDTH) return inline;
  }
  const inner = `${indent}  `;
  const lines = entries.map(([k, v]) => `${inner}${k === undefined ? '' : `${JSON.stringify(k)}: `}${pretty(v, inner)}`);
  return `${open}\n${lines.join(',\n')}\n${indent}${close}`;
}

// ---------------------------------------------------------------- reading

/** Reads a lock file back into layouts. Throws BaselineError when it is missing or malformed. */
export function readBaseline(file: string, label = file): MessageLayout[] {
  if (!existsSync(file)) throw new BaselineError(`${label} does not exist; create it with \`kipgen baseline --update\` and commit it`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new BaselineError(`${label} is not valid JSON (${(error as Error).message}); restore it from git or rewrite it with \`kipgen baseline --update\``);
  }
  return parseBaseline(doc, label);
}

export function parseBaseline(doc: unknown, file = 'baseline'): MessageLayout[] {
  const fail = (where: string, what: string): never => {
    throw new BaselineError(`${file}: ${where}: ${what}; restore it from git or rewrite it with \`kipgen baseline --update\``);
  };
  if (!isObject(doc)) return fail('(root)', 'not an object');
  if (doc.format !== FORMAT) fail('format', `expected ${FORMAT}, found ${JSON.stringify(doc.format)}`);
  if (!isObject(doc.messages)) return fail('messages', 'not an object');
  const layouts: MessageLayout[] = [];
  for (const [name, raw] of Object.entries(doc.messages)) {
    const at = `messages.${name}`;
    if (!isObject(raw)) return fail(at, 'not an object');
    const versions = (key: string, optional = false): Versions => {
      const text = raw[key];
      if (text === undefined && optional) return Versions.NONE;
      if (typeof text !== 'string') return fail(`${at}.${key}`, 'not a version range');
      try {
        return Versions.parse(text);
      } catch (error) {
        return fail(`${at}.${key}`, (error as Error).message);
      }
    };
    if (typeof raw.type !== 'string') fail(`${at}.type`, 'not a string');
    if (raw.apiKey !== undefined && !Number.isInteger(raw.apiKey)) fail(`${at}.apiKey`, 'not an integer');
    const layout: MessageLayout = {
      name,
      type: raw.type as SpecType,
      apiKey: raw.apiKey as number | undefined,
      validVersions: versions('validVersions'),
      flexibleVersions: versions('flexibleVersions'),
      deprecatedVersions: versions('deprecatedVersions', true),
      latestVersionUnstable: raw.latestVersionUnstable === true,
      versions: new Map(),
      file,
    };
    if (!Array.isArray(raw.layouts)) return fail(`${at}.layouts`, 'not an array');
    raw.layouts.forEach((run: unknown, i: number) => {
      const where = `${at}.layouts[${i}]`;
      if (!isObject(run) || typeof run.versions !== 'string') return fail(where, 'not a layout with versions');
      let range: Versions;
      try {
        range = Versions.parse(run.versions);
      } catch (error) {
        return fail(`${where}.versions`, (error as Error).message);
      }
      if (range.openEnded || range.empty) fail(`${where}.versions`, 'expected N or N-M');
      if (typeof run.flexible !== 'boolean') fail(`${where}.flexible`, 'not a boolean');
      if (run.header !== undefined && !Number.isInteger(run.header)) fail(`${where}.header`, 'not an integer');
      const struct = structFromJson(run, where, fail);
      for (const v of range) {
        if (layout.versions.has(v)) fail(where, `version ${v} appears twice`);
        const vl: VersionLayout = { flexible: run.flexible as boolean, ...struct };
        if (run.header !== undefined) vl.header = run.header as number;
        layout.versions.set(v, vl);
      }
    });
    for (const v of layout.validVersions) if (!layout.versions.has(v)) fail(`${at}.layouts`, `no layout for version ${v}`);
    layouts.push(layout);
  }
  return layouts;
}

function structFromJson(
  raw: Record<string, unknown>,
  where: string,
  fail: (where: string, what: string) => never,
): { fields: FieldLayout[]; tagged?: FieldLayout[] } {
  if (!Array.isArray(raw.fields)) return fail(`${where}.fields`, 'not an array');
  const fields = raw.fields.map((f: unknown, i: number) => fieldFromJson(f, `${where}.fields[${i}]`, fail));
  if (raw.tagged === undefined) return { fields };
  if (!Array.isArray(raw.tagged)) return fail(`${where}.tagged`, 'not an array');
  const tagged = raw.tagged.map((f: unknown, i: number) => fieldFromJson(f, `${where}.tagged[${i}]`, fail));
  if (tagged.some((f) => f.tag === undefined)) fail(`${where}.tagged`, 'a tagged field has no tag');
  return { fields, tagged };
}

function fieldFromJson(raw: unknown, where: string, fail: (where: string, what: string) => never): FieldLayout {
  if (!isObject(raw) || typeof raw.name !== 'string' || typeof raw.type !== 'string') return fail(where, 'not a field with a name and a type');
  const field: FieldLayout = { name: raw.name, type: raw.type };
  if (raw.nullable === true) field.nullable = true;
  if (raw.compact === true) field.compact = true;
  if (raw.default !== undefined) {
    if (typeof raw.default !== 'string') fail(`${where}.default`, 'not a string');
    field.default = raw.default as string;
  }
  if (raw.tag !== undefined) {
    if (!Number.isInteger(raw.tag)) fail(`${where}.tag`, 'not an integer');
    field.tag = raw.tag as number;
  }
  if (raw.fields !== undefined) {
    const struct = structFromJson(raw, where, fail);
    field.fields = struct.fields;
    if (struct.tagged !== undefined) field.tagged = struct.tagged;
  }
  return field;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
