import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffApi, readTree } from '../../generator/diff/api-diff.js';
import { generate, writeTree } from '../../generator/generate.js';
import { FIXTURES, kipgen } from './support.js';

// What breaks code that imports the generated modules, reported apart from the
// wire: the same schema pairs as the evolution rules, generated and compared.

async function generated(schema: string): Promise<Map<string, string>> {
  const result = await generate({ schemas: [join(FIXTURES, schema)], out: join(tmpdir(), 'kipgen-api'), runtimeImport: 'kipgen/runtime', skipTypecheck: true });
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return result.files;
}

async function apiChanges(oldSchema: string, newSchema: string): Promise<string[]> {
  const report = diffApi(await generated(oldSchema), await generated(newSchema));
  return report.changes.map((c) => `${c.severity === 'breaking' ? 'B' : c.severity === 'note' ? 'N' : 'C'}:${c.rule}:${c.module}:${c.symbol}:${c.detail}`);
}

describe('TypeScript API diff of generated trees', () => {
  it('an unchanged schema has an unchanged API', async () => {
    expect(await apiChanges('field-added/old.json', 'field-added/old.json')).toEqual([]);
  });

  it('a field rename is wire-safe but renames the property', async () => {
    expect(await apiChanges('field-renamed/old.json', 'field-renamed/fine.json')).toEqual([
      'B:property-renamed:WidgetRequest.ts:WidgetRequest.timeoutMs:property timeoutMs renamed to sessionTimeoutMs',
      'B:property-renamed:WidgetRequest.ts:WidgetRequestInit.timeoutMs:property timeoutMs renamed to sessionTimeoutMs',
    ]);
  });

  it('int32 → int64 changes the property type (number → bigint)', async () => {
    expect(await apiChanges('field-type-changed/old.json', 'field-type-changed/broken.json')).toEqual([
      'B:property-type-changed:WidgetRequest.ts:WidgetRequest.memberEpoch:number → bigint',
      'B:property-type-changed:WidgetRequest.ts:WidgetRequestInit.memberEpoch:number → bigint',
    ]);
  });

  it('a field of a new version is wire-safe, and create() callers are unaffected: a note for object literals of the full type, not a break', async () => {
    expect(await apiChanges('field-added/old.json', 'field-added/fine.json')).toEqual([
      'N:property-required-added:WidgetRequest.ts:WidgetRequest.rackId:new required property rackId: string: createWidgetRequest() fills it with its default, so its callers are unaffected; object literals typed as the full WidgetRequest must now set it (rackId)',
      'C:property-optional-added:WidgetRequest.ts:WidgetRequestInit.rackId:new optional property rackId?: string',
    ]);
  });

  it('a required property without a create() input that takes it stays BREAKING', () => {
    const old = new Map([
      [
        'W.ts',
        'export interface W { a: number }\nexport function createW(fields: WInit = {}): W { return { a: fields.a ?? 0 }; }\nexport interface WInit { a?: number }\n',
      ],
    ]);
    const added = new Map([
      [
        'W.ts',
        'export interface W { a: number; b: string }\nexport function createW(fields: WInit = {}): W { return { a: fields.a ?? 0, b: "" }; }\nexport interface WInit { a?: number }\n',
      ],
    ]);
    const report = diffApi(old, added);
    expect(report.changes.map((c) => [c.severity, c.rule, c.symbol])).toEqual([['breaking', 'property-required-added', 'W.b']]);
    expect(report.notes).toBe(0);
  });

  it('widened nullability changes the property type', async () => {
    expect(await apiChanges('nullability-changed/old.json', 'nullability-changed/fine.json')).toEqual([
      'B:property-type-changed:WidgetRequest.ts:WidgetRequest.groupId:string → string | null',
      'B:property-type-changed:WidgetRequest.ts:WidgetRequestInit.groupId:string → string | null',
    ]);
  });

  it('a renamed struct renames its interface and factory', async () => {
    expect(await apiChanges('struct-renamed/old.json', 'struct-renamed/fine.json')).toEqual([
      'B:property-type-changed:WidgetRequest.ts:WidgetRequest.topics:WidgetTopic[] → WidgetTopicData[]',
      'B:property-type-changed:WidgetRequest.ts:WidgetRequestInit.topics:WidgetTopicInit[] → WidgetTopicDataInit[]',
      'B:export-renamed:WidgetRequest.ts:WidgetTopic:interface WidgetTopic renamed to WidgetTopicData',
      'B:export-renamed:WidgetRequest.ts:WidgetTopicInit:interface WidgetTopicInit renamed to WidgetTopicDataInit',
      'B:export-removed:WidgetRequest.ts:createWidgetTopic:exported function createWidgetTopic removed',
      'C:export-added:WidgetRequest.ts:createWidgetTopicData:new exported function createWidgetTopicData',
      // index.ts re-exports the nested builders, struct types and create input types too.
      'B:export-renamed:index.ts:WidgetTopic:re-export WidgetTopic renamed to WidgetTopicData',
      'B:export-renamed:index.ts:WidgetTopicInit:re-export WidgetTopicInit renamed to WidgetTopicDataInit',
      'B:export-renamed:index.ts:createWidgetTopic:re-export createWidgetTopic renamed to createWidgetTopicData',
    ]);
  });

  it('a renamed message removes its modules, exports and registry entries', async () => {
    const changes = await apiChanges('tree/old', 'tree/message-renamed/fine');
    expect(changes.filter((c) => c.startsWith('B:'))).toEqual([
      'B:module-removed:WidgetRequest.ts:WidgetRequest:module removed with its exports WidgetRequest, WidgetRequestInit, WidgetTopic, WidgetTopicInit, createWidgetRequest, createWidgetTopic',
      'B:module-removed:WidgetResponse.ts:WidgetResponse:module removed with its exports WidgetResponse, WidgetResponseInit, createWidgetResponse',
      'B:export-removed:index.ts:WidgetRequest:export WidgetRequest (re-exported from ./WidgetRequest.js) removed',
      'B:export-removed:index.ts:WidgetRequestInit:export WidgetRequestInit (re-exported from ./WidgetRequest.js) removed',
      'B:export-removed:index.ts:WidgetResponse:export WidgetResponse (re-exported from ./WidgetResponse.js) removed',
      'B:export-removed:index.ts:WidgetResponseInit:export WidgetResponseInit (re-exported from ./WidgetResponse.js) removed',
      'B:export-removed:index.ts:createWidgetRequest:export createWidgetRequest (re-exported from ./WidgetRequest.js) removed',
      'B:export-removed:index.ts:createWidgetResponse:export createWidgetResponse (re-exported from ./WidgetResponse.js) removed',
      'B:member-removed:index.ts:messages[WidgetRequest]:entry WidgetRequest removed',
      'B:member-removed:index.ts:messages[WidgetResponse]:entry WidgetResponse removed',
    ]);
  });

  it('a new API only adds', async () => {
    const changes = await apiChanges('tree/old', 'tree/message-removed/fine');
    expect(changes.every((c) => c.startsWith('C:'))).toBe(true);
    expect(changes).toContain('C:member-added:index.ts:apis[202]:new entry 202');
  });
});

describe('kipgen api-diff and kipgen diff --api', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kipgen-api-diff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('api-diff compares two generated folders: exit 1 when importers break, 0 when not, 2 on a bad folder', async () => {
    writeTree(join(dir, 'old'), await generated('field-renamed/old.json'));
    writeTree(join(dir, 'new'), await generated('field-renamed/fine.json'));
    expect(readTree(join(dir, 'old')).size).toBe(2);
    const broken = kipgen(['api-diff', join(dir, 'old'), join(dir, 'new')]);
    expect(broken.status).toBe(1);
    expect(broken.stdout).toContain('BREAKING    property-renamed  WidgetRequest.timeoutMs: property timeoutMs renamed to sessionTimeoutMs');
    expect(broken.stdout).toContain('TypeScript API BREAKING: 2 changes break code that imports the generated modules');
    expect(kipgen(['api-diff', join(dir, 'old'), join(dir, 'old')]).status).toBe(0);
    const bad = kipgen(['api-diff', join(dir, 'old'), join(dir, 'missing')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('missing: not a folder');
  });

  it('diff --api reports wire and TypeScript separately; a TypeScript break alone exits 1 (0 clean, 1 findings, 2 could not run)', () => {
    const r = kipgen(['diff', '--api', join(FIXTURES, 'field-renamed', 'old.json'), join(FIXTURES, 'field-renamed', 'fine.json')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('compatible  field-renamed  v0-1  SessionTimeoutMs: TimeoutMs → SessionTimeoutMs [breaks the TypeScript API]');
    expect(r.stdout).toContain('TypeScript API BREAKING: 2 changes break code');
  });
});
