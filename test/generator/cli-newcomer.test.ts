/**
 * The kipgen CLI as a user first meets it, in a project of their own (no
 * message-schemas/ folder, no generated/): what is missing is said with what to
 * pass, check's hint repeats the user's options, and the commands that take
 * seconds show a status line on a terminal and nothing extra elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { progressLine } from '../../generator/progress.js';
import { statusLine } from '../../packages/build.mjs';

const root = process.cwd();
const END_TXN = ['EndTxnRequest.json', 'EndTxnResponse.json'].map((name) => join(root, 'message-schemas', name));
const KIPGEN = join(root, 'bin/kipgen.mjs');
function kipgen(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [KIPGEN, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fake stream that records what is written, with the isTTY flag given. */
function stream(isTTY: boolean): { isTTY: boolean; text: string; write(chunk: string): boolean } {
  return {
    isTTY,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
}

describe('kipgen in a project of its own', () => {
  const project = mkdtempSync(join(tmpdir(), 'kipgen-newcomer-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('generate and check with no message-schemas/ folder say what is missing and what to pass, not ENOENT', () => {
    for (const command of ['generate', 'check']) {
      const r = kipgen([command], project);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        `kipgen ${command}: no message-schemas/ folder in ${project} (the default for --schemas). ` +
          `Pass your Kafka-style JSON message schemas, a folder or files: kipgen ${command} --schemas <folder> --out <folder for the codecs>\n`,
      );
    }
    const named = kipgen(['generate', '--schemas', 'schemas/orders.json', '--out', 'src/gen'], project);
    expect(named.status).toBe(2);
    expect(named.stderr).toBe(`kipgen generate: schemas/orders.json (${join(project, 'schemas/orders.json')}): no such schema folder or file\n`);
    expect(named.stderr).not.toMatch(/ENOENT/);
  });

  it('demo runs where there is no message-schemas/ folder: it round-trips the schemas its codecs came from', () => {
    const r = kipgen(['demo'], project);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\n(\d+) of \1 request\/response versions encoded, decoded and re-encoded byte for byte\.\n$/);
  });

  it("check's hint on a stale folder repeats the --schemas and --out the user gave", () => {
    const schemas = join(project, 'my schemas');
    cpSync(join(root, 'message-schemas', 'EndTxnRequest.json'), join(schemas, 'EndTxnRequest.json'));
    expect(kipgen(['generate', '--schemas', 'my schemas', '--out', 'src/gen', '--no-typecheck'], project).status).toBe(0);
    const file = join(schemas, 'EndTxnRequest.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"validVersions": "0-5"', '"validVersions": "0-6"'));
    const stale = kipgen(['check', '--schemas', 'my schemas', '--out', 'src/gen'], project);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain("Run `kipgen generate --schemas 'my schemas' --out src/gen` and commit the result.\n");
  });

  it('generate prints no status line when stderr is not a terminal', () => {
    const r = kipgen(['generate', '--schemas', ...END_TXN, '--out', 'quiet', '--no-typecheck'], project);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('kipgen generate: 2 codecs and index.ts in quiet/\n');
  });

  it('generate shows its steps on a terminal (a pseudo-terminal from util-linux script), and clears the line', () => {
    const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
    expect(script.status, 'util-linux script(1) runs the command on a pseudo-terminal').toBe(0);
    const command = `${process.execPath} ${KIPGEN} generate --schemas ${END_TXN.join(' ')} --out tty --no-typecheck`;
    const r = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('\r\x1b[Kkipgen generate: reading the schemas');
    expect(r.stdout).toContain('\r\x1b[Kkipgen generate: writing codec 1 of 2 (EndTxnRequest)');
    // The status line is cleared before the summary is printed on its own line.
    expect(r.stdout).toContain('\r\x1b[Kkipgen generate: writing codec 2 of 2 (EndTxnResponse)\r\x1b[Kkipgen generate: 2 codecs and index.ts in tty/\r\n');
  });

  it('the status lines of generate and build:packages write only to a terminal', () => {
    const pipe = stream(false);
    const p = progressLine('kipgen generate', pipe);
    p.step('reading the schemas');
    p.done();
    expect(pipe.text).toBe('');
    const tty = stream(true);
    const q = progressLine('kipgen generate', tty);
    q.step('reading the schemas');
    q.step('type-checking 3 files');
    q.done();
    expect(tty.text).toBe('\r\x1b[Kkipgen generate: reading the schemas\r\x1b[Kkipgen generate: type-checking 3 files\r\x1b[K');

    const buildPipe = stream(false);
    (statusLine(buildPipe) as (text: string) => void)('compiling');
    expect(buildPipe.text).toBe('');
    const buildTty = stream(true);
    const status = statusLine(buildTty) as (text: string) => void;
    status('compiling with tsc -p tsconfig.build.json (about 20 s)…');
    status('');
    expect(buildTty.text).toBe('\r\x1b[Kbuild:packages: compiling with tsc -p tsconfig.build.json (about 20 s)…\r\x1b[K');
  });
});
