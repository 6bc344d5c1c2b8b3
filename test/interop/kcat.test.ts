/**
 * kcat (Debian's, librdkafka) against `kipgen broker` in a child process:
 * `-L` metadata, `-P` produce (files as single binary messages with a key
 * and headers, uncompressed and with every codec librdkafka offers; keyed
 * lines from stdin), `-C -o beginning -e` consume — payloads, keys and
 * headers compared byte for byte, and cross-checked with kipgen's own Fetch.
 * Debian's librdkafka 2.0.2 sends `-z gzip|snappy|lz4` uncompressed to a
 * broker whose Produce starts at v3 (kipgen, Kafka 4.0) and compresses only
 * zstd here; compression.test.ts gets all four compressed through a proxy.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apisUsed, startKipgenBroker, tempDir, type KipgenBroker, removeTempDirs } from './support/broker-process.js';
import { readPartition } from './support/fetch.js';
import { KCAT_CLIENT_ID, kcatConsume, kcatMetadata, kcatProduceFiles, kcatProduceStdin, requireKcat } from './support/kcat.js';

const TOPIC = 'kcat-events';
let broker: KipgenBroker;
let kcatVersion: string;

// Binary payloads: NUL, 0xff, newlines, invalid UTF-8, a 0x80-byte run, and a larger random one.
const PAYLOADS: Buffer[] = [
  Buffer.from([0x00, 0xff, 0x0a, 0x0d, 0x0a, 0xc3, 0x28, 0x80, 0x7f]),
  Buffer.from('plain text value with, commas = and %s format-looking bits'),
  Buffer.alloc(300, 0x80),
  crypto.randomBytes(100_000),
];
const KEY = 'kcat-key-ключ';
const HEADERS = ['trace=abc-123', 'empty=', 'utf8=значение'];
const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'];

beforeAll(async () => {
  kcatVersion = requireKcat();
  broker = await startKipgenBroker({ topics: [`${TOPIC}:2`] });
});

afterAll(async () => {
  await broker?.stop();
  removeTempDirs();
  if (broker)
    process.stdout.write(`${kcatVersion}: APIs and versions (broker log): ${JSON.stringify(apisUsed(broker.requests(), (id) => id === KCAT_CLIENT_ID))}\n`);
});

function payloadFiles(): string[] {
  const dir = tempDir('kipgen-kcat-');
  return PAYLOADS.map((p, i) => {
    const file = path.join(dir, `payload-${i}.bin`);
    fs.writeFileSync(file, p);
    return file;
  });
}

describe(`kcat against kipgen broker`, () => {
  it('-L lists the broker, the topic, its partitions and leaders', async () => {
    const meta = await kcatMetadata(broker.port);
    expect(meta.brokers).toEqual([{ id: 0, name: `127.0.0.1:${broker.port}` }]);
    expect(meta.controllerid).toBe(0);
    const topic = meta.topics.find((t) => t.topic === TOPIC)!;
    expect(topic.partitions.map((p) => [p.partition, p.leader, p.replicas.map((r) => r.id), p.isrs.map((r) => r.id)])).toEqual([
      [0, 0, [0], [0]],
      [1, 0, [0], [0]],
    ]);
  });

  it('-P then -C -o beginning -e: binary payloads, keys and headers come back byte for byte, with every compression codec', async () => {
    const files = payloadFiles();
    const headerArgs = HEADERS.flatMap((h) => ['-H', h]);
    // Partition 0: uncompressed files, then keyed lines from stdin. Partition 1: the files once per codec.
    await kcatProduceFiles(broker.port, TOPIC, 0, files, ['-k', KEY, ...headerArgs]);
    await kcatProduceStdin(broker.port, TOPIC, 0, 'k1:v1\nk2:v2 with spaces\n:empty key\n', ['-K', ':', '-H', 'line=yes']);
    for (const codec of CODECS) await kcatProduceFiles(broker.port, TOPIC, 1, files, ['-z', codec, '-k', `${KEY}-${codec}`, ...headerArgs]);

    const p0 = await kcatConsume(broker.port, TOPIC, 0);
    expect(p0.map((m) => m.offset)).toEqual(Array.from({ length: 7 }, (_, i) => BigInt(i)));
    expect(p0.slice(0, 4).map((m) => [m.key?.toString('utf8'), m.value?.toString('hex'), m.headers])).toEqual(
      PAYLOADS.map((p) => [KEY, p.toString('hex'), HEADERS.join(',')]),
    );
    expect(p0.slice(4).map((m) => [m.key?.toString('utf8') ?? null, m.value?.toString('utf8'), m.headers])).toEqual([
      ['k1', 'v1', 'line=yes'],
      ['k2', 'v2 with spaces', 'line=yes'],
      ['', 'empty key', 'line=yes'],
    ]);

    const p1 = await kcatConsume(broker.port, TOPIC, 1);
    expect(p1.map((m) => [m.key?.toString('utf8'), m.value?.toString('hex'), m.headers])).toEqual(
      CODECS.flatMap((codec) => PAYLOADS.map((p) => [`${KEY}-${codec}`, p.toString('hex'), HEADERS.join(',')])),
    );
  });

  it('what kcat wrote reads back the same through kipgen’s own Fetch codecs (uncompressed partition)', async () => {
    const read = await readPartition(broker.port, TOPIC, 0, 'read_uncommitted');
    expect(
      read.records
        .slice(0, 4)
        .map((r) => [r.key?.toString('utf8'), r.value?.toString('hex'), r.headers.map((h) => `${h.key}=${h.value?.toString('utf8') ?? ''}`).join(',')]),
    ).toEqual(PAYLOADS.map((p) => [KEY, p.toString('hex'), HEADERS.join(',')]));
    expect(read.records).toHaveLength(7);
  });

  it('no frame was refused and the expected APIs were used', () => {
    expect(broker.stderr()).not.toMatch(/rejected frame|request failed/);
    const used = apisUsed(broker.requests(), (id) => id === KCAT_CLIENT_ID);
    for (const api of ['ApiVersions', 'Metadata', 'Produce', 'ListOffsets', 'Fetch']) expect(used, api).toHaveProperty(api);
  });
});
