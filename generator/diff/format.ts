import type { ApiReport } from './api-diff.js';
import type { Change, DiffReport, WireEqualReport } from './compare.js';

/** Human-readable reports of `kipgen diff`, `kipgen baseline` and `kipgen api-diff`. */

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One block per message: breaking changes first, each with where and why. */
export function formatChanges(changes: readonly Change[], options: { why?: 'breaking' | 'all' | 'none' } = {}): string[] {
  const why = options.why ?? 'breaking';
  const lines: string[] = [];
  let current: string | undefined;
  const ruleWidth = Math.max(0, ...changes.map((c) => c.rule.length));
  const versionWidth = Math.max(0, ...changes.map((c) => (c.versions === undefined ? 0 : c.versions.length + 1)));
  for (const c of changes) {
    if (c.message !== current) {
      if (current !== undefined) lines.push('');
      lines.push(c.message);
      current = c.message;
    }
    const mark = c.severity === 'breaking' ? 'BREAKING  ' : 'compatible';
    const versions = (c.versions === undefined ? '' : `v${c.versions}`).padEnd(versionWidth);
    const subject = c.path === undefined ? c.detail : `${c.path}: ${c.detail}`;
    const api = c.apiBreak ? ' [breaks the TypeScript API]' : '';
    lines.push(`  ${mark}  ${c.rule.padEnd(ruleWidth)}  ${versions}  ${subject}${api}`);
    const indent = ' '.repeat(2 + 10 + 2);
    if (c.location !== undefined) lines.push(`${indent}at ${c.location}`);
    if (why === 'all' || (why === 'breaking' && c.severity === 'breaking')) lines.push(`${indent}why: ${c.why}`);
  }
  return lines;
}

export function formatDiff(report: DiffReport, labels: { old: string; new: string }, options: { why?: 'breaking' | 'all' | 'none' } = {}): string {
  const lines = [`kipgen diff: ${labels.old} → ${labels.new} (${plural(report.compared.length, 'message')} compared)`, ''];
  if (report.changes.length === 0) {
    lines.push('No changes to the wire.');
  } else {
    lines.push(...formatChanges(report.changes, options), '');
  }
  lines.push(summary(report));
  return lines.join('\n');
}

export function summary(report: DiffReport): string {
  const apiBreaks = report.changes.filter((c) => c.apiBreak).length;
  const api = apiBreaks > 0 ? `; ${plural(apiBreaks, 'wire-safe change')} break${apiBreaks === 1 ? 's' : ''} the TypeScript API` : '';
  if (report.breaking > 0) {
    const messages = new Set(report.changes.filter((c) => c.severity === 'breaking').map((c) => c.message)).size;
    return `BREAKING: ${plural(report.breaking, 'breaking change')} in ${plural(messages, 'message')}, ${plural(report.compatible, 'compatible change')}${api}. A peer running the previous schema would misread or reject these messages: make such changes in a new version.`;
  }
  return `Compatible: ${plural(report.compatible, 'compatible change')}, no breaking change${api}.`;
}

export function formatWireEqual(report: WireEqualReport, labels: { upstream: string; ours: string }): string {
  const lines = [`kipgen diff --wire-equal: ${labels.upstream} (upstream) vs ${labels.ours} (ours); differences read upstream → ours`, ''];
  const compared = report.compared.map((c) => `${c.name}${c.upstream === c.name ? '' : ` (upstream ${c.upstream})`} v${c.versions}`);
  lines.push(`Compared ${plural(report.compared.length, 'spec')} version by version: ${compared.join(', ') || 'none'}`);
  if (report.notUpstream.length > 0) lines.push(`Not upstream (${report.notUpstream.length}): ${report.notUpstream.join(', ')}`);
  lines.push('');
  if (report.changes.length > 0) lines.push(...formatChanges(report.changes, { why: 'none' }).map((l) => l.replace('BREAKING  ', 'DIFFERENT ')), '');
  lines.push(
    report.changes.length === 0
      ? `Wire-equal: every version ours declares of an upstream spec has upstream's exact wire layout.`
      : `NOT wire-equal: ${plural(report.changes.length, 'difference')} from upstream.`,
  );
  return lines.join('\n');
}

export function formatApi(report: ApiReport, labels?: { old: string; new: string }): string {
  const lines: string[] = [];
  if (labels) lines.push(`kipgen api-diff: ${labels.old} → ${labels.new} (${report.modules.old} → ${report.modules.new} modules)`, '');
  let current: string | undefined;
  for (const c of report.changes) {
    if (c.module !== current) {
      if (current !== undefined) lines.push('');
      lines.push(c.module);
      current = c.module;
    }
    lines.push(`  ${c.severity === 'breaking' ? 'BREAKING  ' : c.severity === 'note' ? 'note      ' : 'compatible'}  ${c.rule}  ${c.symbol}: ${c.detail}`);
  }
  if (report.changes.length > 0) lines.push('');
  lines.push(
    report.breaking > 0
      ? `TypeScript API BREAKING: ${plural(report.breaking, 'change')} break${report.breaking === 1 ? 's' : ''} code that imports the generated modules (${plural(report.compatible, 'compatible change')}).`
      : `TypeScript API compatible: ${plural(report.compatible, 'compatible change')}, nothing breaks importers${report.notes > 0 ? ` that build messages with create() (${plural(report.notes, 'note')} for code that writes object literals of the full types)` : ''}.`,
  );
  return lines.join('\n');
}
