import { fileURLToPath } from 'node:url';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSpecs } from '../../generator/load.js';
import { messages } from '../../generated/index.js';
import { DecodeError, decodeErrorAt, decodeRecordBatches, encodeRecordBatch, type MessageCodec } from '../../runtime/index.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { fromHex, readVectors, toHex } from '../support/vectors.js';

/**
 * Hostile input for every generated decoder at every version (docs/DESIGN.md §3),
 * beyond test/codec/hostile-input.test.ts (every truncation of the vectors,
 * single bit flips, short random byte strings):
 *
 * - seeds: the fixture vectors plus random valid messages from the schema
 *   model (test/support/arbitraries.ts), so every version has seeds;
 * - mutations (fast-check): truncation, 1–4 bit flips, length inflation (a
 *   maximal or off-by-some int16 / int32 / varint written over or inserted at
 *   any position), byte bumps, slice duplication and deletion, trailing
 *   garbage, and random bytes of any length up to 4 KiB;
 * - every position of every vector overwritten with an int32 of 2^31 − 1
 *   (a varint of 2^32 − 1 in flexible versions): lengths that would allocate
 *   gigabytes if trusted.
 *
 * The verdict for each input is "decoded" or a DecodeError whose reason is one
 * the runtime raises on purpose. The runtime turns any exception inside a
 * reader into a DecodeError (decodeErrorAt), so a RangeError from a huge
 * allocation or a TypeError from a decoder bug would also arrive as a
 * DecodeError: checking the reason against the runtime's own messages is
 * what catches those. What a decoder accepts, its encoder must write back
 * and decode to the same JSON form. A hang fails the test by its timeout (no
 * wall-clock bound per decode: on a loaded machine a GC pause would fail it
 * without any decoder being slow), the retained heap must not
 * grow across a decoder's batch, and the process's peak RSS must stay
 * within a bound for the whole file.
 *
 * KIPGEN_FUZZ_RUNS sets the mutated inputs per decoder version (default 2000).
 */
const RUNS = Number(process.env.KIPGEN_FUZZ_RUNS ?? 2000);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`KIPGEN_FUZZ_RUNS must be a positive integer, got ${process.env.KIPGEN_FUZZ_RUNS}`);
const SEED = Number(process.env.KIPGEN_FUZZ_SEED ?? 0x1289);
const RANDOM_SEEDS_PER_VERSION = 6;
/** Retained heap growth allowed across one decoder's batch, after a full GC. */
const HEAP_GROWTH_BOUND = 8 * 1024 * 1024;
/** Peak RSS growth allowed for the whole file. */
const PEAK_RSS_GROWTH_BOUND = 256 * 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * The reasons the runtime and the generated readers give on purpose (see
 * `new DecodeError(` in runtime/ and generated/). Anything else is an engine
 * error (RangeError, TypeError, …) that decodeErrorAt wrapped: a decoder bug.
 */
const DELIBERATE_REASONS: RegExp[] = [
  /^needs \d+ bytes? at offset \d+, only -?\d+ left$/,
  /^varint runs past the end at offset \d+$/,
  /^varlong runs past the end at offset \d+$/,
  /^unsigned varint is longer than (32 bits|5 bytes)$/,
  /^varlong is longer than (64 bits|10 bytes)$/,
  /^negative length -?\d+$/,
  /^non-nullable (string is|bytes are|array is) null$/,
  /^string length \d+ exceeds 32767$/,
  /^(string has|bytes have|array has) invalid length -?\d+$/,
  /^array claims \d+ elements but only \d+ bytes are left$/,
  /^array of \d+ elements needs \d+ bytes, only \d+ left$/,
  /^tagged field claims \d+ bytes but only \d+ are left$/,
  /^tagged field \d+ declares \d+ bytes but its value takes \d+$/,
  /^\d+ unread bytes after the message$/,
];

function deliberate(error: DecodeError): boolean {
  return DELIBERATE_REASONS.some((re) => re.test(error.reason));
}

type Verdict = { ok: true; message: unknown } | { ok: false; error: DecodeError };

class FuzzFailure extends Error {}

function decodeOnce(codec: MessageCodec<unknown>, bytes: Uint8Array, version: number): Verdict {
  let verdict: Verdict;
  try {
    verdict = { ok: true, message: codec.decode(bytes, version) };
  } catch (error) {
    if (!(error instanceof DecodeError)) {
      throw new FuzzFailure(`${codec.name} v${version} threw ${(error as Error)?.name}: ${(error as Error)?.message} on ${toHex(bytes).slice(0, 400)}`);
    }
    if (!deliberate(error)) {
      throw new FuzzFailure(`${codec.name} v${version}: DecodeError wraps an engine error (${error.message}) on ${toHex(bytes).slice(0, 400)}`);
    }
    if (!error.message.startsWith(codec.name)) {
      throw new FuzzFailure(`${codec.name} v${version}: DecodeError does not name the message: ${error.message}`);
    }
    verdict = { ok: false, error };
  }
  return verdict;
}

/** What a decoder accepted, its encoder writes back, and that decodes to the same JSON. */
function checkAccepted(codec: MessageCodec<unknown>, message: unknown, version: number, input: Uint8Array): void {
  let again: Uint8Array;
  try {
    again = codec.encode(message, version);
  } catch (error) {
    throw new FuzzFailure(`${codec.name} v${version} decoded ${toHex(input).slice(0, 400)} but cannot encode it back: ${(error as Error).message}`);
  }
  const back = codec.decode(again, version);
  const a = JSON.stringify(codec.toJson(back, version));
  const b = JSON.stringify(codec.toJson(message, version));
  if (a !== b)
    throw new FuzzFailure(`${codec.name} v${version}: re-encoding ${toHex(input).slice(0, 400)} changes it: ${b.slice(0, 300)} → ${a.slice(0, 300)}`);
}

// Lengths that would be catastrophic if a reader trusted them.
const INFLATED: Uint8Array[] = [
  [0x7f, 0xff], // int16 32767
  [0x7f, 0xff, 0xff, 0xff], // int32 2^31 - 1
  [0x80, 0x00, 0x00, 0x00], // int32 -2^31
  [0xff, 0xff, 0xff, 0xfe], // int32 -2
  [0x00, 0xff, 0xff, 0xff], // int32 16 Mi
  [0x00, 0x00, 0x10, 0x00], // int32 4096
  [0xff, 0xff, 0xff, 0xff, 0x0f], // uvarint 2^32 - 1
  [0x80, 0x80, 0x80, 0x80, 0x08], // uvarint 2^31
  [0xff, 0xff, 0xff, 0xff, 0x7f], // uvarint with more than 32 bits
  [0xff, 0xff, 0x03], // uvarint 65535
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80], // a varint that never ends
  [0x81, 0x01], // uvarint 129
].map((b) => new Uint8Array(b));

type Mutation =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; flips: [number, number][] }
  | { kind: 'inflate'; at: number; pattern: number; insert: boolean }
  | { kind: 'bump'; at: number; delta: number }
  | { kind: 'duplicate'; from: number; length: number; at: number }
  | { kind: 'delete'; from: number; length: number }
  | { kind: 'append'; bytes: Uint8Array }
  | { kind: 'random'; bytes: Uint8Array }
  | { kind: 'noise'; seed: number; length: number };

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('inflate' as const), at: fc.nat(), pattern: fc.nat(INFLATED.length - 1), insert: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('bump' as const),
      at: fc.nat(),
      delta: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: -4, max: -1 }), fc.integer({ min: 5, max: 255 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), from: fc.nat(), length: fc.integer({ min: 1, max: 64 }), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), from: fc.nat(), length: fc.integer({ min: 1, max: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 64 }) }) },
  // Longer random inputs, filled from a seed (fast-check draws byte by byte, which is slow for KiBs).
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('noise' as const), seed: fc.integer(), length: fc.nat(4096) }) },
);

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

function mutate(seed: Uint8Array, m: Mutation): Uint8Array {
  const n = seed.length;
  switch (m.kind) {
    case 'truncate':
      return seed.slice(0, n === 0 ? 0 : m.at % n);
    case 'flip': {
      const out = seed.slice();
      if (n > 0) for (const [at, bit] of m.flips) out[at % n]! ^= 1 << bit;
      return out;
    }
    case 'inflate': {
      const pattern = INFLATED[m.pattern]!;
      const at = m.at % (n + 1);
      if (m.insert) return splice(seed, at, 0, pattern);
      const out = seed.slice();
      for (let i = 0; i < pattern.length && at + i < n; i++) out[at + i] = pattern[i]!;
      return out;
    }
    case 'bump': {
      const out = seed.slice();
      if (n > 0) out[m.at % n] = (out[m.at % n]! + m.delta) & 0xff;
      return out;
    }
    case 'duplicate': {
      if (n === 0) return seed.slice();
      const from = m.from % n;
      return splice(seed, m.at % (n + 1), 0, seed.slice(from, from + m.length));
    }
    case 'delete': {
      if (n === 0) return seed.slice();
      const from = m.from % n;
      return splice(seed, from, Math.min(m.length, n - from), new Uint8Array(0));
    }
    case 'append':
      return splice(seed, n, 0, m.bytes);
    case 'random':
      return m.bytes;
    case 'noise': {
      const out = new Uint8Array(m.length);
      let x = m.seed | 1;
      for (let i = 0; i < out.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        out[i] = x & 0xff;
      }
      return out;
    }
  }
}

const vectors = readVectors(fileURLToPath(new URL('../fixtures/vectors/', import.meta.url)));
const { specs } = loadSpecs([fileURLToPath(new URL('../../message-schemas/', import.meta.url))]);
const specByName = new Map(specs.map((s) => [s.name, s]));

/** Valid encodings of `name` at `version`: its vectors, then random messages from the schema model. */
function seedsFor(name: string, version: number): Uint8Array[] {
  const codec = messages[name]!;
  const seeds = (vectors.get(name) ?? []).filter((v) => v.version === version).map((v) => fromHex(v.hex));
  const spec = specByName.get(name);
  if (spec !== undefined) {
    for (const json of fc.sample(messageArbitrary(spec, version), { numRuns: RANDOM_SEEDS_PER_VERSION, seed: SEED + version })) {
      seeds.push(codec.encode(codec.fromJson(json, version), version));
    }
  }
  return seeds;
}

/** Inputs tried, by decoder and version. */
const tried = new Map<string, Map<number, number>>();
const count = (name: string, version: number, n: number): void => {
  let byVersion = tried.get(name);
  if (byVersion === undefined) tried.set(name, (byVersion = new Map()));
  byVersion.set(version, (byVersion.get(version) ?? 0) + n);
};

const rssAtStart = process.resourceUsage().maxRSS * 1024;

describe('fuzzing every generated decoder', () => {
  const names = Object.keys(messages).sort();

  it('the oracle catches an engine error that decodeErrorAt wrapped into a DecodeError', () => {
    const broken: MessageCodec<unknown> = {
      ...(messages.EndTxnRequest as MessageCodec<unknown>),
      decode: () => {
        throw decodeErrorAt(new RangeError('Invalid array length'), 'EndTxnRequest');
      },
    };
    expect(() => decodeOnce(broken, new Uint8Array(1), 0)).toThrow(/wraps an engine error \(EndTxnRequest: Invalid array length\)/);
    expect(() => decodeOnce(messages.EndTxnRequest as MessageCodec<unknown>, new Uint8Array(1), 0)).not.toThrow();
  });

  it('covers every message in generated/index.ts at every version with seeds', () => {
    expect(names.length).toBeGreaterThanOrEqual(46);
    for (const name of names) {
      const { lowest, highest } = messages[name]!.validVersions;
      for (let version = lowest; version <= highest; version++) expect(seedsFor(name, version).length, `${name} v${version}`).toBeGreaterThan(0);
    }
  });

  for (const name of names) {
    it(`${name}: mutated and random inputs at every version give a message or a deliberate DecodeError`, () => {
      const codec = messages[name]!;
      const { lowest, highest } = codec.validVersions;
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      for (let version = lowest; version <= highest; version++) {
        const seeds = seedsFor(name, version);
        let runs = 0;
        fc.assert(
          fc.property(fc.nat(seeds.length - 1), mutationArbitrary, (which, mutation) => {
            runs++;
            const input = mutate(seeds[which]!, mutation);
            const verdict = decodeOnce(codec, input, version);
            if (verdict.ok) checkAccepted(codec, verdict.message, version, input);
          }),
          { numRuns: RUNS, seed: SEED ^ (version * 7919), endOnFailure: true },
        );
        count(name, version, runs);
      }
      gc();
      const growth = process.memoryUsage().heapUsed - heapBefore;
      expect(growth, `${name}: retained heap grew by ${growth} bytes`).toBeLessThan(HEAP_GROWTH_BOUND);
    });
  }

  it('a huge length at every position of every vector fails before allocating', () => {
    const int32Max = INFLATED[1]!;
    const varintMax = INFLATED[6]!;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let inputs = 0;
    for (const [name, lines] of vectors) {
      const codec = messages[name]!;
      for (const v of lines) {
        const seed = fromHex(v.hex);
        // Flexible versions carry lengths as varints, the others as int16/int32.
        const pattern = v.flexible ? varintMax : int32Max;
        for (let at = 0; at < seed.length; at++) {
          const input = seed.slice();
          input.set(pattern.subarray(0, Math.min(pattern.length, seed.length - at)), at);
          const verdict = decodeOnce(codec, input, v.version);
          if (verdict.ok) checkAccepted(codec, verdict.message, v.version, input);
          count(name, v.version, 1);
          inputs++;
        }
      }
    }
    gc();
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(HEAP_GROWTH_BOUND);
    expect(inputs).toBeGreaterThan(50_000);
  });

  it('the record-batch decoder (Produce/Fetch records) survives the same mutations', () => {
    const now = 1_700_000_000_000n;
    const seeds = [
      encodeRecordBatch({
        baseTimestamp: now,
        records: [{ key: new Uint8Array([1]), value: new Uint8Array([2, 3]), headers: [{ key: 'h', value: new Uint8Array([4]) }], timestamp: now }],
      }),
      encodeRecordBatch({
        baseTimestamp: now,
        compression: 'gzip',
        records: Array.from({ length: 5 }, (_, i) => ({ value: new Uint8Array(20).fill(i), timestamp: now + BigInt(i) })),
      }),
      encodeRecordBatch({
        baseTimestamp: now,
        producerId: 7n,
        producerEpoch: 1,
        baseSequence: 0,
        isTransactional: true,
        records: [{ value: null, timestamp: now }],
      }),
    ];
    let runs = 0;
    fc.assert(
      fc.property(fc.nat(seeds.length - 1), mutationArbitrary, fc.boolean(), (which, mutation, checkCrc) => {
        runs++;
        const input = mutate(seeds[which]!, mutation);
        try {
          decodeRecordBatches(input, { checkCrc });
        } catch (error) {
          if (!(error instanceof DecodeError))
            throw new FuzzFailure(`record batches threw ${(error as Error).name}: ${(error as Error).message} on ${toHex(input).slice(0, 400)}`);
        }
      }),
      { numRuns: RUNS * 3, seed: SEED },
    );
    count('(record batches)', 2, runs);
  });
});

afterAll(() => {
  const peakGrowth = process.resourceUsage().maxRSS * 1024 - rssAtStart;
  const lines: string[] = [];
  let total = 0;
  let smallest = Infinity;
  for (const [name, byVersion] of [...tried].sort()) {
    const sum = [...byVersion.values()].reduce((a, b) => a + b, 0);
    const fewest = Math.min(...byVersion.values());
    total += sum;
    smallest = Math.min(smallest, fewest);
    lines.push(`  ${name}: ${sum} inputs over ${byVersion.size} version(s), at least ${fewest} per version`);
  }
  process.stdout.write(
    `decoder fuzzing (KIPGEN_FUZZ_RUNS=${RUNS}): ${total} inputs, ${tried.size} decoders, at least ${smallest} per decoder version; peak RSS grew ${(peakGrowth / 1048576).toFixed(0)} MiB\n${lines.join('\n')}\n`,
  );
  if (peakGrowth > PEAK_RSS_GROWTH_BOUND) throw new Error(`peak RSS grew by ${peakGrowth} bytes (bound ${PEAK_RSS_GROWTH_BOUND})`);
});
