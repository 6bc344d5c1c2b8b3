import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../generator/generate.js';

// Hostile schema files get a clear error from `kipgen generate` — never a
// crash, a stack trace, or generated code that does not compile.
const root = process.cwd();
const scratch = mkdtempSync(join(root, '.kipgen-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function request(fields: string, top = '"validVersions": "0-1"'): string {
  return `{ "apiKey": 90, "type": "request", "name": "HostileRequest", ${top}, "flexibleVersions": "0+", "fields": [ ${fields} ] }`;
}

function nested(depth: number): string {
  let inner = '{ "name": "Leaf", "type": "int32", "versions": "0+" }';
  for (let i = depth; i > 0; i--) inner = `{ "name": "F${i}", "type": "[]S${i}", "versions": "0+", "fields": [ ${inner} ] }`;
  return request(inner);
}

function run(name: string, text: string | Buffer): { status: number | null; stderr: string } {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), text);
  const r = spawnSync(process.execPath, [join(root, 'bin/kipgen.mjs'), 'generate', '--schemas', dir, '--out', join(dir, 'out')], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, stderr: r.stderr };
}

const cases: { name: string; text: () => string | Buffer; error: RegExp }[] = [
  { name: 'deep-nesting', text: () => nested(5000), error: /deep-nesting\.json:1:\d+: error: nesting deeper than 128 levels/ },
  {
    name: 'version-too-high',
    text: () => request('{ "name": "A", "type": "int32", "versions": "0+" }', '"validVersions": "0-40000"'),
    error: /version 40000 in '0-40000' exceeds 32767/,
  },
  {
    name: 'tag-2-31',
    text: () => request('{ "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 2147483648 }'),
    error: /:1:\d+: error: "tag" must be/,
  },
  {
    name: 'tag-max-int',
    text: () => request('{ "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 2147483647 }'),
    error: /tag IDs are not contiguous/,
  },
  { name: 'field-name-space', text: () => request('{ "name": "My Field", "type": "int32", "versions": "0+" }'), error: /Invalid field name My Field/ },
  {
    name: 'struct-name-dash',
    text: () => request('{ "name": "A", "type": "[]Bad-Name", "versions": "0+", "fields": [] }'),
    error: /Can't parse type \[\]Bad-Name/,
  },
  { name: 'message-name', text: () => request('').replace('"HostileRequest"', '"1Hostile"'), error: /message name "1Hostile" is not a valid type name/ },
  {
    name: 'ten-megabytes',
    text: () => request(`{ "name": "A", "type": "int32", "versions": "0+", "about": "${'x'.repeat(10 * 1024 * 1024)}" }`),
    error: /schema file is \d+ bytes, more than the 1048576-byte limit/,
  },
  { name: 'binary', text: () => Buffer.from([0x00, 0xff, 0x7b, 0x01, 0x02]), error: /binary\.json:1:\d+: error: invalid JSON/ },
  { name: 'empty', text: () => '', error: /empty\.json:1:1: error: (empty document|invalid JSON)/ },
  { name: 'not-an-object', text: () => '[1, 2, 3]', error: /must be of type object/ },
];

describe('hostile schema files', () => {
  for (const c of cases) {
    it(`${c.name}: a clear error, exit 2`, () => {
      const r = run(c.name, c.text());
      expect(r.stderr).toMatch(c.error);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.status).toBe(2);
    });
  }

  it('a deep but legal nesting (40 struct levels) and the widest closed version range (0-32766) generate code that compiles', async () => {
    const dir = join(scratch, 'legal');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'Deep.json'), nested(40));
    writeFileSync(
      join(dir, 'Wide.json'),
      request('{ "name": "A", "type": "int32", "versions": "3+" }', '"validVersions": "0-32766"')
        .replace('HostileRequest', 'WideRequest')
        .replace('"apiKey": 90', '"apiKey": 91'),
    );
    const result = await generate({ schemas: [dir], out: join(dir, 'out') });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.typeErrors).toEqual([]);
    expect(result.files.size).toBe(3);
  });
});
