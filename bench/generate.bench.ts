// npm run bench:generate [-- SCHEMA_DIR]
//
// Times `kipgen generate` over every spec of Kafka's schemas (../shared/kafka-schemas,
// one folder per Kafka module, each generated as `generate` would), phase by phase:
// load and check, emit (views), templates, Prettier, and the in-memory type check of
// the whole tree. Prints a Markdown table; the target is under 10 s in all.
import { readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { messageView } from '../generator/emit/message-view.js';
import { registryView } from '../generator/emit/registry-view.js';
import { loadSpecs, schemaFiles } from '../generator/load.js';
import { format, renderMessageSource, renderRegistry } from '../generator/render.js';
import { typecheck } from '../generator/typecheck.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = resolve(process.argv[2] ?? process.env.KIPGEN_SHARED_SCHEMAS ?? join(here, '..', '..', 'shared', 'kafka-schemas'));
const folders = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => join(root, d.name));

// Wall time, and this process's CPU time: on a shared machine the second says what the work costs.
type Phase = 'load + check' | 'emit' | 'templates' | 'prettier' | 'type check';
const phases: Record<Phase, [wall: number, cpu: number]> = { 'load + check': [0, 0], emit: [0, 0], templates: [0, 0], prettier: [0, 0], 'type check': [0, 0] };
const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const time = async <T>(phase: Phase, work: () => T | Promise<T>): Promise<T> => {
  const start = performance.now();
  const cpu = cpuMs();
  const result = await work();
  phases[phase][0] += performance.now() - start;
  phases[phase][1] += cpuMs() - cpu;
  return result;
};

const total = performance.now();
const totalCpu = cpuMs();
const files = new Map<string, string>();
let specCount = 0;
let fileCount = 0;
for (const folder of folders) {
  fileCount += schemaFiles([folder]).length;
  const out = join(here, '..', '.bench-generate', folder.split(/[\\/]/).pop()!);
  // This checkout's runtime by relative path (the generator's default names the installed package).
  const runtime = relative(out, join(here, '..', 'runtime', 'index.js'))
    .split(sep)
    .join('/');
  const { specs, diagnostics } = await time('load + check', () => loadSpecs([folder]));
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`${folder}: ${errors.length} schema errors, e.g. ${errors[0]!.message}`);
  specCount += specs.length;
  for (const spec of specs) {
    const view = await time('emit', () => messageView(spec, runtime));
    const source = await time('templates', () => renderMessageSource(view));
    files.set(join(out, `${spec.name}.ts`), await time('prettier', () => format(source)));
  }
  // The registry goes through the template and Prettier at once; it is one file per folder.
  files.set(join(out, 'index.ts'), await time('prettier', () => renderRegistry(registryView(specs, runtime))));
}
const problems = await time('type check', () => typecheck(files));
if (problems.length > 0) throw new Error(`type errors:\n${problems.slice(0, 5).join('\n')}`);
const elapsed = performance.now() - total;
const elapsedCpu = cpuMs() - totalCpu;

console.log(`kipgen generate over ${root}: ${fileCount} schema files, ${specCount} with versions, ${files.size} modules\n`);
console.log('| phase | wall ms | share | CPU ms |');
console.log('| --- | ---: | ---: | ---: |');
for (const [phase, [ms, cpu]] of Object.entries(phases))
  console.log(`| ${phase} | ${ms.toFixed(0)} | ${((100 * ms) / elapsed).toFixed(0)}% | ${cpu.toFixed(0)} |`);
console.log(`| **total** | **${elapsed.toFixed(0)}** | target < 10000 | ${elapsedCpu.toFixed(0)} |`);
