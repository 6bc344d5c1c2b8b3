import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaError, type Diagnostic } from './diagnostics.js';
import { parseSpec } from './parse-spec.js';
import { checkShape } from './shape.js';
import { formatJsonPath, SchemaSource } from './source.js';
import type { MessageSpec } from './spec.js';

/** Largest schema file read; Kafka's biggest is ~25 KB, so this only stops accidents and abuse. */
export const MAX_SCHEMA_BYTES = 1 << 20;

export interface LoadResult {
  specs: MessageSpec[];
  diagnostics: Diagnostic[];
  /** Specs with `"validVersions": "none"`, left out (Kafka generates nothing for them). */
  skipped: { name: string; file: string }[];
}

/** Lists the .json schema files of folders or single files, sorted for deterministic output. */
export function schemaFiles(paths: string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) if (name.endsWith('.json')) files.push(join(path, name));
    } else {
      files.push(path);
    }
  }
  return files;
}

/** Loads one schema file through both validation layers. Never throws for a bad schema: it reports. */
export function loadSpec(file: string): { spec: MessageSpec | undefined; diagnostics: Diagnostic[] } {
  const { spec, diagnostics } = loadSpecFile(file);
  return { spec, diagnostics };
}

function loadSpecFile(file: string): { spec: MessageSpec | undefined; source?: SchemaSource; diagnostics: Diagnostic[] } {
  // Sized before it is read, so that a huge file is refused without reading it.
  const size = statSync(file).size;
  if (size > MAX_SCHEMA_BYTES) return { spec: undefined, diagnostics: [tooLarge(file, size)] };
  return loadSpecText(file, readFileSync(file, 'utf8'));
}

/**
 * Runs both validation layers on a schema's text; `source` locates JSON paths
 * in it (for `kipgen diff`). Never throws for a bad schema: it reports.
 */
export function loadSpecText(file: string, text: string): { spec: MessageSpec | undefined; source?: SchemaSource; diagnostics: Diagnostic[] } {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_SCHEMA_BYTES) return { spec: undefined, diagnostics: [tooLarge(file, size)] };
  let source: SchemaSource;
  try {
    source = SchemaSource.parse(file, text);
  } catch (error) {
    if (error instanceof SchemaError) return { spec: undefined, diagnostics: error.diagnostics };
    throw error;
  }
  const shape = checkShape(source);
  if (shape.length > 0) return { spec: undefined, diagnostics: shape };
  return { ...parseSpec(source), source };
}

function tooLarge(file: string, size: number): Diagnostic {
  return { severity: 'error', file, line: 1, column: 1, jsonPath: '', message: `schema file is ${size} bytes, more than the ${MAX_SCHEMA_BYTES}-byte limit` };
}

/** Loads every schema; specs with no valid versions are dropped, as Kafka generates nothing for them. */
export function loadSpecs(paths: string[]): LoadResult {
  const specs: MessageSpec[] = [];
  const diagnostics: Diagnostic[] = [];
  const skipped: LoadResult['skipped'] = [];
  const seen = new Map<string, string>();
  const sources = new Map<MessageSpec, SchemaSource>();
  for (const file of schemaFiles(paths)) {
    const result = loadSpecFile(file);
    diagnostics.push(...result.diagnostics);
    const spec = result.spec;
    if (spec === undefined) continue;
    if (spec.validVersions.empty) {
      skipped.push({ name: spec.name, file });
      continue;
    }
    const earlier = seen.get(spec.name);
    if (earlier !== undefined) {
      diagnostics.push({ severity: 'error', file, line: 1, column: 1, jsonPath: 'name', message: `message ${spec.name} is also defined in ${earlier}` });
      continue;
    }
    seen.set(spec.name, file);
    specs.push(spec);
    if (result.source !== undefined) sources.set(spec, result.source);
  }
  diagnostics.push(...checkSpecSet(specs, sources));
  return { specs, diagnostics, skipped };
}

/**
 * Checks across specs, made by Kafka's type-class generators (ApiMessageType,
 * MetadataRecordType): one spec per key and role. CoordinatorRecordType's
 * checks are left out: Kafka generates each coordinator's records in its own
 * run, while one kipgen tree holds several coordinators whose keys repeat
 * (TransactionLogKey and ShareSnapshotKey are both type 0).
 */
function checkSpecSet(specs: readonly MessageSpec[], sources: ReadonlyMap<MessageSpec, SchemaSource>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const at = (spec: MessageSpec, severity: Diagnostic['severity'], message: string): Diagnostic => {
    const place = sources.get(spec)?.locate(['apiKey']) ?? { line: 1, column: 1 };
    return { severity, file: spec.file, ...place, jsonPath: formatJsonPath(['apiKey']), message };
  };
  const claims = new Map<string, MessageSpec>();
  for (const spec of specs) {
    // ApiMessageTypeGenerator names each API by stripping the suffix (MessageGenerator.stripSuffix).
    // A set-level check, as in Kafka: `kipgen diff` may compare a request with the response it became.
    const suffix = spec.type === 'request' ? 'Request' : spec.type === 'response' ? 'Response' : undefined;
    if (suffix !== undefined && !spec.name.endsWith(suffix)) {
      const place = sources.get(spec)?.locate(['name']) ?? { line: 1, column: 1 };
      diagnostics.push({
        severity: 'error',
        file: spec.file,
        ...place,
        jsonPath: 'name',
        message: `String ${spec.name} does not end with the expected suffix ${suffix}`,
      });
    }
  }
  for (const spec of specs) {
    if (spec.apiKey === undefined || (spec.type !== 'request' && spec.type !== 'response' && spec.type !== 'metadata')) continue;
    const claim = `${spec.type}:${spec.apiKey}`;
    const earlier = claims.get(claim);
    if (earlier === undefined) {
      claims.set(claim, spec);
      continue;
    }
    const message =
      spec.type === 'request' || spec.type === 'response'
        ? `Found more than one ${spec.type} with API key ${spec.apiKey} (${earlier.name} and ${spec.name})`
        : `Duplicate metadata record entry for type ${spec.apiKey}. Original claimant: ${earlier.name}. New claimant: ${spec.name}`;
    diagnostics.push(at(spec, 'error', message));
  }
  // Kafka's ApiMessageType generator refuses half a pair. kipgen
  // generates the codec (a folder may hold only requests, as a test corpus does) but leaves
  // the API out of the registry, so it says so.
  const halves: [string, string, string][] = [
    ['request', 'response', 'its API is left out of the registry'],
    ['response', 'request', 'its API is left out of the registry'],
  ];
  for (const [type, other, consequence] of halves) {
    for (const [claim, spec] of claims) {
      if (!claim.startsWith(`${type}:`) || claims.has(`${other}:${spec.apiKey}`)) continue;
      diagnostics.push(at(spec, 'warning', `${spec.name} has API key ${spec.apiKey}, but no ${other} has it: ${consequence}`));
    }
  }
  return diagnostics;
}
