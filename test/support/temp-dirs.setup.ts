/**
 * Every test file gets its own temp folder: os.tmpdir() (and the TMPDIR of
 * every process it spawns) points into a fresh `kipgen-testrun-*` folder for
 * the file's run. After the file's own afterAll hooks (setup-file hooks run
 * last), anything `kipgen-*` still in it was created by this file and not
 * removed: the file fails, naming it. Then the folder goes.
 *
 * So a full run that passes has left no `kipgen-*` folder behind, and the
 * check sees only this file's folders, not those of files running beside it
 * or of other runs on the machine. tsx's transform cache is shared through a
 * link, so that spawned `node --import tsx` processes start warm.
 *
 * A file whose tests are all skipped runs no hooks, this afterAll included:
 * the run-wide check (temp-dirs.global.ts) finds its folder at the end of the
 * run, named by the marker written here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect } from 'vitest';
import { TEST_FILE_MARKER } from './temp-dirs.global.js';

const outer = os.tmpdir();
const previous = process.env.TMPDIR;
const fileTmp = fs.mkdtempSync(path.join(outer, 'kipgen-testrun-'));
const tsxCache = `tsx-${os.userInfo().uid}`;
fs.mkdirSync(path.join(outer, tsxCache), { recursive: true });
fs.symlinkSync(path.join(outer, tsxCache), path.join(fileTmp, tsxCache));
process.env.TMPDIR = fileTmp;
fs.writeFileSync(path.join(fileTmp, TEST_FILE_MARKER), path.relative(process.cwd(), expect.getState().testPath ?? '(unknown test file)'));

/** The `kipgen-*` entries a test file left in its temp folder. */
export function leftBehind(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.startsWith('kipgen-'))
    .sort();
}

afterAll(() => {
  const left = leftBehind(fileTmp);
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  fs.rmSync(fileTmp, { recursive: true, force: true });
  if (left.length > 0) {
    throw new Error(`this test file left ${left.length} temp folder(s) behind: ${left.join(', ')} (remove what a test creates in afterEach/afterAll)`);
  }
});
