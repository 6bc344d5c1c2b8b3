#!/usr/bin/env node
// Builds the four published packages from the top-level source folders
// (docs/DESIGN.md §1 layout; nothing moves): compiles once with tsconfig.build.json
// into dist/, then copies each package's folders into packages/<name>/dist/
// and rewrites every relative import that leaves the package into an import
// of the owning package by name ('../runtime/index.js' → '@kipgen/codecs/runtime').
// An import of a folder no package owns fails the build.
//
//   node packages/build.mjs            build all four
//   node packages/build.mjs --no-tsc   reuse dist/ as it is
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Package folder → its npm name and the top-level source folders it ships (its package.json's "sourceFolders"). */
export const PACKAGES = Object.fromEntries(
  ['codecs', 'client', 'broker', 'kipgen'].map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
    return [dir, { name: manifest.name, folders: manifest.sourceFolders }];
  }),
);

/** How another package reaches a module of a folder: its entry, or a subpath export. */
function specifierFor(folder, file) {
  const base = file.replace(/\.js$/, '');
  switch (folder) {
    case 'generated':
      return base === 'index' ? '@kipgen/codecs' : `@kipgen/codecs/generated/${base}`;
    case 'runtime':
      return base === 'index' ? '@kipgen/codecs/runtime' : `@kipgen/codecs/runtime/${base}`;
    case 'connection':
      if (base === 'connection') return '@kipgen/client/connection';
      break;
    case 'client':
      if (base === 'index') return '@kipgen/client';
      break;
    case 'coordinator':
      if (base === 'index') return '@kipgen/broker';
      if (base === 'cli') return '@kipgen/broker/cli';
      break;
  }
  return undefined;
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\2/g;

function rewrite(text, fileInDist, own, problems) {
  return text.replace(SPECIFIER, (whole, lead, quote, spec) => {
    const target = relative(join(ROOT, 'dist'), resolve(dirname(fileInDist), spec)).split(/[\\/]/);
    const folder = target[0];
    if (own.includes(folder)) return whole;
    const mapped = target.length === 2 ? specifierFor(folder, target[1]) : undefined;
    if (mapped === undefined) {
      problems.push(`${relative(ROOT, fileInDist)} imports ${spec} (${target.join('/')}), which no package exports`);
      return whole;
    }
    return `${lead}${quote}${mapped}${quote}`;
  });
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

export function assemble() {
  const problems = [];
  for (const [dir, pkg] of Object.entries(PACKAGES)) {
    const out = join(ROOT, 'packages', dir, 'dist');
    rmSync(out, { recursive: true, force: true });
    for (const folder of pkg.folders) {
      const from = join(ROOT, 'dist', folder);
      if (!existsSync(from)) throw new Error(`dist/${folder} is missing: run tsc -p tsconfig.build.json`);
      for (const file of filesUnder(from)) {
        if (!/\.(js|d\.ts)$/.test(file)) continue;
        const to = join(out, relative(join(ROOT, 'dist'), file));
        mkdirSync(dirname(to), { recursive: true });
        writeFileSync(to, rewrite(readFileSync(file, 'utf8'), file, pkg.folders, problems));
      }
    }
  }
  // The generator reads its templates and the spec-format schema from its package root (generator/package-root.ts),
  // and `kipgen demo` the schemas @kipgen/codecs was generated from (generator/demo.ts).
  const kipgenDist = join(ROOT, 'packages', 'kipgen', 'dist');
  cpSync(join(ROOT, 'templates'), join(kipgenDist, 'templates'), { recursive: true });
  cpSync(join(ROOT, 'message-schemas'), join(kipgenDist, 'message-schemas'), { recursive: true });
  cpSync(join(ROOT, 'generator', 'spec-format.schema.json'), join(kipgenDist, 'generator', 'spec-format.schema.json'));
  // The kipgen-broker bin's one-file build (bin/kipgen-broker.mjs imports it).
  bundleBrokerCli(join(ROOT, 'dist'), join(ROOT, 'packages', 'broker', 'dist', 'kipgen-broker.js'));
  if (problems.length > 0) throw new Error(`imports that leave their package:\n  ${problems.join('\n  ')}`);
}

/**
 * The kipgen-broker command as one file, from a tsc output folder (dist/, or the
 * bench's compile). Node 20's ESM loader pays for every module it resolves and reads,
 * and the broker's CLI loads 287 of them (coordinator/, client/, generated/,
 * runtime/): measured on the 2-core CI machine, the process served after about
 * 210 ms unbundled and 120 ms bundled, where a Node that runs nothing takes 45 ms.
 * A test suite that spawns brokers pays that for every one, so the bin runs the
 * bundle; the library entry (`@kipgen/broker`, imported in-process) stays modular
 * and shares @kipgen/codecs and @kipgen/client with the application. npm packages
 * stay imports (commander, CRC-32C, the codec libraries), loaded as installed; the
 * bundle resolves them from @kipgen/broker, so its package.json lists them itself.
 * Unminified: stack traces stay readable.
 */
export function bundleBrokerCli(compiledRoot, outFile) {
  buildSync({
    entryPoints: [join(compiledRoot, 'coordinator', 'cli.js')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    legalComments: 'none',
    logLevel: 'warning',
  });
}

/** Installed-size helper for the README: bytes of every file under a folder. */
export function folderBytes(dir) {
  return filesUnder(dir).reduce((sum, f) => sum + statSync(f).size, 0);
}

/**
 * A status line while the build runs (tsc alone takes 20 s): on a terminal only,
 * rewritten in place and cleared at the end, so that piped output (CI, tests)
 * is what it was. The same as generator/progress.ts, which this script cannot import.
 */
export function statusLine(stream = process.stderr) {
  return (text) => {
    if (stream.isTTY !== true) return;
    stream.write(text === '' ? '\r\x1b[K' : `\r\x1b[Kbuild:packages: ${text}`);
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const status = statusLine();
  if (!process.argv.includes('--no-tsc')) {
    status('compiling with tsc -p tsconfig.build.json (about 20 s)…');
    rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
    try {
      // Piped, not inherited: tsc's errors are printed after the status line is cleared, not onto it.
      execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], {
        stdio: 'pipe',
        cwd: ROOT,
      });
    } catch (error) {
      status('');
      process.stdout.write(error.stdout ?? '');
      process.stderr.write(error.stderr ?? '');
      throw error;
    }
    status('');
  }
  status('assembling packages/*/dist…');
  try {
    assemble();
  } finally {
    status('');
  }
  for (const [dir, pkg] of Object.entries(PACKAGES)) {
    console.log(`${pkg.name.padEnd(16)} packages/${dir}/dist  ${(folderBytes(join(ROOT, 'packages', dir, 'dist')) / 1024).toFixed(0)} KiB`);
  }
}
