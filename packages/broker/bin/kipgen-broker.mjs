#!/usr/bin/env node
// kipgen-broker [options]           = kipgen broker [options]: a Kafka broker on 127.0.0.1
// kipgen-broker dump-log <path>     = kipgen dump-log <path>
// kipgen-broker scram-credential …  = kipgen scram-credential …
import { Command } from 'commander';
// The one-file build of coordinator/cli.js (packages/build.mjs, bundleBrokerCli): a spawned
// broker serves in about half the time the modular dist/ takes to load.
import { registerBrokerCommand } from '../dist/kipgen-broker.js';

const program = new Command('kipgen-broker')
  .description('a Kafka broker for tests and development (@kipgen/broker); with no command, runs one: kipgen-broker --port 9092')
  .showHelpAfterError();
// broker is the default command: `kipgen-broker --port 9092` runs it, and `kipgen-broker --help`
// lists the commands under this program's own name.
registerBrokerCommand(program, { brokerIsDefault: true });
program.parseAsync(process.argv).catch((error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
});
