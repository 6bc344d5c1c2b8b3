/**
 * `npm run test:kafka` on a machine without Java says so in one line (what is
 * missing and the command that installs it) and exits 2, instead of a stack
 * trace from the first test.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-path-'));
afterAll(() => fs.rmSync(bin, { recursive: true, force: true }));

describe('the test:kafka prerequisite check', () => {
  it('without java on PATH: one line naming java and the Debian package, exit 2', () => {
    // A PATH with node and nothing else.
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const run = spawnSync(path.join(bin, 'node'), ['--import', 'tsx', path.join(ROOT, 'test/kafka/support/prerequisites.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: bin },
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/needs Java 17\+ \(`java` not found on PATH\).*default-jdk-headless/);
  });
});
