#!/usr/bin/env node
// In a checkout the TypeScript sources run directly through tsx, so that the
// CLI never lags behind an edit; an installed package runs its compiled dist/.
import { existsSync } from 'node:fs';

const source = new URL('../generator/cli.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import(new URL('../dist/generator/cli.js', import.meta.url).href);
}
await cli.main(process.argv);
