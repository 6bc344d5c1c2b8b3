import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import type { Diagnostic } from './diagnostics.js';
import { PACKAGE_ROOT } from './package-root.js';
import { formatJsonPath, type JsonPath, type SchemaSource } from './source.js';

/**
 * The first validation layer: the document's shape against the JSON Schema of
 * Kafka's spec format (spec-format.schema.json). Meaning is checked afterwards
 * by parse-spec.ts, which can then trust the types of every key.
 */

const specFormat = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'generator', 'spec-format.schema.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
const validateShape = ajv.compile(specFormat);

export function checkShape(source: SchemaSource): Diagnostic[] {
  if (validateShape(source.value)) return [];
  const errors = simplify(validateShape.errors ?? []);
  return errors.map((error) => {
    const path = pointerToPath(error.instancePath);
    let message = describe(error);
    let at: JsonPath = path;
    if (error.keyword === 'additionalProperties') {
      const key = String((error.params as { additionalProperty: string }).additionalProperty);
      at = [...path, key];
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const near = known.filter((k) => editDistance(k.toLowerCase(), key.toLowerCase()) <= 2).sort((a, b) => editDistance(a, key) - editDistance(b, key))[0];
      message = `unknown key "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
    }
    return {
      severity: 'error' as const,
      file: source.file,
      ...source.locate(at),
      jsonPath: formatJsonPath(at),
      message,
    };
  });
}

/**
 * Ajv reports every branch of an anyOf; keep one line per location, preferring
 * the most specific. And an error inside a value explains why that value
 * failed its anyOf/type at the level above ("fields" is an array of field
 * objects, or null): the outer error is a cascade of the inner one and would
 * only mislead (`"fields" must be of type null` after a typo'd `"tpye"`), so
 * it goes.
 */
function simplify(errors: ErrorObject[]): ErrorObject[] {
  const byPath = new Map<string, ErrorObject>();
  for (const error of errors) {
    const key = error.instancePath + (error.keyword === 'additionalProperties' ? `/${String(error.params.additionalProperty)}` : '');
    const seen = byPath.get(key);
    if (seen === undefined || seen.keyword === 'anyOf') byPath.set(key, error);
  }
  const kept = [...byPath.values()];
  const cascade = (error: ErrorObject): boolean =>
    (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'type') &&
    kept.some((other) => other !== error && other.instancePath.startsWith(`${error.instancePath}/`));
  return kept.filter((error) => !cascade(error));
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the document' : `"${error.instancePath.split('/').pop()}"`;
  switch (error.keyword) {
    case 'enum':
      return `${where} must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'required':
      return `missing required key "${(error.params as { missingProperty: string }).missingProperty}"`;
    case 'type':
      return `${where} must be of type ${String((error.params as { type: string | string[] }).type)}`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

function pointerToPath(pointer: string): JsonPath {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** Levenshtein distance, for "did you mean" on a typo'd key (keys are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
