/**
 * kcat (Debian's kcat, on librdkafka) helpers: produce files as single
 * messages or delimited stdin, consume a partition from the beginning with a
 * format that carries key and value lengths so binary payloads parse exactly.
 */
import { run } from './broker-process.js';
import { requireInteropTool } from './tools.js';

export const KCAT_CLIENT_ID = 'kcat-interop';

export function requireKcat(): string {
  const out = requireInteropTool('kcat');
  return /^Version .*$/m.exec(out)?.[0] ?? out.split('\n')[0]!;
}

export interface KcatMessage {
  offset: bigint;
  key: Buffer | null;
  value: Buffer | null;
  /** `%h` as kcat prints it: `k=v,k2=v2`, empty without headers. */
  headers: string;
}

const FORMAT = '@@%o %K %S\n%k%s\n%h\n';

/** `kcat -C -o beginning -e` of one partition, parsed. */
export async function kcatConsume(port: number, topic: string, partition: number): Promise<KcatMessage[]> {
  const result = await run(
    'kcat',
    ['-C', '-b', `127.0.0.1:${port}`, '-X', `client.id=${KCAT_CLIENT_ID}`, '-t', topic, '-p', String(partition), '-o', 'beginning', '-e', '-q', '-f', FORMAT],
    { timeoutMs: 30_000 },
  );
  if (result.code !== 0) throw new Error(`kcat -C exited ${result.code ?? result.signal}: ${result.stderr}`);
  return parseKcat(result.stdout);
}

export function parseKcat(out: Buffer): KcatMessage[] {
  const messages: KcatMessage[] = [];
  let at = 0;
  const line = (): string => {
    const end = out.indexOf(0x0a, at);
    if (end < 0) throw new Error(`kcat output: unterminated line at byte ${at}`);
    const text = out.subarray(at, end).toString('utf8');
    at = end + 1;
    return text;
  };
  const take = (n: number): Buffer | null => {
    if (n < 0) return null;
    const bytes = Buffer.from(out.subarray(at, at + n));
    at += n;
    return bytes;
  };
  while (at < out.length) {
    const head = /^@@(\d+) (-?\d+) (-?\d+)$/.exec(line());
    if (!head) throw new Error(`kcat output: expected a message header at byte ${at}`);
    const key = take(Number(head[2]));
    const value = take(Number(head[3]));
    if (out[at] !== 0x0a) throw new Error(`kcat output: expected a newline after the payload at byte ${at}`);
    at++;
    messages.push({ offset: BigInt(head[1]!), key, value, headers: line() });
  }
  return messages;
}

/** `kcat -P` with each file sent as one message. */
export async function kcatProduceFiles(port: number, topic: string, partition: number, files: string[], args: string[]): Promise<void> {
  const result = await run(
    'kcat',
    ['-P', '-b', `127.0.0.1:${port}`, '-X', `client.id=${KCAT_CLIENT_ID}`, '-t', topic, '-p', String(partition), ...args, ...files],
    { timeoutMs: 30_000 },
  );
  if (result.code !== 0) throw new Error(`kcat -P exited ${result.code ?? result.signal}: ${result.stderr}`);
}

/** `kcat -P` reading delimited messages from stdin. */
export async function kcatProduceStdin(port: number, topic: string, partition: number, input: string, args: string[]): Promise<void> {
  const result = await run('kcat', ['-P', '-b', `127.0.0.1:${port}`, '-X', `client.id=${KCAT_CLIENT_ID}`, '-t', topic, '-p', String(partition), ...args], {
    input,
    timeoutMs: 30_000,
  });
  if (result.code !== 0) throw new Error(`kcat -P exited ${result.code ?? result.signal}: ${result.stderr}`);
}

export interface KcatMetadata {
  controllerid: number;
  brokers: { id: number; name: string }[];
  topics: { topic: string; partitions: { partition: number; leader: number; replicas: { id: number }[]; isrs: { id: number }[] }[] }[];
}

export async function kcatMetadata(port: number): Promise<KcatMetadata> {
  const result = await run('kcat', ['-L', '-J', '-b', `127.0.0.1:${port}`, '-X', `client.id=${KCAT_CLIENT_ID}`], { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`kcat -L exited ${result.code ?? result.signal}: ${result.stderr}`);
  return JSON.parse(result.stdout.toString('utf8')) as KcatMetadata;
}
