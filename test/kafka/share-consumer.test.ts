/**
 * Our KafkaShareConsumer against Kafka 4.4's share groups (KIP-932):
 * implicit and explicit acknowledgement (accept, release, reject), lock
 * expiry and redelivery with delivery counts, and the group's
 * share.delivery.count.limit. Absence is checked with a sentinel: a record
 * produced after the fact arrives, and nothing that should stay gone comes
 * with or before it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaProducer, KafkaShareConsumer, type ShareConsumerRecord } from '../../client/index.js';
import { Cleanups, createTopic, kafka, shareGroup, unique } from './support/cluster.js';

const cleanups = new Cleanups();
afterEach(() => cleanups.closeAll());

type Mode = 'implicit' | 'explicit';

function consumer(groupId: string, mode: Mode): KafkaShareConsumer {
  return cleanups.track(
    new KafkaShareConsumer({ bootstrapServers: kafka().bootstrap, groupId, acknowledgementMode: mode, fetchMaxWaitMs: 200, logger: null }),
    (c) => c.close(5_000),
  );
}

async function produce(topic: string, values: string[]): Promise<void> {
  const p = new KafkaProducer({ bootstrapServers: kafka().bootstrap, lingerMs: 1, logger: null, metricsRegistry: null });
  try {
    await Promise.all(values.map((value) => p.send({ topic, partition: 0, value })));
  } finally {
    await p.close();
  }
}

const text = (r: ShareConsumerRecord): string => Buffer.from(r.value!).toString();

/** Polls until `done(records so far)` or the deadline (a bound for a hang, not a speed assertion). */
async function pollUntil(
  c: KafkaShareConsumer,
  done: (records: ShareConsumerRecord[]) => boolean,
  options: { timeoutMs?: number; onPoll?: (batch: ShareConsumerRecord[]) => void } = {},
): Promise<ShareConsumerRecord[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const records: ShareConsumerRecord[] = [];
  while (!done(records)) {
    if (Date.now() > deadline) throw new Error(`poll: condition not met within ${options.timeoutMs ?? 60_000} ms; got ${records.map(text).join(', ')}`);
    const batch = await c.poll(500);
    records.push(...batch);
    options.onPoll?.(batch);
  }
  return records;
}

async function setup(name: string, groupConfig: Record<string, string | number> = {}): Promise<{ topic: string; group: string }> {
  const topic = unique(name);
  await createTopic(kafka(), topic);
  const group = await shareGroup(kafka(), unique(`${name}-group`), groupConfig);
  return { topic, group };
}

describe('share consumer against Kafka 4.4', () => {
  it('implicit: every record of a poll is accepted by the next poll; a later member of the group gets only new records', async () => {
    const { topic, group } = await setup('implicit');
    await produce(topic, ['i0', 'i1', 'i2', 'i3']);
    const a = consumer(group, 'implicit');
    a.subscribe([topic]);
    const first = await pollUntil(a, (r) => r.length >= 4);
    expect(first.map(text).sort()).toEqual(['i0', 'i1', 'i2', 'i3']);
    expect(first.every((r) => r.deliveryCount === 1)).toBe(true);
    // The next poll carries the implicit accepts; then close.
    await a.poll(200);
    await a.close();

    await produce(topic, ['sentinel']);
    const b = consumer(group, 'implicit');
    b.subscribe([topic]);
    const later = await pollUntil(b, (r) => r.some((x) => text(x) === 'sentinel'));
    expect(later.map(text)).toEqual(['sentinel']);
  });

  it('explicit: accepted and rejected records are gone, released ones come back at once with delivery count 2', async () => {
    const { topic, group } = await setup('explicit');
    await produce(topic, ['a0', 'a1', 'r2', 'r3', 'x4', 'x5']);
    const c = consumer(group, 'explicit');
    c.subscribe([topic]);
    const first = await pollUntil(c, (r) => r.length >= 6, {
      onPoll: (batch) => {
        for (const r of batch) c.acknowledge(r, text(r).startsWith('a') ? 'accept' : text(r).startsWith('r') ? 'release' : 'reject');
      },
    });
    expect(first.map(text)).toEqual(['a0', 'a1', 'r2', 'r3', 'x4', 'x5']);
    const results = await c.commitSync();
    expect([...results.values()]).toEqual([null]);

    await produce(topic, ['sentinel']);
    const again = await pollUntil(c, (r) => r.some((x) => text(x) === 'sentinel'), {
      onPoll: (batch) => batch.forEach((r) => c.acknowledge(r, 'accept')),
    });
    expect(again.map((r) => [text(r), r.deliveryCount])).toEqual([
      ['r2', 2],
      ['r3', 2],
      ['sentinel', 1],
    ]);
  });

  it('lock expiry: records a member acquired and never acknowledged go to another member after share.record.lock.duration.ms, delivery count 2', async () => {
    const { topic, group } = await setup('lock', { 'share.record.lock.duration.ms': 2_000 });
    await produce(topic, ['l0', 'l1', 'l2']);
    const holder = consumer(group, 'explicit');
    holder.subscribe([topic]);
    const held = await pollUntil(holder, (r) => r.length >= 3);
    expect(held.map((r) => r.deliveryCount)).toEqual([1, 1, 1]);
    // The holder stops polling (a stuck worker): its locks expire, Kafka hands the records on.
    const other = consumer(group, 'explicit');
    other.subscribe([topic]);
    const redelivered = await pollUntil(other, (r) => r.length >= 3, { onPoll: (batch) => batch.forEach((r) => other.acknowledge(r, 'accept')) });
    expect(redelivered.map((r) => [text(r), r.deliveryCount])).toEqual([
      ['l0', 2],
      ['l1', 2],
      ['l2', 2],
    ]);
    await other.commitSync();
  });

  it('close() releases what the member still holds: another member gets it at once (not after the 30 s lock), delivery count 2', async () => {
    const { topic, group } = await setup('close-release');
    await produce(topic, ['c0', 'c1']);
    const leaving = consumer(group, 'explicit');
    leaving.subscribe([topic]);
    const held = await pollUntil(leaving, (r) => r.length >= 2);
    expect(held.map((r) => r.deliveryCount)).toEqual([1, 1]);
    await leaving.close();
    const other = consumer(group, 'explicit');
    other.subscribe([topic]);
    // Far inside Kafka's default lock (30 s, group.share.record.lock.duration.ms): only a release explains it.
    const got = await pollUntil(other, (r) => r.length >= 2, { timeoutMs: 20_000, onPoll: (batch) => batch.forEach((r) => other.acknowledge(r, 'accept')) });
    expect(got.map(text)).toEqual(['c0', 'c1']);
    await other.commitSync();
    expect(got.map((r) => r.deliveryCount)).toEqual([2, 2]);
  });

  it('share.delivery.count.limit=2: a record released on its second delivery is archived, never delivered a third time', async () => {
    const { topic, group } = await setup('limit', { 'share.delivery.count.limit': 2 });
    await produce(topic, ['poison', 'fine']);
    const c = consumer(group, 'explicit');
    c.subscribe([topic]);
    const seen: Array<[string, number]> = [];
    await pollUntil(c, () => seen.some(([v]) => v === 'sentinel'), {
      onPoll: (batch) => {
        for (const r of batch) {
          seen.push([text(r), r.deliveryCount]);
          c.acknowledge(r, text(r) === 'poison' ? 'release' : 'accept');
        }
        if (seen.filter(([v]) => v === 'poison').length === 2 && !seen.some(([v]) => v === 'sentinel-sent')) {
          seen.push(['sentinel-sent', 0]);
          void produce(topic, ['sentinel']);
        }
      },
    });
    expect(seen.filter(([v]) => v !== 'sentinel-sent')).toEqual([
      ['poison', 1],
      ['fine', 1],
      ['poison', 2],
      ['sentinel', 1],
    ]);
  });
});
