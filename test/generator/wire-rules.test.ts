import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isArray, isStruct, versionLayout, type FieldLayout, type StructLayout } from '../../generator/diff/layout.js';
import { generate, writeTree } from '../../generator/generate.js';
import { loadSpecs } from '../../generator/load.js';
import type { MessageSpec } from '../../generator/spec.js';
import type { ApiMessageCodec, MessageCodec } from '../../runtime/index.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { checkoutRuntimeImport } from '../support/runtime-import.js';
import { sharedDir, toHex } from '../support/vectors.js';

// The layout that `kipgen diff` and the baseline compare (generator/diff/layout.ts)
// and the codecs the emitter writes both come from generator/wire-rules.ts.
// This test holds them to each other: for every spec of Kafka's schemas at
// every version, a message encoded by walking the layout alone has exactly
// the bytes the generated codec writes, and the header versions agree.
const shared = sharedDir();
if (shared === undefined) console.warn('wire-rules: ../shared not found (set KIPGEN_SHARED): layout vs codec NOT tested in this run');

type Json = Record<string, unknown>;

/** A byte sink for the layout-driven encoder: plain and slow on purpose, nothing shared with runtime/. */
class Bytes {
  readonly out: number[] = [];
  int(value: number | bigint, width: number, signed = true): void {
    let v = BigInt(value);
    if (v < 0n) v += 1n << BigInt(width * 8);
    if (!signed && v < 0n) throw new Error('negative unsigned');
    for (let i = width - 1; i >= 0; i--) this.out.push(Number((v >> BigInt(i * 8)) & 0xffn));
  }
  uvarint(value: number): void {
    let v = value >>> 0;
    while (v >= 0x80) {
      this.out.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.out.push(v);
  }
  raw(bytes: Uint8Array | number[]): void {
    for (const b of bytes) this.out.push(b);
  }
}

const lowerFirst = (name: string): string => name.charAt(0).toLowerCase() + name.slice(1);

function lengthPrefix(w: Bytes, length: number | null, compact: boolean, classicWidth: 2 | 4): void {
  if (compact) w.uvarint(length === null ? 0 : length + 1);
  else w.int(length === null ? -1 : length, classicWidth);
}

function primitive(w: Bytes, type: string, value: unknown, compact: boolean): void {
  switch (type) {
    case 'bool':
      return w.int(value ? 1 : 0, 1);
    case 'int8':
      return w.int(value as number, 1);
    case 'int16':
    case 'uint16':
      return w.int(value as number, 2);
    case 'int32':
    case 'uint32':
      return w.int(value as number, 4);
    case 'int64':
      return w.int(BigInt(value as string), 8);
    case 'float64': {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(value as number);
      return w.raw(b);
    }
    case 'uuid':
      return w.raw(Buffer.from(value as string, 'base64url'));
    case 'string': {
      const bytes = value === null ? null : Buffer.from(value as string, 'utf8');
      lengthPrefix(w, bytes === null ? null : bytes.length, compact, 2);
      if (bytes !== null) w.raw(bytes);
      return;
    }
    case 'bytes':
    case 'records': {
      const bytes = value === null ? null : Buffer.from(value as string, 'base64');
      lengthPrefix(w, bytes === null ? null : bytes.length, compact, 4);
      if (bytes !== null) w.raw(bytes);
      return;
    }
    default:
      throw new Error(`no encoding for ${type}`);
  }
}

function field(w: Bytes, f: FieldLayout, value: unknown, flexible: boolean): void {
  const compact = f.compact === true;
  if (isArray(f)) {
    const items = value as unknown[] | null;
    lengthPrefix(w, items === null ? null : items.length, compact, 4);
    for (const item of items ?? []) {
      if (isStruct(f)) struct(w, { fields: f.fields!, tagged: f.tagged }, item as Json, flexible);
      else primitive(w, f.type.slice(2), item, compact);
    }
    return;
  }
  if (isStruct(f)) {
    if (f.nullable) w.int(value === null ? -1 : 1, 1);
    if (value !== null) struct(w, { fields: f.fields!, tagged: f.tagged }, value as Json, flexible);
    return;
  }
  primitive(w, f.type, value, compact);
}

function struct(w: Bytes, layout: StructLayout, json: Json, flexible: boolean): void {
  for (const f of layout.fields) field(w, f, json[lowerFirst(f.name)], flexible);
  if (!flexible) return;
  // The canonical JSON form holds a tagged field exactly when it differs from its default.
  const present = (layout.tagged ?? []).filter((f) => json[lowerFirst(f.name)] !== undefined);
  w.uvarint(present.length);
  for (const f of present) {
    const inner = new Bytes();
    field(inner, f, json[lowerFirst(f.name)], flexible);
    w.uvarint(f.tag!);
    w.uvarint(inner.out.length);
    w.raw(inner.out);
  }
}

describe.runIf(shared !== undefined)("layout (diff/) and codecs (emit/) agree on every spec of Kafka's schemas at every version", () => {
  const root = join(shared ?? '', 'kafka-schemas');
  const folders = shared
    ? readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
    : [];
  // Made in beforeAll, not while the suite is collected: a skipped suite runs no afterAll to remove it.
  let scratch = '';
  const loaded: { spec: MessageSpec; module: string }[] = [];
  afterAll(() => {
    if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
  });

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'kipgen-wire-rules-'));
    for (const folder of folders) {
      const out = join(scratch, folder);
      const { specs } = loadSpecs([join(root, folder)]);
      const result = await generate({ schemas: [join(root, folder)], out, skipTypecheck: true, runtimeImport: checkoutRuntimeImport(out) });
      expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      writeTree(out, result.files);
      for (const spec of specs) loaded.push({ spec, module: join(out, `${spec.name}.ts`) });
    }
  }, 300_000);

  it('generates a codec for every spec with versions', () => {
    expect(loaded.length).toBeGreaterThan(200);
  });

  it('bytes written by walking the layout equal the codec bytes, and header versions agree', async () => {
    let versions = 0;
    for (const { spec, module } of loaded) {
      const codec = (await import(module))[spec.name] as MessageCodec<unknown> & Partial<Pick<ApiMessageCodec<unknown>, 'headerVersion'>>;
      for (const version of spec.validVersions) {
        const layout = versionLayout(spec, version);
        if (layout.header !== undefined) expect(codec.headerVersion!(version), `${spec.name} v${version} header`).toBe(layout.header);
        fc.assert(
          fc.property(messageArbitrary(spec, version), (json) => {
            const value = codec.fromJson(json, version);
            const canonical = codec.toJson(value, version) as Json;
            const w = new Bytes();
            struct(w, layout, canonical, layout.flexible);
            expect(toHex(codec.encode(value, version)), `${spec.name} v${version}`).toBe(toHex(Uint8Array.from(w.out)));
          }),
          { numRuns: 3, seed: version },
        );
        versions++;
      }
    }
    expect(versions).toBe(loaded.reduce((n, { spec }) => n + spec.validVersions.highest - spec.validVersions.lowest + 1, 0));
  }, 300_000);
});
