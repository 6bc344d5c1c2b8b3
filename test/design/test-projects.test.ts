/**
 * `npm test` needs Node alone: whatever needs a Debian tool (kcat, tshark,
 * confluent-kafka-python) lives in test/interop/, which only `npm run
 * test:interop` runs. A test outside it that reached for one of them would
 * fail on a fresh machine; this finds it first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { INTEROP_TOOLS, installHint } from '../interop/support/tools.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const TOOLS = /\b(kcat|tshark|dumpcap|python3?|confluent_kafka|requireTool|requireInteropTool)\b/;

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mjs|js|py)$/.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe('test projects', () => {
  it('only test/interop/ uses the Debian tools', () => {
    const outside = ['test', 'examples', 'chaos', 'bench']
      .flatMap(files)
      .filter((f) => !f.startsWith('test/interop/') && f !== 'test/design/test-projects.test.ts');
    expect(outside.length).toBeGreaterThan(50);
    expect(outside.filter((f) => TOOLS.test(readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('the install line names every tool and its Debian package', () => {
    expect(installHint(INTEROP_TOOLS)).toBe(
      'npm run test:interop needs kcat, tshark, confluent-kafka-python, not found here: install with `sudo apt-get install -y --no-install-recommends kcat tshark python3-confluent-kafka` (Debian/Ubuntu; .ci/run does this). npm test needs none of them.',
    );
  });
});
