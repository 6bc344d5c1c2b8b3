/**
 * The Debian tools the interop project (test/interop/, `npm run test:interop`)
 * needs, probed the way the tests use them, and the one line that says what
 * to install. `npm test` needs none of them.
 *
 * Run as a script (`node --import tsx test/interop/support/tools.ts`) it exits
 * 0 when all are there, else prints that line and exits 2 (could not run).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface InteropTool {
  /** What the tests call it. */
  name: string;
  /** The command and arguments that succeed only when the tool is usable. */
  probe: [string, string[]];
  /** The Debian package that provides it. */
  debianPackage: string;
}

/**
 * confluent-kafka-python is probed with `import confluent_kafka` under Debian's
 * /usr/bin/python3 (where python3-confluent-kafka installs), not merely by
 * finding a python3: a python3 without the module is not enough.
 */
export const DEBIAN_PYTHON = '/usr/bin/python3';

export const INTEROP_TOOLS: readonly InteropTool[] = [
  { name: 'kcat', probe: ['kcat', ['-V']], debianPackage: 'kcat' },
  { name: 'tshark', probe: ['tshark', ['-v']], debianPackage: 'tshark' },
  { name: 'confluent-kafka-python', probe: [DEBIAN_PYTHON, ['-c', 'import confluent_kafka']], debianPackage: 'python3-confluent-kafka' },
];

/** Runs the tool's probe; its output when it works, undefined when it does not. */
export function probeTool(tool: InteropTool): string | undefined {
  const [command, args] = tool.probe;
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
  if (result.error !== undefined || result.status !== 0) return undefined;
  return `${result.stdout}${result.stderr}`.trim();
}

export function missingInteropTools(tools: readonly InteropTool[] = INTEROP_TOOLS): InteropTool[] {
  return tools.filter((tool) => probeTool(tool) === undefined);
}

/** One line: what is missing and the command that installs it. */
export function installHint(missing: readonly InteropTool[]): string {
  return (
    `npm run test:interop needs ${missing.map((t) => t.name).join(', ')}, not found here: ` +
    `install with \`sudo apt-get install -y --no-install-recommends ${missing.map((t) => t.debianPackage).join(' ')}\` ` +
    `(Debian/Ubuntu; .ci/run does this). npm test needs none of them.`
  );
}

/** For a test's beforeAll: the tool's version output, or an error whose message is the install line. */
export function requireInteropTool(name: string): string {
  const tool = INTEROP_TOOLS.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`unknown interop tool ${name}`);
  const out = probeTool(tool);
  if (out === undefined) throw new Error(installHint([tool]));
  return out;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const missing = missingInteropTools();
  if (missing.length > 0) {
    process.stderr.write(`${installHint(missing)}\n`);
    process.exit(2);
  }
}
