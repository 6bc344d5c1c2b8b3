/**
 * `kipgen example <name>`: runs one of KIP-1289's three use cases end to end.
 * Registered into the kipgen CLI by bin/kipgen.mjs (so that generator/ does not
 * depend on client/ or coordinator/); also runnable standalone:
 * `node --import tsx examples/cli.ts example consume-transform-produce`.
 */
import { Command } from 'commander';
import { pathToFileURL } from 'node:url';
import type { ExampleOptions, ExampleSummary } from './support.js';

interface ExampleEntry {
  section: string;
  about: string;
  run: () => Promise<(options: ExampleOptions) => Promise<ExampleSummary>>;
}

/** The examples by name; each module is loaded only when it runs. */
export const EXAMPLES: Readonly<Record<string, ExampleEntry>> = {
  'consume-transform-produce': {
    section: '§2.1',
    about: 'share consumer + transactional producer: output and acks commit together; an abort redelivers at once',
    run: async () => (await import('./consume-transform-produce.js')).runConsumeTransformProduce,
  },
  'share-source': {
    section: '§2.2',
    about: 'a source without a producer: TransactionalShareAcknowledger at checkpoints, restart from a prepared checkpoint',
    run: async () => (await import('./share-source.js')).runShareSource,
  },
  'source-and-sink': {
    section: '§2.3',
    about: 'Flink-style source + Kafka sink in one transaction per checkpoint: prepareCommit, snapshotState, notifyCheckpointComplete',
    run: async () => (await import('./source-and-sink.js')).runSourceAndSink,
  },
};

/** Runs the example `name`; the summary says whether its own checks passed. */
export async function runExample(name: string, options: ExampleOptions = {}): Promise<ExampleSummary> {
  const entry = EXAMPLES[name];
  if (entry === undefined) throw new Error(`no example ${JSON.stringify(name)}; the examples are: ${Object.keys(EXAMPLES).join(', ')}`);
  return (await entry.run())(options);
}

function listing(): string {
  const width = Math.max(...Object.keys(EXAMPLES).map((n) => n.length));
  return Object.entries(EXAMPLES)
    .map(([name, e]) => `  ${name.padEnd(width)}  KIP-1289 ${e.section}: ${e.about}`)
    .join('\n');
}

export function registerExampleCommand(program: Command): void {
  program
    .command('example')
    .description("run one of KIP-1289's three use cases end to end against an embedded broker, and check its outcome")
    .argument('[name]', `${Object.keys(EXAMPLES).join(' | ')} (none: list them)`)
    .option('--bootstrap <host:port>', 'run against this kipgen broker instead of an embedded one (the example creates its topics there with Admin)')
    .option('--verbose', "also print the broker's log and the clients' info messages (stderr)")
    .option('--json', 'end with the summary as one JSON line')
    .addHelpText('after', `\nExamples:\n${listing()}`)
    .action(async (name: string | undefined, options: { bootstrap?: string; verbose?: boolean; json?: boolean }) => {
      if (name === undefined) {
        console.log(`Examples (npx kipgen example <name>):\n${listing()}`);
        return;
      }
      const summary = await runExample(name, { bootstrap: options.bootstrap, verbose: options.verbose === true });
      if (options.json) console.log(JSON.stringify(summary, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      if (!summary.ok) process.exitCode = 1;
    });
}

// Standalone: `node --import tsx examples/cli.ts example <name>`.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const program = new Command('kipgen');
  registerExampleCommand(program);
  program.parseAsync(process.argv).catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  });
}
