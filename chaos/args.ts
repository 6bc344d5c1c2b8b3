/**
 * `--name value` and bare `--flag` (read as 'true') command-line flags of the
 * chaos programs. A stray positional argument is an error, so that a typo in a
 * test's spawn line fails loudly instead of being ignored.
 */
export function parseFlags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out.set(a.slice(2), 'true');
    else out.set(a.slice(2), argv[++i]!);
  }
  return out;
}
