/**
 * Tests remove what they create: every test file runs with its own TMPDIR
 * (test/support/temp-dirs.setup.ts) and fails if it leaves a `kipgen-*`
 * folder behind, so a full run that passes leaves none. Here that check is
 * shown to fail: a child vitest runs one file that forgets a folder and one
 * that does not; then files whose tests are all skipped, which run no hooks
 * (test/support/temp-dirs.global.ts catches those at the end of the run).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

describe('temp folders', () => {
  it('this file runs in its own kipgen-testrun-* temp folder', () => {
    expect(path.basename(os.tmpdir())).toMatch(/^kipgen-testrun-/);
  });

  it('a test file that leaves a kipgen-* folder fails, naming it; one that removes its folders passes; nothing is left', () => {
    const child = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        'test/design/fixtures/temp-dirs.vitest.config.ts',
        '--reporter=json',
        'fixtures/leaks',
        'fixtures/tidy',
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(child.status, child.stderr).toBe(1);
    const report = JSON.parse(child.stdout) as { testResults: { name: string; status: string; message: string }[] };
    const byFile = Object.fromEntries(report.testResults.map((r) => [path.basename(r.name), r]));
    expect(byFile['tidy.fixture.ts']!.status).toBe('passed');
    expect(byFile['leaks.fixture.ts']!.status).toBe('failed');
    expect(byFile['leaks.fixture.ts']!.message).toMatch(
      /^this test file left 1 temp folder\(s\) behind: kipgen-forgotten-\w+ \(remove what a test creates in afterEach\/afterAll\)/,
    );
    // The child ran in this file's temp folder; its per-file folders (and the forgotten one inside) are gone.
    expect(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('kipgen-'))).toEqual([]);
  });

  it('a file whose tests are all skipped (its hooks never run) and that made a folder while collected fails the run, naming it; nothing is left', () => {
    const child = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/design/fixtures/temp-dirs.vitest.config.ts', 'skipped'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(child.status, child.stderr).toBe(1);
    expect(child.stderr).toMatch(
      /test files whose hooks did not run \(all their tests skipped\) left temp folders behind: test\/design\/fixtures\/skipped-leaks\.fixture\.ts left kipgen-collected-\w+ \(create folders in beforeAll/,
    );
    expect(child.stderr).not.toMatch(/skipped-tidy/);
    // Neither the skipped files' kipgen-testrun-* folders nor the run's own folder stay.
    expect(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('kipgen-'))).toEqual([]);
  });
});
