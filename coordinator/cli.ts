/**
 * `kipgen broker` and `kipgen dump-log`. bin/kipgen.mjs wires registerBrokerCommand
 * into the kipgen CLI; `node --import tsx coordinator/cli.ts broker …` runs
 * the same commands standalone.
 */
import { Command } from 'commander';
import { pathToFileURL } from 'node:url';
import { startBroker } from './broker.js';
import { DEFAULT_DATA_DIR, loadConfigFile, parseTopicArg, type BrokerConfigInput } from './config.js';
import { dumpLog } from './tools/dump-log.js';
import { userConfig } from './auth/credentials.js';

interface BrokerOptions {
  config?: string;
  nodeId?: string;
  port?: string;
  dataDir?: string;
  topic: string[];
  kip1289: boolean;
  logRequests?: boolean;
  logFlushIntervalMessages?: string;
  logFlushIntervalMs?: string;
  logFlushSchedulerIntervalMs?: string;
}

/**
 * `brokerIsDefault`: the command the program runs when given none — for the
 * kipgen-broker bin of @kipgen/broker (`kipgen-broker --port 9092`), whose
 * `--help` then lists its commands under its own name. Never for `kipgen`.
 */
export function registerBrokerCommand(program: Command, options: { brokerIsDefault?: boolean } = {}): void {
  program
    .command('broker', { isDefault: options.brokerIsDefault === true })
    .description('run a node of a kipgen cluster: Kafka protocol on 127.0.0.1, transactions, KIP-1289')
    // The help names a document every package ships: the README of @kipgen/broker ("Config file").
    .option('-c, --config <file>', 'JSON config file: startBroker\'s config fields (the @kipgen/broker README, "Config file"); flags override it')
    .option('--node-id <n>', 'this node id (must be in the config cluster)')
    .option('--port <p>', 'listener port (0: any free port, single node only)')
    .option('--data-dir <dir>', 'data directory (default ./.kipgen-data)')
    .option('--topic <name:partitions>', 'create a data topic at start (repeatable)', (value: string, all: string[]) => [...all, value], [])
    .option('--no-kip1289', 'leave out AddShareAcksToTxn (95) and TxnShareAcknowledge (96)')
    .option('--log-requests', 'log one line per request (API, version, client id) to stderr')
    // Kafka's names and defaults (never: the OS flushes the page cache, which survives kill -9 of the broker).
    .option(
      '--log-flush-interval-messages <n>',
      'log.flush.interval.messages: fsync a partition log once n offsets are unflushed; 1 fsyncs every write before its reply (power-loss durability on one node). Default never',
    )
    .option(
      '--log-flush-interval-ms <ms>',
      'log.flush.interval.ms: the flusher fsyncs a log last flushed this long ago. Default: log.flush.scheduler.interval.ms',
    )
    .option('--log-flush-scheduler-interval-ms <ms>', 'log.flush.scheduler.interval.ms: how often the flusher runs. Default never')
    .action(async (options: BrokerOptions) => {
      const input: BrokerConfigInput = options.config ? loadConfigFile(options.config) : {};
      if (options.nodeId !== undefined) input.nodeId = parseInteger(options.nodeId, '--node-id');
      if (options.port !== undefined) input.port = parseInteger(options.port, '--port');
      if (options.dataDir !== undefined) input.dataDir = options.dataDir;
      if (options.topic.length > 0) {
        const extra = options.topic.map(parseTopicArg);
        input.topics = [...(input.topics ?? []).filter((t) => !extra.some((e) => e.name === t.name)), ...extra];
      }
      if (options.kip1289 === false) input.kip1289 = false;
      if (options.logRequests === true) input.logRequests = true;
      if (options.logFlushIntervalMessages !== undefined)
        input.logFlushIntervalMessages = parseInteger(options.logFlushIntervalMessages, '--log-flush-interval-messages');
      if (options.logFlushIntervalMs !== undefined) input.logFlushIntervalMs = parseInteger(options.logFlushIntervalMs, '--log-flush-interval-ms');
      if (options.logFlushSchedulerIntervalMs !== undefined)
        input.logFlushSchedulerIntervalMs = parseInteger(options.logFlushSchedulerIntervalMs, '--log-flush-scheduler-interval-ms');
      // The CLI keeps its data (./.kipgen-data unless told otherwise) and logs to stderr;
      // startBroker as a library is throwaway and quiet by default.
      input.dataDir ??= DEFAULT_DATA_DIR;
      const broker = await startBroker(input, { log: (line) => process.stderr.write(`${line}\n`) });
      // stdout carries one machine-readable line, for scripts and tests that spawn the broker.
      process.stdout.write(
        `${JSON.stringify({ event: 'listening', nodeId: broker.nodeId, host: broker.host, port: broker.port, listeners: Object.fromEntries(broker.ports) })}\n`,
      );
      const stop = (signal: string): void => {
        process.stderr.write(`[kipgen node ${broker.nodeId}] ${signal}: stopping\n`);
        broker.close().then(
          () => process.exit(0),
          (error: Error) => {
            process.stderr.write(`shutdown failed: ${error.message}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });

  program
    .command('scram-credential')
    .description('print a sasl.users entry for the broker config: SCRAM-SHA-256/512 credentials (salt, iterations, StoredKey, ServerKey), never the password')
    .argument('<user>', 'the user name')
    .option('--password-env <VAR>', 'read the password from this environment variable (default: the first line of stdin)')
    .option('--iterations <n>', 'PBKDF2 iterations (at least 4096)', '4096')
    .action(async (user: string, options: { passwordEnv?: string; iterations: string }) => {
      let password: string | undefined;
      if (options.passwordEnv !== undefined) {
        password = process.env[options.passwordEnv];
        if (password === undefined) throw new Error(`--password-env ${options.passwordEnv}: the variable is not set`);
      } else {
        const chunks: Buffer[] = [];
        for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
        password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
      }
      if (!password) throw new Error('scram-credential: the password is empty');
      process.stdout.write(
        JSON.stringify(userConfig(user, password, ['SCRAM-SHA-256', 'SCRAM-SHA-512'], parseInteger(options.iterations, '--iterations')), null, 2) + '\n',
      );
    });

  program
    .command('dump-log')
    .description('print the batches, records, markers and coordinator records of a segment, partition dir or data dir')
    .argument('<path>', 'a .log segment, a <topic>-<partition> directory, or a data directory')
    .option('--no-records', 'batch headers only')
    .action((target: string, options: { records: boolean }) => {
      process.stdout.write(dumpLog(target, { records: options.records }) + '\n');
    });
}

function parseInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`${flag} must be an integer, got ${value}`);
  return n;
}

// Standalone: `node --import tsx coordinator/cli.ts broker --port 9092`.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const program = new Command('kipgen');
  registerBrokerCommand(program);
  program.parseAsync(process.argv).catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  });
}
