#!/usr/bin/env node
// The kipgen command: the generator's commands, plus the broker's and the
// examples', composed here so that generator/ never imports coordinator/,
// client/ or examples/ (docs/DESIGN.md §1).
//
// In a checkout the TypeScript sources run directly through tsx, so that the
// CLI never lags behind an edit; an installed package runs its compiled dist/.
import { existsSync } from 'node:fs';

const inCheckout = existsSync(new URL('../generator/cli.ts', import.meta.url));
if (inCheckout) {
  const { register } = await import('tsx/esm/api');
  register();
}
const load = (path) => import(new URL(inCheckout ? `../${path}.ts` : `../dist/${path}.js`, import.meta.url).href);

const cli = await load('generator/cli');
const { registerBrokerCommand } = await load('coordinator/cli');
const { registerExampleCommand } = await load('examples/cli');
await cli.main(process.argv, [registerBrokerCommand, registerExampleCommand]);
