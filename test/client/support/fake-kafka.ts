/**
 * A scriptable single-node "broker" for client unit tests, on FakeServer:
 * answers ApiVersions, Metadata, FindCoordinator, InitProducerId,
 * AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, Produce, EndTxn,
 * AddShareAcksToTxn and TxnShareAcknowledge with success, unless a test
 * overrides an API with `on(apiKey, handler)`.
 */
import { apis } from '../../../generated/index.js';
import { decodeRecordBatches } from '../../../runtime/record-batch.js';
import { createMetadataResponsePartition, createMetadataResponseTopic } from '../../../generated/MetadataResponse.js';
import { createPartitionProduceResponse, createTopicProduceResponse } from '../../../generated/ProduceResponse.js';
import { createCoordinator } from '../../../generated/FindCoordinatorResponse.js';
import { FakeServer, respond, type ReceivedRequest, type Reply } from './fake-server.js';

export interface FakeKafkaOptions {
  topics?: Record<string, { topicId: string; partitions: number }>;
  /** API keys left out of ApiVersions. */
  without?: number[];
  /** Max version per API key (default: the codec's highest). */
  maxVersions?: Record<number, number>;
}

type ApiHandler = (request: ReceivedRequest, fake: FakeKafka) => Reply | Promise<Reply | undefined> | undefined;

export class FakeKafka {
  server!: FakeServer;
  readonly overrides = new Map<number, ApiHandler>();
  readonly produced: Array<{
    topic: string;
    partition: number;
    baseSequence: number;
    producerId: bigint;
    count: number;
    values: string[];
  }> = [];
  producerId = 1000n;
  producerEpoch = 0;
  offsets = new Map<string, bigint>();

  constructor(readonly options: FakeKafkaOptions = {}) {}

  static async start(options: FakeKafkaOptions = {}): Promise<FakeKafka> {
    const fake = new FakeKafka(options);
    fake.server = await FakeServer.start((request) => fake.handle(request));
    return fake;
  }

  get port(): number {
    return this.server.port;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.server.port}`;
  }

  on(apiKey: number, handler: ApiHandler): this {
    this.overrides.set(apiKey, handler);
    return this;
  }

  requests(apiKey: number): ReceivedRequest[] {
    return this.server.received.filter((r) => r.apiKey === apiKey);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(request: ReceivedRequest): Promise<Reply> {
    const override = this.overrides.get(request.apiKey);
    if (override) {
      const reply = await override(request, this);
      if (reply) return reply;
    }
    const body = request.body;
    switch (request.apiKey) {
      case 18: {
        const without = new Set(this.options.without ?? []);
        return respond({
          apiKeys: [...apis.values()]
            .filter((a) => !without.has(a.apiKey))
            .map((a) => ({
              apiKey: a.apiKey,
              minVersion: a.request.validVersions.lowest,
              maxVersion: this.options.maxVersions?.[a.apiKey] ?? a.request.validVersions.highest,
            })),
        });
      }
      case 3: {
        const topics = this.options.topics ?? {};
        const names: string[] = body.topics === null ? Object.keys(topics) : body.topics.map((t: any) => t.name);
        return respond({
          brokers: [{ nodeId: 1, host: '127.0.0.1', port: this.port, rack: null }],
          clusterId: 'fake',
          controllerId: 1,
          topics: names.map((name) => {
            const t = topics[name];
            if (!t)
              return createMetadataResponseTopic({
                errorCode: 3,
                name,
                topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
                partitions: [],
              });
            return createMetadataResponseTopic({
              errorCode: 0,
              name,
              topicId: t.topicId,
              partitions: Array.from({ length: t.partitions }, (_, i) =>
                createMetadataResponsePartition({
                  errorCode: 0,
                  partitionIndex: i,
                  leaderId: 1,
                  leaderEpoch: 0,
                  replicaNodes: [1],
                  isrNodes: [1],
                  offlineReplicas: [],
                }),
              ),
            });
          }),
        });
      }
      case 10:
        return request.apiVersion >= 4
          ? respond({
              coordinators: body.coordinatorKeys.map((key: string) =>
                createCoordinator({
                  key,
                  nodeId: 1,
                  host: '127.0.0.1',
                  port: this.port,
                  errorCode: 0,
                  errorMessage: null,
                }),
              ),
            })
          : respond({ errorCode: 0, nodeId: 1, host: '127.0.0.1', port: this.port });
      case 22:
        if (body.transactionalId !== null) this.producerEpoch++;
        return respond({ errorCode: 0, producerId: this.producerId, producerEpoch: this.producerEpoch });
      case 24:
        return respond({
          resultsByTopicV3AndBelow: body.v3AndBelowTopics.map((t: any) => ({
            name: t.name,
            resultsByPartition: t.partitions.map((p: number) => ({ partitionIndex: p, partitionErrorCode: 0 })),
          })),
        });
      case 25:
        return respond({ errorCode: 0 });
      case 28:
        return respond({
          topics: body.topics.map((t: any) => ({
            name: t.name,
            partitions: t.partitions.map((p: any) => ({ partitionIndex: p.partitionIndex, errorCode: 0 })),
          })),
        });
      case 0: {
        if (body.acks === 0) return { kind: 'none' };
        return respond({
          responses: body.topicData.map((t: any) =>
            createTopicProduceResponse({
              name: t.name,
              partitionResponses: t.partitionData.map((p: any) => {
                const key = `${t.name}:${p.index}`;
                const base = this.offsets.get(key) ?? 0n;
                const { batches } = decodeRecordBatches(p.records);
                let count = 0;
                for (const b of batches) {
                  count += b.records.length;
                  this.produced.push({
                    topic: t.name,
                    partition: p.index,
                    baseSequence: b.baseSequence,
                    producerId: b.producerId,
                    count: b.records.length,
                    values: b.records.map((r) => (r.value ? Buffer.from(r.value).toString() : '')),
                  });
                }
                this.offsets.set(key, base + BigInt(count));
                return createPartitionProduceResponse({
                  index: p.index,
                  errorCode: 0,
                  baseOffset: base,
                  logAppendTimeMs: -1n,
                  logStartOffset: 0n,
                });
              }),
            }),
          ),
        });
      }
      case 26:
        return respond({ errorCode: 0 });
      case 95:
        return respond({
          errorCode: 0,
          results: body.topics.map((t: any) => ({
            name: t.name,
            partitions: t.partitions.map((p: number) => ({ partitionIndex: p, partitionErrorCode: 0 })),
          })),
        });
      case 96:
        return respond({
          errorCode: 0,
          topics: body.topics.map((t: any) => ({
            topicId: t.topicId,
            partitions: t.partitions.map((p: any) => ({ partition: p.partition, errorCode: 0, errorMessage: null })),
          })),
        });
      default:
        return { kind: 'drop' };
    }
  }
}

export const TOPIC_ID = 'q1w2e3r4t5y6u7i8o9p0aA';
