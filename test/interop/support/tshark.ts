/**
 * tshark (Debian's, Wireshark's dissectors): capture a loopback port to a
 * pcap, and read it back as one record per Kafka PDU (a TCP segment may hold
 * several) from tshark's PDML output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { run } from './broker-process.js';
import { requireInteropTool } from './tools.js';

export function requireTshark(): string {
  return requireInteropTool('tshark')
    .split('\n')
    .find((l) => l.startsWith('TShark'))!;
}

export interface Capture {
  readonly file: string;
  /** Stops capturing (SIGINT) and resolves once the pcap is complete. */
  stop(): Promise<void>;
}

/**
 * Starts `tshark -i lo -f "tcp port N" -w -` writing into `file`. tshark writes
 * to a pipe packet by packet (to a file it flushes only now and then), so
 * readiness is certain: bare TCP connections (no Kafka bytes) probe the port
 * until their packets come through; the session's first packets are then kept.
 */
export async function startCapture(port: number, file: string): Promise<Capture> {
  const child: ChildProcess = spawn('tshark', ['-i', 'lo', '-f', `tcp port ${port}`, '-w', '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = fs.createWriteStream(file);
  let captured = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    captured += chunk.length;
    out.write(chunk);
  });
  const written = new Promise<void>((resolve) => child.stdout!.once('end', () => out.end(resolve)));
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const fail = async (why: string): Promise<never> => {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${why} (capturing on lo needs root or CAP_NET_RAW):\n${stderr}`);
  };
  const deadline = Date.now() + 30_000;
  // The pcapng header blocks come first; packets after them.
  while (captured === 0) {
    if (gone) await fail(`tshark exited (${child.exitCode ?? child.signalCode}) before capturing`);
    if (Date.now() > deadline) await fail('tshark did not start capturing on lo within 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const header = captured;
  while (captured <= header) {
    if (gone) await fail(`tshark exited (${child.exitCode ?? child.signalCode}) while starting`);
    if (Date.now() > deadline) await fail('tshark captured no packet on lo within 30 s');
    await new Promise<void>((resolve) => {
      const probe = net.connect(port, '127.0.0.1', () => probe.end());
      probe.once('close', () => resolve());
      probe.once('error', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    file,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
      await written;
    },
  };
}

export interface ExpertInfo {
  message: string;
  severity: 'chat' | 'note' | 'warning' | 'error' | string;
  group: number;
}

export interface KafkaPdu {
  frame: number;
  /** tcp.stream: the connection. */
  stream: number;
  /** True for a request (it carries kafka.api_version), false for a response. */
  request: boolean;
  apiKey: number;
  /** Wireshark's name of the API, from the API Key field ("Metadata"), or "Unknown". */
  apiName: string;
  /** Request version, or the version Wireshark gives the response (from its request); -1 if none. */
  version: number;
  correlationId: number;
  /** Frame of the matching request (responses) or response (requests), if Wireshark matched one. */
  matchedFrame: number | null;
  /**
   * For a response: its request, found by connection and correlation id (so
   * also when Wireshark could not match them); apiKey and version come from it
   * when Wireshark gives none. For a request: its response.
   */
  peer: KafkaPdu | null;
  /** A `_ws.malformed` item inside the PDU, or a malformed-packet proto right after it. */
  malformed: boolean;
  experts: ExpertInfo[];
}

const SEVERITY: Record<string, ExpertInfo['severity']> = { '2097152': 'chat', '4194304': 'note', '6291456': 'warning', '8388608': 'error' };
/** PI_MALFORMED. */
export const EXPERT_GROUP_MALFORMED = 0x07000000;

/** `tshark -r file -d tcp.port==N,kafka -T pdml`, one record per Kafka PDU. */
export async function readKafkaPdus(file: string, port: number): Promise<KafkaPdu[]> {
  const result = await run('tshark', ['-r', file, '-d', `tcp.port==${port},kafka`, '-T', 'pdml'], { timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`tshark -r exited ${result.code ?? result.signal}: ${result.stderr}`);
  return parsePdml(result.stdout.toString('utf8'));
}

const TAG = /<(\/?)(packet|proto|field)\b([^>]*?)(\/?)>/g;
const ATTR = /([\w.]+)="([^"]*)"/g;

function attrs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(ATTR)) out[m[1]!] = unescape(m[2]!);
  return out;
}

function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

export function parsePdml(pdml: string): KafkaPdu[] {
  const pdus: KafkaPdu[] = [];
  let frame = 0;
  let stream = -1;
  let packetPdus: KafkaPdu[] = [];
  /** Open elements: names of protos and fields. */
  const stack: string[] = [];
  let current: KafkaPdu | null = null;
  let kafkaDepth = -1;
  let expert: Partial<ExpertInfo> | null = null;
  let expertDepth = -1;
  let malformedDepth = -1;

  for (const m of pdml.matchAll(TAG)) {
    const [, closing, tag, rest, selfClosing] = m;
    if (tag === 'packet') {
      if (closing) packetPdus = [];
      continue;
    }
    if (closing) {
      const depth = stack.length - 1;
      stack.pop();
      if (depth === expertDepth && expert !== null) {
        const target = current ?? (malformedDepth >= 0 ? packetPdus[packetPdus.length - 1] : undefined);
        target?.experts.push({ message: expert.message ?? '', severity: expert.severity ?? '?', group: expert.group ?? 0 });
        expert = null;
        expertDepth = -1;
      }
      if (depth === kafkaDepth) {
        current = null;
        kafkaDepth = -1;
      }
      if (depth === malformedDepth) malformedDepth = -1;
      continue;
    }
    const a = attrs(rest!);
    const name = a.name ?? '';
    const depth = stack.length;
    if (name === 'frame.number') frame = Number(a.show);
    if (name === 'tcp.stream') stream = Number(a.show);
    if (tag === 'proto' && name === 'kafka' && depth === 0) {
      current = {
        frame,
        stream,
        request: false,
        apiKey: -1,
        apiName: '',
        version: -1,
        correlationId: -1,
        matchedFrame: null,
        peer: null,
        malformed: false,
        experts: [],
      };
      kafkaDepth = depth;
      pdus.push(current);
      packetPdus.push(current);
    } else if (name === '_ws.malformed') {
      const target = current ?? packetPdus[packetPdus.length - 1];
      if (target) target.malformed = true;
      if (!selfClosing && current === null) malformedDepth = depth;
    } else if (name === '_ws.expert') {
      expert = {};
      expertDepth = depth;
    } else if (expert !== null && name === '_ws.expert.message') {
      expert.message = a.show;
    } else if (expert !== null && name === '_ws.expert.severity') {
      expert.severity = SEVERITY[a.show!] ?? a.show;
    } else if (expert !== null && name === '_ws.expert.group') {
      expert.group = Number(a.show);
    } else if (current !== null) {
      switch (name) {
        case 'kafka.api_key':
          current.apiKey = Number(a.show);
          current.apiName = /^API Key: (.*) \(\d+\)$/.exec(a.showname ?? '')?.[1] ?? '';
          break;
        case 'kafka.api_version':
          current.request = true;
          current.version = Number(a.show);
          break;
        case 'kafka.response.version':
          current.version = Number(a.show);
          break;
        case 'kafka.correlation_id':
          if (current.correlationId < 0) current.correlationId = Number(a.show);
          break;
        case 'kafka.request_frame':
        case 'kafka.response_frame':
          current.matchedFrame = Number(a.show);
          break;
      }
    }
    if (!selfClosing) stack.push(name);
  }
  const requests = new Map<string, KafkaPdu>();
  for (const p of pdus) if (p.request) requests.set(`${p.stream}/${p.correlationId}`, p);
  for (const p of pdus) {
    if (p.request) continue;
    const request = requests.get(`${p.stream}/${p.correlationId}`);
    if (request === undefined || request.peer !== null) continue;
    request.peer = p;
    p.peer = request;
    if (p.apiKey < 0) {
      p.apiKey = request.apiKey;
      p.apiName = request.apiName;
    }
    if (p.version < 0) p.version = request.version;
  }
  return pdus;
}
