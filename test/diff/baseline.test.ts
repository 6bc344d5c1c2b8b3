import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBaseline, currentLayouts, parseBaseline, serializeBaseline, updateBaseline } from '../../generator/diff/baseline.js';
import { compareTrees } from '../../generator/diff/compare.js';
import { kipgen, REPO } from './support.js';

// message-schemas.lock.json: the committed record of released wire layouts.

describe('the committed baseline', () => {
  it('message-schemas/ has no breaking difference from message-schemas.lock.json', () => {
    const result = checkBaseline({ cwd: REPO });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.error).toBeUndefined();
    const breaking = result.report!.changes.filter((c) => c.severity === 'breaking');
    expect(breaking).toEqual([]);
  });

  it('records every message of message-schemas/, sorted, with its layout per version', () => {
    const lock = JSON.parse(readFileSync(join(REPO, 'message-schemas.lock.json'), 'utf8')) as {
      format: number;
      messages: Record<string, { validVersions: string; layouts: { versions: string }[] }>;
    };
    expect(lock.format).toBe(1);
    const names = Object.keys(lock.messages);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('TxnShareAcknowledgeRequest');
    expect(lock.messages.EndTxnRequest!.layouts.map((l) => l.versions)).toEqual(['0-2', '3-5']);
  });

  it('is deterministic and reads back to the same layouts', () => {
    const { layouts } = currentLayouts(['message-schemas'], REPO);
    const text = serializeBaseline(layouts);
    expect(serializeBaseline([...layouts].reverse())).toBe(text);
    expect(text.endsWith('}\n')).toBe(true);
    const back = parseBaseline(JSON.parse(text));
    expect(compareTrees(back, layouts).changes).toEqual([]);
    expect(serializeBaseline(back)).toBe(text);
  });
});

describe('kipgen baseline on a copy of message-schemas', () => {
  let dir: string;
  let schemas: string;
  let lock: string;
  const original = readFileSync(join(REPO, 'message-schemas', 'EndTxnRequest.json'), 'utf8');
  const edit = (file: string, from: string, to: string): void => {
    const path = join(schemas, file);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(from);
    writeFileSync(path, text.replace(from, to));
  };
  const run = (...args: string[]) => kipgen(['baseline', ...args, '--schemas', schemas, '--baseline', lock]);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kipgen-baseline-'));
    schemas = join(dir, 'message-schemas');
    lock = join(dir, 'message-schemas.lock.json');
    cpSync(join(REPO, 'message-schemas'), schemas, { recursive: true });
    const first = updateBaseline({ schemas: [schemas], baseline: lock });
    expect(first.written).toBe(true);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes on the unchanged schemas', () => {
    const r = run('--check');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('matches');
  });

  it('fails (exit 1) on a breaking edit, and names it', () => {
    edit('EndTxnRequest.json', '"name": "ProducerEpoch", "type": "int16"', '"name": "ProducerEpoch", "type": "int32"');
    try {
      const r = run('--check');
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(/EndTxnRequest\n {2}BREAKING {4}field-type-changed {2}v0-5 {2}ProducerEpoch: int16 → int32/);
      expect(r.stdout).toMatch(/at .*message-schemas\/EndTxnRequest\.json:\d+:\d+/);
      expect(r.stdout).toContain('If this break is deliberate, run `kipgen baseline --update`');
    } finally {
      writeFileSync(join(schemas, 'EndTxnRequest.json'), original);
    }
  });

  it('passes a new version and reports it; --update moves the baseline', () => {
    edit('EndTxnRequest.json', '"validVersions": "0-5"', '"validVersions": "0-6"');
    edit('EndTxnResponse.json', '"validVersions": "0-5"', '"validVersions": "0-6"');
    const before = readFileSync(lock, 'utf8');
    const check = run('--check');
    expect(check.status).toBe(0);
    expect(check.stdout).toContain('compatible  version-added  v6  validVersions 0-5 → 0-6');
    expect(check.stdout).toContain('Run `kipgen baseline --update` to record the compatible changes');
    expect(readFileSync(lock, 'utf8')).toBe(before);

    const update = run('--update');
    expect(update.status).toBe(0);
    expect(update.stdout).toContain('recorded these changes');
    expect(update.stdout).toContain('wrote');
    const moved = JSON.parse(readFileSync(lock, 'utf8')) as { messages: Record<string, { validVersions: string; layouts: { versions: string }[] }> };
    expect(moved.messages.EndTxnRequest!.validVersions).toBe('0-6');
    expect(moved.messages.EndTxnRequest!.layouts.map((l) => l.versions)).toEqual(['0-2', '3-6']);

    const after = checkBaseline({ schemas: [schemas], baseline: lock });
    expect(after.report!.changes).toEqual([]);
    // Removing the version again is now a break against the moved baseline.
    edit('EndTxnRequest.json', '"validVersions": "0-6"', '"validVersions": "0-5"');
    edit('EndTxnResponse.json', '"validVersions": "0-6"', '"validVersions": "0-5"');
    const removed = checkBaseline({ schemas: [schemas], baseline: lock });
    expect(removed.report!.changes.map((c) => `${c.message}:${c.rule}@${c.versions}`)).toEqual([
      'EndTxnRequest:version-removed@6',
      'EndTxnResponse:version-removed@6',
    ]);
  });

  it('exits 2 on a schema that does not load or a baseline that is missing or malformed', () => {
    const missing = kipgen(['baseline', '--check', '--schemas', schemas, '--baseline', join(dir, 'none.json')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('does not exist; create it with `kipgen baseline --update`');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ format: 1, messages: { X: { type: 'request', validVersions: '0-1', flexibleVersions: 'none', layouts: [] } } }));
    const malformed = checkBaseline({ schemas: [schemas], baseline: bad });
    expect(malformed.error).toMatch(/messages\.X\.layouts: no layout for version 0/);
    edit('EndTxnRequest.json', '"type": "bool"', '"type": "bool", "nullableVersions": "0+"');
    try {
      const r = checkBaseline({ schemas: [schemas], baseline: lock });
      expect(r.report).toBeUndefined();
      expect(r.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.line}: ${d.message}`)).toEqual([
        expect.stringMatching(/^\d+: EndTxnRequest: Type bool cannot be nullable\.$/),
      ]);
    } finally {
      writeFileSync(join(schemas, 'EndTxnRequest.json'), original);
    }
  });
});
