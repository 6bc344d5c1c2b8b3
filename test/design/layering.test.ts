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
      const dynamic = sourceFiles(join(ROOT, layer)).filter((file) => /\bimport\s*\(/.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')));
      expect(dynamic.map((file) => relative(ROOT, file))).toEqual([]);
    });
  }

  // The published packages (packages/*/package.json, "sourceFolders"): a
  // package's folders import only its own folders and those of the @kipgen
  // packages it depends on, so that each installs and runs on its own.
  const manifests = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => JSON.parse(readFileSync(join(ROOT, 'packages', e.name, 'package.json'), 'utf8')) as { name: string; sourceFolders: string[]; dependencies?: Record<string, string> });
  it('there are four published packages, each with its source folders', () => {
    expect(manifests.map((m) => [m.name, m.sourceFolders]).sort()).toEqual([
      ['@kipgen/broker', ['coordinator']],
      ['@kipgen/client', ['client', 'connection']],
      ['@kipgen/codecs', ['runtime', 'generated']],
      ['kipgen', ['generator']],
    ]);
  });
  for (const manifest of manifests) {
    const allowed = new Set([...manifest.sourceFolders, ...manifests.filter((m) => manifest.dependencies?.[m.name] !== undefined).flatMap((m) => m.sourceFolders)]);
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
