/**
 * What a `group.protocol=consumer` member puts in each ConsumerGroupHeartbeat
 * (Kafka's ConsumerHeartbeatRequestManager.HeartbeatState): every field when
 * joining, then only what changed — the owned partitions once, right after a
 * reconciliation, to acknowledge it — and a static member leaves with epoch
 * −2. The wire contents are not observable through a real broker, so a
 * scripted coordinator (FakeKafka) answers and records them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterClient } from '../../client/cluster.js';
import { ConsumerMembershipManager } from '../../client/consumer/consumer-membership.js';
import type { TopicPartition } from '../../client/consumer/topic-partition.js';
import { respond } from './support/fake-server.js';
import { FakeKafka, TOPIC_ID } from './support/fake-kafka.js';

let fake: FakeKafka | undefined;
let cluster: ClusterClient | undefined;
afterEach(async () => {
  await cluster?.close();
  await fake?.close();
});

describe('ConsumerGroupHeartbeat contents', () => {
  it('sends every field when joining, the owned partitions once after reconciling, nulls otherwise, and -2 when a static member leaves', async () => {
    fake = await FakeKafka.start({ topics: { in: { topicId: TOPIC_ID, partitions: 2 } } });
    let epoch = 0;
    fake.on(68, (r) => {
      const joining = r.body.memberEpoch === 0;
      if (r.body.memberEpoch >= 0) epoch++;
      return respond({
        errorCode: 0,
        errorMessage: null,
        memberId: r.body.memberId,
        memberEpoch: r.body.memberEpoch < 0 ? r.body.memberEpoch : epoch,
        heartbeatIntervalMs: 50,
        assignment: joining ? { topicPartitions: [{ topicId: TOPIC_ID, partitions: [1, 0] }] } : null,
      });
    });
    cluster = new ClusterClient({ bootstrapServers: fake.bootstrap, logger: null });
    const assigned: TopicPartition[][] = [];
    const membership = new ConsumerMembershipManager(
      cluster,
      { groupId: 'g', groupInstanceId: 'static-1', rackId: 'r1', serverAssignor: 'range', rebalanceTimeoutMs: 30_000 },
      { onPartitionsRevoked: async () => {}, onPartitionsAssigned: async (tps) => void assigned.push([...tps]), onPartitionsLost: async () => {} },
    );
    membership.subscribe(['in']);
    expect(await membership.poll(Date.now() + 5_000)).toEqual([
      { topic: 'in', partition: 0 },
      { topic: 'in', partition: 1 },
    ]);
    expect(assigned).toEqual([
      [
        { topic: 'in', partition: 0 },
        { topic: 'in', partition: 1 },
      ],
    ]);
    while (fake.requests(68).length < 4) await new Promise((r) => setTimeout(r, 20));
    await membership.close(Date.now() + 5_000);
    const sent = fake.requests(68).map((r) => r.body);
    expect(fake.requests(68).every((r) => r.apiVersion >= 1)).toBe(true);
    expect(sent[0]).toMatchObject({
      groupId: 'g',
      memberId: membership.memberId,
      memberEpoch: 0,
      instanceId: 'static-1',
      rackId: 'r1',
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['in'],
      serverAssignor: 'range',
      topicPartitions: [],
    });
    // The acknowledgement of the reconciled assignment: the partitions and nothing else that has not changed.
    expect(sent[1]).toMatchObject({
      memberEpoch: 1,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      serverAssignor: null,
      topicPartitions: [{ topicId: TOPIC_ID, partitions: [0, 1] }],
    });
    for (const later of sent.slice(2, -1)) expect(later).toMatchObject({ subscribedTopicNames: null, serverAssignor: null, topicPartitions: null });
    expect(sent.at(-1)).toMatchObject({ memberId: membership.memberId, memberEpoch: -2, instanceId: 'static-1' });
    expect(membership.groupMetadata()).toEqual({ groupId: 'g', generationId: -1, memberId: '', groupInstanceId: 'static-1' });
  });
});
