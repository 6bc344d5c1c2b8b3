#!/usr/bin/env node
// Runs the compiled CLI when the package is built (dist/), else the TypeScript
// sources through tsx, so that a fresh clone works without a build step.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/generator/cli.js', import.meta.url);
let cli;
if (existsSync(compiled)) {
  cli = await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(new URL('../generator/cli.ts', import.meta.url).href);
}
await cli.main(process.argv);
