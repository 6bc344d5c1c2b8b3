/**
 * Raw wire helpers for the chaos tooling that must not depend on the client
 * library (client/): the independent checker, the seeder, and the tests'
 * changes of group configs. Only the
 * generated codecs, connection/connection.ts and runtime/record-batch.ts are used,
 * so a bug in the client cannot hide itself from the checker.
 */
import {
  FetchRequest,
  FetchResponse,
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
  MetadataRequest,
  MetadataResponse,
  ProduceRequest,
  ProduceResponse,
} from '../generated/index.js';
import { KafkaConnection } from '../connection/connection.js';
import { decodeRecordBatches, encodeRecordBatch, type RecordBatch, type RecordInput } from '../runtime/record-batch.js';

export interface NodeAddress {
  nodeId: number;
  host: string;
  port: number;
}

export interface TopicLayout {
  name: string;
  topicId: string;
  /** partition → leader node id */
  leaders: number[];
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** ConfigResource.Type.GROUP. */
const GROUP_RESOURCE = 32;

/** A handful of connections to a static cluster, opened on demand; every request bounded in time. */
export class WireClient {
  private readonly connections = new Map<number, Promise<KafkaConnection>>();
  nodes: NodeAddress[] = [];

  constructor(
    private readonly bootstrap: string[],
    private readonly clientId = 'kipgen-chaos-checker',
    private readonly requestTimeoutMs = 5_000,
  ) {}

  static parseBootstrap(value: string | string[]): string[] {
    return (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean);
  }

  private async connect(host: string, port: number): Promise<KafkaConnection> {
    return KafkaConnection.connect({ host, port, clientId: this.clientId, connectTimeoutMs: 3_000, requestTimeoutMs: this.requestTimeoutMs });
  }

  /** Metadata of `topics` from the first bootstrap server that answers. */
  async metadata(topics: string[]): Promise<Map<string, TopicLayout>> {
    let lastError: unknown = null;
    for (const entry of this.bootstrap) {
      const at = entry.lastIndexOf(':');
      let conn: KafkaConnection | null = null;
      try {
        conn = await this.connect(entry.slice(0, at), Number(entry.slice(at + 1)));
        const response = (await conn.send(
          MetadataRequest,
          MetadataRequest.create({ topics: topics.map((name) => ({ name, topicId: ZERO_UUID })), allowAutoTopicCreation: false }),
          12,
          MetadataResponse,
        )) as MetadataResponse;
        this.nodes = response.brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port }));
        const out = new Map<string, TopicLayout>();
        for (const t of response.topics) {
          if (t.errorCode !== 0 || t.name === null) throw new Error(`metadata of ${t.name}: error ${t.errorCode}`);
          const leaders: number[] = [];
          for (const p of t.partitions) leaders[p.partitionIndex] = p.leaderId;
          out.set(t.name, { name: t.name, topicId: t.topicId, leaders });
        }
        return out;
      } catch (error) {
        lastError = error;
      } finally {
        await conn?.close().catch(() => {});
      }
    }
    throw new Error(`no bootstrap server answered Metadata: ${(lastError as Error)?.message ?? 'none given'}`);
  }

  /** The (cached) connection to a node; a broken one is replaced. */
  async node(nodeId: number): Promise<KafkaConnection> {
    const existing = this.connections.get(nodeId);
    if (existing) {
      const conn = await existing.catch(() => null);
      if (conn && conn.isOpen) return conn;
      this.connections.delete(nodeId);
    }
    const address = this.nodes.find((n) => n.nodeId === nodeId);
    if (!address) throw new Error(`node ${nodeId} is not in the metadata`);
    const connecting = this.connect(address.host, address.port);
    this.connections.set(nodeId, connecting);
    return connecting;
  }

  /**
   * Every batch of one partition from offset 0 up to the high watermark
   * (read_uncommitted) or the last stable offset (read_committed), with the
   * aborted-transaction list of read_committed. Bounded: at most `maxRounds` fetches.
   */
  async readPartition(
    layout: TopicLayout,
    partition: number,
    isolation: 'read_committed' | 'read_uncommitted',
    maxRounds = 10_000,
  ): Promise<{ batches: RecordBatch[]; highWatermark: bigint; lastStableOffset: bigint; aborted: { producerId: bigint; firstOffset: bigint }[] }> {
    const leader = layout.leaders[partition]!;
    const conn = await this.node(leader);
    const batches: RecordBatch[] = [];
    const aborted: { producerId: bigint; firstOffset: bigint }[] = [];
    let offset = 0n;
    let highWatermark = -1n;
    let lastStableOffset = -1n;
    for (let round = 0; round < maxRounds; round++) {
      const response = (await conn.send(
        FetchRequest,
        FetchRequest.create({
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 4 << 20,
          isolationLevel: isolation === 'read_committed' ? 1 : 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic: layout.name,
              topicId: layout.topicId,
              partitions: [
                {
                  partition,
                  currentLeaderEpoch: -1,
                  fetchOffset: offset,
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 4 << 20,
                  replicaDirectoryId: ZERO_UUID,
                  highWatermark: -1n,
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        }),
        11,
        FetchResponse,
      )) as FetchResponse;
      const part = response.responses[0]?.partitions[0];
      if (!part) throw new Error(`fetch ${layout.name}-${partition}: empty response`);
      if (response.errorCode !== 0 || part.errorCode !== 0)
        throw new Error(`fetch ${layout.name}-${partition} from node ${leader}: error ${part.errorCode || response.errorCode}`);
      highWatermark = part.highWatermark;
      lastStableOffset = part.lastStableOffset;
      for (const a of part.abortedTransactions ?? []) {
        if (!aborted.some((x) => x.producerId === a.producerId && x.firstOffset === a.firstOffset))
          aborted.push({ producerId: a.producerId, firstOffset: a.firstOffset });
      }
      const end = isolation === 'read_committed' ? lastStableOffset : highWatermark;
      const decoded = part.records && part.records.length > 0 ? decodeRecordBatches(part.records).batches : [];
      for (const b of decoded) {
        if (b.lastOffset < offset) continue;
        if (b.baseOffset >= end) break;
        batches.push(b);
        offset = b.lastOffset + 1n;
      }
      if (offset >= end) break;
      if (decoded.length === 0) break; // nothing more readable (should not happen below `end`)
    }
    return { batches, highWatermark, lastStableOffset, aborted };
  }

  /** Appends plain (non-transactional, non-idempotent) records to one partition; acks=-1. */
  async produce(layout: TopicLayout, partition: number, records: RecordInput[]): Promise<bigint> {
    const conn = await this.node(layout.leaders[partition]!);
    const response = (await conn.send(
      ProduceRequest,
      ProduceRequest.create({
        transactionalId: null,
        acks: -1,
        timeoutMs: this.requestTimeoutMs,
        topicData: [{ name: layout.name, topicId: ZERO_UUID, partitionData: [{ index: partition, records: encodeRecordBatch({ records }) }] }],
      }),
      9,
      ProduceResponse,
    )) as ProduceResponse;
    const part = response.responses[0]?.partitionResponses[0];
    if (!part || part.errorCode !== 0) throw new Error(`produce to ${layout.name}-${partition}: error ${part?.errorCode}`);
    return part.baseOffset;
  }

  /**
   * Sets configs of a group (IncrementalAlterConfigs v1, resource type GROUP,
   * operation SET) through node `nodeId`, which passes them to its peers.
   */
  async setGroupConfigs(nodeId: number, group: string, configs: Record<string, string>): Promise<void> {
    const conn = await this.node(nodeId);
    const response = (await conn.send(
      IncrementalAlterConfigsRequest,
      IncrementalAlterConfigsRequest.create({
        resources: [
          { resourceType: GROUP_RESOURCE, resourceName: group, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) },
        ],
        validateOnly: false,
      }),
      1,
      IncrementalAlterConfigsResponse,
    )) as IncrementalAlterConfigsResponse;
    const result = response.responses[0];
    if (!result || result.errorCode !== 0) throw new Error(`setting configs of group ${group}: error ${result?.errorCode} ${result?.errorMessage ?? ''}`);
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (c) => c.close(),
          () => undefined,
        ),
      ),
    );
  }
}

/**
 * The data records a read_committed consumer returns from `batches` (Kafka's
 * consumer logic: a producer is skipped from the first offset of one of its
 * aborted transactions until its ABORT marker).
 */
export function committedRecords(
  batches: RecordBatch[],
  aborted: { producerId: bigint; firstOffset: bigint }[],
): Array<{ offset: bigint; key: Uint8Array | null; value: Uint8Array | null; headers: { key: string; value: Uint8Array | null }[] }> {
  const queue = [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const skipping = new Set<bigint>();
  const out: Array<{ offset: bigint; key: Uint8Array | null; value: Uint8Array | null; headers: { key: string; value: Uint8Array | null }[] }> = [];
  for (const b of batches) {
    while (queue.length > 0 && queue[0]!.firstOffset <= b.lastOffset) skipping.add(queue.shift()!.producerId);
    if (b.isControl) {
      skipping.delete(b.producerId);
      continue;
    }
    if (b.isTransactional && skipping.has(b.producerId)) continue;
    for (const r of b.records) out.push({ offset: r.offset, key: r.key, value: r.value, headers: r.headers });
  }
  return out;
}

export const utf8 = (bytes: Uint8Array | null | undefined): string =>
  bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : '';
