import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { place } from '../../generator/diff/github.js';
import { FIXTURES, kipgen } from './support.js';

// `node bin/kipgen.mjs diff …` as a developer and CI run it: exit 0 compatible,
// 1 breaking, 2 bad input, with the loader's file:line:column on bad schemas.
const fx = (path: string): string => join(FIXTURES, path);

describe('kipgen diff exit codes and output', () => {
  it('exits 0 on a compatible change and says so', () => {
    const r = kipgen(['diff', fx('field-added/old.json'), fx('field-added/fine.json')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('compatible  version-added');
    expect(r.stdout).toContain('Compatible: 1 compatible change, no breaking change.');
  });

  it('exits 1 on a breaking change, naming rule, versions, field, location and reason', () => {
    const r = kipgen(['diff', fx('field-type-changed/old.json'), fx('field-type-changed/broken.json')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/WidgetRequest\n {2}BREAKING {4}field-type-changed {2}v0-1 {2}MemberEpoch: int32 → int64\n/);
    expect(r.stdout).toMatch(/at .*field-type-changed\/broken\.json:18:5\n/);
    expect(r.stdout).toContain('why: the peer reads a different number or kind of bytes');
    expect(r.stdout).toContain('BREAKING: 1 breaking change in 1 message');
  });

  it('diff --api follows the same rule: a wire-safe rename that breaks the TypeScript API exits 1 (without --api, 0)', () => {
    const args = [fx('field-renamed/old.json'), fx('field-renamed/fine.json')];
    expect(kipgen(['diff', ...args]).status).toBe(0);
    const r = kipgen(['diff', '--api', ...args]);
    expect(r.stdout).toContain('TypeScript API BREAKING: 2 changes break code that imports the generated modules');
    expect(r.status).toBe(1);
    expect(kipgen(['diff', '--api', fx('field-added/old.json'), fx('field-added/old.json')]).status).toBe(0);
  });

  it('diff --api: a field added in a new version breaks no create() caller: a note, exit 0', () => {
    const r = kipgen(['diff', '--api', fx('field-added/old.json'), fx('field-added/fine.json')]);
    expect(r.stdout).toContain(
      'note        property-required-added  WidgetRequest.rackId: new required property rackId: string: createWidgetRequest() fills it with its default',
    );
    expect(r.stdout).toContain(
      'TypeScript API compatible: 1 compatible change, nothing breaks importers that build messages with create() (1 note for code that writes object literals of the full types).',
    );
    expect(r.status).toBe(0);
  });

  it('exits 2 when the new schema is not JSON, with file:line:column', () => {
    const r = kipgen(['diff', fx('field-added/old.json'), fx('bad-input/syntax.json')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /bad-input\/syntax\.json:6:3: error: invalid JSON: expected a comma before the next entry, or the closing } or ], found "validVersions"\n/,
    );
    expect(r.stderr).toContain('kipgen diff: 1 schema error: nothing compared');
    expect(r.stdout).toBe('');
  });

  it("exits 2 when the new schema does not load, with the loader's located diagnostic", () => {
    const r = kipgen(['diff', '--json', fx('field-added/old.json'), fx('bad-input/semantic.json')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bad-input\/semantic\.json:30:7: error: WidgetRequest: Type int32 cannot be nullable\. \(at fields\[2\]\.nullableVersions\)/);
    const json = JSON.parse(r.stdout) as { diagnostics: { line: number; jsonPath: string }[] };
    expect(json.diagnostics[0]).toMatchObject({ line: 30, jsonPath: 'fields[2].nullableVersions' });
  });

  it('exits 2 on a path that does not exist', () => {
    const r = kipgen(['diff', fx('no-such.json'), fx('field-added/old.json')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no-such.json: no such file or folder');
  });

  it('prints a JSON report with --json and the same exit code', () => {
    const r = kipgen(['diff', '--json', fx('tree/old'), fx('tree/api-pairing/broken')]);
    expect(r.status).toBe(1);
    const json = JSON.parse(r.stdout) as { verdict: string; breaking: number; changes: { rule: string; message: string }[] };
    expect(json.verdict).toBe('breaking');
    expect(json.breaking).toBe(1);
    expect(json.changes.map((c) => `${c.message}:${c.rule}`)).toEqual(['WidgetRequest:api-pairing', 'WidgetRequest:version-added']);
  });

  it('--wire-equal: 0 when equal (listing what is not upstream), 1 when a version differs or is not upstream', () => {
    const equal = kipgen(['diff', '--wire-equal', fx('wire-equal/upstream'), fx('wire-equal/ours-equal')]);
    expect(equal.status).toBe(0);
    expect(equal.stdout).toContain('Not upstream (1): KipThingRequest');
    expect(equal.stdout).toContain('Wire-equal');
    const different = kipgen(['diff', '--wire-equal', '--json', fx('wire-equal/upstream'), fx('wire-equal/ours-different')]);
    expect(different.status).toBe(1);
    const json = JSON.parse(different.stdout) as { changes: { message: string; rule: string; versions: string }[] };
    expect(json.changes.map((c) => `${c.message}:${c.rule}@${c.versions}`)).toEqual([
      'WidgetRequest:field-type-changed@0-1',
      'WidgetRequest:version-not-upstream@2',
      'WidgetResponse:version-not-upstream@2',
    ]);
  });
});

describe('--format github locations', () => {
  it('a location in the new tree keeps its line; one read from git history (the old side) names only the file; none names nothing', () => {
    expect(place('message-schemas/X.json:18:5')).toEqual({ file: 'message-schemas/X.json', line: 18, col: 5 });
    expect(place('git:origin/main:message-schemas/X.json:18:5')).toEqual({ file: 'message-schemas/X.json' });
    expect(place('git:origin/main:message-schemas/X.json')).toEqual({ file: 'message-schemas/X.json' });
    expect(place(undefined)).toEqual({});
  });
});

describe('kipgen diff git:REF[:PATH]', () => {
  let repo: string;
  let outside: string;
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=kipgen', '-c', 'user.email=kipgen@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
      cwd: repo,
      stdio: 'ignore',
    });
  };

  beforeAll(() => {
    repo = mkdtempSync(join(tmpdir(), 'kipgen-diff-git-'));
    outside = mkdtempSync(join(tmpdir(), 'kipgen-diff-nogit-'));
    mkdirSync(join(repo, 'schemas'));
    cpSync(fx('field-type-changed/old.json'), join(repo, 'schemas', 'WidgetRequest.json'));
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'released');
    cpSync(fx('field-type-changed/broken.json'), join(repo, 'schemas', 'WidgetRequest.json'));
  });
  afterAll(() => {
    rmSync(repo, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('compares the working tree with a commit (the path defaults to the other side)', () => {
    const r = kipgen(['diff', 'git:HEAD', 'schemas'], repo);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('MemberEpoch: int32 → int64');
    expect(r.stdout).toContain('kipgen diff: git:HEAD → schemas');
  });

  it('reads an explicit path, and a single file, from history', () => {
    expect(kipgen(['diff', 'git:HEAD:schemas', 'git:HEAD:schemas'], repo).status).toBe(0);
    const file = kipgen(['diff', 'git:HEAD:schemas/WidgetRequest.json', 'schemas/WidgetRequest.json'], repo);
    expect(file.status).toBe(1);
    expect(file.stdout).toContain('at schemas/WidgetRequest.json:18:5');
  });

  it('--format github: a GitHub Actions error annotation on the changed line of the new file, exit 1', () => {
    const r = kipgen(['diff', 'git:HEAD:schemas', 'schemas', '--format', 'github'], repo);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      '::error file=schemas/WidgetRequest.json,line=18,col=5,title=kipgen diff%3A field-type-changed::WidgetRequest v0-1 MemberEpoch: int32 → int64. the peer reads a different number or kind of bytes\n' +
        'kipgen diff: 1 breaking, 0 compatible changes\n',
    );
    // Unchanged: no annotation, exit 0.
    const same = kipgen(['diff', 'git:HEAD:schemas', 'git:HEAD:schemas', '--format', 'github'], repo);
    expect([same.status, same.stdout]).toEqual([0, 'kipgen diff: 0 breaking, 0 compatible changes\n']);
  });

  it('exits 2 with a clear error for an unknown revision or outside a git checkout', () => {
    const unknown = kipgen(['diff', 'git:no-such-branch', 'schemas'], repo);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("git:no-such-branch: unknown git revision 'no-such-branch'");
    writeFileSync(join(outside, 'WidgetRequest.json'), '{}');
    const noGit = kipgen(['diff', 'git:HEAD', 'WidgetRequest.json'], outside);
    expect(noGit.status).toBe(2);
    expect(noGit.stderr).toMatch(/git:HEAD: .* is not inside a git checkout/);
  });
});
