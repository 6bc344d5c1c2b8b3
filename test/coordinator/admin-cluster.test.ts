/**
 * Topic and group-config changes in a two-node static cluster (two
 * processes): a change asked of one node is applied by both, survives kill -9
 * of a node, and a node that was down when a change was made misses it (the
 * documented limit of a cluster without a controller) until it is repeated.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../coordinator/errors.js';
import { batch, fetchAll, produce, startCluster, type TestCluster } from './support/broker-harness.js';

const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA';
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster(2, 'kipgen-admin-node', { consumerOffsetsPartitions: 2, transactionStatePartitions: 2 });
});

afterAll(async () => {
  await cluster?.close();
  for (const c of cluster?.configs ?? []) fs.rmSync(c.dataDir!, { recursive: true, force: true });
});

const meta = async (node: number, name: string, allowAutoTopicCreation = false) =>
  (await cluster.clients[node]!.call(3, { topics: [{ name, topicId: ZERO }], allowAutoTopicCreation }, 12)).topics[0];

describe('admin APIs in a two-node cluster', () => {
  it('a topic created on one node exists on both, same id, leaders spread; each leader takes writes; it survives kill -9', async () => {
    const r = await cluster.clients[0]!.call(
      19,
      {
        topics: [{ name: 'spread', numPartitions: 4, replicationFactor: -1, assignments: [], configs: [{ name: 'compression.type', value: 'lz4' }] }],
        timeoutMs: 5000,
        validateOnly: false,
      },
      7,
    );
    expect(r.topics[0].errorCode).toBe(0);
    const [on0, on1] = [await meta(0, 'spread'), await meta(1, 'spread')];
    expect(on1.topicId).toBe(on0.topicId);
    expect(on1.partitions.map((p: any) => p.leaderId)).toEqual([0, 1, 0, 1]);
    expect((await produce(cluster.clients[1]!, 'spread', 1, batch({ values: ['on node 1'] }))).errorCode).toBe(0);
    expect((await produce(cluster.clients[0]!, 'spread', 0, batch({ values: ['on node 0'] }))).errorCode).toBe(0);
    const cfg = await cluster.clients[1]!.call(32, { resources: [{ resourceType: 2, resourceName: 'spread', configurationKeys: ['compression.type'] }] }, 4);
    expect(cfg.results[0].configs[0].value).toBe('lz4');

    await cluster.kill9(1);
    await cluster.restart(1);
    expect((await meta(1, 'spread')).topicId).toBe(on0.topicId);
    expect((await fetchAll(cluster.clients[1]!, 'spread', 1, 'read_uncommitted')).records.map((x) => x.value)).toEqual(['on node 1']);
  });

  it('growing, reconfiguring a group, auto-creating and deleting on node 1 reach node 0', async () => {
    expect(
      (await cluster.clients[1]!.call(37, { topics: [{ name: 'spread', count: 6, assignments: null }], timeoutMs: 5000, validateOnly: false }, 3)).results[0]
        .errorCode,
    ).toBe(0);
    expect((await meta(0, 'spread')).partitions).toHaveLength(6);
    expect((await produce(cluster.clients[1]!, 'spread', 5, batch({ values: ['p5'] }))).errorCode).toBe(0);

    const alter = await cluster.clients[1]!.call(
      44,
      {
        resources: [{ resourceType: 32, resourceName: 'sg', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
        validateOnly: false,
      },
      1,
    );
    expect(alter.responses[0].errorCode).toBe(0);
    const seen = await cluster.clients[0]!.call(
      32,
      { resources: [{ resourceType: 32, resourceName: 'sg', configurationKeys: ['share.auto.offset.reset'] }] },
      4,
    );
    expect(seen.results[0].configs[0]).toMatchObject({ value: 'earliest', configSource: 8 });

    const auto = await meta(1, 'auto-on-1', true);
    expect(auto.errorCode).toBe(0);
    expect((await meta(0, 'auto-on-1')).topicId).toBe(auto.topicId);

    const del = await cluster.clients[1]!.call(20, { topics: [{ name: 'auto-on-1', topicId: ZERO }], timeoutMs: 5000 }, 6);
    expect(del.responses[0].errorCode).toBe(0);
    expect((await meta(0, 'auto-on-1')).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('a node down during a creation misses it; repeating the request brings it in line', async () => {
    await cluster.kill9(1);
    const r = await cluster.clients[0]!.call(
      19,
      { topics: [{ name: 'while-down', numPartitions: 2, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false },
      7,
    );
    expect(r.topics[0].errorCode).toBe(0);
    expect(cluster.nodes[0]!.stderr()).toMatch(/CreateTopics: node 1 is unreachable and misses the change/);
    await cluster.restart(1);
    expect((await meta(1, 'while-down')).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    // Node 1 creates it (node 0 already has it alike: success there).
    const again = await cluster.clients[1]!.call(
      19,
      { topics: [{ name: 'while-down', numPartitions: 2, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false },
      7,
    );
    expect(again.topics[0].errorCode).toBe(0);
    expect((await meta(1, 'while-down')).topicId).toBe((await meta(0, 'while-down')).topicId);
  });
});

describe('classic groups in a two-node cluster', () => {
  it('the node leading the group’s __consumer_offsets partition coordinates it; the other answers NOT_COORDINATOR', async () => {
    // consumerOffsetsPartitions 2: partition p is led by node p.
    let groupId = '';
    for (let i = 0; ; i++) {
      const r = await cluster.clients[0]!.call(10, { key: `cg-${i}`, keyType: 0 }, 3);
      if (r.nodeId === 1) {
        groupId = `cg-${i}`;
        break;
      }
    }
    const join = (node: number, memberId: string) =>
      cluster.clients[node]!.call(
        11,
        {
          groupId,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 5_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
        },
        5,
      );
    expect((await join(0, '')).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    const first = await join(1, '');
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const joined = await join(1, first.memberId);
    expect(joined).toMatchObject({ errorCode: 0, generationId: 1, leader: first.memberId });
    const commit = (node: number) =>
      cluster.clients[node]!.call(
        8,
        {
          groupId,
          generationIdOrMemberEpoch: 1,
          memberId: first.memberId,
          groupInstanceId: null,
          topics: [{ name: 'spread', partitions: [{ partitionIndex: 3, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
        },
        8,
      );
    expect((await commit(0)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await commit(1)).topics[0].partitions[0].errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS); // joined, not yet synced
  });
});
