/**
 * Request fields with every nested struct completed from the schema's
 * defaults: the codecs' create() fills only the top level, and the corpus
 * writes requests for many versions by naming just the fields it means.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { apiByKey } from '../../../generated/index.js';

interface SchemaField {
  name: string;
  type: string;
  versions: string;
  default?: string | number | boolean;
  nullableVersions?: string;
  fields?: SchemaField[];
}

const SCHEMAS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../message-schemas');
const cache = new Map<number, { fields: SchemaField[]; common: Map<string, SchemaField[]> }>();

function schemaOf(apiKey: number): { fields: SchemaField[]; common: Map<string, SchemaField[]> } {
  let s = cache.get(apiKey);
  if (s === undefined) {
    const name = apiByKey(apiKey)!.name;
    const text = fs.readFileSync(path.join(SCHEMAS, `${name}Request.json`), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const json = JSON.parse(text) as { fields: SchemaField[]; commonStructs?: Array<{ name: string; fields: SchemaField[] }> };
    s = { fields: json.fields, common: new Map((json.commonStructs ?? []).map((c) => [c.name, c.fields])) };
    cache.set(apiKey, s);
  }
  return s;
}

const camel = (n: string): string => n[0]!.toLowerCase() + n.slice(1);

function scalarDefault(f: SchemaField): unknown {
  const d = f.default;
  if (d === 'null') return null;
  switch (f.type) {
    case 'int8':
    case 'int16':
    case 'int32':
    case 'uint16':
    case 'float64':
      return d === undefined || d === '' ? 0 : Number(d);
    case 'int64':
      return d === undefined || d === '' ? 0n : BigInt(d as string | number);
    case 'bool':
      return d === true || d === 'true';
    case 'string':
      return typeof d === 'string' ? d : '';
    case 'uuid':
      return 'AAAAAAAAAAAAAAAAAAAAAA';
    case 'bytes':
      return new Uint8Array(0);
    case 'records':
      return null;
    default:
      return undefined;
  }
}

/** Whether a schema version range ("0+", "3-5", "7") holds `version`. */
function inRange(range: string, version: number): boolean {
  if (range === 'none') return false;
  const m = /^(\d+)(\+|-(\d+))?$/.exec(range);
  if (m === null) throw new Error(`request-fields: version range ${JSON.stringify(range)}`);
  const lo = Number(m[1]);
  if (m[2] === '+') return version >= lo;
  return version >= lo && version <= (m[3] === undefined ? lo : Number(m[3]));
}

function fill(fields: SchemaField[], given: Record<string, unknown>, common: Map<string, SchemaField[]>, version: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...given };
  for (const f of fields) {
    const key = camel(f.name);
    const struct = f.fields ?? common.get(f.type.replace(/^\[\]/, ''));
    // A field the version lacks goes at its default: the corpus writes one request for all versions.
    const v = inRange(f.versions, version) ? given[key] : undefined;
    if (f.type.startsWith('[]')) {
      if (v === undefined) out[key] = f.default === 'null' ? null : [];
      else if (struct !== undefined && Array.isArray(v)) out[key] = v.map((item) => fill(struct, item as Record<string, unknown>, common, version));
    } else if (struct !== undefined) {
      out[key] = v === null ? null : fill(struct, (v ?? {}) as Record<string, unknown>, common, version);
    } else if (v === undefined) {
      out[key] = scalarDefault(f);
    }
  }
  return out;
}

/** `given` at `version`: every field the schema has, nested ones included, at its default when not given. */
export function requestFields(apiKey: number, version: number, given: Record<string, unknown>): Record<string, unknown> {
  const s = schemaOf(apiKey);
  return fill(s.fields, given, s.common, version);
}
