/**
 * Every relative link in the project's Markdown leads somewhere: the file or
 * folder exists, and an anchor into a Markdown file names one of its headings
 * (GitHub's slugs). Links to the web are not followed (no network in tests).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The Markdown files git tracks (a fresh clone's), outside generated output. */
function markdownFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: ROOT, encoding: 'utf8' });
  return listed
    .split('\0')
    .filter((f) => f !== '' && !f.includes('node_modules/') && !/(^|\/)dist\//.test(f))
    .filter((f) => existsSync(join(ROOT, f)));
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const text = heading[1]!.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** `[text](target)` links outside code, with their line numbers. */
export function relativeLinks(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let inFence = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) inFence = !inFence;
    if (inFence) return;
    const withoutCode = text.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ target, line: index + 1 });
    }
  });
  return links;
}

describe('Markdown links', () => {
  it('finds headings and links as GitHub does', () => {
    const doc = '# Results (2 December 2026)\n## `npm run lint`, and why\n## Method\n## Method\n```\n[not](a/link.md)\n```\n[a](b.md#method-1) `[code](x.md)`';
    expect([...headingSlugs(doc)]).toEqual(['results-2-december-2026', 'npm-run-lint-and-why', 'method', 'method-1']);
    expect(relativeLinks(doc)).toEqual([{ target: 'b.md#method-1', line: 8 }]);
  });

  it('every relative link in a tracked Markdown file resolves, anchors included', () => {
    const broken: string[] = [];
    const slugCache = new Map<string, Set<string>>();
    const files = markdownFiles();
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const { target, line } of relativeLinks(text)) {
        const [pathPart, anchor] = target.split('#') as [string, string | undefined];
        const resolved = pathPart === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(pathPart));
        if (!existsSync(resolved)) {
          broken.push(`${file}:${line}: ${target} (no such file)`);
          continue;
        }
        if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) continue;
        let slugs = slugCache.get(resolved);
        if (slugs === undefined) slugCache.set(resolved, (slugs = headingSlugs(readFileSync(resolved, 'utf8'))));
        if (!slugs.has(anchor.toLowerCase())) broken.push(`${file}:${line}: ${target} (no heading with that anchor)`);
      }
    }
    expect(broken, broken.join('\n')).toEqual([]);
  });
});
