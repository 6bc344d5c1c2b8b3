/**
 * Wireshark's Kafka dissector (Debian's tshark) on a captured session with
 * `kipgen broker`: kafkajs's transactional flow and admin calls, kcat's
 * metadata / produce / consume, and kipgen's own client sending every API
 * the broker advertises at every version it advertises. Loopback is captured
 * with `tshark -i lo` (root), then dissected as Kafka (`-d tcp.port==N,kafka`).
 *
 * - Every request in the broker's log is in the capture with the same API
 *   key, version and correlation id, and Wireshark matched it with its response.
 * - Every PDU of an API and version Wireshark's dissector knows decodes with
 *   no malformed item and no expert info of warning or error severity (the
 *   ApiVersions response may carry Wireshark's own warnings that the broker
 *   advertises versions newer than the dissector knows: those are allowed).
 * - Which versions the dissector knows is read from those very warnings
 *   ("Unsupported Fetch version. Supports v0-11."); PDUs of newer versions
 *   cannot be decoded by this Wireshark and are only checked for attribution.
 * - APIs Wireshark does not know (76–79, KIP-932's 90–92, and KIP-1289's 95/96) are shown
 *   under their own API key, with only "Unknown N API key" and "Dissected
 *   message does not end at the pdu length offset" (the undissected body):
 *   never decoded as another API, never an exception.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiByKey } from '../../generated/index.js';
import { startKipgenBroker, tempDir, type KipgenBroker, type LoggedRequest, removeTempDirs } from './support/broker-process.js';
import { sendEveryVersion, type VersionOutcome } from './support/every-version.js';
import { runKafkajsSession } from './support/kafkajs-flow.js';
import { kcatConsume, kcatMetadata, kcatProduceStdin, requireKcat } from './support/kcat.js';
import { EXPERT_GROUP_MALFORMED, readKafkaPdus, requireTshark, startCapture, type Capture, type KafkaPdu } from './support/tshark.js';

const TOPIC = 'ws-events';
let broker: KipgenBroker | undefined;
let capture: Capture | undefined;
let tsharkVersion = '';
let pdus: KafkaPdu[] = [];
let logged: LoggedRequest[] = [];
let sweep: VersionOutcome[] = [];
/** Wireshark's highest known version per API key, from its own warnings; absent = all advertised versions. */
const wiresharkMax = new Map<number, number>();
const UNKNOWN_TO_WIRESHARK = new Set<number>();

beforeAll(async () => {
  tsharkVersion = requireTshark();
  requireKcat();
  broker = await startKipgenBroker({ topics: [`${TOPIC}:2`] });
  const file = path.join(tempDir('kipgen-pcap-'), 'session.pcap');
  capture = await startCapture(broker.port, file);
  await runKafkajsSession(broker.port, TOPIC, 'ws-group', '3');
  await kcatMetadata(broker.port);
  await kcatProduceStdin(broker.port, TOPIC, 1, 'a:1\nb:2\n', ['-K', ':', '-H', 'h=v']);
  await kcatConsume(broker.port, TOPIC, 1);
  sweep = await sendEveryVersion(broker.port, TOPIC);
  await new Promise((r) => setTimeout(r, 300));
  await capture.stop();
  await broker.stop();
  logged = broker.requests();
  pdus = await readKafkaPdus(file, broker.port);

  // Names Wireshark gives each key, then the ranges it says it knows.
  const keyByName = new Map<string, number>();
  for (const p of pdus) if (p.request && p.apiName !== '') keyByName.set(p.apiName, p.apiKey);
  for (const p of pdus) {
    for (const e of p.experts) {
      const unsupported = /^Unsupported (\w+) version\. Supports v(\d+)(?:-(\d+))?\.$/.exec(e.message);
      if (unsupported) {
        const key = keyByName.get(unsupported[1]!);
        if (key === undefined) throw new Error(`Wireshark names an API kipgen never sent: ${e.message}`);
        wiresharkMax.set(key, Number(unsupported[3] ?? unsupported[2]));
      }
      const unknown = /^Unknown (\d+) API key$/.exec(e.message);
      if (unknown) UNKNOWN_TO_WIRESHARK.add(Number(unknown[1]));
    }
  }
}, 120_000);

afterAll(async () => {
  await capture?.stop();
  await broker?.stop();
  removeTempDirs();
  const known = pdus.filter((p) => decodable(p)).length;
  process.stdout.write(
    `${tsharkVersion}: ${pdus.length} Kafka PDUs (${logged.length} requests in the broker log), ${known} of APIs/versions its dissector knows, all clean; ` +
      `dissector limits: ${[...wiresharkMax]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${apiByKey(k)?.name ?? k} v0-${v}`)
        .join(', ')}; unknown API keys: ${[...UNKNOWN_TO_WIRESHARK].sort((a, b) => a - b).join(', ')}\n`,
  );
});

function decodable(p: KafkaPdu): boolean {
  if (UNKNOWN_TO_WIRESHARK.has(p.apiKey)) return false;
  const max = wiresharkMax.get(p.apiKey);
  return max === undefined || p.version <= max;
}

/**
 * Defects of Wireshark 4.0's Kafka dissector, seen on any content (a
 * one-byte auth token, a DeleteAcls response with one filter result): it
 * shows SaslAuthenticate v0–1's auth bytes as <MISSING> without consuming
 * them, and dissects no filter result of a DeleteAcls v1 response; either way
 * the PDU "does not end at the pdu length offset". kipgen's bytes for both
 * are those of Kafka's own codecs (test/codec/vectors.test.ts), so only that
 * one complaint is tolerated, only there. The same for a DeleteTopics v1–2
 * response (it reads no ThrottleTimeMs, which Kafka's schema has from v1) and
 * a SyncGroup v0–3 response with an empty Assignment (an error answer: it
 * looks inside the empty bytes for a consumer assignment).
 */
const DISSECTOR_DEFECTS: Array<{ apiKey: number; versions: readonly number[]; request: boolean | null }> = [
  { apiKey: 36, versions: [0, 1], request: null },
  { apiKey: 31, versions: [1], request: false },
  { apiKey: 20, versions: [1, 2], request: false },
  { apiKey: 14, versions: [0, 1, 2, 3], request: false },
];
const knownDefect = (p: KafkaPdu): boolean =>
  DISSECTOR_DEFECTS.some((d) => d.apiKey === p.apiKey && d.versions.includes(p.version) && (d.request === null || d.request === p.request));
const NOT_AT_END = 'Dissected message does not end at the pdu length offset';

const advertisedRangeNote = (message: string): boolean => /^Unsupported \w+ version\. Supports v\d+(-\d+)?\.$|^Unknown \d+ API key$/.test(message);

describe(`Wireshark's Kafka dissector on a kipgen broker session`, () => {
  it('the session covered every advertised API version, and every logged request is in the capture as the same API, version and correlation id', () => {
    expect(sweep.length).toBeGreaterThan(100);
    expect(sweep.filter((o) => o.outcome === 'connection closed')).toEqual([]);
    const seen = pdus.filter((p) => p.request).map((p) => `${p.apiKey} v${p.version} #${p.correlationId}`);
    const wanted = logged.map((r) => `${apiByKey(apiKeyOf(r.api))!.apiKey} v${r.version} #${r.correlationId}`);
    expect(seen.sort()).toEqual(wanted.sort());
    // Every request has its response in the capture, on its connection, by correlation id (no acks=0 produce here).
    // A client may go away with a request in flight (kcat -e leaves while its last Fetch long-polls):
    // only the last request of a connection may be unanswered.
    const requests = pdus.filter((p) => p.request);
    const unanswered = requests.filter((p) => p.peer === null);
    expect(
      unanswered.filter((p) => requests.some((q) => q.stream === p.stream && q.frame > p.frame)).map((p) => `${p.apiName} v${p.version} frame ${p.frame}`),
    ).toEqual([]);
    expect(unanswered.length).toBeLessThanOrEqual(2);
    expect(pdus.length).toBe(2 * requests.length - unanswered.length);
  });

  it('decodes every PDU of the APIs and versions it knows with no malformed item and no warning or error', () => {
    const bad = pdus
      .filter(decodable)
      .map((p) => ({
        p,
        problems: [
          ...(p.malformed && !(knownDefect(p) && p.experts.every((e) => e.message === NOT_AT_END)) ? ['malformed'] : []),
          // (single-pass dissection links responses to requests, not the other way)
          ...(!p.request && p.matchedFrame === null ? ['not matched with its request'] : []),
          ...p.experts
            .filter((e) => e.severity === 'warning' || e.severity === 'error' || e.group === EXPERT_GROUP_MALFORMED)
            // An ApiVersions response lists versions newer than the dissector knows: Wireshark says so.
            .filter((e) => !(p.apiKey === 18 && !p.request && advertisedRangeNote(e.message)))
            .filter((e) => !(knownDefect(p) && e.message === NOT_AT_END))
            .map((e) => `${e.severity}: ${e.message}`),
        ],
      }))
      .filter(({ problems }) => problems.length > 0)
      .map(({ p, problems }) => `frame ${p.frame} ${p.apiName} v${p.version} ${p.request ? 'request' : 'response'}: ${problems.join('; ')}`);
    expect(bad).toEqual([]);
    expect(pdus.filter(decodable).length).toBeGreaterThan(100);
    // The core APIs are among the ones it knows (at least their older versions). WriteTxnMarkers is
    // not: Wireshark 4.0 knows only v0, which Kafka 4 (and kipgen) no longer serve.
    for (const key of [0, 1, 2, 3, 9, 10, 18, 22, 24, 25, 26, 28])
      expect(
        pdus.some((p) => p.apiKey === key && decodable(p)),
        `API ${key}`,
      ).toBe(true);
  });

  it('shows APIs it does not know (DescribeCluster 60, KIP-664’s 61/65/66, KIP-848’s 68/69, 76–79, KIP-932’s 90–92, KIP-1289’s 95 and 96) under their own key, never as another API, never an exception', () => {
    for (const key of [95, 96]) expect(UNKNOWN_TO_WIRESHARK.has(key), `API ${key}`).toBe(true);
    const unknown = pdus.filter((p) => UNKNOWN_TO_WIRESHARK.has(p.apiKey));
    expect(new Set(unknown.map((p) => p.apiKey))).toEqual(
      new Set([60, 61, 65, 66, 68, 69, 76, 77, 78, 79, 90, 91, 92, 95, 96].filter((k) => logged.some((r) => r.api === apiByKey(k)?.name))),
    );
    const sentKeys = new Set(logged.map((r) => apiKeyOf(r.api)));
    expect([...UNKNOWN_TO_WIRESHARK].every((k) => sentKeys.has(k))).toBe(true);
    for (const p of unknown) {
      const allowed = new RegExp(`^Unknown ${p.apiKey} API key$|^Dissected message does not end at the pdu length offset$`);
      expect(
        p.experts.filter((e) => e.severity !== 'chat' && !allowed.test(e.message)),
        `frame ${p.frame} API ${p.apiKey}`,
      ).toEqual([]);
      expect(p.experts.some((e) => e.severity === 'error')).toBe(false);
    }
  });

  it('newer versions than the dissector knows are attributed to the right API (decoding them is beyond this Wireshark)', () => {
    const newer = pdus.filter((p) => !decodable(p) && !UNKNOWN_TO_WIRESHARK.has(p.apiKey));
    expect(newer.length).toBeGreaterThan(0);
    for (const p of newer) {
      // A request says which version it lacks; a response does too, or, when the request could not be parsed, that it has none.
      const expected = p.request ? [`^Unsupported ${p.apiName} version`] : [`^Unsupported ${p.apiName} version`, '^Request missing$'];
      expect(
        p.experts.some((e) => expected.some((re) => new RegExp(re).test(e.message))),
        `frame ${p.frame}`,
      ).toBe(true);
      expect(p.peer?.apiKey).toBe(p.apiKey);
    }
  });
});

function apiKeyOf(name: string): number {
  for (let key = 0; key < 100; key++) if (apiByKey(key)?.name === name) return key;
  throw new Error(`no API named ${name}`);
}
