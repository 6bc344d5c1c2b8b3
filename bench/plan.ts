// The benchmark plan: which comparisons run, with which participants. Deterministic, and
// cheap to make: the libraries and our codecs are imported only when a participant is
// actually made (`make()`), so that a worker thread running one participant loads only
// what that participant needs (see harness.ts, "isolation").
import { BASELINE_MARK, type Participant } from './harness.js';
import { PEER_VERSIONS } from './peers/versions.js';
import type { ChunksCase, DecodeCase, EncodeCase, Lib, PeerAdapter } from './types.js';
import { bytesDiff, valueDiff } from './normalize.js';
import { metadataV6CheckedFloor, metadataV6DetailedFloor, metadataV6Floor, metadataV6PerStructFloor, oneBufferFloor } from './floor.js';
import { RECORD_BATCH_LABELS, loadOurs, oursCases } from './ours.js';
import type { OursBuild } from './our-build.js';
import { oursRoot } from './our-build.js';
import { CODECS, OURS_LIBRARY, PLATFORMATIC_LIBRARY, compressionWorkload, oursCodecs, platformaticCodecs, type Codecs } from './compression.js';
import {
  fetchWorkload,
  metadataWorkload,
  PRODUCE_BATCHES,
  PRODUCE_SMALL_BATCHES,
  produceWorkload,
  smallRequestsWorkload,
  txnShareAckWorkload,
  type ProduceWorkload,
  type SmallRequest,
} from './workloads.js';

export interface ParticipantPlan {
  /** Stable id, the same in every thread that makes the same plan. */
  key: string;
  lib: Lib;
  role: 'ours' | 'peer';
  label: string;
  /** For ours rows: does this row do the same work as the peer row? */
  equalWork: string;
  make(): Promise<Participant>;
  /** Ours rows: the same participant made from the baseline build. */
  makeBaseline?: () => Promise<Participant>;
}

export interface ComparisonPlan {
  workload: string;
  api: string;
  version: number;
  op: 'encode' | 'encodeChunks' | 'decode';
  bytesPerOp: number;
  participants: ParticipantPlan[];
  skipped?: string;
}

export interface PlanOptions {
  /** Include our participants (needs the generated codecs). */
  ours: boolean;
  /** Module with our codecs instead of ../generated/index.js (--ours). */
  oursPath?: string;
  /**
   * Run every ours row (floors aside) twice: this tree's build and the baseline's
   * (--baseline-tree), in the same rounds, so that before/after ratios are taken round by round.
   */
  baseline?: boolean;
  filter?: RegExp | null;
}

const lazy = <T>(f: () => T): (() => T) => {
  let v: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      v = f();
      done = true;
    }
    return v as T;
  };
};

// Workloads are built on first use and shared by every participant of this thread.
export const W = {
  produce: lazy(() => produceWorkload(PRODUCE_BATCHES)),
  produceSmall: lazy(() => produceWorkload(PRODUCE_SMALL_BATCHES)),
  metadata: lazy(metadataWorkload),
  fetch: lazy(fetchWorkload),
  small: lazy(smallRequestsWorkload),
  txnShareAck: lazy(txnShareAckWorkload),
  compression: lazy(compressionWorkload),
};

const peerModules: Record<Exclude<Lib, 'ours'>, () => Promise<PeerAdapter>> = {
  kafkajs: lazy(async () => (await import('./peers/kafkajs.js')).kafkajsPeer),
  platformatic: lazy(async () => (await import('./peers/platformatic.js')).platformaticPeer),
};

const oursPromises = new Map<OursBuild, Promise<ReturnType<typeof oursCases>>>();
function oursCasesFor(oursPath: string | undefined, build: OursBuild = 'current'): Promise<ReturnType<typeof oursCases>> {
  let cases = oursPromises.get(build);
  if (cases === undefined) {
    cases = (async () => {
      const loaded = await loadOurs(build === 'current' ? oursPath : undefined, build);
      if (!loaded.ok) throw new Error(`our codecs (${build}): ${loaded.reason}`);
      return oursCases(loaded.registry, loaded.encodeFrame, loaded.recordBatches);
    })();
    oursPromises.set(build, cases);
  }
  return cases;
}

const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** An encoder's output, one buffer or a chunk list, must be the expected bytes (a list is joined by the check, not the op). */
function fromEncode(c: EncodeCase | ChunksCase, expected: () => Uint8Array): Participant {
  return {
    version: c.version,
    async: c.async,
    op: c.encode,
    note: c.note,
    check: async () => {
      const got: unknown = await c.encode();
      if (Array.isArray(got) && got.every((chunk) => chunk instanceof Uint8Array)) return bytesDiff(expected(), Buffer.concat(got));
      if (!(got instanceof Uint8Array)) return `encode returned ${typeof got}, not a Uint8Array or a list of them`;
      return bytesDiff(expected(), got);
    },
  };
}

function fromDecode(c: DecodeCase, input: () => Buffer, canonical: () => unknown): Participant {
  const bytes = input();
  return {
    version: c.version,
    async: c.async,
    op: () => c.decode(bytes),
    note: c.note,
    check: async () => valueDiff(canonical(), c.normalize(await c.decode(bytes))),
  };
}

export function makePlan(o: PlanOptions): ComparisonPlan[] {
  const plans: ComparisonPlan[] = [];
  const add = (c: ComparisonPlan) => {
    if (o.filter && !o.filter.test(`${c.workload} ${c.api} v${c.version} ${c.op}`)) return;
    if (o.baseline) {
      c.participants = c.participants.flatMap((p) =>
        p.makeBaseline
          ? [p, { ...p, label: `${p.label}${BASELINE_MARK}`, equalWork: 'the same, baseline build', make: p.makeBaseline, makeBaseline: undefined }]
          : [p],
      );
    }
    c.participants.forEach((p, i) => (p.key = `${c.workload}|${c.api}|v${c.version}|${c.op}|${i}|${p.label}`));
    plans.push(c);
  };
  type Make = (() => Promise<Participant>) & { baseline?: () => Promise<Participant> };
  const P = (lib: Lib, role: 'ours' | 'peer', label: string, make: Make, equalWork = role === 'peer' ? '—' : 'yes'): ParticipantPlan => ({
    key: '',
    lib,
    role,
    label,
    equalWork,
    make,
    makeBaseline: make.baseline,
  });
  const ours = (f: (c: Awaited<ReturnType<typeof oursCasesFor>>) => Participant): Make =>
    Object.assign(async () => f(await oursCasesFor(o.oursPath)), { baseline: async () => f(await oursCasesFor(undefined, 'baseline')) });
  /** A floor made from our chunks: the same for any build, so it has no baseline twin. */
  const oursFloor =
    (f: (c: Awaited<ReturnType<typeof oursCasesFor>>) => Participant): Make =>
    async () =>
      f(await oursCasesFor(o.oursPath));
  const peer = (lib: Exclude<Lib, 'ours'>, f: (a: PeerAdapter) => Participant) => async () => f(await peerModules[lib]());
  const libs = ['kafkajs', 'platformatic'] as const;
  const RB = RECORD_BATCH_LABELS;

  /** Our zero-copy encoding of the pre-built Produce request (absent from codecs made before encodeChunks). */
  const oursChunks = (c: Awaited<ReturnType<typeof oursCasesFor>>, w: ProduceWorkload, v: number) => {
    const chunks = c.producePrebuiltChunks(w, v);
    if (chunks === null) throw new NotApplicable('these codecs have no encodeChunks');
    return chunks;
  };

  // 1. Produce (encode), at each peer's highest version, for two shapes: batches of ~2.6 KB,
  // and small batches (1b), where structure weighs more against the record bytes.
  const produceShapes = [
    { workload: '1 Produce, pre-built batches', w: W.produce },
    { workload: '1b Produce, 100 small batches', w: W.produceSmall },
  ];
  for (const { workload, w } of produceShapes) {
    for (const lib of libs) {
      const v = PEER_VERSIONS[lib].Produce;
      const exp = () => w().expected(v);
      add({
        workload,
        api: 'ProduceRequest',
        version: v,
        op: 'encode',
        bytesPerOp: exp().length,
        participants: [
          ...(o.ours
            ? [
                P(
                  'ours',
                  'ours',
                  'ours',
                  ours((c) => fromEncode(c.producePrebuilt(w(), v), exp)),
                ),
                P(
                  'ours',
                  'ours',
                  'floor: allocate + copy the chunks in',
                  oursFloor((c) => fromEncode(oneBufferFloor(oursChunks(c, w(), v)), exp)),
                  'yes, minus all encoding (see floor.ts)',
                ),
              ]
            : []),
          P(
            lib,
            'peer',
            `${lib} (framing replica)`,
            peer(lib, (a) => fromEncode(a.producePrebuilt(w())!, exp)),
          ),
        ],
      });
      // The same request as zero-copy chunks, where a library can end there: platformatic's
      // Writer keeps a chunk list; kafkajs's Encoder is one Buffer (nothing to end at), so at
      // its version ours runs alone on the small batches, to set the classic form's chunks
      // beside the flexible form's.
      if (lib === 'platformatic' || workload.startsWith('1b')) {
        add({
          workload,
          api: 'ProduceRequest',
          version: v,
          op: 'encodeChunks',
          bytesPerOp: exp().length,
          participants: [
            ...(o.ours
              ? [
                  P(
                    'ours',
                    'ours',
                    'ours (encodeChunks)',
                    ours((c) => fromEncode(oursChunks(c, w(), v), exp)),
                    lib === 'platformatic' ? 'yes' : 'n/a (no peer chunk list)',
                  ),
                ]
              : []),
            ...(lib === 'platformatic'
              ? [
                  P(
                    lib,
                    'peer',
                    `${lib} (framing replica, chunk list)`,
                    peer(lib, (a) => fromEncode(a.producePrebuiltChunks(w())!, exp)),
                  ),
                ]
              : []),
          ],
          skipped: o.ours || lib === 'platformatic' ? undefined : 'ours only (kafkajs has no chunk list)',
        });
      }
    }
  }
  for (const lib of libs) {
    const v = PEER_VERSIONS[lib].Produce;
    const exp = () => W.produce().expected(v);
    add({
      workload: '1 Produce, from messages',
      api: 'ProduceRequest',
      version: v,
      op: 'encode',
      bytesPerOp: exp().length,
      participants: [
        ...(o.ours
          ? [
              P(
                'ours',
                'ours',
                `ours + ${RB.build}`,
                ours((c) => fromEncode(c.produceFromMessages(W.produce(), v), exp)),
                `yes (batches by ${RB.build})`,
              ),
            ]
          : []),
        P(
          lib,
          'peer',
          `${lib} (own Produce encoder)`,
          peer(lib, (a) => fromEncode(a.produceFromMessages(W.produce())!, exp)),
        ),
      ],
    });
  }

  // 2. Metadata: decode at each peer's version; encode ours only (no peer has a response encoder)
  for (const lib of libs) {
    const v = PEER_VERSIONS[lib].Metadata;
    const input = () => asBuffer(W.metadata().bytes(v));
    const canon = () => W.metadata().message(v);
    add({
      workload: '2 Metadata, 1,000 partitions',
      api: 'MetadataResponse',
      version: v,
      op: 'decode',
      bytesPerOp: input().length,
      participants: [
        ...(o.ours
          ? [
              P(
                'ours',
                'ours',
                'ours',
                ours((c) => fromDecode(c.metadataDecode(W.metadata(), v), input, canon)),
              ),
            ]
          : []),
        ...(v === 6
          ? [
              P(
                'ours',
                'ours',
                'floor: same objects, no checks',
                async () => fromDecode(metadataV6Floor(), input, canon),
                'yes, minus every input check (see floor.ts)',
              ),
              P(
                'ours',
                'ours',
                'floor + checks: same objects, every input check',
                async () => fromDecode(metadataV6CheckedFloor(), input, canon),
                'yes, minus the error detail (see floor.ts)',
              ),
              P(
                'ours',
                'ours',
                'floor + checks + error path: one function',
                async () => fromDecode(metadataV6DetailedFloor(), input, canon),
                'yes (see floor.ts)',
              ),
              P(
                'ours',
                'ours',
                'floor + checks + error path: a function per struct',
                async () => fromDecode(metadataV6PerStructFloor(), input, canon),
                'yes (see floor.ts)',
              ),
            ]
          : []),
        P(
          lib,
          'peer',
          lib,
          peer(lib, (a) => fromDecode(a.metadataDecode(W.metadata())!, input, canon)),
        ),
      ],
    });
  }
  {
    const v = Math.max(...libs.map((l) => PEER_VERSIONS[l].Metadata));
    const exp = () => W.metadata().bytes(v);
    add({
      workload: '2 Metadata, 1,000 partitions',
      api: 'MetadataResponse',
      version: v,
      op: 'encode',
      bytesPerOp: exp().length,
      participants: o.ours
        ? [
            P(
              'ours',
              'ours',
              'ours',
              ours((c) => fromEncode(c.metadataEncode(W.metadata(), v), exp)),
              'n/a (no peer encoder)',
            ),
          ]
        : [],
      skipped: o.ours ? undefined : 'ours only (neither peer has a response encoder)',
    });
  }

  // 3. Fetch (decode)
  for (const lib of libs) {
    const v = PEER_VERSIONS[lib].Fetch;
    const input = () => asBuffer(W.fetch().bytes(v));
    const canon = () => W.fetch().canonical(v);
    add({
      workload: '3 Fetch, 1 MiB of records',
      api: 'FetchResponse',
      version: v,
      op: 'decode',
      bytesPerOp: input().length,
      participants: [
        ...(o.ours
          ? [
              P(
                'ours',
                'ours',
                `ours + ${RB.parse}`,
                ours((c) => fromDecode(c.fetchDecodeParsed(W.fetch(), v), input, canon)),
                `yes (records parsed by ${RB.parse})`,
              ),
              P(
                'ours',
                'ours',
                'ours, records as bytes',
                ours((c) => fromDecode(c.fetchDecodeRaw(W.fetch(), v), input, canon)),
                'no: records not parsed',
              ),
            ]
          : []),
        P(
          lib,
          'peer',
          lib,
          peer(lib, (a) => fromDecode(a.fetchDecode(W.fetch())!, input, canon)),
        ),
      ],
    });
  }

  // 4. Small requests with header and size prefix (encode)
  const SMALL: SmallRequest['api'][] = ['FindCoordinatorRequest', 'EndTxnRequest', 'InitProducerIdRequest'];
  const versionKey = { FindCoordinatorRequest: 'FindCoordinator', EndTxnRequest: 'EndTxn', InitProducerIdRequest: 'InitProducerId' } as const;
  for (const api of SMALL) {
    for (const lib of libs) {
      const v = PEER_VERSIONS[lib][versionKey[api]];
      const exp = () => W.small().requests[api].expected(v);
      add({
        workload: '4 Small request + header + size',
        api,
        version: v,
        op: 'encode',
        bytesPerOp: exp().length,
        participants: [
          ...(o.ours
            ? [
                // The bench's own framing (header + body encoded apart, then copied together): only
                // until runtime/ has encodeFrame, which is how our client frames requests.
                P(
                  'ours',
                  'ours',
                  'ours',
                  ours((c) => {
                    if (c.smallRequestRuntime(W.small(), api, v)) throw new NotApplicable('runtime encodeFrame measures our framing');
                    return fromEncode(c.smallRequest(W.small(), api, v), exp);
                  }),
                ),
                // only when runtime/ has encodeFrame and the codecs have size()/write(); else make() fails and the row is dropped
                P(
                  'ours',
                  'ours',
                  'ours (runtime encodeFrame)',
                  ours((c) => {
                    const rt = c.smallRequestRuntime(W.small(), api, v);
                    if (!rt) throw new NotApplicable('runtime encodeFrame or codec size()/write() not available');
                    return fromEncode(rt, exp);
                  }),
                ),
              ]
            : []),
          P(
            lib,
            'peer',
            lib,
            peer(lib, (a) => fromEncode(a.smallRequest(W.small(), api)!, exp)),
          ),
        ],
      });
    }
  }

  // 4b. The same requests' bodies alone (encode): allocation and call overhead, no framing
  for (const api of SMALL) {
    for (const lib of libs) {
      const v = PEER_VERSIONS[lib][versionKey[api]];
      const exp = () => W.small().requests[api].expectedBody(v);
      add({
        workload: '4b Small request body',
        api,
        version: v,
        op: 'encode',
        bytesPerOp: exp().length,
        participants: [
          ...(o.ours
            ? [
                P(
                  'ours',
                  'ours',
                  'ours',
                  ours((c) => fromEncode(c.smallRequestBody(W.small(), api, v), exp)),
                ),
              ]
            : []),
          P(
            lib,
            'peer',
            lib,
            peer(lib, (a) => fromEncode(a.smallRequestBody(W.small(), api)!, exp)),
          ),
        ],
      });
    }
  }

  // 5. TxnShareAcknowledge (KIP-1289): ours only
  {
    const v = 1;
    const bytes = () => W.txnShareAck().bytes(v);
    const skipped = o.ours ? undefined : 'ours only (no peer has API 96)';
    const workload = '5 TxnShareAcknowledge, 1,000 ack batches';
    add({
      workload,
      api: 'TxnShareAcknowledgeRequest',
      version: v,
      op: 'encode',
      bytesPerOp: bytes().length,
      participants: o.ours
        ? [
            P(
              'ours',
              'ours',
              'ours',
              ours((c) => fromEncode(c.txnShareAckEncode(W.txnShareAck(), v), bytes)),
              'n/a (no peer)',
            ),
          ]
        : [],
      skipped,
    });
    add({
      workload,
      api: 'TxnShareAcknowledgeRequest',
      version: v,
      op: 'decode',
      bytesPerOp: bytes().length,
      participants: o.ours
        ? [
            P(
              'ours',
              'ours',
              'ours',
              ours((c) =>
                fromDecode(
                  c.txnShareAckDecode(W.txnShareAck(), v),
                  () => asBuffer(bytes()),
                  () => W.txnShareAck().message(v),
                ),
              ),
              'n/a (no peer)',
            ),
          ]
        : [],
      skipped,
    });
  }
  // 6. Compression of 1 MiB of records, per codec: compress (encode) and decompress (decode).
  // A compressor's check: its output inflates back to the input through the OTHER side's
  // decompressor (ours through platformatic's where it has the codec), so each writes a
  // format the other reads. Both decompressors inflate the same frame, written by ours.
  for (const codec of CODECS) {
    const workload = '6 Compression, 1 MiB of records';
    const api = `records ${codec}`;
    const records = () => W.compression().records;
    const peerCodecs = async (): Promise<Codecs> => {
      const peerSide = await platformaticCodecs(codec);
      if (peerSide === null) throw new NotApplicable(`@platformatic/kafka has no ${codec} on Node ${process.versions.node} (it uses node:zlib's, Node 22.15+)`);
      return peerSide;
    };
    const oursSide = () => oursCodecs(codec);
    const compressor = (side: () => Promise<Codecs>, reader: () => Promise<Codecs>) => async (): Promise<Participant> => {
      const { compress } = await side();
      const input = records();
      const peerMissing = side === oursSide && (await platformaticCodecs(codec)) === null;
      return {
        version: 2,
        async: false,
        op: () => compress(input),
        note: peerMissing
          ? `no platformatic row: @platformatic/kafka's ${codec} needs node:zlib's (Node 22.15+); this is Node ${process.versions.node}`
          : undefined,
        check: async () => {
          const back = (await reader()).decompress(compress(input));
          return bytesDiff(input, back);
        },
      };
    };
    const decompressor = (side: () => Promise<Codecs>) => async (): Promise<Participant> => {
      const { decompress } = await side();
      const frame = (await oursCodecs(codec)).compress(records());
      const peerMissing = side === oursSide && (await platformaticCodecs(codec)) === null;
      return {
        version: 2,
        async: false,
        op: () => decompress(frame),
        note: peerMissing
          ? `no platformatic row: @platformatic/kafka's ${codec} needs node:zlib's (Node 22.15+); this is Node ${process.versions.node}`
          : undefined,
        check: async () => bytesDiff(records(), decompress(frame)),
      };
    };
    const readerOfOurs = async () => (await platformaticCodecs(codec)) ?? (await oursCodecs(codec));
    add({
      workload,
      api,
      version: 2,
      op: 'encode',
      bytesPerOp: records().length,
      participants: [
        P('ours', 'ours', `ours (${OURS_LIBRARY[codec]})`, compressor(oursSide, readerOfOurs), 'yes (the same input bytes)'),
        P('platformatic', 'peer', `platformatic (${PLATFORMATIC_LIBRARY[codec]})`, compressor(peerCodecs, oursSide)),
      ],
    });
    add({
      workload,
      api,
      version: 2,
      op: 'decode',
      bytesPerOp: records().length,
      participants: [
        P('ours', 'ours', `ours (${OURS_LIBRARY[codec]})`, decompressor(oursSide), 'yes (the same frame)'),
        P('platformatic', 'peer', `platformatic (${PLATFORMATIC_LIBRARY[codec]})`, decompressor(peerCodecs)),
      ],
    });
  }
  // 7. CRC-32C of the same 1 MiB of records: the JavaScript fallback (used when
  // @node-rs/crc32's native binding is not installed, e.g. `npm install --omit=optional`)
  // against the native binding, which is the row it is measured against.
  {
    const records = () => W.compression().records;
    const crcOf = (kind: 'native' | 'javascript') => async (): Promise<Participant> => {
      const crc: typeof import('../runtime/crc32c.js') = await import(new URL('runtime/crc32c.js', oursRoot().url).href);
      const fn = kind === 'native' ? crc.crc32c : crc.crc32cJavaScript;
      if (kind === 'native' && crc.crc32cImplementation().kind !== 'native') throw new NotApplicable(crc.crc32cImplementation().description);
      const input = records();
      return {
        version: 2,
        async: false,
        op: () => fn(input),
        check: async () => (fn(input) === crc.crc32cJavaScript(input) ? null : `crc ${fn(input)} differs from the table-driven ${crc.crc32cJavaScript(input)}`),
      };
    };
    add({
      workload: '7 CRC-32C, 1 MiB of records',
      api: 'crc32c',
      version: 2,
      op: 'encode',
      bytesPerOp: records().length,
      participants: [
        P('ours', 'ours', 'ours, JavaScript fallback (slicing-by-8)', crcOf('javascript'), 'yes (the same bytes)'),
        P('ours', 'peer', 'native (@node-rs/crc32)', crcOf('native')),
      ],
    });
  }
  return plans;
}

/** Thrown by make() when a participant does not apply here; the harness drops the row quietly. */
export class NotApplicable extends Error {
  override name = 'NotApplicable';
}
