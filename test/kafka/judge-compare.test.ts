/**
 * The judge's comparison rules (support/judge.ts), on made-up lines: equal
 * steps pass, a listed difference passes only while both brokers still print
 * exactly the listed results, an unlisted difference or a stale entry fails,
 * a step only one broker printed is a difference, and a malformed output or
 * differences file is an error that says where.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareScenario, parseJudgeOutput, readDifferences, type Difference } from './support/judge.js';

const listed: Difference[] = [{ scenario: 's', steps: ['a', 'b'], kafka: 'K', kipgen: 'G', why: 'because' }];

describe('compareScenario', () => {
  it('counts equal steps and explains listed differences', () => {
    const c = compareScenario(
      's',
      [
        ['a', 'K'],
        ['b', 'K'],
        ['c', 'x'],
      ],
      [
        ['a', 'G'],
        ['b', 'G'],
        ['c', 'x'],
      ],
      listed,
    );
    expect(c).toMatchObject({ steps: 3, same: 1, unexplained: [], stale: [] });
    expect(c.explained.map((e) => e.step)).toEqual(['a', 'b']);
  });

  it('fails an unlisted difference, a listed one with other results, and a listed one that no longer differs', () => {
    const c = compareScenario(
      's',
      [
        ['a', 'K'],
        ['b', 'same'],
        ['c', 'x'],
      ],
      [
        ['a', 'other'],
        ['b', 'same'],
        ['c', 'y'],
      ],
      listed,
    );
    expect(c.unexplained).toEqual([
      's a: Kafka "K", kipgen "other"; listed with Kafka "K", kipgen "G"',
      expect.stringMatching(/^s c: Kafka "x", kipgen "y" \(not in .*differences\.json\)$/),
    ]);
    expect(c.stale).toEqual(['s b: listed as a difference, but both print "same"']);
  });

  it('a step only one broker printed is a difference; a listed step nobody printed is stale', () => {
    const c = compareScenario(
      's',
      [
        ['a', 'K'],
        ['x', '1'],
      ],
      [['a', 'G']],
      listed,
    );
    expect(c.unexplained).toEqual([expect.stringMatching(/^s x: Kafka "1", kipgen "\(no such step\)"/)]);
    expect(c.stale).toEqual(['s b: listed as a difference, but no broker printed this step']);
  });

  it('refuses a step printed twice', () => {
    expect(() =>
      compareScenario(
        's',
        [
          ['a', '1'],
          ['a', '2'],
        ],
        [],
        [],
      ),
    ).toThrow('s: step "a" printed twice by kafka');
  });
});

describe('parseJudgeOutput', () => {
  it('reads "<target> <scenario> <step>: <result>" lines, the first ": " ending the step', () => {
    const lines = parseJudgeOutput('k s1 send a: p0 offset=0\nk s1 read: x: y\nk done\n', ['k']);
    expect(lines.get('k')!.get('s1')).toEqual([
      ['send a', 'p0 offset=0'],
      ['read', 'x: y'],
    ]);
  });

  it('refuses an unknown target, a malformed line and a target without its done line', () => {
    expect(() => parseJudgeOutput('z s1 a: b\n', ['k'])).toThrow('judge output line 1');
    expect(() => parseJudgeOutput('k nonsense\n', ['k'])).toThrow('judge output line 1');
    expect(() => parseJudgeOutput('k s1 a: b\n', ['k'])).toThrow('no "k done" line');
  });
});

describe('readDifferences', () => {
  it('names the entry and field that is wrong', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-judge-diff-'));
    try {
      const file = path.join(dir, 'differences.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          differences: [
            { scenario: 's', steps: ['a'], kafka: 'K', kipgen: 'G', why: 'w' },
            { scenario: 's', steps: [], kafka: 'K', kipgen: 'G', why: 'w' },
          ],
        }),
      );
      expect(() => readDifferences(file)).toThrow(`${file}: differences[1].steps must be a non-empty array of step names`);
      fs.writeFileSync(file, JSON.stringify({ differences: [{ scenario: 's', steps: ['a'], kafka: 'K', kipgen: 'G' }] }));
      expect(() => readDifferences(file)).toThrow(`${file}: differences[0].why must be a non-empty string`);
      expect(readDifferences().length).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
