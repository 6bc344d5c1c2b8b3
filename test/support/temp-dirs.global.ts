/**
 * The run-wide half of the temp-folder check (the per-file half is
 * temp-dirs.setup.ts). A test file whose tests are all skipped (a suite that
 * needs ../shared, on a clone without it) runs no hooks at all, its
 * setup file's afterAll included: its `kipgen-testrun-*` folder, and whatever
 * its suites created while being collected, would stay in the temp folder.
 *
 * So the run gets a folder of its own, `kipgen-run-*`, which every test
 * process inherits as TMPDIR; the per-file folders are made inside it. At the
 * end of the run a per-file folder still there belongs to a file whose
 * afterAll never ran: if it holds a `kipgen-*` entry the run fails, naming the
 * file and the entry; either way the run folder goes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Written by temp-dirs.setup.ts into each per-file folder: the test file it belongs to. */
export const TEST_FILE_MARKER = '.test-file';

/**
 * One run folder per vitest process, shared by its projects (unit, chaos):
 * each project runs this setup, and only the last teardown checks and removes.
 */
interface RunFolder {
  dir: string;
  previous: string | undefined;
  users: number;
}
const shared = globalThis as { kipgenTestRun?: RunFolder };

export default function setup(): () => void {
  const run = (shared.kipgenTestRun ??= openRun());
  run.users++;
  return () => {
    if (--run.users > 0) return;
    delete shared.kipgenTestRun;
    closeRun(run);
  };
}

function openRun(): RunFolder {
  const outer = os.tmpdir();
  const previous = process.env.TMPDIR;
  const dir = fs.mkdtempSync(path.join(outer, 'kipgen-run-'));
  // tsx's transform cache stays shared across runs (see temp-dirs.setup.ts).
  const tsxCache = `tsx-${os.userInfo().uid}`;
  fs.mkdirSync(path.join(outer, tsxCache), { recursive: true });
  fs.symlinkSync(path.join(outer, tsxCache), path.join(dir, tsxCache));
  process.env.TMPDIR = dir;
  return { dir, previous, users: 0 };
}

function closeRun({ dir, previous }: RunFolder): void {
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  const leaks: string[] = [];
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith('kipgen-testrun-')) continue;
    const fileTmp = path.join(dir, name);
    const left = fs.readdirSync(fileTmp).filter((entry) => entry.startsWith('kipgen-'));
    if (left.length === 0) continue;
    const marker = path.join(fileTmp, TEST_FILE_MARKER);
    const file = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : name;
    leaks.push(`${file} left ${left.sort().join(', ')}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  if (leaks.length > 0) {
    // Vitest logs an error thrown here but still exits 0: the exit code is set too.
    process.exitCode = 1;
    throw new Error(
      `test files whose hooks did not run (all their tests skipped) left temp folders behind: ${leaks.join('; ')} (create folders in beforeAll, not while the suite is collected)`,
    );
  }
}
