import type { ApiReport } from './api-diff.js';
import type { Change, DiffReport } from './compare.js';

/**
 * `kipgen diff --format github`: GitHub Actions workflow commands, so that a
 * breaking schema change shows on its line of the pull request
 * (`::error file=message-schemas/X.json,line=18,col=5,title=…::…`). Breaking
 * changes are errors; wire-safe changes that break the generated TypeScript
 * API are warnings; compatible changes are only counted in the closing line.
 *
 * A location on the OLD side (`git:REF:path…`, a message that is gone) names
 * the file without a line: the old line numbers would point at the wrong line
 * of the new file.
 */
export function formatGithub(report: DiffReport, api?: ApiReport): string {
  const lines: string[] = [];
  for (const change of report.changes) {
    if (change.severity === 'breaking') lines.push(annotation('error', change));
    else if (change.apiBreak) lines.push(annotation('warning', change));
  }
  const apiBreaking = api?.breaking ?? 0;
  if (api !== undefined) {
    for (const c of api.changes.filter((c) => c.severity === 'breaking')) {
      lines.push(`::error title=${property(`kipgen diff --api: ${c.rule}`)}::${data(`${c.symbol} (${c.module}): ${c.detail}`)}`);
    }
  }
  const apiNote = api === undefined ? '' : `; TypeScript API: ${apiBreaking} breaking`;
  lines.push(`kipgen diff: ${report.breaking} breaking, ${report.compatible} compatible change${report.compatible === 1 ? '' : 's'}${apiNote}`);
  return lines.join('\n');
}

function annotation(level: 'error' | 'warning', change: Change): string {
  const where = place(change.location);
  const props = [
    ...(where.file === undefined ? [] : [`file=${property(where.file)}`]),
    ...(where.line === undefined ? [] : [`line=${where.line}`, `col=${where.col}`]),
    `title=${property(`kipgen diff: ${change.rule}${change.apiBreak && change.severity !== 'breaking' ? ' (breaks the TypeScript API)' : ''}`)}`,
  ];
  const versions = change.versions === undefined ? '' : ` v${change.versions}`;
  const path = change.path === undefined ? '' : ` ${change.path}:`;
  return `::${level} ${props.join(',')}::${data(`${change.message}${versions}${path} ${change.detail}. ${change.why}`)}`;
}

/** `file:line:column`, or a bare file; a file read from git history loses its line. */
export function place(location: string | undefined): { file?: string; line?: number; col?: number } {
  if (location === undefined) return {};
  const m = /^(.*):(\d+):(\d+)$/.exec(location);
  const file = m ? m[1]! : location;
  const git = /^git:[^:]+:(.+)$/.exec(file);
  if (git) return { file: git[1]! };
  return m ? { file, line: Number(m[2]), col: Number(m[3]) } : { file };
}

/** Escapes a workflow command's message, as GitHub's toolkit does. */
function data(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes a workflow command's property value. */
function property(text: string): string {
  return data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
