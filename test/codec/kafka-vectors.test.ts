import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, writeTree } from '../../generator/generate.js';
import type { MessageCodec } from '../../runtime/index.js';
import fc from 'fast-check';
import { loadSpecs } from '../../generator/load.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { checkoutRuntimeImport } from '../support/runtime-import.js';
import { checkVector, jsonDifference, readVectors, sharedDir, toHex } from '../support/vectors.js';

// Every spec of Apache Kafka (clients and the three coordinators) plus the
// KIP-1289 specs, generated into a temporary folder, against all 2,115 vectors
// that Kafka's own Java codecs produced. Needs ../shared (or KIPGEN_SHARED).
const shared = sharedDir();
if (shared === undefined) {
  console.warn('kafka-vectors: ../shared not found (set KIPGEN_SHARED): the full Kafka corpus is NOT tested in this run');
}

describe.runIf(shared !== undefined)('conformance vectors of every Apache Kafka spec', () => {
  // Made in beforeAll, not while the suite is collected: a skipped suite runs no afterAll to remove it.
  let out = '';
  let codecs: Record<string, MessageCodec<unknown>> = {};
  const vectors = shared ? readVectors(join(shared, 'conformance', 'vectors')) : new Map();

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'kipgen-kafka-'));
    const k = join(shared!, 'kafka-schemas');
    const result = await generate({
      schemas: ['clients', 'group-coordinator', 'share-coordinator', 'transaction-coordinator'].map((d) => join(k, d)).concat(join(shared!, 'kip-1289')),
      out,
      runtimeImport: checkoutRuntimeImport(out),
      skipTypecheck: true,
    });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    writeTree(out, result.files);
    codecs = ((await import(join(out, 'index.ts'))) as { messages: Record<string, MessageCodec<unknown>> }).messages;
  });
  afterAll(() => {
    if (out !== '') rmSync(out, { recursive: true, force: true });
  });

  it('generates a codec for every vector file (all 249 specs with versions)', () => {
    expect(vectors.size).toBeGreaterThanOrEqual(249);
    expect([...vectors.keys()].filter((n) => codecs[n] === undefined)).toEqual([]);
  });

  it('passes every vector both ways', () => {
    const failures: string[] = [];
    let count = 0;
    for (const [name, lines] of vectors) {
      lines.forEach((v: Parameters<typeof checkVector>[1], i: number) => {
        count++;
        const failure = checkVector(codecs[name]!, v);
        if (failure) failures.push(`${name} line ${i + 1}: ${failure}`);
      });
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(2115);
  });

  it('round-trips random messages of every spec at every version', () => {
    const k = join(shared!, 'kafka-schemas');
    const { specs } = loadSpecs(['clients', 'group-coordinator', 'share-coordinator', 'transaction-coordinator'].map((d) => join(k, d)));
    let runs = 0;
    for (const spec of specs) {
      const codec = codecs[spec.name]!;
      for (const version of spec.validVersions) {
        fc.assert(
          fc.property(messageArbitrary(spec, version), (json) => {
            runs++;
            const message = codec.fromJson(json, version);
            const bytes = codec.encode(message, version);
            const decoded = codec.decode(bytes, version);
            expect(jsonDifference(codec.toJson(decoded, version), codec.toJson(message, version))).toBeUndefined();
            expect(toHex(codec.encode(decoded, version))).toBe(toHex(bytes));
          }),
          { numRuns: 8, seed: version },
        );
      }
    }
    expect(runs).toBeGreaterThan(5000);
  });
});
