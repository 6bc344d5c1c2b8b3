// node --import tsx bench/summarize-runs.ts A.json B.json C.json
//
// Joins the --json results of several bench:codec runs into one Markdown table: per ours row,
// its ops/s and its ratio to the peer in each run (median of that run's per-round ratios),
// and, for runs made with --baseline-tree, the per-round ratio to its "@ baseline" twin.
// Where a comparison has a floor row (its label starts with "floor:"), every other ours row
// also gets its per-round ratio to that floor.
// The README's "Codec speed" table is made with it, from three runs.
import { readFileSync } from 'node:fs';
import { BASELINE_MARK, roundRatios, type ComparisonResult } from './harness.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node --import tsx bench/summarize-runs.ts RUN.json [RUN.json ...]');
  process.exit(2);
}
const runs = files.map((f) => (JSON.parse(readFileSync(f, 'utf8')) as { results: ComparisonResult[] }).results);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const key = (c: ComparisonResult): string => `${c.workload}|${c.api}|${c.version}|${c.op}`;

const lines = [
  `| workload | API version | op | participant | ours ops/s (runs) | peer | ours ÷ peer (runs) | ÷ floor (runs) | ÷ baseline (runs) |`,
  '|---|---|---|---|---|---|---|---|---|',
];
for (const first of runs[0]!) {
  const same = runs.map((r) => r.find((c) => key(c) === key(first)) ?? null);
  for (const row of first.rows) {
    if (row.role !== 'ours' || row.label.endsWith(BASELINE_MARK)) continue;
    const per = same.map((c) => {
      const r = c?.rows.find((x) => x.label === row.label);
      const peer = c?.rows.find((x) => x.role === 'peer');
      const floor = c?.rows.find((x) => x.label.startsWith('floor:'));
      const vsFloor = r && floor && r !== floor ? (roundRatios(r, floor)?.median ?? null) : null;
      return {
        ops: r?.medianOps ?? null,
        ratio: r?.ratio?.median ?? null,
        peer: peer ? `${peer.lib} ${fmt(peer.medianOps ?? 0)}` : '—',
        vsFloor,
        vsBase: r?.baselineRatio?.median ?? null,
      };
    });
    const list = (xs: Array<number | null>, f: (n: number) => string): string =>
      xs.every((x) => x === null) ? '—' : xs.map((x) => (x === null ? '—' : f(x))).join(' / ');
    lines.push(
      `| ${first.workload} | ${first.api} v${first.version} | ${first.op} | ${row.label} | ${list(
        per.map((p) => p.ops),
        fmt,
      )} | ${per[0]!.peer} | ${list(
        per.map((p) => p.ratio),
        (x) => `${x.toFixed(2)}×`,
      )} | ${list(
        per.map((p) => p.vsFloor),
        (x) => x.toFixed(2),
      )} | ${list(
        per.map((p) => p.vsBase),
        (x) => x.toFixed(3),
      )} |`,
    );
  }
}
console.log(lines.join('\n'));
