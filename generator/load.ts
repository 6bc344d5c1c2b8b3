import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaError, type Diagnostic } from './diagnostics.js';
import { parseSpec } from './parse-spec.js';
import { checkShape } from './shape.js';
import { SchemaSource } from './source.js';
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
  // Sized before it is read, so that a huge file is refused without reading it.
  const size = statSync(file).size;
  if (size > MAX_SCHEMA_BYTES) return { spec: undefined, diagnostics: [tooLarge(file, size)] };
  const { spec, diagnostics } = loadSpecText(file, readFileSync(file, 'utf8'));
  return { spec, diagnostics };
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
  for (const file of schemaFiles(paths)) {
    const result = loadSpec(file);
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
  }
  return { specs, diagnostics, skipped };
}
