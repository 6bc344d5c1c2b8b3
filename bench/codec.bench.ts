// npm run bench:codec [-- options]
//
// Compares OUR generated codecs (../generated/index.js, see ours.ts) with the hand-written
// protocol code of kafkajs 2.2.4 and @platformatic/kafka 2.12.1, in one process, on:
//   1. ProduceRequest, 100 partitions of pre-built RecordBatch v2 (encode), and the same
//      from message objects (each peer's own Produce encoder builds the batches)
//   2. MetadataResponse, 1,000 partitions (decode; encode: ours only, no peer has one)
//   3. FetchResponse carrying 1 MiB of records (decode)
//   4. FindCoordinator / EndTxn / InitProducerId requests with header + int32 size (encode)
//   5. TxnShareAcknowledgeRequest (KIP-1289, apiKey 96), 1,000 ack batches (ours only)
// Each peer runs at the highest version it supports; ours runs at that same version.
//
// Options:
//   --peers-only        run without generated/ (peers and their checks only)
//   --rounds N          timed rounds per comparison (default 7)
//   --round-ms N        ms per participant per round (default 200)
//   --warmup-ms N       warm-up per participant (default 300)
//   --filter REGEX      only comparisons whose "workload api vN op" matches
//   --check-only        equal-work checks only, no timing
//   --json FILE         also write the raw results as JSON
//   --ours PATH         load our codecs from another module instead of ../generated/index.js
//   --no-selfcheck      skip checking bench/reference.ts against Kafka's conformance vectors
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { decodeParticipant, encodeParticipant, renderMarkdown, runComparisons, type Comparison, type Participant } from './harness.js';
import { loadOurs, oursCases, RECORD_BATCHES } from './ours.js';
import { kafkajsPeer } from './peers/kafkajs.js';
import { platformaticPeer } from './peers/platformatic.js';
import { runReferenceSelfcheck } from './reference-selfcheck.js';
import type { PeerAdapter } from './types.js';
import { fetchWorkload, metadataWorkload, produceWorkload, smallRequestsWorkload, txnShareAckWorkload, type SmallRequest } from './workloads.js';

function parseArgs(argv: string[]) {
  const o = { peersOnly: false, rounds: 7, roundMs: 200, warmupMs: 300, filter: null as RegExp | null, checkOnly: false, json: null as string | null, selfcheck: true, ours: undefined as string | undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--peers-only') o.peersOnly = true;
    else if (a === '--rounds') o.rounds = Math.max(1, Number(val()));
    else if (a === '--round-ms') o.roundMs = Math.max(10, Number(val()));
    else if (a === '--warmup-ms') o.warmupMs = Math.max(0, Number(val()));
    else if (a === '--filter') o.filter = new RegExp(val(), 'i');
    else if (a === '--check-only') o.checkOnly = true;
    else if (a === '--json') o.json = val();
    else if (a === '--no-selfcheck') o.selfcheck = false;
    else if (a === '--ours') o.ours = val();
    else if (a === '--help' || a === '-h') {
      console.log('options: --peers-only --rounds N --round-ms N --warmup-ms N --filter REGEX --check-only --json FILE --ours PATH --no-selfcheck');
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const log = (s: string) => process.stderr.write(s + '\n');

// ------------------------------------------------------------------ ours (may not exist yet)
const loaded = await loadOurs(opts.ours);
if (!loaded.ok && !opts.peersOnly) {
  console.error(`Our codecs are not available: ${loaded.reason}.\nRun the peers alone with: npm run bench:codec -- --peers-only`);
  process.exit(2);
}
const ours = loaded.ok && !opts.peersOnly ? oursCases(loaded.registry, loaded.encodeFrame) : null;

// ------------------------------------------------------------------ reference self-check
if (opts.selfcheck) {
  const sc = runReferenceSelfcheck();
  if (!sc.ok) {
    console.error(`bench/reference.ts disagrees with Kafka's conformance vectors:\n${sc.failures.slice(0, 10).join('\n')}`);
    process.exit(1);
  }
  log(sc.skipped ? `reference self-check skipped: ${sc.skipped}` : `reference self-check: ${sc.checked} Kafka conformance vectors reproduced`);
}

// ------------------------------------------------------------------ workloads
const W1 = produceWorkload();
const W2 = metadataWorkload();
const W3 = fetchWorkload();
const W4 = smallRequestsWorkload();
const W5 = txnShareAckWorkload();
const peers: PeerAdapter[] = [kafkajsPeer, platformaticPeer];
const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

const comps: Comparison[] = [];
const add = (c: Comparison) => {
  if (!opts.filter || opts.filter.test(`${c.workload} ${c.api} v${c.version} ${c.op}`)) comps.push(c);
};

// 1. Produce
for (const peer of peers) {
  const pc = peer.producePrebuilt(W1);
  if (pc) {
    const ps: Participant[] = [];
    if (ours) ps.push(encodeParticipant('ours', 'ours', 'ours', ours.producePrebuilt(W1, pc.version), W1.expected(pc.version)));
    ps.push(encodeParticipant(peer.lib, 'peer', `${peer.lib} (framing replica)`, pc, W1.expected(pc.version)));
    add({ workload: '1 Produce, pre-built batches', api: 'ProduceRequest', version: pc.version, op: 'encode', bytesPerOp: W1.expected(pc.version).length, participants: ps });
  }
}
for (const peer of peers) {
  const pc = peer.produceFromMessages(W1);
  if (pc) {
    const ps: Participant[] = [];
    if (ours)
      ps.push(encodeParticipant('ours', 'ours', `ours + ${RECORD_BATCHES.buildLabel}`, ours.produceFromMessages(W1, pc.version), W1.expected(pc.version), `yes (batches by ${RECORD_BATCHES.buildLabel})`));
    ps.push(encodeParticipant(peer.lib, 'peer', `${peer.lib} (own Produce encoder)`, pc, W1.expected(pc.version)));
    add({ workload: '1 Produce, from messages', api: 'ProduceRequest', version: pc.version, op: 'encode', bytesPerOp: W1.expected(pc.version).length, participants: ps });
  }
}

// 2. Metadata
for (const peer of peers) {
  const pc = peer.metadataDecode(W2);
  if (pc) {
    const input = asBuffer(W2.bytes(pc.version));
    const ps: Participant[] = [];
    if (ours) ps.push(decodeParticipant('ours', 'ours', 'ours', ours.metadataDecode(W2, pc.version), input, W2.message(pc.version)));
    ps.push(decodeParticipant(peer.lib, 'peer', peer.lib, pc, input, W2.message(pc.version)));
    add({ workload: '2 Metadata, 1,000 partitions', api: 'MetadataResponse', version: pc.version, op: 'decode', bytesPerOp: input.length, participants: ps });
  }
}
{
  // No peer has a response encoder; ours is measured alone at the highest peer Metadata version.
  const v = Math.max(...peers.map((p) => p.metadataDecode(W2)?.version ?? 0));
  const encoders = peers.map((p) => [p, p.metadataEncode(W2)] as const).filter(([, c]) => c);
  const ps: Participant[] = [];
  if (ours) ps.push(encodeParticipant('ours', 'ours', 'ours', ours.metadataEncode(W2, v), W2.bytes(v), 'n/a (no peer encoder)'));
  for (const [p, c] of encoders) ps.push(encodeParticipant(p.lib, 'peer', p.lib, c!, W2.bytes(c!.version)));
  add({
    workload: '2 Metadata, 1,000 partitions',
    api: 'MetadataResponse',
    version: v,
    op: 'encode',
    bytesPerOp: W2.bytes(v).length,
    participants: ps,
    skipped: ps.length ? undefined : 'ours only (neither peer has a response encoder)',
  });
}

// 3. Fetch
for (const peer of peers) {
  const pc = peer.fetchDecode(W3);
  if (pc) {
    const input = asBuffer(W3.bytes(pc.version));
    const canonical = W3.canonical(pc.version);
    const ps: Participant[] = [];
    if (ours) {
      ps.push(decodeParticipant('ours', 'ours', `ours + ${RECORD_BATCHES.parseLabel}`, ours.fetchDecodeParsed(W3, pc.version), input, canonical, `yes (records parsed by ${RECORD_BATCHES.parseLabel})`));
      ps.push(decodeParticipant('ours', 'ours', 'ours, records as bytes', ours.fetchDecodeRaw(W3, pc.version), input, canonical, 'no: records not parsed'));
    }
    ps.push(decodeParticipant(peer.lib, 'peer', peer.lib, pc, input, canonical));
    add({ workload: '3 Fetch, 1 MiB of records', api: 'FetchResponse', version: pc.version, op: 'decode', bytesPerOp: input.length, participants: ps });
  }
}

// 4. small requests, framed
const SMALL: SmallRequest['api'][] = ['FindCoordinatorRequest', 'EndTxnRequest', 'InitProducerIdRequest'];
for (const api of SMALL) {
  for (const peer of peers) {
    const pc = peer.smallRequest(W4, api);
    if (!pc) continue;
    const expected = W4.requests[api].expected(pc.version);
    const ps: Participant[] = [];
    if (ours) {
      ps.push(encodeParticipant('ours', 'ours', 'ours', ours.smallRequest(W4, api, pc.version), expected));
      const rt = ours.smallRequestRuntime(W4, api, pc.version);
      if (rt) ps.push(encodeParticipant('ours', 'ours', 'ours (runtime encodeFrame)', rt, expected));
    }
    ps.push(encodeParticipant(peer.lib, 'peer', peer.lib, pc, expected));
    add({ workload: '4 Small request + header + size', api, version: pc.version, op: 'encode', bytesPerOp: expected.length, participants: ps });
  }
}

// 5. TxnShareAcknowledge (KIP-1289): ours only
{
  const v = 1;
  const skipped = ours ? undefined : 'ours only (no peer has API 96)';
  add({
    workload: '5 TxnShareAcknowledge, 1,000 ack batches',
    api: 'TxnShareAcknowledgeRequest',
    version: v,
    op: 'encode',
    bytesPerOp: W5.bytes(v).length,
    participants: ours ? [encodeParticipant('ours', 'ours', 'ours', ours.txnShareAckEncode(W5, v), W5.bytes(v), 'n/a (no peer)')] : [],
    skipped,
  });
  add({
    workload: '5 TxnShareAcknowledge, 1,000 ack batches',
    api: 'TxnShareAcknowledgeRequest',
    version: v,
    op: 'decode',
    bytesPerOp: W5.bytes(v).length,
    participants: ours
      ? [decodeParticipant('ours', 'ours', 'ours', ours.txnShareAckDecode(W5, v), asBuffer(W5.bytes(v)), W5.message(v), 'n/a (no peer)')]
      : [],
    skipped,
  });
}

// ------------------------------------------------------------------ run
const results = await runComparisons(comps, { rounds: opts.rounds, roundMs: opts.roundMs, warmupMs: opts.warmupMs, checkOnly: opts.checkOnly, log });

const cpu = cpus();
const header = [
  `## Codec benchmark${ours ? '' : ' — peers only (ours not measured' + (loaded.ok ? ')' : `: ${loaded.reason})`)}`,
  '',
  `- ${new Date().toISOString()}, Node ${process.version} (V8 ${process.versions.v8}), ${cpu[0]?.model ?? 'cpu?'} × ${cpu.length}`,
  `- kafkajs ${kafkajsPeer.libVersion}, @platformatic/kafka ${platformaticPeer.libVersion}`,
  `- ${opts.checkOnly ? 'checks only' : `${opts.rounds} interleaved rounds × ${opts.roundMs} ms per participant, ${opts.warmupMs} ms warm-up; figures are medians over rounds; MB = 10^6 wire bytes`}`,
  `- workloads: Produce 100 partitions × ${W1.recordsPerBatch} records (${W1.batchBytes.toLocaleString('en-US')} B of batches); ` +
    `Metadata ${W2.partitions.toLocaleString('en-US')} partitions; Fetch ${W3.recordBytes.toLocaleString('en-US')} B of records (${W3.batchCount} batches, ${W3.recordCount} records); ` +
    `TxnShareAcknowledge ${W5.batches.toLocaleString('en-US')} ack batches`,
  `- ratio = ours ops/s ÷ peer ops/s in the same round (>1: ours faster); "equal work" says whether an ours row does what the peer row does`,
];
const md = renderMarkdown(results, header);
console.log(md);
if (opts.json) writeFileSync(opts.json, JSON.stringify({ header, options: { ...opts, filter: opts.filter?.source ?? null }, results }, null, 2));

const failed = results.flatMap((r) => r.rows).filter((r) => r.checkError !== null);
if (failed.length) {
  console.error(`\n${failed.length} participant(s) failed the equal-work check and were not timed.`);
  process.exitCode = 1;
}
