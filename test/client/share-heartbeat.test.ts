/**
 * The share consumer's heartbeat cadence follows the interval the group
 * coordinator returns from the first response on, as Kafka's consumer does
 * (AbstractHeartbeatRequestManager: the response's heartbeatIntervalMs resets
 * the heartbeat timer). Against Kafka a new member's partitions arrive only on
 * a later heartbeat, so waiting the client's own 5 s default after the first
 * response delayed every join by that much whatever the broker said
 * (found by test/kafka against Kafka 4.4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KafkaShareConsumer } from '../../client/index.js';
import { respond } from './support/fake-server.js';
import { FakeKafka, TOPIC_ID } from './support/fake-kafka.js';

let fake: FakeKafka | undefined;
let consumer: KafkaShareConsumer | undefined;
afterEach(async () => {
  await consumer?.close(500).catch(() => undefined);
  await fake?.close();
});

describe('share consumer heartbeats', () => {
  it("uses the coordinator's heartbeatIntervalMs from the first response on", async () => {
    fake = await FakeKafka.start({ topics: { in: { topicId: TOPIC_ID, partitions: 1 } } });
    // A coordinator that accepts the member but assigns nothing yet, asking for a heartbeat every 100 ms.
    fake.on(76, (r) => respond({ errorCode: 0, errorMessage: null, memberId: r.body.memberId, memberEpoch: 1, heartbeatIntervalMs: 100, assignment: null }));
    consumer = new KafkaShareConsumer({ bootstrapServers: fake.bootstrap, groupId: 'g', acknowledgementMode: 'explicit', logger: null });
    consumer.subscribe(['in']);
    await consumer.poll(2_000);
    // At 100 ms, about 20 heartbeats in the 2 s poll; at the client's 5 s default, one.
    expect(fake.requests(76).length).toBeGreaterThanOrEqual(5);
  });
});
