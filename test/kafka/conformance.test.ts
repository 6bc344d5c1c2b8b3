/**
 * Random-message conformance against Kafka 4.4's own generated codecs, live:
 * every spec of message-schemas/ that kafka-clients 4.4.0 or a coordinator
 * module has a class for (requests, responses, both headers, the
 * __consumer_offsets / __share_group_state / __transaction_state records), at
 * every version both declare, KIPGEN_CONFORMANCE_RUNS (default 200) random
 * messages per version and direction:
 *
 * - ours → Kafka: our encode's bytes are read by Kafka (`new XData(readable,
 *   version)`, every byte used), written back by Kafka (size + write) and must
 *   be the same bytes; our toJson must equal Kafka's JsonConverter.write. The
 *   messages carry unknown tagged fields, which both must keep.
 * - Kafka → ours: Kafka's JsonConverter.read takes our random JSON and Kafka
 *   writes the bytes; our fromJson of the same JSON must encode to those bytes,
 *   our decode of them + toJson must print what Kafka's converter prints, and
 *   our encode of the decoded message must give the bytes again.
 *
 * Then record batches, both ways: Kafka's MemoryRecords.withRecords (every
 * compression type, plain, idempotent and transactional) and
 * withEndTransactionMarker read by our runtime's decodeRecordBatches; our
 * encodeRecordBatch and controlRecordBatch read by Kafka's DefaultRecordBatch.
 *
 * JSON is compared after the translation in ./support/kafka-json.ts only
 * (int64 as strings, records as "" where Kafka's converter prints them so).
 * KIPGEN_CONFORMANCE_SEED replays a run: every failure names it.
 */
import { createHash, randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeCoordinatorKey, decodeCoordinatorValue, encodeCoordinatorKey, encodeCoordinatorValue } from '../../coordinator/coordinator-record-layout.js';
import { loadSpecs } from '../../generator/load.js';
import type { MessageSpec } from '../../generator/spec.js';
import { messages } from '../../generated/index.js';
import { controlRecordBatch, decodeRecordBatches, encodeRecordBatch, readControlRecord, type RecordBatch, type RecordBatchInput } from '../../runtime/index.js';
import { jsonDifference } from '../support/vectors.js';
import { startKafkaCodecs, type KafkaBatch, type KafkaCodecs } from './support/codec-server.js';
import { KAFKA_TEST_DIR } from './support/judge.js';
import { messageArbitrary, UNKNOWN, withoutUnknown, withUnknownTaggedFields } from './support/conformance-arbitraries.js';
import { asKafkaWrites, kafkaJsonText } from './support/kafka-json.js';
import { kafkaPrerequisites } from './support/prerequisites.js';

const RUNS = positiveInt('KIPGEN_CONFORMANCE_RUNS', 200);
const SEED = process.env.KIPGEN_CONFORMANCE_SEED ? positiveInt('KIPGEN_CONFORMANCE_SEED', 0) : randomInt(1, 2 ** 31);
// Long runs (KIPGEN_CONFORMANCE_RUNS in the thousands) take longer per message than the project's 120 s per test.
vi.setConfig({ testTimeout: Math.max(120_000, RUNS * 1_000) });
/** Messages per request to Kafka's process: enough that the pipe is no bottleneck, few enough to bound its memory. */
const CHUNK = 250;
/** Mismatches printed per message version and direction: the first tells the story. */
const SHOWN = 3;

function positiveInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** The fast-check seed of one message version and direction, from the run's seed (so that one can be replayed alone). */
function seedFor(...parts: (string | number)[]): number {
  return createHash('sha256')
    .update([SEED, ...parts].join(':'))
    .digest()
    .readInt32BE(0);
}

function replay(): string {
  return `(KIPGEN_CONFORMANCE_SEED=${SEED} KIPGEN_CONFORMANCE_RUNS=${RUNS} replays this run)`;
}

interface ConformanceDifference {
  id: string;
  test: string;
  input: string;
  kafka: string;
  kipgen: string;
  why: string;
}

/** test/kafka/conformance-differences.json, checked: an entry missing a field is an error naming it. */
function readConformanceDifferences(): ConformanceDifference[] {
  const file = path.join(KAFKA_TEST_DIR, 'conformance-differences.json');
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { differences?: unknown };
  if (!Array.isArray(parsed.differences)) throw new Error(`${file}: "differences" must be an array`);
  return parsed.differences.map((e: Record<string, unknown>, i: number) => {
    for (const field of ['id', 'test', 'input', 'kafka', 'kipgen', 'why']) {
      if (typeof e[field] !== 'string' || e[field] === '') throw new Error(`${file}: differences[${i}].${field} must be a non-empty string`);
    }
    return e as unknown as ConformanceDifference;
  });
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
const hex = (base64: string) => Buffer.from(base64, 'base64').toString('hex');

const { specs } = loadSpecs(['message-schemas']);
let codecs: KafkaCodecs;
let kafkaVersions: Record<string, [number, number] | null>;
/** Batches checked per compression (and markers): [Kafka → ours, ours → Kafka]. */
const batchCounts: Record<string, [number, number]> = {};
/** name → version → messages checked each way. */
const counts = new Map<string, Map<number, { toKafka: number; fromKafka: number; log: number; downgrade: number }>>();
/** Downgrades both codecs refused, per message and version pair. */
const refusals = new Map<string, number>();
/** Wall time of the random-message tests (both directions). */
let messagesMs = 0;

beforeAll(async () => {
  // Kafka's class path, not its broker: this file needs no running Kafka.
  const pre = kafkaPrerequisites();
  if (!pre.ok) throw new Error(pre.missing);
  codecs = await startKafkaCodecs(pre.classpath);
  kafkaVersions = await codecs.versions(specs.map((s) => s.name));
}, 120_000);

afterAll(async () => {
  const busyMs = codecs?.busyMs() ?? 0;
  await codecs?.close();
  const rows: string[] = [];
  let total = 0;
  for (const [name, byVersion] of counts) {
    const versions = [...byVersion.keys()].sort((a, b) => a - b);
    const each = versions.map((v) => byVersion.get(v)!);
    const n = each.reduce((sum, c) => sum + c.toKafka + c.fromKafka + c.log + c.downgrade, 0);
    total += n;
    rows.push(
      `  ${name.padEnd(32)} v${versions[0]}-${versions.at(-1)}  ${each.map((c) => `${c.toKafka}/${c.fromKafka}/${c.downgrade}${c.log > 0 ? `/${c.log}` : ''}`).join(' ')}`,
    );
  }
  process.stdout.write(
    `conformance against Kafka 4.4's codecs: ${total} messages, seed ${SEED}, ${RUNS} per version and direction; both directions took ${(messagesMs / 1000).toFixed(1)} s, Kafka's process was busy ${(busyMs / 1000).toFixed(1)} s in all\n  (per version: ours→Kafka/Kafka→ours/written down from the highest version[/as log records]; ${[...refusals.values()].reduce((a, b) => a + b, 0)} downgrades refused by both)\n${rows.join('\n')}\n  record batches, markers and ill-formed strings (Kafka→ours/ours→Kafka): ${Object.entries(
      batchCounts,
    )
      .map(([k, [a, b]]) => `${k} ${a}/${b}`)
      .join(', ')}\n`,
  );
});

/** The versions both we and Kafka 4.4 declare for `spec`. */
function commonVersions(spec: MessageSpec): number[] {
  const theirs = kafkaVersions[spec.name];
  if (!theirs) return [];
  return [...spec.validVersions].filter((v) => v >= theirs[0] && v <= theirs[1]);
}

function count(name: string, version: number, direction: 'toKafka' | 'fromKafka' | 'log' | 'downgrade', n: number): void {
  const byVersion = counts.get(name) ?? new Map();
  counts.set(name, byVersion);
  const c = byVersion.get(version) ?? { toKafka: 0, fromKafka: 0, log: 0, downgrade: 0 };
  c[direction] += n;
  byVersion.set(version, c);
}

async function inChunks<T, R>(items: T[], ask: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(...(await ask(items.slice(i, i + CHUNK))));
  return out;
}

describe('Kafka 4.4 has a class for our specs', () => {
  it("every spec but KIP-1289's four, with the same versions", () => {
    const missing = specs
      .filter((s) => kafkaVersions[s.name] === null)
      .map((s) => s.name)
      .sort();
    expect(missing).toEqual(['AddShareAcksToTxnRequest', 'AddShareAcksToTxnResponse', 'TxnShareAcknowledgeRequest', 'TxnShareAcknowledgeResponse']);
    const differ = specs
      .filter((s) => kafkaVersions[s.name])
      .filter((s) => commonVersions(s).length !== [...s.validVersions].length)
      .map((s) => `${s.name}: ours ${[...s.validVersions].join(',')}, Kafka ${kafkaVersions[s.name]!.join('-')}`);
    expect(differ).toEqual([]);
  });
});

const tested = specs.filter(
  (s) => !['AddShareAcksToTxnRequest', 'AddShareAcksToTxnResponse', 'TxnShareAcknowledgeRequest', 'TxnShareAcknowledgeResponse'].includes(s.name),
);

/** Ours → Kafka: our bytes, read and written back by Kafka, and our toJson beside its JsonConverter's. */
async function oursToKafka(spec: MessageSpec, version: number, samples: Record<string, unknown>[], seed: number): Promise<string[]> {
  const codec = messages[spec.name]!;
  const ours = samples.map((json) => {
    const message = codec.fromJson(withoutUnknown(json), version) as Record<string, unknown>;
    withUnknownTaggedFields(spec, version, json, message);
    return { json, bytes: b64(codec.encode(message, version)), printed: asKafkaWrites(spec, codec.toJson(message, version)) };
  });
  const theirs = await inChunks(ours, (chunk) =>
    codecs.read(
      spec.name,
      version,
      chunk.map((o) => o.bytes),
    ),
  );
  const bad: string[] = [];
  ours.forEach((o, i) => {
    const k = theirs[i]!;
    const where = `ours → Kafka: ${spec.name} v${version} sample ${i} (fast-check seed ${seed})`;
    const show = `\n  json ${JSON.stringify(o.json).slice(0, 600)}`;
    if (k.error !== undefined) bad.push(`${where}: Kafka could not read our bytes ${hex(o.bytes).slice(0, 400)}: ${k.error}${show}`);
    else if (k.unknownTags !== ((o.json[UNKNOWN] as unknown[] | undefined)?.length ?? 0))
      bad.push(
        `${where}: Kafka found ${k.unknownTags} unknown tagged fields in our bytes, we wrote ${(o.json[UNKNOWN] as unknown[] | undefined)?.length ?? 0}${show}`,
      );
    else if (k.bytes !== o.bytes)
      bad.push(`${where}: Kafka wrote back other bytes\n  ours  ${hex(o.bytes).slice(0, 400)}\n  Kafka ${hex(k.bytes).slice(0, 400)}${show}`);
    else {
      const d = jsonDifference(o.printed, k.json);
      if (d) bad.push(`${where}: our toJson differs from Kafka's JsonConverter at ${d}${show}`);
    }
  });
  count(spec.name, version, 'toKafka', ours.length);
  return bad;
}

/** Kafka → ours: Kafka's JsonConverter reads our JSON and Kafka writes it; our codec must agree with both. */
async function kafkaToOurs(spec: MessageSpec, version: number, samples: Record<string, unknown>[], seed: number): Promise<string[]> {
  const codec = messages[spec.name]!;
  const plain = samples.map((j) => withoutUnknown(j));
  const theirs = await inChunks(
    plain.map((json) => kafkaJsonText(spec, json)),
    (chunk) => codecs.fromJson(spec.name, version, chunk),
  );
  const bad: string[] = [];
  plain.forEach((json, i) => {
    const k = theirs[i]!;
    const where = `Kafka → ours: ${spec.name} v${version} sample ${i} (fast-check seed ${seed})`;
    const show = `\n  json ${JSON.stringify(json).slice(0, 600)}`;
    if (k.error !== undefined) return void bad.push(`${where}: Kafka's JsonConverter refused our JSON: ${k.error}${show}`);
    const fromOurJson = b64(codec.encode(codec.fromJson(json, version), version));
    if (fromOurJson !== k.bytes)
      return void bad.push(
        `${where}: our fromJson + encode differ from Kafka's\n  ours  ${hex(fromOurJson).slice(0, 400)}\n  Kafka ${hex(k.bytes).slice(0, 400)}${show}`,
      );
    let decoded: unknown;
    try {
      decoded = codec.decode(Buffer.from(k.bytes, 'base64'), version);
    } catch (error) {
      return void bad.push(`${where}: we could not decode Kafka's bytes ${hex(k.bytes).slice(0, 400)}: ${(error as Error).message}${show}`);
    }
    const d = jsonDifference(asKafkaWrites(spec, codec.toJson(decoded, version)), k.json);
    if (d) return void bad.push(`${where}: our decode + toJson differ from Kafka's JsonConverter at ${d}${show}`);
    const again = b64(codec.encode(decoded, version));
    if (again !== k.bytes)
      bad.push(`${where}: our encode of the decoded message differs\n  ours  ${hex(again).slice(0, 400)}\n  Kafka ${hex(k.bytes).slice(0, 400)}${show}`);
  });
  count(spec.name, version, 'fromKafka', plain.length);
  return bad;
}

describe('random messages, both ways, at every version Kafka 4.4 and we declare', () => {
  for (const spec of tested) {
    it(spec.name, async () => {
      const began = performance.now();
      // All versions at once: while Kafka's process answers one request, we draw and encode the next.
      const problems = await Promise.all(
        commonVersions(spec).map(async (version) => {
          // One sample serves both directions: generating is most of our side's time.
          const seed = seedFor(spec.name, version);
          const samples = fc.sample(messageArbitrary(spec, version), { seed, numRuns: RUNS });
          const [toKafka, fromKafka] = await Promise.all([oursToKafka(spec, version, samples, seed), kafkaToOurs(spec, version, samples, seed)]);
          return [toKafka, fromKafka]
            .filter((bad) => bad.length > 0)
            .map((bad) => `${bad.length} of ${samples.length} differ, the first:\n${bad.slice(0, SHOWN).join('\n')}`);
        }),
      );
      messagesMs += performance.now() - began;
      expect(problems.flat(), replay()).toEqual([]);
    });
  }
});

describe('a message of the highest version written at every lower one: the same bytes, or both refuse', () => {
  for (const spec of tested) {
    const versions = [...spec.validVersions];
    if (versions.length < 2) continue;
    it(spec.name, async () => {
      const codec = messages[spec.name]!;
      const from = commonVersions(spec).at(-1)!;
      const seed = seedFor(spec.name, from, 'downgrade');
      const samples = fc.sample(messageArbitrary(spec, from), { seed, numRuns: RUNS }).map((j) => withoutUnknown(j) as Record<string, unknown>);
      const texts = samples.map((json) => kafkaJsonText(spec, json));
      // Every lower version at once: Kafka's process works on one request while we encode for the next.
      const problems = await Promise.all(
        commonVersions(spec)
          .filter((v) => v < from)
          .map(async (to) => {
            const pending = inChunks(texts, (chunk) => codecs.downgrade(spec.name, from, to, chunk));
            const ours = samples.map((json): { bytes: string } | { error: string } => {
              try {
                return { bytes: b64(codec.encode(codec.fromJson(json, from), to)) };
              } catch (error) {
                return { error: `${(error as Error).name}: ${(error as Error).message}` };
              }
            });
            const theirs = await pending;
            let refusedByBoth = 0;
            const bad: string[] = [];
            samples.forEach((json, i) => {
              const k = theirs[i]!;
              const o = ours[i]!;
              const where = `${spec.name} v${from} written at v${to}, sample ${i} (fast-check seed ${seed})`;
              const show = `\n  json ${JSON.stringify(json).slice(0, 600)}`;
              if ('error' in k && 'error' in o) refusedByBoth++;
              else if ('error' in k) bad.push(`${where}: Kafka refuses (${k.error}), we write ${hex((o as { bytes: string }).bytes).slice(0, 300)}${show}`);
              else if ('error' in o) bad.push(`${where}: we refuse (${o.error}), Kafka writes ${hex(k.bytes).slice(0, 300)}${show}`);
              else if (o.bytes !== k.bytes) bad.push(`${where}: ours ${hex(o.bytes).slice(0, 300)}, Kafka ${hex(k.bytes).slice(0, 300)}${show}`);
            });
            count(spec.name, to, 'downgrade', samples.length);
            refusals.set(`${spec.name} v${from}→v${to}`, refusedByBoth);
            return bad.length > 0 ? [`v${from} → v${to}: ${bad.length} of ${samples.length} differ, the first:\n${bad.slice(0, SHOWN).join('\n')}`] : [];
          }),
      );
      expect(problems.flat(), replay()).toEqual([]);
    });
  }
});

describe('strings outside well-formed UTF-8', () => {
  const codec = messages.HeartbeatRequest!;
  // Bytes that start, continue, cut short or spoil sequences of every length, encoded surrogates (ED A0..BF) among them.
  const byte = fc.constantFrom(0x61, 0x28, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xc3, 0xa9, 0xe0, 0xe2, 0x82, 0xed, 0xef, 0xf0, 0x90, 0xf4, 0x8f, 0xf5, 0xff);

  it('ill-formed UTF-8 in a string is replaced as Kafka replaces it', async () => {
    const seed = seedFor('ill-formed utf-8');
    const strings = fc.sample(
      fc.uint8Array({ minLength: 1, maxLength: 10 }).chain((n) => fc.array(byte, { minLength: n.length, maxLength: n.length })),
      { seed, numRuns: RUNS * 5 },
    );
    // HeartbeatRequest v0: groupId (int16 length + bytes), generationId 1, memberId "b".
    const frames = strings.map((s) => Buffer.concat([Buffer.from([0, s.length]), Buffer.from(s), Buffer.from([0, 0, 0, 1, 0, 1, 0x62])]));
    const theirs = await inChunks(
      frames.map((f) => f.toString('base64')),
      (chunk) => codecs.read('HeartbeatRequest', 0, chunk),
    );
    const problems: string[] = [];
    frames.forEach((frame, i) => {
      const k = theirs[i]!;
      if (k.error !== undefined) return void problems.push(`${hex(frame.toString('base64'))}: Kafka refused it: ${k.error}`);
      const ours = codec.decode(frame, 0) as { groupId: string };
      const kafkaGroupId = (k.json as { groupId: string }).groupId;
      if (ours.groupId !== kafkaGroupId)
        problems.push(
          `bytes ${Buffer.from(strings[i]!).toString('hex')} (seed ${seed}): Kafka reads ${JSON.stringify(kafkaGroupId)}, we read ${JSON.stringify(ours.groupId)}`,
        );
    });
    batchCounts['ill-formed strings'] = [frames.length, 0];
    expect(problems.slice(0, 10), replay()).toEqual([]);
  });

  it("an unpaired surrogate in a string: Kafka writes '?', we write U+FFFD", async () => {
    const listed = readConformanceDifferences().find((d) => d.test === "an unpaired surrogate in a string: Kafka writes '?', we write U+FFFD");
    expect(listed, 'conformance-differences.json lists this difference').toBeDefined();
    const seed = seedFor('lone surrogates');
    const unit = fc.constantFrom('a', 'é', '😀', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d');
    const strings = fc.sample(fc.string({ unit, minLength: 1, maxLength: 8 }), { seed, numRuns: RUNS });
    const theirs = await inChunks(
      strings.map((groupId) => JSON.stringify({ groupId, generationId: 1, memberId: 'b' })),
      (chunk) => codecs.fromJson('HeartbeatRequest', 0, chunk),
    );
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
    const asListed = (s: string, replacement: string) => Buffer.from(s.replace(lone, Buffer.from(replacement, 'hex').toString('utf8')), 'utf8').toString('hex');
    const problems: string[] = [];
    strings.forEach((groupId, i) => {
      const k = theirs[i]!;
      if (k.error !== undefined) return void problems.push(`${JSON.stringify(groupId)}: Kafka refused it: ${k.error}`);
      const kafkaBody = hex(k.bytes).slice(4, -14);
      const ourBody = Buffer.from(codec.encode(codec.fromJson({ groupId, generationId: 1, memberId: 'b' }, 0), 0))
        .toString('hex')
        .slice(4, -14);
      if (kafkaBody !== asListed(groupId, listed!.kafka)) problems.push(`${JSON.stringify(groupId)}: Kafka wrote ${kafkaBody}, not as listed`);
      if (ourBody !== asListed(groupId, listed!.kipgen)) problems.push(`${JSON.stringify(groupId)}: we wrote ${ourBody}, not as listed`);
    });
    expect(problems.slice(0, 10), replay()).toEqual([]);
  });
});

describe('coordinator records as their coordinators write them in __consumer_offsets, __share_group_state and __transaction_state', () => {
  const records = tested.filter((s) => s.type === 'coordinator-key' || s.type === 'coordinator-value');

  it("the coordinators' record specs are all here", () => {
    expect(records.map((s) => s.name).sort()).toEqual([
      'GroupMetadataKey',
      'GroupMetadataValue',
      'OffsetCommitKey',
      'OffsetCommitValue',
      'ShareSnapshotKey',
      'ShareSnapshotValue',
      'ShareUpdateKey',
      'ShareUpdateValue',
      'TransactionLogKey',
      'TransactionLogValue',
    ]);
  });

  for (const spec of records) {
    it(`${spec.name}: MessageUtil's prefixed bytes and coordinator/coordinator-record-layout.ts`, async () => {
      const codec = messages[spec.name]!;
      const key = spec.type === 'coordinator-key';
      const problems: string[] = [];
      for (const version of commonVersions(spec)) {
        const seed = seedFor(spec.name, version, 'log');
        const samples = fc.sample(messageArbitrary(spec, version), { seed, numRuns: RUNS }).map((j) => withoutUnknown(j) as Record<string, unknown>);
        const theirs = await inChunks(
          samples.map((json) => kafkaJsonText(spec, json)),
          (chunk) => codecs.logRecord(spec.name, version, chunk),
        );
        samples.forEach((json, i) => {
          const k = theirs[i]!;
          const where = `${spec.name} v${version} sample ${i} (fast-check seed ${seed})`;
          if ('error' in k) return void problems.push(`${where}: Kafka refused it: ${k.error}`);
          const message = codec.fromJson(json, version);
          const ours = b64(key ? encodeCoordinatorKey(codec, message) : encodeCoordinatorValue(codec, message, version));
          if (ours !== k.bytes) return void problems.push(`${where}: ours ${hex(ours)}, Kafka ${hex(k.bytes)}`);
          const kafkaBytes = Buffer.from(k.bytes, 'base64');
          const decoded = key ? decodeCoordinatorKey(codec, kafkaBytes) : decodeCoordinatorValue(codec, kafkaBytes);
          const back = key ? codec.toJson(decoded, 0) : codec.toJson((decoded as { value: unknown }).value, version);
          const d = jsonDifference(back, codec.toJson(message, version));
          if (d) problems.push(`${where}: we read Kafka's record otherwise at ${d}`);
          if (!key) expect((decoded as { version: number }).version).toBe(version);
        });
        count(spec.name, version, 'log', samples.length);
      }
      expect(problems.slice(0, 10), replay()).toEqual([]);
    });
  }
});

// ---------------------------------------------------------------------------
// Record batches

const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

const recordArb = fc.record({
  timestamp: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 45n }), fc.constant(-1n)),
  key: fc.option(fc.uint8Array({ maxLength: 32 }), { nil: null, freq: 3 }),
  value: fc.option(
    fc.oneof({ arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 5 }, { arbitrary: fc.uint8Array({ minLength: 200, maxLength: 2000 }), weight: 1 }),
    { nil: null, freq: 5 },
  ),
  headers: fc.array(
    fc.record({
      key: fc.string({ maxLength: 8, unit: fc.constantFrom('h', 'K', '1', 'é', '中', '😀') }),
      value: fc.option(fc.uint8Array({ maxLength: 16 }), { nil: null, freq: 4 }),
    }),
    { maxLength: 3 },
  ),
});

/** A batch as a producer writes one: plain, idempotent or transactional; the offsets Kafka's builder gives (consecutive). */
const batchArb = (compression: (typeof COMPRESSIONS)[number]) =>
  fc.record({
    compression: fc.constant(compression),
    baseOffset: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 50n })),
    partitionLeaderEpoch: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 31 - 1 })),
    kind: fc.constantFrom('plain', 'idempotent', 'transactional'),
    producerId: fc.bigInt({ min: 0n, max: 2n ** 62n }),
    producerEpoch: fc.integer({ min: 0, max: 32767 }),
    baseSequence: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    records: fc.array(recordArb, { minLength: 1, maxLength: 12 }),
  });

type BatchCase = ReturnType<typeof batchArb> extends fc.Arbitrary<infer T> ? T : never;

/** The batch in Batches.java's form and in our encoder's, from one random case. */
function forms(c: BatchCase): { kafka: unknown; ours: RecordBatchInput } {
  const producer =
    c.kind === 'plain'
      ? { producerId: -1n, producerEpoch: -1, baseSequence: -1 }
      : { producerId: c.producerId, producerEpoch: c.producerEpoch, baseSequence: c.baseSequence };
  return {
    kafka: {
      compression: c.compression,
      baseOffset: String(c.baseOffset),
      partitionLeaderEpoch: c.partitionLeaderEpoch,
      producerId: String(producer.producerId),
      producerEpoch: producer.producerEpoch,
      baseSequence: producer.baseSequence,
      transactional: c.kind === 'transactional',
      records: c.records.map((r) => ({
        timestamp: String(r.timestamp),
        key: r.key && b64(r.key),
        value: r.value && b64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: h.value && b64(h.value) })),
      })),
    },
    ours: {
      compression: c.compression,
      baseOffset: c.baseOffset,
      partitionLeaderEpoch: c.partitionLeaderEpoch,
      ...producer,
      isTransactional: c.kind === 'transactional',
      records: c.records,
    },
  };
}

/** Our decoded batch, described as Batches.read describes Kafka's. */
function describeOurs(batch: RecordBatch): KafkaBatch {
  return {
    baseOffset: String(batch.baseOffset),
    lastOffset: String(batch.lastOffset),
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    magic: batch.magic,
    compression: batch.compression,
    timestampType: batch.timestampType,
    maxTimestamp: String(batch.maxTimestamp),
    transactional: batch.isTransactional,
    control: batch.isControl,
    producerId: String(batch.producerId),
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    lastSequence: batch.lastSequence,
    count: batch.recordCount,
    sizeInBytes: batch.sizeInBytes,
    records: batch.records.map((r) => {
      const described: KafkaBatch['records'][number] = {
        offset: String(r.offset),
        timestamp: String(r.timestamp),
        key: r.key && b64(r.key),
        value: r.value && b64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: h.value && b64(h.value) })),
      };
      if (batch.isControl) {
        const control = readControlRecord(r);
        described.controlType = control.type;
        if ('coordinatorEpoch' in control) described.coordinatorEpoch = control.coordinatorEpoch;
      }
      return described;
    }),
  };
}

const controlArb = fc.record({
  type: fc.constantFrom('COMMIT' as const, 'ABORT' as const),
  coordinatorEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  timestamp: fc.bigInt({ min: 0n, max: 2n ** 45n }),
  producerId: fc.bigInt({ min: 0n, max: 2n ** 62n }),
  producerEpoch: fc.integer({ min: 0, max: 32767 }),
  baseOffset: fc.bigInt({ min: 0n, max: 2n ** 50n }),
  partitionLeaderEpoch: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 31 - 1 })),
});

describe("record batches: Kafka's MemoryRecords and our runtime", () => {
  for (const compression of COMPRESSIONS) {
    it(`${compression}: Kafka's batches read by decodeRecordBatches, ours read by Kafka's DefaultRecordBatch`, async () => {
      const seed = seedFor('batches', compression);
      const cases = fc.sample(batchArb(compression), { seed, numRuns: RUNS });
      const both = cases.map(forms);
      const problems: string[] = [];

      // Kafka writes; Kafka and we read the same bytes.
      const written = await inChunks(
        both.map((f) => f.kafka),
        (chunk) => codecs.writeBatches(chunk),
      );
      const writtenBytes = written.map((w, i) => {
        if ('error' in w) throw new Error(`Kafka could not write batch ${i} (seed ${seed}): ${w.error}`);
        return w.bytes;
      });
      const kafkaRead = await inChunks(writtenBytes, (chunk) => codecs.readBatches(chunk));
      writtenBytes.forEach((bytes, i) => {
        const k = kafkaRead[i]!;
        if ('error' in k) return void problems.push(`Kafka's batch ${i}: Kafka itself refused it: ${k.error}`);
        let ours: KafkaBatch[];
        try {
          ours = decodeRecordBatches(Buffer.from(bytes, 'base64'), { partialTail: 'error' }).batches.map(describeOurs);
        } catch (error) {
          return void problems.push(`Kafka's batch ${i} (seed ${seed}): decodeRecordBatches refused it: ${(error as Error).message}`);
        }
        const d = jsonDifference(ours, k.batches);
        if (d) problems.push(`Kafka's batch ${i} (seed ${seed}): we read it otherwise at ${d}`);
        // Uncompressed, our writer must give Kafka's very bytes (compressed, the codec libraries' output may differ).
        if (compression === 'none') {
          const again = b64(encodeRecordBatch(forms(cases[i]!).ours));
          if (again !== bytes)
            problems.push(
              `batch ${i} (seed ${seed}): our encodeRecordBatch differs from Kafka's MemoryRecords.withRecords\n  ours  ${hex(again).slice(0, 300)}\n  Kafka ${hex(bytes).slice(0, 300)}`,
            );
        }
      });

      // We write; Kafka reads.
      const oursBytes = both.map((f) => b64(encodeRecordBatch(f.ours)));
      const readByKafka = await inChunks(oursBytes, (chunk) => codecs.readBatches(chunk));
      oursBytes.forEach((bytes, i) => {
        const k = readByKafka[i]!;
        if ('error' in k) return void problems.push(`our batch ${i} (seed ${seed}): Kafka refused it: ${k.error}`);
        const expected = decodeRecordBatches(Buffer.from(bytes, 'base64')).batches.map(describeOurs);
        const d = jsonDifference(expected, k.batches);
        if (d) problems.push(`our batch ${i} (seed ${seed}): Kafka reads it otherwise at ${d}`);
      });
      batchCounts[compression] = [writtenBytes.length, oursBytes.length];
      expect(problems.slice(0, 10), replay()).toEqual([]);
    });
  }

  it('transaction markers: MemoryRecords.withEndTransactionMarker and our controlRecordBatch, byte for byte', async () => {
    const seed = seedFor('markers');
    const cases = fc.sample(controlArb, { seed, numRuns: RUNS });
    const written = await inChunks(
      cases.map((c) => ({
        control: c.type,
        coordinatorEpoch: c.coordinatorEpoch,
        timestamp: String(c.timestamp),
        producerId: String(c.producerId),
        producerEpoch: c.producerEpoch,
        baseOffset: String(c.baseOffset),
        partitionLeaderEpoch: c.partitionLeaderEpoch,
      })),
      (chunk) => codecs.writeBatches(chunk),
    );
    const problems: string[] = [];
    const oursBytes = cases.map((c) => b64(controlRecordBatch(c)));
    const readByKafka = await inChunks(oursBytes, (chunk) => codecs.readBatches(chunk));
    cases.forEach((c, i) => {
      const w = written[i]!;
      if ('error' in w) return void problems.push(`marker ${i}: Kafka could not write it: ${w.error}`);
      if (w.bytes !== oursBytes[i])
        problems.push(
          `marker ${i} (seed ${seed}) ${JSON.stringify(c, (_, v) => (typeof v === 'bigint' ? String(v) : v))}:\n  ours  ${hex(oursBytes[i]!)}\n  Kafka ${hex(w.bytes)}`,
        );
      const k = readByKafka[i]!;
      if ('error' in k) return void problems.push(`our marker ${i}: Kafka refused it: ${k.error}`);
      const d = jsonDifference(decodeRecordBatches(Buffer.from(oursBytes[i]!, 'base64')).batches.map(describeOurs), k.batches);
      if (d) problems.push(`our marker ${i} (seed ${seed}): Kafka reads it otherwise at ${d}`);
    });
    batchCounts.markers = [cases.length, cases.length];
    expect(problems.slice(0, 10), replay()).toEqual([]);
  });
});
