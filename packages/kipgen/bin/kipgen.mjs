#!/usr/bin/env node
// The installed kipgen command: the generator's commands; `kipgen broker` and
// `kipgen dump-log` come from @kipgen/broker when it is installed (loaded only
// for those commands, so that generating does not load a broker).
const { main } = await import('../dist/generator/cli.js');

const BROKER_COMMANDS = ['broker', 'dump-log'];
const commands = [];
if (BROKER_COMMANDS.includes(process.argv[2]) || process.argv.length <= 2 || ['help', '--help', '-h'].includes(process.argv[2])) {
  try {
    const { registerBrokerCommand } = await import('@kipgen/broker/cli');
    commands.push(registerBrokerCommand);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('@kipgen/broker')) throw error;
    commands.push((program) => {
      for (const name of BROKER_COMMANDS) {
        program
          .command(name)
          .description(`(needs @kipgen/broker) ${name === 'broker' ? 'run a Kafka broker on 127.0.0.1' : 'print a broker data folder'}`)
          .allowUnknownOption()
          .allowExcessArguments()
          .action(() => {
            console.error(`kipgen ${name} needs the @kipgen/broker package: npm install --save-dev @kipgen/broker`);
            process.exitCode = 2;
          });
      }
    });
  }
}
await main(process.argv, commands);
