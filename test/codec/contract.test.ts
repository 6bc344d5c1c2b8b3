import { describe, expect, it } from 'vitest';
import {
  apis,
  ApiVersionsResponse,
  EndTxnRequest,
  FetchRequest,
  FetchResponse,
  InitProducerIdRequest,
  messages,
  MetadataRequest,
  MetadataResponse,
  RequestHeader,
  TransactionLogValue,
} from '../../generated/index.js';
import { createPartitionData } from '../../generated/FetchResponse.js';
import { createMetadataResponsePartition, createMetadataResponseTopic } from '../../generated/MetadataResponse.js';
import { EncodeError, UnsupportedVersionError } from '../../runtime/index.js';
import * as registry from '../../generated/index.js';
import * as metadataRequestModule from '../../generated/MetadataRequest.js';
import * as fetchRequestModule from '../../generated/FetchRequest.js';

// The generated code's contract (docs/DESIGN.md §2).
describe('generated codec contract', () => {
  it('index.ts exports every builder: create<Message> and each nested create<Struct> whose name is unique, the same functions as their modules', () => {
    expect(registry.createMetadataRequestTopic).toBe(metadataRequestModule.createMetadataRequestTopic);
    expect(registry.createMetadataRequest).toBe(metadataRequestModule.createMetadataRequest);
    expect(registry.createReplicaState).toBe(fetchRequestModule.createReplicaState);
    // FetchTopic is a struct of FetchRequest and of ShareFetchRequest: ambiguous at the root, it stays in its modules.
    expect('createFetchTopic' in registry).toBe(false);
    expect(typeof fetchRequestModule.createFetchTopic).toBe('function');
    const builders = Object.keys(registry).filter((k) => k.startsWith('create'));
    const modules = Object.keys(registry.messages).map((name) => `create${name}`);
    expect(modules.filter((b) => !builders.includes(b))).toEqual([]);
    expect(builders.length).toBeGreaterThan(modules.length);
  });

  it('create() fills every field with its schema default, in schema order', () => {
    const m = TransactionLogValue.create();
    expect(Object.keys(m)).toEqual([
      'producerId',
      'previousProducerId',
      'nextProducerId',
      'producerEpoch',
      'nextProducerEpoch',
      'transactionTimeoutMs',
      'transactionStatus',
      'transactionPartitions',
      'transactionLastUpdateTimestampMs',
      'transactionStartTimestampMs',
      'clientTransactionVersion',
    ]);
    expect(m.previousProducerId).toBe(-1n);
    expect(FetchRequest.create().replicaId).toBe(-1);
  });

  it('create() takes a partial object at any depth: nested structs and array elements get their defaults too', () => {
    const request = MetadataRequest.create({ topics: [{ name: 'x' }] });
    expect(request.topics).toStrictEqual([{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'x' }]);
    expect(MetadataRequest.decode(MetadataRequest.encode(request, 12), 12).topics).toStrictEqual(request.topics);

    const fetched = FetchResponse.create({ responses: [{ topic: 't', partitions: [{ partitionIndex: 2, currentLeader: { leaderId: 5 } }] }] });
    const partition = fetched.responses[0]!.partitions[0]!;
    expect(partition.partitionIndex).toBe(2);
    expect(partition.highWatermark).toBe(0n);
    expect(partition.preferredReadReplica).toBe(-1);
    expect(partition.currentLeader).toStrictEqual({ leaderId: 5, leaderEpoch: -1 });
    expect(partition.divergingEpoch).toStrictEqual({ epoch: -1, endOffset: -1n });
    expect(partition.abortedTransactions).toStrictEqual([]);
    expect(Object.keys(partition)).toEqual(Object.keys(createPartitionData()));
  });

  it('create() keeps what is given: null where the field can hold it, values, and unknown tagged fields at any depth', () => {
    expect(MetadataRequest.create({ topics: null }).topics).toBeNull();
    expect(MetadataRequest.create({ topics: [{ name: null, topicId: 'AQIDBAUGBwgJCgsMDQ4PEA' }] }).topics).toStrictEqual([
      { topicId: 'AQIDBAUGBwgJCgsMDQ4PEA', name: null },
    ]);
    const unknown = [{ tag: 9, data: new Uint8Array([1]) }];
    const fetched = FetchResponse.create({ responses: [{ partitions: [{ snapshotId: { epoch: 4, _unknownTaggedFields: unknown } }] }] });
    expect(fetched.responses[0]!.partitions[0]!.snapshotId).toStrictEqual({ endOffset: -1n, epoch: 4, _unknownTaggedFields: unknown });
    expect(
      FetchResponse.create({ responses: [{ partitions: [{ abortedTransactions: [{ producerId: 7n }] }] }] }).responses[0]!.partitions[0]!.abortedTransactions,
    ).toStrictEqual([{ producerId: 7n, firstOffset: 0n }]);
  });

  it('decodes to the keys create() gives, adding _unknownTaggedFields only when unknown tags were read', () => {
    const partition = createMetadataResponsePartition({ partitionIndex: 3, replicaNodes: [1, 2], isrNodes: [1] });
    const topic = createMetadataResponseTopic({ name: 't', partitions: [partition] });
    for (const version of [6, 12]) {
      const decoded = MetadataResponse.decode(MetadataResponse.encode(MetadataResponse.create({ topics: [topic] }), version), version);
      expect(Object.keys(decoded)).toEqual(Object.keys(MetadataResponse.create()));
      expect(Object.keys(decoded.topics[0]!)).toEqual(Object.keys(topic));
      expect(Object.keys(decoded.topics[0]!.partitions[0]!)).toEqual(Object.keys(partition));
    }
    const unknown = [{ tag: 7, data: new Uint8Array([1]) }];
    const decoded = ApiVersionsResponse.decode(ApiVersionsResponse.encode(ApiVersionsResponse.create({ _unknownTaggedFields: unknown }), 3), 3);
    expect(Object.keys(decoded)).toEqual([...Object.keys(ApiVersionsResponse.create()), '_unknownTaggedFields']);
    expect(decoded._unknownTaggedFields).toEqual(unknown);
  });

  it('throws UnsupportedVersionError for a non-default field the version lacks, drops an ignorable one', () => {
    // InitProducerId v6 adds Enable2Pc (not ignorable).
    expect(() => InitProducerIdRequest.encode(InitProducerIdRequest.create({ enable2Pc: true }), 5)).toThrowError(UnsupportedVersionError);
    expect(() => InitProducerIdRequest.encode(InitProducerIdRequest.create({ enable2Pc: true }), 6)).not.toThrow();
    // FetchRequest.ClusterId is tagged and ignorable from v12: dropped below it.
    expect(() => FetchRequest.encode(FetchRequest.create({ clusterId: 'c' }), 11)).not.toThrow();
  });

  it('rejects a version outside validVersions and values the wire cannot carry', () => {
    expect(() => EndTxnRequest.encode(EndTxnRequest.create(), 99)).toThrowError(UnsupportedVersionError);
    expect(() => EndTxnRequest.decode(new Uint8Array(0), -1)).toThrowError(UnsupportedVersionError);
    expect(() => EndTxnRequest.encode(EndTxnRequest.create({ producerEpoch: 40000 }), 0)).toThrowError(EncodeError);
    expect(() => EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: null as unknown as string }), 0)).toThrowError(EncodeError);
  });

  it('header versions follow flexibility, with the ApiVersionsResponse exception', () => {
    const endTxn = apis.get(26)!;
    expect(endTxn.request.headerVersion(2)).toBe(1);
    expect(endTxn.request.headerVersion(3)).toBe(2);
    expect(endTxn.response.headerVersion(3)).toBe(1);
    expect(apis.get(18)!.response.headerVersion(4)).toBe(0);
    // RequestHeader.ClientId keeps its int16 length even in the flexible header v2.
    const header = RequestHeader.encode(RequestHeader.create({ requestApiKey: 18, requestApiVersion: 3, correlationId: 7, clientId: 'é' }), 2);
    expect(Buffer.from(header).toString('hex')).toBe('0012000300000007' + '0002c3a9' + '00');
  });

  it('registers every API by key with request and response codecs', () => {
    expect(apis.get(96)?.name).toBe('TxnShareAcknowledge');
    expect(apis.get(95)?.request).toBe(messages.AddShareAcksToTxnRequest);
    for (const api of apis.values()) {
      expect(api.request.validVersions).toEqual(api.response.validVersions);
    }
  });
});
