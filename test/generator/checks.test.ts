import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate, writeTree } from '../../generator/generate.js';
import { loadSpecs } from '../../generator/load.js';
import { typecheck } from '../../generator/typecheck.js';
import type { MessageCodec } from '../../runtime/index.js';
import { CASES, type CheckCase, type Json } from '../fixtures/checks/cases.js';
import { checkoutRuntimeImport } from '../support/runtime-import.js';
import { toHex } from '../support/vectors.js';

// Every row of generator/CHECKS.md: its rejected spec gets the error at the
// right place, and its near-identical accepted spec loads cleanly and becomes
// code that compiles and round-trips its all-defaults message at every version.
const scratch = mkdtempSync(join(tmpdir(), 'kipgen-checks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function writeSpecs(dir: string, specs: (Json | string)[]): void {
  mkdirSync(dir, { recursive: true });
  specs.forEach((spec, i) => {
    const text = typeof spec === 'string' ? spec : `${JSON.stringify(spec, null, 2)}\n`;
    const name = typeof spec === 'string' ? 'Text' : String(spec.name ?? 'Nameless');
    writeFileSync(join(dir, `${name}-${i}.json`), text);
  });
}

function checkIds(): { tested: string[]; unreachable: string[] } {
  const text = readFileSync(join(process.cwd(), 'generator', 'CHECKS.md'), 'utf8');
  const ids = [...text.matchAll(/^\| ([A-Z]\d+) \|/gm)].map((m) => m[1]!);
  return { tested: ids.filter((id) => !id.startsWith('U')), unreachable: ids.filter((id) => id.startsWith('U')) };
}

describe('generator/CHECKS.md', () => {
  it('has one row per case and one case per row (U rows: checks no spec can reach)', () => {
    const { tested, unreachable } = checkIds();
    expect(new Set(tested).size).toBe(tested.length);
    expect([...tested].sort()).toEqual(CASES.map((c) => c.id).sort());
    expect(unreachable.length).toBeGreaterThan(0);
  });

  it('states its counts as the table has them', () => {
    const text = readFileSync(join(process.cwd(), 'generator', 'CHECKS.md'), 'utf8');
    const { tested, unreachable } = checkIds();
    const beyond = tested.filter((id) => id.startsWith('B') || id.startsWith('C'));
    const kafka = tested.length - beyond.length;
    expect(text).toContain(`**${kafka + unreachable.length} checks of Kafka's** (${kafka} that a spec can reach`);
    expect(text).toContain(`and ${unreachable.length} that no`);
    expect(text).toContain(`**${beyond.length} of kipgen's`);
  });
});

describe('each check refuses its minimal spec, at the place that is wrong', () => {
  for (const c of CASES) {
    it(`${c.id}: ${c.error.source.slice(0, 70)}`, () => {
      const dir = join(scratch, 'reject', c.id);
      writeSpecs(dir, c.reject);
      const { diagnostics } = loadSpecs([dir]);
      const errors = diagnostics.filter((d) => d.severity === 'error');
      const hit = errors.find((d) => c.error.test(d.message));
      expect(hit, JSON.stringify(errors, null, 1)).toBeDefined();
      expect(hit!.jsonPath).toBe(c.path);
      expect(hit!.file.startsWith(dir)).toBe(true);
      expect(hit!.line).toBeGreaterThan(0);
      expect(hit!.column).toBeGreaterThan(0);
    });
  }
});

describe('and accepts its near-identical twin, with code that compiles and round-trips', () => {
  const generated: { c: CheckCase; out: string; names: string[]; files: Map<string, string> }[] = [];

  for (const c of CASES) {
    it(`${c.id} accepted`, async () => {
      const dir = join(scratch, 'accept', c.id);
      writeSpecs(dir, c.accept);
      const { specs, diagnostics } = loadSpecs([dir]);
      expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const out = join(dir, 'out');
      const result = await generate({ schemas: [dir], out, skipTypecheck: true, runtimeImport: checkoutRuntimeImport(out) });
      writeTree(out, result.files);
      generated.push({ c, out, names: specs.map((s) => s.name), files: result.files });
    });
  }

  it('every accepted spec generates code that type-checks (one project for all)', () => {
    const all = new Map<string, string>();
    for (const g of generated) for (const [name, text] of g.files) all.set(join(g.out, name), text);
    expect(all.size).toBeGreaterThan(CASES.length);
    expect(typecheck(all)).toEqual([]);
  }, 120_000);

  it('every accepted message encodes its defaults at every valid version, and decodes to the same bytes', async () => {
    expect(generated.length).toBe(CASES.length);
    for (const { c, out, names } of generated) {
      for (const name of names) {
        const codec = (await import(join(out, `${name}.ts`)))[name] as MessageCodec<Record<string, unknown>>;
        const defaults = codec.create();
        for (let version = codec.validVersions.lowest; version <= codec.validVersions.highest; version++) {
          const bytes = codec.encode(defaults, version);
          expect(toHex(codec.encode(codec.decode(bytes, version), version)), `${c.id} ${name} v${version}`).toBe(toHex(bytes));
        }
      }
      if (c.acceptDefault !== undefined) {
        const codec = (await import(join(out, `${names[0]}.ts`)))[names[0]!] as MessageCodec<Record<string, unknown>>;
        expect(codec.create()[c.acceptDefault.property], c.id).toEqual(c.acceptDefault.value);
      }
    }
  }, 120_000);
});
