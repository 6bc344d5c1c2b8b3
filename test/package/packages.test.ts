/**
 * The four published packages as a user gets them: built (packages/build.mjs),
 * packed with `npm pack`, installed from the tarballs into a scratch project
 * that has nothing else (its other dependencies come from the npm registry or
 * npm's cache), and used by package name only:
 *
 * - a codec round trip through @kipgen/codecs, and record batches in every
 *   compression codec (whose libraries are its optional dependencies);
 * - KIP-1289's consume-transform-produce loop through @kipgen/client against
 *   @kipgen/broker's startBroker;
 * - `npx kipgen generate` on a folder of schemas, the output type-checked by
 *   tsc under strict settings, compiled and run;
 * - the broker README's embedded-Kafka vitest example, as written;
 * - no installed file imports a relative path outside its own package, and
 *   each package has a README without links that break on the registry's page.
 *
 * Prints each package's installed size and dependency count.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const PACKAGES = { codecs: '@kipgen/codecs', client: '@kipgen/client', broker: '@kipgen/broker', kipgen: 'kipgen' } as const;
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};

let scratch = '';
let app = '';
const tarballs: Record<string, string> = {};

function sh(command: string, args: string[], cwd: string, timeout = 240_000): string {
  return execFileSync(command, args, { cwd, stdio: 'pipe', timeout, encoding: 'utf8' });
}
function node(args: string[], cwd = app): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 120_000 });
}
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}
function bytes(dir: string): number {
  return files(dir).reduce((sum, f) => sum + statSync(f).size, 0);
}
/** The package and every package it depends on, transitively, as installed in the scratch project. */
function closure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    if (existsSync(join(app, 'node_modules', dep, 'package.json'))) closure(dep, seen);
  }
  return seen;
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'kipgen-packages-'));
  sh(process.execPath, [join(ROOT, 'packages', 'build.mjs')], ROOT, 300_000);
  for (const dir of Object.keys(PACKAGES)) {
    const out = sh(NPM, ['pack', '--silent', '--pack-destination', scratch], join(ROOT, 'packages', dir))
      .trim()
      .split('\n')
      .pop()!;
    tarballs[dir] = join(scratch, out);
  }
  app = join(scratch, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  sh(
    NPM,
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      ...Object.values(tarballs),
      `typescript@${rootManifest.devDependencies.typescript}`,
      `@types/node@${rootManifest.devDependencies['@types/node']}`,
      `vitest@${rootManifest.devDependencies.vitest}`,
    ],
    app,
    400_000,
  );
  cpSync(join(ROOT, 'test', 'package', 'app'), app, { recursive: true });
}, 900_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the published packages, installed from their tarballs', () => {
  it('declare the same dependency versions as the repository, and each ships a README whose links work on the registry page', () => {
    for (const dir of Object.keys(PACKAGES)) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
        optionalDependencies?: Record<string, string>;
        version: string;
      };
      for (const [dep, version] of Object.entries(manifest.dependencies)) {
        expect(version, `${dir}: ${dep}`).toBe(dep.startsWith('@kipgen/') ? manifest.version : rootManifest.dependencies[dep]);
      }
      for (const [dep, version] of Object.entries(manifest.optionalDependencies ?? {})) {
        expect(version, `${dir}: optional ${dep}`).toBe(rootManifest.optionalDependencies[dep]);
      }
      const readme = readFileSync(join(app, 'node_modules', PACKAGES[dir as keyof typeof PACKAGES], 'README.md'), 'utf8');
      const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
      expect(
        links.filter((l) => !/^(https:\/\/|#)/.test(l)),
        `${dir}/README.md: relative links break on the registry page`,
      ).toEqual([]);
    }
  });

  it('import nothing outside their own package by a relative path', () => {
    const escapes: string[] = [];
    for (const name of Object.values(PACKAGES)) {
      const root = join(app, 'node_modules', name);
      for (const file of files(root).filter((f) => /\.(m?js|d\.ts)$/.test(f))) {
        for (const m of readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
          if (relative(root, resolve(dirname(file), m[1]!)).startsWith('..')) escapes.push(`${relative(app, file)}: ${m[1]}`);
        }
      }
    }
    expect(escapes).toEqual([]);
  });

  it('@kipgen/codecs: a codec round trip, with no generator, networking or client code installed', () => {
    const run = node(['codec-roundtrip.mjs']);
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      hex: '03' + '7478' + '000000000000002a' + '0003' + '01' + '00',
      json: { transactionalId: 'tx', producerId: '42', producerEpoch: 3, committed: true },
      api: 'EndTxn',
      reader: 'function',
      error: expect.stringMatching(/^EndTxnRequest\.producerId: needs 8 bytes/),
      metadataTopics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'orders' }],
      // The codec libraries are optional dependencies: installed from the registry with the package, loaded on first use.
      codecs: ['gzip:500', 'snappy:500', 'lz4:500', 'zstd:500'],
      crc32c: 'native',
    });
    const deps = [...closure('@kipgen/codecs')].sort();
    expect(deps.filter((d) => /ts-morph|prettier|handlebars|ajv|commander|prom-client|@kipgen\/(client|broker)/.test(d))).toEqual([]);
  });

  it('@kipgen/codecs installed with --omit=optional (no codec libraries, no native CRC-32C) imports and works', () => {
    // What the codecs README advises for a lean install. It also drops @node-rs/crc32's
    // platform binary (an optional dependency of that package), so CRC-32C falls back to JavaScript.
    const lean = join(scratch, 'lean');
    mkdirSync(lean);
    writeFileSync(join(lean, 'package.json'), JSON.stringify({ name: 'lean', private: true, type: 'module' }));
    sh(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--omit=optional', tarballs.codecs!], lean, 300_000);
    expect(existsSync(join(lean, 'node_modules', '@node-rs', 'crc32', 'package.json'))).toBe(true);
    cpSync(join(ROOT, 'test', 'package', 'app', 'codec-lean.mjs'), join(lean, 'codec-lean.mjs'));
    const run = node(['codec-lean.mjs'], lean);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { crc32c: { kind: string; description: string }; roundTrip: unknown; codecs: string[] };
    expect(out.crc32c.kind).toBe('javascript');
    expect(out.crc32c.description).toMatch(/^CRC-32C: JavaScript fallback, slower \(@node-rs\/crc32's native binding did not load: /);
    expect(out.roundTrip).toEqual({ transactionalId: 'tx', producerId: '7', producerEpoch: 0, committed: false });
    expect(out.codecs).toEqual(['none:300', 'gzip:300', 'snappy:needs snappy-wasm', 'lz4:needs lz4-napi', 'zstd:needs @toondepauw/node-zstd']);
  });

  it('@kipgen/client + @kipgen/broker: the KIP-1289 consume-transform-produce loop against startBroker', () => {
    const run = node(['consume-transform-produce.mjs']);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { priced: number; transactions: number; left: number; output: string[] };
    expect(out.priced).toBe(6);
    expect(out.left).toBe(0);
    expect(out.transactions).toBeGreaterThan(0);
    expect(out.output).toEqual(['order-0=2', 'order-1=4', 'order-2=6', 'order-3=8', 'order-4=10', 'order-5=12']);
  });

  it('kipgen: `npx kipgen generate` on a schema folder; the output imports @kipgen/codecs, type-checks under strict tsc, and runs', () => {
    const schemas = join(app, 'schemas');
    mkdirSync(schemas);
    for (const f of ['EndTxnRequest.json', 'EndTxnResponse.json']) cpSync(join(ROOT, 'message-schemas', f), join(schemas, f));
    const gen = spawnSync(NPM, ['exec', '--offline', '--', 'kipgen', 'generate', '--schemas', 'schemas', '--out', 'src/gen'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(gen.status, gen.stderr).toBe(0);
    expect(gen.stdout).toMatch(/kipgen generate: 2 codecs and index\.ts in src\/gen\//);
    const generated = readFileSync(join(app, 'src', 'gen', 'EndTxnRequest.ts'), 'utf8');
    expect(generated).toMatch(/from '@kipgen\/codecs\/runtime'/);
    writeFileSync(
      join(app, 'src', 'main.ts'),
      `import { EndTxnRequest } from './gen/index.js';\nconst m = EndTxnRequest.create({ transactionalId: 't', producerId: 1n });\nconsole.log(Buffer.from(EndTxnRequest.encode(m, 3)).toString('hex'));\n`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          outDir: 'out',
          rootDir: 'src',
        },
        include: ['src'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    const run = node(['out/main.js']);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('02' + '74' + '0000000000000001' + '0000' + '00' + '00');

    const broker = spawnSync(join(app, 'node_modules', '.bin', 'kipgen'), ['broker', '--help'], { cwd: app, encoding: 'utf8' });
    expect(broker.stdout).toMatch(/Usage: kipgen broker/);
    const version = spawnSync(join(app, 'node_modules', '.bin', 'kipgen'), ['--version'], { cwd: app, encoding: 'utf8' });
    expect([version.status, version.stdout]).toEqual([0, '0.1.0\n']);
  });

  it('what a user meets first: kipgen-broker --help under its own name, pointing at no file the package lacks; kipgen generate and demo without schemas', () => {
    const bin = join(app, 'node_modules', '.bin', 'kipgen-broker');
    const help = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: kipgen-broker \[options\] \[command\]\n/);
    expect(help.stdout).toMatch(/\n {2}broker \[options\] .*\n[\s\S]*\n {2}dump-log \[options\] <path>/);
    const brokerHelp = spawnSync(bin, ['broker', '--help'], { cwd: app, encoding: 'utf8' });
    expect(brokerHelp.stdout).toMatch(/^Usage: kipgen-broker broker \[options\]/);
    const shipped = join(app, 'node_modules', '@kipgen', 'broker');
    for (const text of [help.stdout, brokerHelp.stdout]) {
      for (const [file] of text.replace(/\s+/g, ' ').matchAll(/[\w./-]+\.md\b/g))
        expect(existsSync(join(shipped, file)), `${file}, named by the help`).toBe(true);
      expect(text).not.toMatch(/coordinator\//);
    }
    expect(brokerHelp.stdout.replace(/\s+/g, ' ')).toContain('the @kipgen/broker README, "Config file"');
    expect(readFileSync(join(shipped, 'README.md'), 'utf8')).toMatch(/\n## Config file\n/);

    // The user's project has no message-schemas/ folder.
    const gen = spawnSync(NPM, ['exec', '--offline', '--', 'kipgen', 'generate'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    expect(gen.status).toBe(2);
    expect(gen.stderr).toContain(
      `kipgen generate: no message-schemas/ folder in ${app} (the default for --schemas). Pass your Kafka-style JSON message schemas, a folder or files: kipgen generate --schemas <folder> --out <folder for the codecs>`,
    );
    expect(gen.stderr).not.toMatch(/ENOENT/);
    const demo = spawnSync(NPM, ['exec', '--offline', '--', 'kipgen', 'demo'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    expect(demo.status, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/\n(\d+) of \1 request\/response versions encoded, decoded and re-encoded byte for byte\.\n$/);
  });

  it('kipgen-broker (the bin, run from its one-file build) serves a producer and a consumer, zstd batches included, and stops cleanly on SIGTERM', () => {
    expect(existsSync(join(app, 'node_modules', '@kipgen', 'broker', 'dist', 'kipgen-broker.js'))).toBe(true);
    const run = node(['bin-broker.mjs']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({ values: ['a', 'b', 'c'], exit: { code: 0, signal: null } });
  });

  it("@kipgen/broker's README example (an embedded Kafka in a vitest test) runs as written", () => {
    const readme = readFileSync(join(ROOT, 'packages', 'broker', 'README.md'), 'utf8');
    const example = /## An embedded Kafka in a test\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    writeFileSync(join(app, 'embedded-broker.test.ts'), example!);
    const run = node([join(app, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'embedded-broker.test.ts', '--reporter=json']);
    const report = JSON.parse(run.stdout) as { numPassedTests: number; numFailedTests: number };
    expect([report.numPassedTests, report.numFailedTests], run.stderr).toEqual([1, 0]);
  });

  it('installed sizes (printed)', () => {
    const lines: string[] = [];
    for (const name of Object.values(PACKAGES)) {
      const deps = closure(name);
      const own = bytes(join(app, 'node_modules', name));
      const total = [...deps].reduce((sum, d) => sum + bytes(join(app, 'node_modules', d)), 0);
      lines.push(`${name}: ${(own / 1024).toFixed(0)} KiB itself, ${(total / 1024).toFixed(0)} KiB installed with its ${deps.size - 1} dependencies`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    expect(lines).toHaveLength(4);
  });
});
