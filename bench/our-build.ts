// The JavaScript a user of our packages runs: tsc's output of runtime/ and generated/.
//
// The bench used to import our TypeScript through tsx, and tsx loads those modules through
// its require hooks: every imported binding became a getter call ("get index.ts" and
// "get sizes.ts" at the top of a CPU profile of ProduceRequest v11, a third of the time),
// so the figures measured tsx's module wrapper more than our codecs — v11 encodeChunks of
// 100 small batches at 60k ops/s through tsx, 100k+ compiled. The peers are plain JS from
// node_modules. So the bench compiles a tree's runtime/ and generated/ with the project's
// compiler options, as packages/build.mjs does for the published packages, and measures
// that; `--source` keeps the old way.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where children and worker threads find the compiled tree (inherited through the environment). */
export const OURS_JS_ENV = 'KIPGEN_BENCH_OURS_JS';
/** The same for the baseline tree (--baseline-tree), whose rows run beside ours in every round. */
export const BASELINE_JS_ENV = 'KIPGEN_BENCH_BASELINE_JS';

export type OursBuild = 'current' | 'baseline';

/** The entry points the bench imports; tsc follows their imports. */
const ENTRIES = ['generated/index.ts', 'runtime/index.ts', 'runtime/record-batch.ts', 'runtime/compression/index.ts'];

/**
 * Compiles `tree`'s runtime/ and generated/ into a fresh folder under this checkout's
 * node_modules (so that the compiled files resolve the same dependencies) and returns it.
 * Entry points a tree does not have (an older checkout) are left out.
 */
export function compileOurs(tree: string): string {
  const root = resolve(tree);
  const cache = join(REPO, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const out = mkdtempSync(join(cache, 'kipgen-bench-js-'));
  const entries = ENTRIES.map((e) => join(root, e)).filter((f) => existsSync(f));
  const options = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')).compilerOptions as Record<string, unknown>;
  const flags = ['target', 'module', 'moduleResolution'].flatMap((k) => [`--${k}`, String(options[k])]);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(
      process.execPath,
      [
        tsc,
        '--ignoreConfig',
        ...flags,
        '--types',
        'node',
        '--skipLibCheck',
        '--esModuleInterop',
        '--resolveJsonModule',
        '--isolatedModules',
        '--rootDir',
        root,
        '--outDir',
        out,
        ...entries,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    rmSync(out, { recursive: true, force: true });
    const e = error as { stdout?: Buffer; message: string };
    throw new Error(`compiling ${root}'s runtime/ and generated/ failed:\n${e.stdout?.toString() || e.message}`);
  }
  // node_modules is a package boundary: without its own package.json the files would load as CommonJS.
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
  return out;
}

/** The folder our modules are loaded from: the compiled tree when the bench made one, else this checkout's TypeScript. */
export function oursRoot(build: OursBuild = 'current'): { url: URL } {
  const js = process.env[build === 'current' ? OURS_JS_ENV : BASELINE_JS_ENV];
  if (build === 'baseline' && !js) throw new Error('internal: a baseline row without --baseline-tree');
  return { url: js ? pathToFileURL(`${resolve(js)}/`) : new URL('../', import.meta.url) };
}
