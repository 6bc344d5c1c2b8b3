import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { generate, writeTree } from '../../generator/generate.js';
import { loadSpec } from '../../generator/load.js';
import type { MessageCodec } from '../../runtime/index.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { jsonDifference, sharedDir, toHex } from '../support/vectors.js';
import { checkoutRuntimeImport } from '../support/runtime-import.js';

// The verdicts of Apache Kafka's own generator on tricky schema files: kipgen
// rejects every file Kafka rejects (with file:line), and turns every file
// Kafka accepts into code that compiles and round-trips.
const shared = sharedDir();
if (shared === undefined) console.warn('invalid-schemas: ../shared not found (set KIPGEN_SHARED): Kafka generator verdicts NOT tested in this run');

interface Verdict {
  file: string;
  accepted: boolean;
  kafkaError?: string;
  description: string;
}

describe.runIf(shared !== undefined)("agreement with Apache Kafka's generator on invalid-schemas/", () => {
  const dir = join(shared ?? '', 'conformance', 'invalid-schemas');
  const verdicts = shared ? (JSON.parse(readFileSync(join(dir, 'verdicts.json'), 'utf8')) as Verdict[]) : [];
  const scratch = mkdtempSync(join(process.cwd(), '.kipgen-test-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const verdict of verdicts.filter((v) => !v.accepted)) {
    it(`rejects ${verdict.file} (${verdict.description})`, () => {
      const { spec, diagnostics } = loadSpec(join(dir, verdict.file));
      const errors = diagnostics.filter((d) => d.severity === 'error');
      expect(spec).toBeUndefined();
      expect(errors.length).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.file).toContain(verdict.file);
        expect(error.line).toBeGreaterThan(0);
        expect(error.column).toBeGreaterThan(0);
      }
    });
  }

  for (const verdict of verdicts.filter((v) => v.accepted)) {
    it(`accepts ${verdict.file} (${verdict.description}) with code that compiles and round-trips`, async () => {
      const file = join(dir, verdict.file);
      const { spec, diagnostics } = loadSpec(file);
      expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const out = join(scratch, verdict.file.replace(/\.json$/, ''));
      const result = await generate({ schemas: [file], out, runtimeImport: checkoutRuntimeImport(out) });
      expect(result.typeErrors).toEqual([]);
      writeTree(out, result.files);
      const codec = (await import(join(out, `${spec!.name}.ts`)))[spec!.name] as MessageCodec<unknown>;
      for (const version of spec!.validVersions) {
        // The all-defaults message first: defaults such as uint32 7 or hex 0x7fff must encode.
        const defaults = codec.create();
        expect(toHex(codec.encode(codec.decode(codec.encode(defaults, version), version), version))).toBe(toHex(codec.encode(defaults, version)));
        fc.assert(
          fc.property(messageArbitrary(spec!, version), (json) => {
            const message = codec.fromJson(json, version);
            const decoded = codec.decode(codec.encode(message, version), version);
            expect(jsonDifference(codec.toJson(decoded, version), codec.toJson(message, version))).toBeUndefined();
          }),
          { numRuns: 20, seed: version },
        );
      }
    });
  }
});
