import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from '../../generator/diagnostics.js';
import { compareTrees, type DiffReport } from '../../generator/diff/compare.js';
import { messageLayout } from '../../generator/diff/layout.js';
import { loadTree } from '../../generator/diff/load-tree.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(REPO, 'test', 'fixtures', 'evolution');

/** ../shared (or $KIPGEN_SHARED), when this checkout has it. */
export function sharedDir(): string | undefined {
  const candidate = process.env.KIPGEN_SHARED ?? join(REPO, '..', 'shared');
  return existsSync(join(candidate, 'conformance')) ? candidate : undefined;
}

export type Verdict = 'compatible' | 'breaking' | 'bad-input';

export interface DiffOutcome {
  verdict: Verdict;
  report: DiffReport | undefined;
  errors: Diagnostic[];
}

/** What `kipgen diff OLD NEW` decides, without spawning it. */
export function diffPaths(oldPath: string, newPath: string): DiffOutcome {
  const olds = loadTree(oldPath);
  const news = loadTree(newPath);
  const errors = [...olds.diagnostics, ...news.diagnostics].filter((d) => d.severity === 'error');
  if (errors.length > 0) return { verdict: 'bad-input', report: undefined, errors };
  const report = compareTrees(olds.specs.map(messageLayout), news.specs.map(messageLayout), { pairSingle: olds.singleFile && news.singleFile });
  return { verdict: report.breaking > 0 ? 'breaking' : 'compatible', report, errors };
}

/** Rules reported, as `B:rule` / `C:rule`, sorted and without duplicates. */
export function rulesOf(report: DiffReport | undefined): string[] {
  return [...new Set((report?.changes ?? []).map((c) => `${c.severity === 'breaking' ? 'B' : 'C'}:${c.rule}`))].sort();
}

export function kipgen(args: string[], cwd = REPO): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(REPO, 'bin', 'kipgen.mjs'), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
