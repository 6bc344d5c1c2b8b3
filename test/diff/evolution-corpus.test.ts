import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffPaths, rulesOf, sharedDir, type Verdict } from './support.js';

// The 29 schema pairs of ../shared/conformance/evolution, judged by Apache
// Kafka's own evolution checker (verdicts.json). kipgen must reach Kafka's
// verdict on each, except where it is deliberately stricter or where the pair's
// note shows Kafka's checker is wrong; those pairs are named below with the
// rule or the bug. The expected rules document kipgen's reason on every pair.
const shared = sharedDir();
if (shared === undefined) {
  console.warn("evolution-corpus: ../shared not found (set KIPGEN_SHARED): Kafka's evolution verdicts are NOT checked in this run");
}

interface Pair {
  old: string;
  new: string;
  compatible: boolean;
  kafkaError: string | null;
  description: string;
  note?: string;
}

/** kipgen's verdict and rules per pair (B: breaking, C: compatible). */
const EXPECTED: Record<string, { verdict: Verdict; rules: string[] }> = {
  'pair-01-identical': { verdict: 'compatible', rules: [] },
  'pair-03-new-version-no-field-change': { verdict: 'compatible', rules: ['C:version-added'] },
  'pair-05-remove-lowest-version': { verdict: 'breaking', rules: ['B:version-removed'] },
  'pair-07-change-field-type-int32-to-int64': { verdict: 'breaking', rules: ['B:field-type-changed'] },
  'pair-09-narrow-nullable-versions': { verdict: 'breaking', rules: ['B:nullability-changed'] },
  'pair-11-widen-nullable-versions': { verdict: 'breaking', rules: ['B:nullability-changed'] },
  'pair-13-swap-tag-numbers': { verdict: 'breaking', rules: ['B:tag-changed', 'B:tag-reused'] },
  'pair-15-add-tagged-field-in-new-version': { verdict: 'compatible', rules: ['C:version-added'] },
  'pair-17-flexible-versions-later': { verdict: 'breaking', rules: ['B:flexible-versions-changed'] },
  'pair-19-rename-field': { verdict: 'compatible', rules: ['C:field-renamed'] },
  'pair-21-change-message-type': { verdict: 'breaking', rules: ['B:header-version-changed', 'B:type-changed'] },
  'pair-23-add-non-tagged-field-to-existing-version-in-middle': { verdict: 'breaking', rules: ['B:field-added'] },
  'pair-25-field-added-retroactively': { verdict: 'breaking', rules: ['B:field-added'] },
  'pair-27-field-removed-in-new-version': { verdict: 'compatible', rules: ['C:version-added'] },
  'pair-29-reorder-fields': { verdict: 'breaking', rules: ['B:field-moved'] },
  // Kafka rejects because its verifyVersionsMatchTopLevelMessage trips on the OLD header's
  // ClientId override ("none"); kipgen rejects for the wire reason: ClientId turns compact in v2.
  'pair-31-drop-field-flexible-override': { verdict: 'breaking', rules: ['B:encoding-changed'] },
  'pair-33-new-unstable-version': { verdict: 'compatible', rules: ['C:unstable-changed', 'C:version-added'] },
  'pair-35-header-identical': { verdict: 'compatible', rules: [] },
  'pair-37-new-schema-does-not-parse': { verdict: 'bad-input', rules: [] },
  'pair-39-identical-with-inline-structs': { verdict: 'compatible', rules: [] },
  'pair-41-nested-field-type-change': { verdict: 'breaking', rules: ['B:field-type-changed'] },
  'pair-43-nested-field-added-to-existing-version': { verdict: 'breaking', rules: ['B:field-added'] },
  'pair-45-identical-streams-heartbeat-common-structs': { verdict: 'compatible', rules: [] },
  'pair-47-common-struct-field-type-change': { verdict: 'breaking', rules: ['B:field-type-changed'] },
  'pair-49-common-struct-tagged-field-in-new-version': { verdict: 'compatible', rules: ['C:version-added'] },
  'pair-51-common-struct-inlined': { verdict: 'compatible', rules: [] },
  // Wire-tolerated (peers skip unknown tags) but Kafka rejects it, and so does kipgen: see RULES.md.
  'pair-53-nested-tagged-field-added-to-existing-version': { verdict: 'breaking', rules: ['B:tagged-field-added'] },
  'pair-55-common-struct-field-added-in-new-version-coordinator-value': { verdict: 'compatible', rules: ['C:version-added'] },
  'pair-57-identical-share-fetch-nested-stale-field-versions': { verdict: 'compatible', rules: [] },
};

/** Where kipgen's verdict differs from Kafka's, and why. Every other pair must agree. */
const EXCEPTIONS: Record<string, { kind: 'kipgen is stricter' | "Kafka's checker is wrong"; reason: string }> = {
  'pair-05-remove-lowest-version': {
    kind: 'kipgen is stricter',
    reason:
      'rule version-removed: kipgen lets only the lowest versions that OLD listed in deprecatedVersions go (deprecate, then remove, as KIP-896 did); this pair drops v0 without deprecating it. Kafka only forbids lowering the maximum.',
  },
  'pair-45-identical-streams-heartbeat-common-structs': {
    kind: "Kafka's checker is wrong",
    reason:
      'an unchanged spec: Kafka\'s Unifier looks up the common struct of the non-array struct field UserEndpoint by its field name instead of its type (Endpoint) and fails ("Unable to locate a specification for the structure UserEndpoint").',
  },
  'pair-57-identical-share-fetch-nested-stale-field-versions': {
    kind: "Kafka's checker is wrong",
    reason:
      'an unchanged upstream spec: EvolutionVerifier.verifyVersionsMatchTopLevelMessage rejects the nested PartitionMaxBytes (versions "0") of ShareFetchRequest v1-2, a field that is simply never on the wire; the layout of every version is identical.',
  },
};

const base = (file: string): string => file.replace(/\.old\.json$/, '');
const agrees = (ours: Verdict, kafkaCompatible: boolean): boolean => (ours === 'compatible') === kafkaCompatible;

describe.runIf(shared !== undefined)("Kafka's evolution checker verdicts (../shared/conformance/evolution)", () => {
  const dir = join(shared ?? '', 'conformance', 'evolution');
  const pairs = shared ? (JSON.parse(readFileSync(join(dir, 'verdicts.json'), 'utf8')) as Pair[]) : [];

  it('has the 29 pairs this suite knows', () => {
    expect(pairs.map((p) => base(p.old)).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const pair of pairs) {
    const name = base(pair.old);
    const exception = EXCEPTIONS[name];
    const title = exception
      ? `${name}: ${exception.kind} (Kafka: ${pair.compatible ? 'compatible' : 'incompatible'}) — ${exception.reason}`
      : `${name}: agrees with Kafka (${pair.compatible ? 'compatible' : 'incompatible'}) — ${pair.description}`;
    it(title, () => {
      const outcome = diffPaths(join(dir, pair.old), join(dir, pair.new));
      const expected = EXPECTED[name]!;
      expect(outcome.verdict).toBe(expected.verdict);
      expect(rulesOf(outcome.report)).toEqual(expected.rules);
      expect(agrees(outcome.verdict, pair.compatible)).toBe(exception === undefined);
      if (outcome.verdict === 'bad-input') {
        // The loader's own diagnostic, located: Kafka's message for the same schema.
        expect(outcome.errors.map((e) => `${e.line}: ${e.message}`).join('\n')).toContain(pair.kafkaError ?? '');
      }
    });
  }

  it('agrees with Kafka on 26 of 29 pairs; the 3 others are the named exceptions', () => {
    let agreed = 0;
    for (const pair of pairs) {
      const outcome = diffPaths(join(dir, pair.old), join(dir, pair.new));
      if (agrees(outcome.verdict, pair.compatible)) agreed++;
    }
    expect(agreed).toBe(pairs.length - Object.keys(EXCEPTIONS).length);
    expect(agreed).toBe(26);
  });
});
