import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldType } from './field-type.js';
import { loadSpecs } from './load.js';
import { PACKAGE_ROOT } from './package-root.js';
import type { MessageSpec, StructSpec } from './spec.js';

/**
 * `kipgen demo`: encodes and decodes a sample message of every API in
 * message-schemas at every version through the generated codecs, checks that
 * each survives the round trip byte for byte, and prints a table.
 */

interface Codec {
  fromJson(json: unknown, version: number): unknown;
  encode(message: unknown, version: number): Uint8Array;
  decode(bytes: Uint8Array, version: number): unknown;
  toJson(message: unknown, version: number): unknown;
}

/** A deterministic sample in JSON form: one element per array, readable values. */
function sample(spec: MessageSpec, struct: StructSpec, version: number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of struct.fields) {
    if (!field.versions.contains(version)) continue;
    out[field.propertyName] = sampleValue(spec, field.type, field.name, version, depth);
  }
  return out;
}

function sampleValue(spec: MessageSpec, type: FieldType, name: string, version: number, depth: number): unknown {
  if (type.kind === 'array') return depth > 4 ? [] : [sampleValue(spec, type.element, name, version, depth + 1)];
  if (type.kind === 'struct') return sample(spec, spec.structs.get(type.name)!, version, depth + 1);
  switch (type.name) {
    case 'bool':
      return true;
    case 'int64':
      return '1289';
    case 'float64':
      return 0.5;
    case 'string':
      return name.toLowerCase().includes('topic') ? 'orders' : 'kipgen';
    case 'uuid':
      return 'AAAAAAAAAAAAAAAAAAAAAQ';
    case 'bytes':
    case 'records':
      return 'a2lwZ2Vu';
    default:
      return 7;
  }
}

/**
 * The schemas the demo's codecs (@kipgen/codecs, or a checkout's generated/) were
 * generated from: the package's own copy, not the working folder's, so that the
 * demo runs in any project (packages/build.mjs ships them in the kipgen package).
 */
export const DEMO_SCHEMAS = join(PACKAGE_ROOT, 'message-schemas');

export async function runDemo(schemas = [DEMO_SCHEMAS]): Promise<void> {
  const missing = schemas.filter((path) => !existsSync(path));
  if (missing.length > 0) {
    console.error(`kipgen demo: the message schemas it round-trips are not at ${missing.join(', ')}; reinstall kipgen, or run the demo from a kipgen checkout`);
    process.exitCode = 2;
    return;
  }
  const { specs } = loadSpecs(schemas);
  const { messages } = (await import('../generated/index.js')) as unknown as { messages: Record<string, Codec> };
  const byName = new Map(specs.map((s) => [s.name, s]));
  const rows: string[][] = [['API', 'key', 'versions', 'flexible', 'request bytes', 'response bytes', 'round trips']];
  let failures = 0;
  let checks = 0;
  const requests = specs.filter((s) => s.type === 'request').sort((a, b) => a.apiKey! - b.apiKey!);
  for (const request of requests) {
    const response = byName.get(request.name.replace(/Request$/, 'Response'));
    if (!response) continue;
    const sizes: Record<'request' | 'response', number[]> = { request: [], response: [] };
    for (const version of request.validVersions) {
      for (const [kind, spec] of [
        ['request', request],
        ['response', response],
      ] as const) {
        const codec = messages[spec.name]!;
        checks++;
        try {
          const message = codec.fromJson(sample(spec, spec.struct, version, 0), version);
          const bytes = codec.encode(message, version);
          const again = codec.encode(codec.decode(bytes, version), version);
          if (Buffer.compare(Buffer.from(bytes), Buffer.from(again)) !== 0) throw new Error('bytes differ after a round trip');
          sizes[kind].push(bytes.length);
        } catch (error) {
          failures++;
          console.error(`${spec.name} v${version}: ${(error as Error).message}`);
        }
      }
    }
    const range = (xs: number[]): string => (xs.length === 0 ? '-' : `${Math.min(...xs)}–${Math.max(...xs)}`);
    rows.push([
      request.name.replace(/Request$/, ''),
      String(request.apiKey),
      String(request.validVersions),
      String(request.flexibleVersions),
      range(sizes.request),
      range(sizes.response),
      `${sizes.request.length + sizes.response.length} ✓`,
    ]);
  }
  printTable(rows);
  console.log(`\n${checks - failures} of ${checks} request/response versions encoded, decoded and re-encoded byte for byte.`);
  if (failures > 0) process.exitCode = 1;
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  rows.forEach((row, i) => {
    console.log(
      row
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  });
}
