#!/usr/bin/env node
// kipgen-broker [options]        = kipgen broker [options]: a Kafka broker on 127.0.0.1
// kipgen-broker dump-log <dir>   = kipgen dump-log <dir>
import { Command } from 'commander';
import { registerBrokerCommand } from '../dist/coordinator/cli.js';

const program = new Command('kipgen-broker');
registerBrokerCommand(program);
const args = process.argv.slice(2);
const sub = args[0] === 'dump-log' || args[0] === 'broker' ? args : ['broker', ...args];
program.parseAsync([process.argv[0], process.argv[1], ...sub]).catch((error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
});
