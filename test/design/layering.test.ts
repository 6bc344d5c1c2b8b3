import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// docs/DESIGN.md §1: data flows one way, schemas → generator → generated → runtime →
// connection → client and coordinator. Nothing in runtime/ imports connection/,
// client/ or coordinator/ (the codecs' package has no networking);
// the client and the coordinator never import each other. Programs that put
// the pieces together (examples/, chaos/, bench/, test/, bin/) may import
// anything. Every import counts: static, dynamic and `export … from`.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Folders each layer must not import from. */
const FORBIDDEN: Record<string, string[]> = {
  runtime: ['generated', 'connection', 'client', 'coordinator', 'generator', 'examples', 'chaos', 'bench', 'test'],
  connection: ['client', 'coordinator', 'generator', 'examples', 'chaos', 'bench', 'test'],
  generated: ['connection', 'client', 'coordinator', 'generator', 'examples', 'chaos', 'bench', 'test'],
  generator: ['connection', 'client', 'coordinator', 'examples', 'chaos', 'bench', 'test'],
  client: ['coordinator', 'generator', 'examples', 'chaos', 'bench', 'test'],
  coordinator: ['client', 'generator', 'examples', 'chaos', 'bench', 'test'],
};

/**
 * coordinator/'s top-level files that any of its folders may import: the
 * broker's shared vocabulary (the share-coordinator contract, the cluster
 * view, settings, coordinator-record layout, error codes, fault points,
 * metrics).
 */
const COORDINATOR_SHARED = [
  'broker-context.ts',
  'cluster.ts',
  'config.ts',
  'coordinator-record-layout.ts',
  'errors.ts',
  'faults.ts',
  'metrics.ts',
  'resolve-topic.ts',
];

/** The top-level files that put the folders together: they import anything, and no folder imports them. */
const COORDINATOR_ASSEMBLY = ['broker.ts', 'cli.ts', 'index.ts', 'broker-share-state-log.ts'];

/**
 * Which other coordinator/ folders (and, for a shared file, which folders)
 * each may import; every folder and shared file also imports the shared files.
 * log/ and net/ are the bottom: storage and peer connections know no
 * coordinator. share/ reaches the rest only through broker-context.ts. tools/
 * (the dump tool, which decodes every kind of record) sits above the folders
 * whose records it reads, and only assembly files import it.
 */
const COORDINATOR_MAY_IMPORT: Record<string, string[]> = {
  log: [],
  net: [],
  share: [],
  auth: ['net', 'admin', 'produce'], // rule-kit.ts: config resource types (admin/); api-acls.ts: transactional batches (produce/)
  server: ['auth', 'net'],
  admin: ['log', 'net'],
  group: ['log', 'txn'], // TxnOffsetCommit verifies through txn/verifier.ts
  txn: ['log', 'net', 'group'], // marker-writer.ts completes transactional offset commits
  produce: [],
  tools: ['log', 'group', 'txn'],
  // One definition per API (Kafka's KafkaApis): checks and wire shapes, handing the work to the domain folders.
  apis: ['auth', 'admin', 'group', 'log', 'net', 'produce', 'share', 'txn'],
  'broker-context.ts': [],
  'cluster.ts': ['log'], // syncDirectory, for the persisted topic ids
  'config.ts': ['auth', 'log', 'server'], // the security, flush and request-budget settings it validates
  'coordinator-record-layout.ts': [],
  'errors.ts': [],
  'faults.ts': [],
  'metrics.ts': ['log'], // the log flush statistics (Kafka's LogFlushStats) it reports
  'resolve-topic.ts': [],
};

/** The folder of a coordinator/ file (`txn`), or the file's name when it is top-level (`cluster.ts`). */
function coordinatorModuleOf(file: string): string {
  return relative(join(ROOT, 'coordinator'), file).split(/[\\/]/)[0]!;
}

function moduleLabel(module: string): string {
  return module.endsWith('.ts') ? module : `${module}/`;
}

/** The imports of a coordinator/ file that its row does not allow, each naming the file and the import. */
function coordinatorViolations(file: string, specifiers: string[]): string[] {
  const from = coordinatorModuleOf(file);
  const allowed = new Set([from, ...COORDINATOR_SHARED, ...(COORDINATOR_MAY_IMPORT[from] ?? [])]);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({ specifier, target: resolve(dirname(file), specifier).replace(/\.js$/, '.ts') }))
    .filter(({ target }) => !relative(join(ROOT, 'coordinator'), target).startsWith('..'))
    .map(({ specifier, target }) => ({ specifier, to: coordinatorModuleOf(target) }))
    .filter(({ to }) => !allowed.has(to))
    .map(({ specifier, to }) => `${relative(ROOT, file)} imports ${specifier} (${moduleLabel(from)} may not import ${moduleLabel(to)})`);
}

function importSpecifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The top-level folder each relative import of `file` lands in. */
function importedFolders(file: string): { specifier: string; folder: string }[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({ specifier, folder: relative(ROOT, resolve(dirname(file), specifier)).split(/[\\/]/)[0]! }));
}

describe('layering (docs/DESIGN.md §1)', () => {
  for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
    it(`${layer}/ imports none of ${forbidden.join(', ')}`, () => {
      const files = sourceFiles(join(ROOT, layer));
      expect(files.length).toBeGreaterThan(0);
      const violations = files.flatMap((file) =>
        importedFolders(file)
          .filter(({ folder }) => forbidden.includes(folder))
          .map(({ specifier }) => `${relative(ROOT, file)} imports ${specifier}`),
      );
      expect(violations).toEqual([]);
    });
  }

  // A dynamic import (of a probed file, say) is invisible to tsc and to the
  // package build; the libraries load everything with plain imports.
  for (const layer of ['runtime', 'generated', 'connection', 'client', 'coordinator']) {
    it(`${layer}/ has no dynamic import()`, () => {
      const dynamic = sourceFiles(join(ROOT, layer)).filter((file) =>
        /\bimport\s*\(/.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')),
      );
      expect(dynamic.map((file) => relative(ROOT, file))).toEqual([]);
    });
  }

  // Inside coordinator/, as Kafka's checkstyle/import-control-*.xml do for its
  // packages (import-control-transaction-coordinator.xml keeps the transaction
  // coordinator off the group coordinator, storage off both): each folder
  // imports only the folders its row names, plus the shared top-level files.
  // Derived from the imports of the day, as strict as they allow; a folder
  // without a row fails, so a new one is placed on purpose.
  describe('coordinator/ folders import only what their row allows', () => {
    for (const [module, allowed] of Object.entries(COORDINATOR_MAY_IMPORT)) {
      it(`${moduleLabel(module)} imports ${allowed.length === 0 ? 'no other folder' : allowed.map(moduleLabel).join(', ')}`, () => {
        const files = sourceFiles(join(ROOT, 'coordinator')).filter((file) => coordinatorModuleOf(file) === module);
        expect(files.length).toBeGreaterThan(0);
        expect(files.flatMap((file) => coordinatorViolations(file, importSpecifiers(file)))).toEqual([]);
      });
    }

    it('every coordinator/ folder has a row, and every top-level file is shared or an assembly file', () => {
      const modules = new Set(sourceFiles(join(ROOT, 'coordinator')).map(coordinatorModuleOf));
      const unplaced = [...modules].filter((m) => COORDINATOR_MAY_IMPORT[m] === undefined && !COORDINATOR_ASSEMBLY.includes(m));
      expect(unplaced.map(moduleLabel)).toEqual([]);
    });

    it('the check names the file and the forbidden import (the dump tool where it used to be, in log/)', () => {
      const file = join(ROOT, 'coordinator', 'log', 'dump.ts');
      expect(
        coordinatorViolations(file, ['../cluster.js', './segment.js', '../group/offset-records.js', '../txn/transaction-metadata.js', '../broker.js']),
      ).toEqual([
        'coordinator/log/dump.ts imports ../group/offset-records.js (log/ may not import group/)',
        'coordinator/log/dump.ts imports ../txn/transaction-metadata.js (log/ may not import txn/)',
        'coordinator/log/dump.ts imports ../broker.js (log/ may not import broker.ts)',
      ]);
    });
  });

  // The published packages (packages/*/package.json, "sourceFolders"): a
  // package's folders import only its own folders and those of the @kipgen
  // packages it depends on, so that each installs and runs on its own.
  const manifests = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map(
      (e) =>
        JSON.parse(readFileSync(join(ROOT, 'packages', e.name, 'package.json'), 'utf8')) as {
          name: string;
          sourceFolders: string[];
          dependencies?: Record<string, string>;
        },
    );
  it('there are four published packages, each with its source folders', () => {
    expect(manifests.map((m) => [m.name, m.sourceFolders]).sort()).toEqual([
      ['@kipgen/broker', ['coordinator']],
      ['@kipgen/client', ['client', 'connection']],
      ['@kipgen/codecs', ['runtime', 'generated']],
      ['kipgen', ['generator']],
    ]);
  });
  for (const manifest of manifests) {
    const allowed = new Set([
      ...manifest.sourceFolders,
      ...manifests.filter((m) => manifest.dependencies?.[m.name] !== undefined).flatMap((m) => m.sourceFolders),
    ]);
    it(`${manifest.name} (${manifest.sourceFolders.join(', ')}) imports only ${[...allowed].join(', ')}`, () => {
      const violations = manifest.sourceFolders.flatMap((folder) =>
        sourceFiles(join(ROOT, folder)).flatMap((file) =>
          importedFolders(file)
            .filter(({ folder: target }) => !allowed.has(target))
            .map(({ specifier }) => `${relative(ROOT, file)} imports ${specifier}`),
        ),
      );
      expect(violations).toEqual([]);
    });
  }

  // One error hierarchy per layer, with names of its own: an error's name says
  // which side raised it (the client's KafkaError vs the broker's BrokerError).
  it('the client and the broker declare no error class of the same name', () => {
    const classes = (layer: string) =>
      new Set(sourceFiles(join(ROOT, layer)).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^export class (\w+) extends/gm)].map((m) => m[1]!)));
    const client = classes('client');
    const broker = classes('coordinator');
    expect(client.has('KafkaError')).toBe(true);
    expect(broker.has('BrokerError')).toBe(true);
    expect([...client].filter((name) => broker.has(name))).toEqual([]);
  });

  it('one SpecType, declared in runtime/', () => {
    const declarations = ['runtime', 'generated', 'generator', 'connection', 'client', 'coordinator'].flatMap((layer) =>
      sourceFiles(join(ROOT, layer))
        .filter((file) => /^export type SpecType =/m.test(readFileSync(file, 'utf8')))
        .map((file) => relative(ROOT, file)),
    );
    expect(declarations).toEqual(['runtime/codec.ts']);
  });

  it('sees dynamic imports too (the check itself can fail)', () => {
    const probe = importedFolders(join(ROOT, 'test', 'examples', 'examples.test.ts'));
    expect(probe.map((p) => p.folder)).toContain('examples');
    const dynamic = ts.preProcessFile("await import('../client/index.js');", true, true);
    expect(dynamic.importedFiles.map((f) => f.fileName)).toEqual(['../client/index.js']);
  });
});
