import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { formatDiagnostic, type Diagnostic } from './diagnostics.js';
import { compareTree, generate, writeTree } from './generate.js';
import { checkBaseline, DEFAULT_BASELINE, type BaselineResult } from './diff/baseline.js';
import { registerDiffCommands } from './diff/cli.js';
import { progressLine } from './progress.js';

/**
 * The `kipgen` command line. Exit codes, one rule for every check-like command
 * (check, diff, baseline --check, api-diff): 0 clean, 1 findings, 2 could not
 * run (bad input, unreadable files). generate: 0 written, 2 not.
 */

const DEFAULT_SCHEMAS = ['message-schemas'];
const DEFAULT_OUT = 'generated';

function printDiagnostics(diagnostics: Diagnostic[]): void {
  for (const d of diagnostics) console.error(formatDiagnostic(d));
}

/**
 * Before reading the schemas: says which schema path is not there and what to
 * pass, instead of the ENOENT a stat would throw. In a user's project the usual
 * case is the default folder, message-schemas/, which only a kipgen checkout has.
 */
function missingSchemas(command: string, schemas: string[]): string | undefined {
  const missing = schemas.filter((path) => !existsSync(path));
  if (missing.length === 0) return undefined;
  if (schemas === DEFAULT_SCHEMAS) {
    return (
      `kipgen ${command}: no ${DEFAULT_SCHEMAS[0]}/ folder in ${process.cwd()} (the default for --schemas). ` +
      `Pass your Kafka-style JSON message schemas, a folder or files: kipgen ${command} --schemas <folder> --out <folder for the codecs>`
    );
  }
  return `kipgen ${command}: ${missing.map((path) => `${path} (${resolve(path)})`).join(', ')}: no such schema folder or file`;
}

/** The generate command that rewrites `out` from `schemas`: the user's own options, repeated. */
function generateCommand(options: { schemas: string[]; out: string; runtimeImport?: string }): string {
  const parts = ['kipgen generate'];
  if (options.schemas !== DEFAULT_SCHEMAS) parts.push('--schemas', ...options.schemas.map(quoted));
  if (options.out !== DEFAULT_OUT) parts.push('--out', quoted(options.out));
  if (options.runtimeImport !== undefined) parts.push('--runtime-import', quoted(options.runtimeImport));
  return parts.join(' ');
}

function quoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function buildCli(): Command {
  const program = new Command('kipgen')
    .description('Kafka message schemas → typed, versioned TypeScript codecs, and the KIP-1289 toolkit built on them')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('generate')
    .description('validate the schemas and write one codec module per message, plus index.ts')
    .option('-s, --schemas <dirs...>', 'schema folders or files', DEFAULT_SCHEMAS)
    .option('-o, --out <dir>', 'output folder', DEFAULT_OUT)
    .option(
      '--runtime-import <specifier>',
      "module the generated code imports the runtime from (default @kipgen/codecs/runtime; ../runtime/index.js for this repository's own generated/)",
    )
    .option('--no-typecheck', 'skip the in-memory type check of the emitted code')
    .action(async (options: { schemas: string[]; out: string; runtimeImport?: string; typecheck: boolean }) => {
      const missing = missingSchemas('generate', options.schemas);
      if (missing !== undefined) {
        console.error(missing);
        process.exitCode = 2;
        return;
      }
      // It takes seconds (rendering, formatting, type-checking): a status line on a terminal, nothing elsewhere.
      const progress = progressLine('kipgen generate');
      const result = await generate({
        schemas: options.schemas,
        out: options.out,
        runtimeImport: options.runtimeImport,
        skipTypecheck: !options.typecheck,
        onProgress: (step) => progress.step(step),
      }).finally(() => progress.done());
      printDiagnostics(result.diagnostics);
      const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
      if (errors > 0) {
        console.error(`kipgen generate: ${errors} error${errors === 1 ? '' : 's'}; nothing written`);
        process.exitCode = 2;
        return;
      }
      if (result.typeErrors.length > 0) {
        for (const e of result.typeErrors.slice(0, 20)) console.error(e);
        console.error(`kipgen generate: the emitted code does not type-check (${result.typeErrors.length} errors); nothing written`);
        process.exitCode = 2;
        return;
      }
      writeTree(options.out, result.files);
      if (result.skipped.length > 0) console.log(skippedNote(result.skipped));
      console.log(`kipgen generate: ${result.files.size - 1} codecs and index.ts in ${options.out}/`);
    });

  program
    .command('check')
    .description('fail when the generated folder is not what the schemas generate (stale or hand-edited)')
    .option('-s, --schemas <dirs...>', 'schema folders or files', DEFAULT_SCHEMAS)
    .option('-o, --out <dir>', 'generated folder', DEFAULT_OUT)
    .option('--runtime-import <specifier>', 'runtime module specifier used when generating')
    .option(
      '-b, --baseline <file>',
      `also fail on a breaking change against this baseline of released wire layouts (default ${DEFAULT_BASELINE} with the default schemas)`,
    )
    .action(async (options: { schemas: string[]; out: string; runtimeImport?: string; baseline?: string }) => {
      const missing = missingSchemas('check', options.schemas);
      if (missing !== undefined) {
        console.error(missing);
        process.exitCode = 2;
        return;
      }
      const result = await generate({ schemas: options.schemas, out: options.out, runtimeImport: options.runtimeImport, skipTypecheck: true });
      printDiagnostics(result.diagnostics);
      if (result.diagnostics.some((d) => d.severity === 'error')) {
        process.exitCode = 2;
        return;
      }
      const report = compareTree(options.out, result.files);
      const problems = [
        ...report.changed.map((f) => `  changed: ${options.out}/${f}`),
        ...report.missing.map((f) => `  missing: ${options.out}/${f}`),
        ...report.extra.map((f) => `  no longer generated: ${options.out}/${f}`),
      ];
      if (problems.length > 0) {
        console.error(`kipgen check: ${options.out}/ is stale (${problems.length} file${problems.length === 1 ? '' : 's'}):`);
        for (const p of problems.slice(0, 20)) console.error(p);
        if (problems.length > 20) console.error(`  … and ${problems.length - 20} more`);
        console.error(`Run \`${generateCommand(options)}\` and commit the result.`);
        process.exitCode = 1;
        return;
      }
      console.log(`kipgen check: ${options.out}/ is up to date (${result.files.size} files)`);
      const baseline = options.baseline ?? (options.schemas === DEFAULT_SCHEMAS ? DEFAULT_BASELINE : undefined);
      if (baseline !== undefined) process.exitCode = reportBaseline(checkBaseline({ schemas: options.schemas, baseline }), baseline);
    });

  program
    .command('demo')
    .description('encode and decode one message of every API in message-schemas at every version, and print a table')
    .action(async () => {
      const { runDemo } = await import('./demo.js');
      await runDemo();
    });

  registerDiffCommands(program);
  return program;
}

/** Names the specs left out because they have no version: a folder of Kafka's schemas has a few (retired APIs). */
function skippedNote(skipped: { name: string; file: string }[]): string {
  const names = skipped.map((s) => s.name);
  const list = names.length > 8 ? `${names.slice(0, 8).join(', ')} and ${names.length - 8} more` : names.join(', ');
  return `kipgen generate: note: skipped ${skipped.length} spec${skipped.length === 1 ? '' : 's'} with "validVersions": "none" (no version to generate): ${list}`;
}

/** Prints a baseline check for `kipgen check`; returns its exit code. */
function reportBaseline(result: BaselineResult, baseline: string): number {
  printDiagnostics(result.diagnostics);
  if (result.error !== undefined) {
    console.error(`kipgen check: ${result.error}`);
    return 2;
  }
  const breaking = result.report?.breaking ?? 0;
  if (breaking > 0) {
    console.error(`kipgen check: ${breaking} breaking change${breaking === 1 ? '' : 's'} against ${baseline}; see \`kipgen baseline --check\``);
    return 1;
  }
  console.log(`kipgen check: no breaking change against ${baseline}`);
  return 0;
}

/** The version in the package.json of the kipgen package this module belongs to (the checkout's, or the installed package's). */
export function kipgenVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'kipgen' && manifest.version !== undefined) return manifest.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

/** Adds a command to the kipgen program (the broker and the examples bring theirs). */
export type RegisterCommand = (program: Command) => void;

/**
 * Runs the kipgen CLI. The broker and example commands are passed in by the
 * entry point (bin/kipgen.mjs), which composes the product: generator/ never
 * imports coordinator/, client/ or examples/.
 */
export async function main(argv: string[], commands: readonly RegisterCommand[] = []): Promise<void> {
  const program = buildCli();
  for (const register of commands) register(program);
  program.version(kipgenVersion(), '-v, --version', 'print the version of kipgen');
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const code = (error as { code?: string; exitCode?: number }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      process.exitCode = 2;
      return;
    }
    console.error(`kipgen: ${(error as Error).message}`);
    process.exitCode = 2;
  }
}
