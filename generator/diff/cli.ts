import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Option, type Command } from 'commander';
import { formatDiagnostic, type Diagnostic } from '../diagnostics.js';
import { generate } from '../generate.js';
import type { ApiReport } from './api-diff.js';
import { checkBaseline, DEFAULT_BASELINE, DEFAULT_BASELINE_SCHEMAS, updateBaseline, type BaselineResult } from './baseline.js';
import { compareTrees, compareWireEqual } from './compare.js';
import { formatApi, formatChanges, formatDiff, formatWireEqual, summary } from './format.js';
import { formatGithub } from './github.js';
import { messageLayout } from './layout.js';
import { loadTree, TreeArgumentError, type LoadedTree } from './load-tree.js';

/**
 * `kipgen diff`, `kipgen baseline` and `kipgen api-diff`. Exit codes, as for
 * every check-like kipgen command: 0 clean, 1 findings (something breaks), 2
 * could not run (bad input).
 */

export function registerDiffCommands(program: Command): void {
  program
    .command('diff')
    .description(
      'compare two schema trees (folders, files, git:REF[:PATH], or several joined with commas) message by message and version by version; exit 0 compatible, 1 breaking, 2 bad input',
    )
    .argument('<old>', 'the released schemas, e.g. git:main:message-schemas (with --wire-equal: upstream Kafka schemas)')
    .argument('<new>', 'the changed schemas, e.g. message-schemas (with --wire-equal: ours)')
    .option('--json', 'print a JSON report instead of text (same as --format json)')
    .addOption(
      new Option('--format <format>', 'text, json, or github (GitHub Actions annotations on the changed lines)')
        .choices(['text', 'json', 'github'])
        .default('text'),
    )
    .option('--wire-equal', 'check that every version NEW declares of a spec OLD also has is byte-for-byte the same on the wire')
    .option('--api', 'also generate both trees and report what breaks importers of the generated TypeScript')
    .option('--why-all', 'explain compatible changes too')
    .action(
      async (
        oldArg: string,
        newArg: string,
        options: { json?: boolean; format: 'text' | 'json' | 'github'; wireEqual?: boolean; api?: boolean; whyAll?: boolean },
      ) => {
        if (options.format === 'json') options.json = true;
        const github = options.format === 'github' && !options.json;
        const trees = loadBoth(oldArg, newArg, 'kipgen diff', options.json);
        if (trees === undefined) return;
        const [olds, news] = trees;
        if (options.wireEqual) {
          const report = compareWireEqual(olds.specs.map(messageLayout), news.specs.map(messageLayout));
          if (options.json)
            console.log(
              JSON.stringify(
                { command: 'diff --wire-equal', upstream: oldArg, ours: newArg, verdict: report.changes.length === 0 ? 'wire-equal' : 'different', ...report },
                null,
                2,
              ),
            );
          else if (github) console.log(formatGithub({ changes: report.changes, breaking: report.changes.length, compatible: 0, compared: [] }));
          else console.log(formatWireEqual(report, { upstream: oldArg, ours: newArg }));
          process.exitCode = report.changes.length === 0 ? 0 : 1;
          return;
        }
        const report = compareTrees(olds.specs.map(messageLayout), news.specs.map(messageLayout), { pairSingle: olds.singleFile && news.singleFile });
        let api: ApiReport | undefined;
        if (options.api) {
          try {
            const { diffApi } = await import('./api-diff.js');
            api = diffApi(await generateTree(olds), await generateTree(news));
          } catch (error) {
            fail('kipgen diff', `could not generate the TypeScript of both trees: ${(error as Error).message}`, options.json);
            return;
          }
        }
        if (options.json) {
          console.log(
            JSON.stringify(
              {
                command: 'diff',
                old: oldArg,
                new: newArg,
                verdict: report.breaking > 0 ? 'breaking' : 'compatible',
                ...report,
                ...(api ? { api: { verdict: api.breaking > 0 ? 'breaking' : 'compatible', ...api } } : {}),
              },
              null,
              2,
            ),
          );
        } else if (github) {
          console.log(formatGithub(report, api));
        } else {
          console.log(formatDiff(report, { old: oldArg, new: newArg }, { why: options.whyAll ? 'all' : 'breaking' }));
          if (api) console.log(`\n${formatApi(api, { old: `TypeScript of ${oldArg}`, new: `TypeScript of ${newArg}` })}`);
        }
        // One rule for every check-like command: 1 when anything breaks, the wire or (with --api) the TypeScript.
        process.exitCode = report.breaking > 0 || (api?.breaking ?? 0) > 0 ? 1 : 0;
      },
    );

  program
    .command('baseline')
    .description(
      `compare the schemas with the committed baseline of released wire layouts (${DEFAULT_BASELINE}): --check (default) fails on a breaking difference; --update records the schemas as released`,
    )
    .option('--check', 'fail (exit 1) when the schemas differ from the baseline in a breaking way; report compatible changes')
    .option('--update', 'rewrite the baseline from the schemas: the deliberate, reviewed step that moves it')
    .option('-s, --schemas <dirs...>', 'schema folders or files', DEFAULT_BASELINE_SCHEMAS)
    .option('-b, --baseline <file>', 'the baseline file', DEFAULT_BASELINE)
    .option('--json', 'print a JSON report instead of text')
    .action((options: { check?: boolean; update?: boolean; schemas: string[]; baseline: string; json?: boolean }) => {
      if (options.check && options.update) {
        fail('kipgen baseline', 'choose one of --check and --update', options.json);
        return;
      }
      let result: BaselineResult & { written?: boolean };
      try {
        result = options.update ? updateBaseline(options) : checkBaseline(options);
      } catch (error) {
        if (error instanceof TreeArgumentError) return fail('kipgen baseline', error.message, options.json);
        throw error;
      }
      if (badInput('kipgen baseline', result.diagnostics, options.json)) return;
      if (result.error !== undefined) return fail('kipgen baseline', result.error, options.json);
      const report = result.report;
      if (options.json) {
        console.log(
          JSON.stringify(
            {
              command: options.update ? 'baseline --update' : 'baseline --check',
              baseline: options.baseline,
              verdict: report !== undefined && report.breaking > 0 ? 'breaking' : 'compatible',
              ...(options.update ? { written: result.written } : {}),
              ...(report ?? { changes: [] }),
            },
            null,
            2,
          ),
        );
      }
      if (options.update) {
        if (!options.json) {
          if (report !== undefined && report.changes.length > 0) {
            console.log(`kipgen baseline --update: recorded these changes in ${options.baseline}:\n`);
            console.log(formatChanges(report.changes).join('\n'));
            console.log('');
            if (report.breaking > 0) console.log(`${report.breaking} of them are BREAKING: make sure the review of this change says why that is acceptable.`);
          }
          console.log(
            result.written
              ? `kipgen baseline --update: wrote ${options.baseline} (${result.messages} messages)`
              : `kipgen baseline --update: ${options.baseline} already records the schemas (${result.messages} messages)`,
          );
        }
        process.exitCode = 0;
        return;
      }
      if (!options.json) {
        if (report!.changes.length === 0) {
          console.log(`kipgen baseline --check: ${options.schemas.join(', ')} matches ${options.baseline} (${result.messages} messages)`);
        } else {
          console.log(`kipgen baseline --check: ${options.schemas.join(', ')} against ${options.baseline}\n`);
          console.log(formatChanges(report!.changes).join('\n'));
          console.log('');
          console.log(summary(report!));
          console.log(
            report!.breaking > 0
              ? `If this break is deliberate, run \`kipgen baseline --update\` and have the change reviewed.`
              : `Run \`kipgen baseline --update\` to record the compatible changes in ${options.baseline}.`,
          );
        }
      }
      process.exitCode = report!.breaking > 0 ? 1 : 0;
    });

  program
    .command('api-diff')
    .description(
      'compare the exported TypeScript surface of two generated folders and report what breaks importers; exit 0 compatible, 1 breaking, 2 bad input',
    )
    .argument('<old>', 'the previous generated folder')
    .argument('<new>', 'the new generated folder')
    .option('--json', 'print a JSON report instead of text')
    .action(async (oldDir: string, newDir: string, options: { json?: boolean }) => {
      for (const dir of [oldDir, newDir]) {
        let ok = false;
        try {
          ok = statSync(dir).isDirectory();
        } catch {
          ok = false;
        }
        if (!ok) return fail('kipgen api-diff', `${dir}: not a folder`, options.json);
      }
      const { diffApi, readTree } = await import('./api-diff.js');
      const report = diffApi(readTree(oldDir), readTree(newDir));
      if (options.json)
        console.log(
          JSON.stringify({ command: 'api-diff', old: oldDir, new: newDir, verdict: report.breaking > 0 ? 'breaking' : 'compatible', ...report }, null, 2),
        );
      else console.log(formatApi(report, { old: oldDir, new: newDir }));
      process.exitCode = report.breaking > 0 ? 1 : 0;
    });
}

function loadBoth(oldArg: string, newArg: string, command: string, json: boolean | undefined): [LoadedTree, LoadedTree] | undefined {
  // A git side without a path reads the same folder as the other side.
  const localPath = (arg: string): string | undefined => (arg.startsWith('git:') || arg.includes(',') || isAbsolute(arg) ? undefined : arg);
  try {
    const olds = loadTree(oldArg, { defaultGitPath: localPath(newArg) });
    const news = loadTree(newArg, { defaultGitPath: localPath(oldArg) });
    if (badInput(command, [...olds.diagnostics, ...news.diagnostics], json)) return undefined;
    return [olds, news];
  } catch (error) {
    if (error instanceof TreeArgumentError) {
      fail(command, error.message, json);
      return undefined;
    }
    throw error;
  }
}

/** Prints the loader's errors (file:line:column) and sets exit code 2; true when there were any. */
function badInput(command: string, diagnostics: Diagnostic[], json: boolean | undefined): boolean {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length === 0) return false;
  for (const d of errors) console.error(formatDiagnostic(d));
  const message = `${errors.length} schema error${errors.length === 1 ? '' : 's'}: nothing compared`;
  if (json) console.log(JSON.stringify({ command, error: message, diagnostics: errors }, null, 2));
  console.error(`${command}: ${message}`);
  process.exitCode = 2;
  return true;
}

function fail(command: string, message: string, json: boolean | undefined): void {
  if (json) console.log(JSON.stringify({ command, error: message }, null, 2));
  console.error(`${command}: ${message}`);
  process.exitCode = 2;
}

/** Generates a loaded tree's TypeScript in memory (module name → text), with a fixed runtime import so that two trees compare. */
async function generateTree(tree: LoadedTree): Promise<Map<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'kipgen-diff-'));
  try {
    const schemas = join(dir, 'schemas');
    mkdirSync(schemas);
    for (const loaded of tree.specs) writeFileSync(join(schemas, `${loaded.spec.name}.json`), loaded.text);
    const result = await generate({ schemas: [schemas], out: join(dir, 'generated'), runtimeImport: 'kipgen/runtime', skipTypecheck: true });
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new Error(errors.map(formatDiagnostic).join('\n'));
    return result.files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
