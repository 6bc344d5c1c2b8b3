/**
 * What the broker answers on error paths, field by field as Apache Kafka 4.4
 * does: each case was found by test/kafka/side-by-side.test.ts and is pinned
 * here so that it runs without Java.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../../coordinator/broker.js';
import { apiByKey } from '../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../generated/FetchRequest.js';
import type { KafkaConnection } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { batch, produce, startTestBroker, tempDir, TestClient } from './support/broker-harness.js';
import { connectAs } from '../security/acl-support.js';
import { endpoint, rawRequest } from '../kafka/support/side-by-side.js';
import { startSecureBroker, type SecureBroker } from '../security/support.js';

let broker: Broker;
let client: TestClient;

beforeAll(async () => {
  broker = await startTestBroker({ port: 0, dataDir: tempDir(), topics: [{ name: 't', partitions: 1 }], groupInitialRebalanceDelayMs: 0 });
  client = await TestClient.connect(broker.port);
  expect((await produce(client, 't', 0, batch({ values: ['a', 'b', 'c'] }))).errorCode).toBe(0);
});

afterAll(async () => {
  await client?.close();
  await broker?.close();
});

const fetchAt = (partition: number, fetchOffset: bigint, version = 11) =>
  client.call(
    1,
    {
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      topics: [
        {
          topic: 't',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitions: [
            {
              partition,
              fetchOffset,
              partitionMaxBytes: 1 << 20,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
              replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
              highWatermark: -1n,
            },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    },
    version,
  );

describe('error answers as Kafka 4.4 gives them', () => {
  it('ListOffsets naming a partition twice: one answer for it, INVALID_REQUEST (ReplicaManager.fetchOffset)', async () => {
    const res = await client.call(
      2,
      {
        replicaId: -1,
        isolationLevel: 0,
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2n },
              { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n },
            ],
          },
        ],
      },
      7,
    );
    expect(res.topics).toHaveLength(1);
    expect(res.topics[0].partitions).toEqual([expect.objectContaining({ partitionIndex: 0, errorCode: 42, offset: -1n, timestamp: -1n, leaderEpoch: -1 })]);
    // A partition named once in the same request is still answered.
    const ok = await client.call(
      2,
      { replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] },
      7,
    );
    expect(ok.topics[0].partitions[0]).toMatchObject({ errorCode: 0, offset: 3n });
  });

  it('Fetch past the end: OFFSET_OUT_OF_RANGE without offsets (high watermark, last stable and log start offset -1)', async () => {
    const res = await fetchAt(0, 100n);
    expect(res.responses[0].partitions[0]).toMatchObject({
      errorCode: 1,
      highWatermark: -1n,
      lastStableOffset: -1n,
      logStartOffset: -1n,
      abortedTransactions: null,
    });
  });

  it('Fetch of an unknown partition: UNKNOWN_TOPIC_OR_PARTITION with an empty (not null) AbortedTransactions list', async () => {
    const res = await fetchAt(7, 0n);
    expect(res.responses[0].partitions[0]).toMatchObject({ errorCode: 3, highWatermark: -1n, abortedTransactions: [] });
  });
});

describe('produce and versions as Kafka 4.4 answers them', () => {
  it('Produce refused by the log (out-of-order sequence) reports the log start offset; refused before the log (corrupt) -1', async () => {
    const init = await client.call(22, { transactionalId: null, transactionTimeoutMs: 10_000 }, 4);
    const first = await produce(client, 't', 0, batch({ values: ['x'], producerId: init.producerId, producerEpoch: init.producerEpoch, baseSequence: 0 }));
    expect(first.errorCode).toBe(0);
    const gap = await produce(client, 't', 0, batch({ values: ['x'], producerId: init.producerId, producerEpoch: init.producerEpoch, baseSequence: 5 }));
    expect(gap).toMatchObject({ errorCode: 45, baseOffset: -1n, logStartOffset: 0n });
    const bytes = Uint8Array.from(batch({ values: ['y'] }));
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    expect(await produce(client, 't', 0, bytes)).toMatchObject({ errorCode: 2, logStartOffset: -1n });
  });

  it('ApiVersions at an unknown version: a v0 body with UNSUPPORTED_VERSION listing only ApiVersions itself (ApiVersionsRequest.getErrorResponse)', async () => {
    const answer = (await rawRequest(endpoint(`127.0.0.1:${broker.port}`), 18, 127)) as any;
    expect(answer.outcome).toBe('answered');
    expect(answer.response.errorCode).toBe(35);
    expect(answer.response.apiKeys).toEqual([{ apiKey: 18, minVersion: 0, maxVersion: 5 }]);
  });
});

describe('topic admin as Kafka 4.4 answers it', () => {
  it('CreateTopics v7: validateOnly names a (random, unused) topic id; a topic that fails has an empty config list, not null', async () => {
    const res = await client.call(
      19,
      {
        topics: [
          { name: 'vo', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
          { name: 'zero', numPartitions: 0, replicationFactor: 1, assignments: [], configs: [] },
        ],
        timeoutMs: 5_000,
        validateOnly: true,
      },
      7,
    );
    const [vo, zero] = res.topics;
    expect(vo).toMatchObject({ name: 'vo', errorCode: 0 });
    expect(vo.topicId).not.toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(zero).toMatchObject({ name: 'zero', errorCode: 37, configs: [] });
    const meta = await client.call(3, { topics: [{ name: 'vo', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false }, 12);
    expect(meta.topics[0].errorCode).toBe(3);
  });
});

describe('consumer groups (KIP-848) as Kafka 4.4 answers them', () => {
  const heartbeat = (memberId: string, memberEpoch: number, extra: Record<string, unknown> = {}) =>
    client.call(
      68,
      {
        groupId: 'kip848',
        memberId,
        memberEpoch,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: -1,
        subscribedTopicNames: null,
        serverAssignor: null,
        topicPartitions: null,
        ...extra,
      },
      0,
    );

  it('an error answer has member epoch and heartbeat interval 0, a leave answer interval 0; an unknown group is described with epochs 0; a member without a regex with ""', async () => {
    const joined = await heartbeat('m1', 0, { rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'], topicPartitions: [] });
    expect(joined).toMatchObject({ errorCode: 0, memberEpoch: 1 });
    expect(joined.heartbeatIntervalMs).toBeGreaterThan(0);
    expect(await heartbeat('m1', 9)).toMatchObject({ errorCode: 110, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0 });
    const described = await client.call(69, { groupIds: ['kip848', 'no-such-group'], includeAuthorizedOperations: false }, 0);
    expect(described.groups[0].members[0].subscribedTopicRegex).toBe('');
    expect(described.groups[1]).toMatchObject({ errorCode: 69, groupEpoch: 0, assignmentEpoch: 0 });
    expect(await heartbeat('m1', -1)).toMatchObject({ errorCode: 0, memberEpoch: -1, heartbeatIntervalMs: 0 });
  });
});

describe('classic groups as Kafka 4.4 runs them', () => {
  it('the last member leaving a Stable group leaves it Empty at once: DescribeGroups says Empty and DeleteGroups deletes it', async () => {
    const groupId = 'leave-empties';
    const join = (memberId: string) =>
      client.call(
        11,
        {
          groupId,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: new Uint8Array([0, 0, 0, 0, 0, 0, 255, 255, 255, 255]) }],
        },
        5,
      );
    const first = await join('');
    expect(first.errorCode).toBe(79); // MEMBER_ID_REQUIRED
    const joined = await join(first.memberId);
    expect(joined.errorCode).toBe(0);
    const synced = await client.call(
      14,
      {
        groupId,
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: null,
        assignments: [{ memberId: joined.memberId, assignment: new Uint8Array(0) }],
      },
      3,
    );
    expect(synced.errorCode).toBe(0);
    // Pipelined: the DescribeGroups is read right behind the LeaveGroup, before any timer could run.
    const [left, described] = await Promise.all([
      client.call(13, { groupId, members: [{ memberId: joined.memberId, groupInstanceId: null }] }, 3),
      client.call(15, { groups: [groupId], includeAuthorizedOperations: false }, 5),
    ]);
    expect(left.errorCode).toBe(0);
    expect(described.groups[0]).toMatchObject({ errorCode: 0, groupState: 'Empty' });
    const deleted = await client.call(42, { groupsNames: [groupId] }, 2);
    expect(deleted.results[0]).toMatchObject({ groupId, errorCode: 0 });
  });
});

describe('answers to a principal without ACLs, as Kafka 4.4 gives them', () => {
  let secure: SecureBroker;
  let alice: KafkaConnection;
  beforeAll(async () => {
    secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:ANONYMOUS'], allowEveryoneIfNoAclFound: false } });
    alice = await connectAs(secure, 'alice');
  });
  afterAll(async () => {
    await alice?.close();
    await secure?.close();
  });
  const call = (apiKey: number, fields: Record<string, unknown>, version: number): Promise<any> => {
    const api = apiByKey(apiKey)!;
    const req = api.request as ApiMessageCodec<any>;
    return alice.send(req, req.create(fields), version, api.response as ApiMessageCodec<any>);
  };

  it('Produce: TOPIC_AUTHORIZATION_FAILED at base offset -1 (ProduceResponse.PartitionResponse(error))', async () => {
    const res = await call(
      0,
      { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: batch({ values: ['x'] }) }] }] },
      9,
    );
    expect(res.responses[0].partitionResponses[0]).toMatchObject({ errorCode: 29, baseOffset: -1n, logStartOffset: -1n });
  });

  it('Fetch: TOPIC_AUTHORIZATION_FAILED with empty records, not null (FetchResponse.partitionResponse)', async () => {
    const res = await call(
      1,
      {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        topics: [createFetchTopic({ topic: 'orders', partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })] })],
        forgottenTopicsData: [],
        rackId: '',
      },
      11,
    );
    const p = res.responses[0].partitions[0];
    expect(p.errorCode).toBe(29);
    expect(p.records).toEqual(new Uint8Array(0));
  });

  it('InitProducerId: TRANSACTIONAL_ID_AUTHORIZATION_FAILED with producer id and epoch -1 (InitProducerIdRequest.getErrorResponse)', async () => {
    const res = await call(22, { transactionalId: 'denied-tid', transactionTimeoutMs: 10_000 }, 4);
    expect(res).toMatchObject({ errorCode: 53, producerId: -1n, producerEpoch: -1 });
  });

  it('FindCoordinator v0–3: GROUP_AUTHORIZATION_FAILED naming no node (node -1, host "", port -1: Node.noNode())', async () => {
    const res = await call(10, { key: 'denied-group', keyType: 0 }, 3);
    expect(res).toMatchObject({ errorCode: 30, nodeId: -1, host: '', port: -1 });
  });
});
