import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wireSignature, messageLayout } from '../../generator/diff/layout.js';
import { loadTree } from '../../generator/diff/load-tree.js';
import { diffPaths, FIXTURES, rulesOf } from './support.js';

// Our own evolution cases (test/fixtures/evolution/): for every rule, an OLD
// schema, one or more broken NEW variants that must trip it, and a fine variant
// that makes the intended change the safe way and must have no breaking change.

interface Case {
  /** Exact rules each broken variant reports. */
  broken: Record<string, string[]>;
  /** Exact rules the fine variant reports (never a breaking one). */
  fine: string[];
  /** Changes of the fine variant that break the TypeScript API (not the wire). */
  fineApiBreak?: boolean;
}

const FILE_CASES: Record<string, Case> = {
  'field-type-changed': { broken: { broken: ['B:field-type-changed'] }, fine: ['C:version-added'] },
  'field-added': { broken: { broken: ['B:field-added'] }, fine: ['C:version-added'] },
  'field-versions-widened': { broken: { broken: ['B:field-added', 'C:version-added'] }, fine: ['C:version-added'] },
  'field-removed': { broken: { broken: ['B:field-removed'] }, fine: ['C:version-added'] },
  // Same type, swapped: Kafka's positional checker passes this; the values land in each other's fields.
  'field-moved': { broken: { broken: ['B:field-moved'] }, fine: ['C:version-added'] },
  'field-renamed': { broken: { broken: ['B:field-type-changed', 'C:field-renamed'] }, fine: ['C:field-renamed'], fineApiBreak: true },
  'struct-renamed': { broken: { broken: ['B:field-type-changed', 'C:struct-renamed'] }, fine: ['C:struct-renamed'], fineApiBreak: true },
  'nullability-changed': {
    broken: { broken: ['B:nullability-changed'], 'broken-2': ['B:default-changed', 'B:nullability-changed'] },
    fine: ['C:version-added'],
  },
  'encoding-changed': { broken: { broken: ['B:encoding-changed'] }, fine: ['C:version-added'] },
  'default-changed': { broken: { broken: ['B:default-changed'] }, fine: ['C:version-added'] },
  'flexible-versions-changed': {
    broken: { broken: ['B:flexible-versions-changed'], 'broken-2': ['B:flexible-versions-changed', 'B:tagged-field-removed', 'C:version-added'] },
    fine: ['C:version-added'],
  },
  'header-version-changed': { broken: { broken: ['B:header-version-changed'] }, fine: ['C:version-added'] },
  'tagged-field-added': { broken: { broken: ['B:tagged-field-added'] }, fine: ['C:version-added'] },
  'tagged-field-removed': { broken: { broken: ['B:tagged-field-removed'] }, fine: ['C:field-renamed'], fineApiBreak: true },
  'tag-changed': { broken: { broken: ['B:tag-changed', 'B:tag-reused', 'C:version-added'] }, fine: ['C:version-added'] },
  'tag-reused': {
    broken: { broken: ['B:tag-reused', 'C:deprecated-version-removed', 'C:deprecated-versions-changed', 'C:version-added'] },
    fine: ['C:deprecated-version-removed', 'C:deprecated-versions-changed', 'C:version-added'],
  },
  'tagging-changed': { broken: { broken: ['B:tagging-changed'] }, fine: ['C:version-added'] },
  'version-removed': { broken: { broken: ['B:version-removed'], 'broken-2': ['B:version-removed'] }, fine: ['C:deprecated-version-removed'] },
  'version-added-below-lowest': { broken: { broken: ['B:version-added-below-lowest'] }, fine: ['C:version-added'] },
  'version-added': {
    broken: { broken: ['B:field-removed', 'C:version-added'] },
    fine: ['C:deprecated-versions-changed', 'C:unstable-changed', 'C:version-added'],
  },
  'api-key-changed': { broken: { broken: ['B:api-key-changed'] }, fine: ['C:version-added'] },
  'type-changed': { broken: { broken: ['B:header-version-changed', 'B:type-changed'] }, fine: ['C:version-added'] },
};

const TREE_CASES: Record<string, Case> = {
  'message-removed': { broken: { broken: ['B:message-removed'], 'broken-2': ['B:message-removed'] }, fine: ['C:message-added'] },
  'api-key-reused': { broken: { broken: ['B:api-key-reused'] }, fine: ['C:message-added'] },
  'api-pairing': { broken: { broken: ['B:api-pairing', 'C:version-added'] }, fine: ['C:version-added'] },
  'message-renamed': { broken: { broken: ['B:field-type-changed', 'C:message-renamed'] }, fine: ['C:message-renamed'], fineApiBreak: true },
};

function check(oldPath: string, dir: string, c: Case, ext: '.json' | ''): void {
  for (const [variant, rules] of Object.entries(c.broken)) {
    it(`${variant}: ${rules.filter((r) => r.startsWith('B:')).join(', ')}`, () => {
      const outcome = diffPaths(oldPath, join(dir, variant + ext));
      expect(outcome.verdict).toBe('breaking');
      expect(rulesOf(outcome.report)).toEqual(rules);
    });
  }
  it(`fine: ${c.fine.join(', ')}`, () => {
    const outcome = diffPaths(oldPath, join(dir, `fine${ext}`));
    expect(outcome.verdict).toBe('compatible');
    expect(rulesOf(outcome.report)).toEqual(c.fine);
    expect(outcome.report!.changes.some((ch) => ch.apiBreak)).toBe(c.fineApiBreak ?? false);
  });
}

describe('evolution rules on our own schema pairs', () => {
  for (const [rule, c] of Object.entries(FILE_CASES)) {
    describe(rule, () => check(join(FIXTURES, rule, 'old.json'), join(FIXTURES, rule), c, '.json'));
  }
  describe('unchanged', () => {
    it('a schema compared with itself has no change', () => {
      const outcome = diffPaths(join(FIXTURES, 'field-added', 'old.json'), join(FIXTURES, 'field-added', 'old.json'));
      expect(outcome.verdict).toBe('compatible');
      expect(outcome.report!.changes).toEqual([]);
    });
  });
});

describe('evolution rules across a schema tree', () => {
  for (const [rule, c] of Object.entries(TREE_CASES)) {
    describe(rule, () => check(join(FIXTURES, 'tree', 'old'), join(FIXTURES, 'tree', rule), c, ''));
  }
});

describe('what a report says', () => {
  it('names the message, the versions, the field path, the location and the reason', () => {
    const { report } = diffPaths(join(FIXTURES, 'field-type-changed', 'old.json'), join(FIXTURES, 'field-type-changed', 'broken.json'));
    expect(report!.changes).toEqual([
      {
        severity: 'breaking',
        rule: 'field-type-changed',
        message: 'WidgetRequest',
        versions: '0-1',
        path: 'MemberEpoch',
        detail: 'int32 → int64',
        why: 'the peer reads a different number or kind of bytes',
        location: expect.stringMatching(/field-type-changed\/broken\.json:\d+:5$/),
      },
    ]);
  });

  it('gives nested fields their full path', () => {
    const { report } = diffPaths(join(FIXTURES, 'struct-renamed', 'old.json'), join(FIXTURES, 'struct-renamed', 'broken.json'));
    expect(report!.changes.find((c) => c.rule === 'field-type-changed')!.path).toBe('Topics[].Partitions');
  });

  it('says which versions a removal touches and that they were not deprecated', () => {
    const { report } = diffPaths(join(FIXTURES, 'version-removed', 'old.json'), join(FIXTURES, 'version-removed', 'broken-2.json'));
    expect(report!.changes[0]).toMatchObject({ rule: 'version-removed', versions: '1', detail: 'validVersions 0-2 → 2, but deprecatedVersions was 0' });
  });
});

describe('the verdict follows the bytes', () => {
  // For every pair above: a version both sides declare whose wire signature
  // differs must carry a breaking change, and a compatible verdict means every
  // shared version has the same signature (or a breaking rule that is stricter
  // than the bytes, such as field-moved, said otherwise).
  const pairs: [string, string][] = [];
  for (const [rule, c] of Object.entries(FILE_CASES)) {
    for (const v of [...Object.keys(c.broken), 'fine']) pairs.push([join(FIXTURES, rule, 'old.json'), join(FIXTURES, rule, `${v}.json`)]);
  }
  it.each(pairs)('%s → %s', (oldPath, newPath) => {
    const [o] = loadTree(oldPath).specs.map(messageLayout);
    const [n] = loadTree(newPath).specs.map(messageLayout);
    const { report } = diffPaths(oldPath, newPath);
    for (const [v, layout] of o!.versions) {
      const other = n!.versions.get(v);
      if (other === undefined) continue;
      if (wireSignature(layout) !== wireSignature(other)) {
        const broken = report!.changes.some((c) => c.severity === 'breaking' && c.versions !== undefined && covers(c.versions, v));
        expect(broken, `v${v} changed on the wire without a breaking change`).toBe(true);
      }
    }
  });
});

function covers(ranges: string, v: number): boolean {
  return ranges.split(', ').some((r) => {
    const [a, b] = r.split('-').map(Number);
    return v >= a! && v <= (b ?? a)!;
  });
}
