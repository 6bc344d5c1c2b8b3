import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '../diagnostics.js';
import { loadSpecText } from '../load.js';
import type { JsonPath } from '../source.js';
import type { MessageSpec } from '../spec.js';

/**
 * Loads the schema trees that `kipgen diff` compares: folders (searched
 * recursively), single files, or `git:REF[:PATH]` trees from git history, and
 * several of them joined with commas. Unlike load.ts's loadSpecs, specs with
 * no valid versions are kept: an API whose versions went to "none" is a change
 * the diff must see.
 */

export interface LoadedSpec {
  spec: MessageSpec;
  /** Where the spec came from, as shown to people (a path, or git:REF:path). */
  file: string;
  /** The schema's text, as read. */
  text: string;
  /** Line and column of a JSON path in the spec's source. */
  locate(path: JsonPath): { line: number; column: number };
}

export interface LoadedTree {
  /** The argument as given. */
  label: string;
  specs: LoadedSpec[];
  diagnostics: Diagnostic[];
  /** True when the argument named exactly one file. */
  singleFile: boolean;
}

/** A problem with an argument itself (no such path, not a git checkout, unknown ref): bad input. */
export class TreeArgumentError extends Error {
  override name = 'TreeArgumentError';
}

/** Loads one schema of a tree, keeping its text and a locator for its JSON paths. */
function loadTreeSpec(file: string, text: string): { loaded: LoadedSpec | undefined; diagnostics: Diagnostic[] } {
  const { spec, source, diagnostics } = loadSpecText(file, text);
  if (spec === undefined) return { loaded: undefined, diagnostics };
  return { loaded: { spec, file, text, locate: (path) => source!.locate(path) }, diagnostics };
}

/**
 * Loads one tree argument (see the module comment), or a list of paths taken
 * as they are (no comma splitting). Throws TreeArgumentError for an unusable argument.
 */
export function loadTree(argument: string | readonly string[], options: { cwd?: string; defaultGitPath?: string } = {}): LoadedTree {
  const cwd = options.cwd ?? process.cwd();
  const parts = (typeof argument === 'string' ? argument.split(',') : [...argument]).filter((p) => p.length > 0);
  if (parts.length === 0) throw new TreeArgumentError(`'${argument}' names no schema folder or file`);
  const tree: LoadedTree = { label: typeof argument === 'string' ? argument : argument.join(','), specs: [], diagnostics: [], singleFile: false };
  const texts: { file: string; text: () => string }[] = [];
  for (const part of parts) {
    if (part.startsWith('git:')) texts.push(...gitFiles(part, cwd, options.defaultGitPath));
    else texts.push(...diskFiles(part, cwd));
  }
  const only = parts.length === 1 ? parts[0]! : undefined;
  tree.singleFile = only !== undefined && (only.startsWith('git:') ? only.endsWith('.json') : statSync(resolve(cwd, only)).isFile());
  const seen = new Map<string, string>();
  for (const { file, text } of texts) {
    const { loaded, diagnostics } = loadTreeSpec(file, text());
    tree.diagnostics.push(...diagnostics);
    if (loaded === undefined) continue;
    const earlier = seen.get(loaded.spec.name);
    if (earlier !== undefined) {
      tree.diagnostics.push({
        severity: 'error',
        file,
        line: 1,
        column: 1,
        jsonPath: 'name',
        message: `message ${loaded.spec.name} is also defined in ${earlier}`,
      });
      continue;
    }
    seen.set(loaded.spec.name, file);
    tree.specs.push(loaded);
  }
  tree.specs.sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0));
  return tree;
}

function diskFiles(path: string, cwd: string): { file: string; text: () => string }[] {
  const absolute = resolve(cwd, path);
  if (!existsSync(absolute)) throw new TreeArgumentError(`${path}: no such file or folder`);
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = join(dir, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && entry.name.endsWith('.json')) files.push(child);
    }
  };
  if (statSync(absolute).isDirectory()) {
    walk(absolute);
    if (files.length === 0) throw new TreeArgumentError(`${path}: no .json schema files in this folder`);
  } else {
    files.push(absolute);
  }
  return files.map((file) => ({ file: displayPath(file, cwd), text: () => readFileSync(file, 'utf8') }));
}

function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  // Paths under the working folder or its parent read best relative; anything further away, absolute.
  return rel === '' || rel.startsWith(`..${sep}..${sep}`) || isAbsolute(rel) ? file : rel;
}

/** `git:REF[:PATH]`: the .json files under PATH (default: the other side's folder, else message-schemas) at REF. */
function gitFiles(argument: string, cwd: string, defaultPath: string | undefined): { file: string; text: () => string }[] {
  const rest = argument.slice('git:'.length);
  const colon = rest.indexOf(':');
  const ref = colon < 0 ? rest : rest.slice(0, colon);
  const pathArg = colon < 0 ? (defaultPath ?? 'message-schemas') : rest.slice(colon + 1);
  if (ref === '') throw new TreeArgumentError(`${argument}: no git revision (write git:REF or git:REF:PATH, e.g. git:HEAD:message-schemas)`);
  let top: string;
  try {
    top = git(cwd, ['rev-parse', '--show-toplevel']).trim();
  } catch (error) {
    throw new TreeArgumentError(`${argument}: ${cwd} is not inside a git checkout, so there is no history to read (${firstLine(error)})`);
  }
  try {
    git(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new TreeArgumentError(`${argument}: unknown git revision '${ref}'`);
  }
  const inRepo = relative(top, resolve(cwd, pathArg)).split(sep).join('/');
  if (inRepo.startsWith('..')) throw new TreeArgumentError(`${argument}: ${pathArg} is outside the git checkout ${top}`);
  const listing = git(top, ['ls-tree', '-r', '--name-only', '-z', ref, '--', inRepo === '' ? '.' : inRepo])
    .split('\0')
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (listing.length === 0) throw new TreeArgumentError(`${argument}: no .json schema files at ${inRepo || '.'} in ${ref}`);
  return listing.map((path) => ({ file: `git:${ref}:${path}`, text: () => git(top, ['show', `${ref}:${path}`]) }));
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: string }).stderr;
  const text = typeof stderr === 'string' && stderr.trim() !== '' ? stderr : (error as Error).message;
  return text.trim().split('\n')[0] ?? '';
}
