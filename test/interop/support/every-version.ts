/**
 * A session that sends, with kipgen's codecs, one request of every API the
 * broker advertises at every version it advertises (fields at their
 * defaults, a few set so that the request is meaningful), each on the same
 * connection when the broker answers and on a new one when it closes.
 * Used to show Wireshark every version of every frame the broker speaks.
 */
import { apiByKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse } from '../../../generated/index.js';
import { createFetchPartition, createFetchTopic } from '../../../generated/FetchRequest.js';
import { createListOffsetsPartition, createListOffsetsTopic } from '../../../generated/ListOffsetsRequest.js';
import { createMetadataRequestTopic } from '../../../generated/MetadataRequest.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopic } from '../../../generated/OffsetFetchRequest.js';
import { createPartitionProduceData, createTopicProduceData } from '../../../generated/ProduceRequest.js';
import { KafkaConnection, NetworkError } from '../../../connection/connection.js';
import type { ApiMessageCodec } from '../../../runtime/index.js';
import { encodeRecordBatch } from '../../../runtime/index.js';

export const EVERY_VERSION_CLIENT_ID = 'kipgen-every-version';

export interface VersionOutcome {
  apiKey: number;
  name: string;
  version: number;
  outcome: 'answered' | 'no response expected' | 'connection closed';
}

/** Fields that make each API's default request meaningful at `version` (the rest keep create()'s defaults). */
function fieldsFor(apiKey: number, version: number, topic: string, topicId: string): Record<string, unknown> {
  const now = BigInt(Date.now());
  switch (apiKey) {
    case 0: {
      const records = encodeRecordBatch({ baseTimestamp: now, records: [{ value: new TextEncoder().encode('every-version'), timestamp: now }] });
      const target = version >= 13 ? { topicId, name: '' } : { name: topic };
      return {
        acks: -1,
        timeoutMs: 1000,
        topicData: [createTopicProduceData({ ...target, partitionData: [createPartitionProduceData({ index: 0, records })] })],
      };
    }
    case 1: {
      const target = version >= 13 ? { topicId } : { topic };
      return {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 65536,
        topics: [createFetchTopic({ ...target, partitions: [createFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 65536 })] })],
      };
    }
    case 2:
      return {
        replicaId: -1,
        topics: [createListOffsetsTopic({ name: topic, partitions: [createListOffsetsPartition({ partitionIndex: 0, timestamp: -1n })] })],
      };
    case 3:
      return { topics: [createMetadataRequestTopic({ name: topic })] };
    case 9:
      return version >= 8
        ? { groups: [createOffsetFetchRequestGroup({ groupId: 'every-version-group', topics: null })] }
        : { groupId: 'every-version-group', topics: [createOffsetFetchRequestTopic({ name: topic, partitionIndexes: [0] })] };
    case 10:
      return version >= 4 ? { keyType: 1, coordinatorKeys: ['every-version-tx'] } : { key: 'every-version-tx', keyType: version >= 1 ? 1 : 0 };
    case 18:
      return { clientSoftwareName: 'kipgen', clientSoftwareVersion: '0.1.0' };
    case 22:
      return { transactionalId: null, transactionTimeoutMs: 10_000 };
    default:
      return {};
  }
}

export async function sendEveryVersion(port: number, topic: string): Promise<VersionOutcome[]> {
  const open = () => KafkaConnection.connect({ host: '127.0.0.1', port, clientId: EVERY_VERSION_CLIENT_ID, requestTimeoutMs: 10_000 });
  let c = await open();
  const outcomes: VersionOutcome[] = [];
  try {
    const advertised = (
      await c.send(ApiVersionsRequest, ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0.1.0' }), 3, ApiVersionsResponse)
    ).apiKeys;
    const metadata = await c.send(MetadataRequest, MetadataRequest.create({ topics: [createMetadataRequestTopic({ name: topic })] }), 12, MetadataResponse);
    const topicId = metadata.topics[0]!.topicId;
    for (const { apiKey, minVersion, maxVersion } of advertised) {
      const api = apiByKey(apiKey)!;
      const codec = api.request as ApiMessageCodec<any>;
      for (let version = minVersion; version <= maxVersion; version++) {
        const request = codec.create(fieldsFor(apiKey, version, topic, topicId));
        if (!c.isOpen) c = await open();
        try {
          const response = await c.send(codec, request, version, api.response as ApiMessageCodec<unknown>);
          outcomes.push({ apiKey, name: api.name, version, outcome: response === undefined ? 'no response expected' : 'answered' });
        } catch (error) {
          if (!(error instanceof NetworkError)) throw new Error(`${api.name} v${version}: ${(error as Error).message}`);
          outcomes.push({ apiKey, name: api.name, version, outcome: 'connection closed' });
        }
      }
    }
  } finally {
    await c.close();
  }
  return outcomes;
}
