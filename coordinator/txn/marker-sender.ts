/**
 * The transaction coordinator's side of WriteTxnMarkers: deliver one
 * transaction's COMMIT or ABORT marker to the leader of every partition in
 * it, retrying each partition until its leader acknowledges. Partitions this
 * node leads are written directly (MarkerWriter); every other leader gets a
 * real WriteTxnMarkers request over TCP.
 */
import { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../generated/index.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, errorCodeName } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { PeerConnections } from '../net/peers.js';
import type { Marker, MarkerWriter } from './marker-writer.js';

const WRITE_TXN_MARKERS_VERSION = 1;

/** Errors after which resending is pointless: the leader says this marker can never apply. */
const GIVE_UP = new Set<number>([ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);

export class MarkerSender {
  private stopped = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly peers: PeerConnections,
    private readonly local: MarkerWriter,
    private readonly backoffMs: number,
    private readonly metrics: Metrics,
    private readonly log: (line: string) => void,
  ) {}

  /** Resolves once every partition acknowledged the marker; rejects only if the broker is stopping. */
  async send(marker: Marker, partitions: Map<string, Set<number>>): Promise<void> {
    let remaining = new Map<number, Map<string, number[]>>();
    for (const [topic, set] of partitions) {
      for (const partition of set) {
        const leader = this.cluster.leaderOf(topic, partition);
        let byTopic = remaining.get(leader);
        if (byTopic === undefined) remaining.set(leader, (byTopic = new Map()));
        let list = byTopic.get(topic);
        if (list === undefined) byTopic.set(topic, (list = []));
        list.push(partition);
      }
    }
    for (let attempt = 0; remaining.size > 0; attempt++) {
      if (this.stopped) throw new Error('broker stopping: markers will be resent after restart');
      if (attempt > 0) await sleep(this.backoffMs);
      const next = new Map<number, Map<string, number[]>>();
      await Promise.all(
        [...remaining].map(async ([nodeId, byTopic]) => {
          const failed = nodeId === this.cluster.nodeId ? await this.sendLocal(marker, byTopic) : await this.sendRemote(nodeId, marker, byTopic);
          if (failed.size > 0) next.set(nodeId, failed);
        }),
      );
      remaining = next;
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** This node's partitions: written directly, all at once (each append to its own log). */
  private async sendLocal(marker: Marker, byTopic: Map<string, number[]>): Promise<Map<string, number[]>> {
    const failed = new Map<string, number[]>();
    const writes: Promise<void>[] = [];
    for (const [topic, partitions] of byTopic) {
      for (const partition of partitions) {
        writes.push(
          this.local.write(topic, partition, marker).then(
            (code) => this.account(marker, topic, partition, this.cluster.nodeId, code, failed),
            () => addTo(failed, topic, partition),
          ),
        );
      }
    }
    await Promise.all(writes);
    return failed;
  }

  private async sendRemote(nodeId: number, marker: Marker, byTopic: Map<string, number[]>): Promise<Map<string, number[]>> {
    const request = WriteTxnMarkersRequest.create({
      markers: [
        {
          producerId: marker.producerId,
          producerEpoch: marker.producerEpoch,
          transactionResult: marker.commit,
          topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
          coordinatorEpoch: marker.coordinatorEpoch,
          transactionVersion: 0,
        },
      ],
    });
    let response;
    try {
      const connection = await this.peers.get(nodeId);
      response = await connection.send(WriteTxnMarkersRequest, request, WRITE_TXN_MARKERS_VERSION, WriteTxnMarkersResponse);
    } catch (error) {
      this.log(`WriteTxnMarkers to node ${nodeId} for producer ${marker.producerId} failed, will retry: ${(error as Error).message}`);
      return byTopic;
    }
    const failed = new Map<string, number[]>();
    const answered = new Set<string>();
    for (const result of response.markers) {
      for (const topic of result.topics) {
        for (const p of topic.partitions) {
          answered.add(`${topic.name}\u0000${p.partitionIndex}`);
          this.account(marker, topic.name, p.partitionIndex, nodeId, p.errorCode, failed);
        }
      }
    }
    for (const [topic, partitions] of byTopic) {
      for (const partition of partitions) {
        if (!answered.has(`${topic}\u0000${partition}`)) addTo(failed, topic, partition);
      }
    }
    return failed;
  }

  private account(marker: Marker, topic: string, partition: number, nodeId: number, code: number, failed: Map<string, number[]>): void {
    if (code === ErrorCode.NONE) {
      this.metrics.markersSent++;
      return;
    }
    if (GIVE_UP.has(code)) {
      this.log(
        `${marker.commit ? 'COMMIT' : 'ABORT'} marker for producer ${marker.producerId} epoch ${marker.producerEpoch} on ${topic}-${partition} (node ${nodeId}) refused with ${errorCodeName(code)}; not resending`,
      );
      return;
    }
    addTo(failed, topic, partition);
  }
}

function addTo(map: Map<string, number[]>, topic: string, partition: number): void {
  let list = map.get(topic);
  if (list === undefined) map.set(topic, (list = []));
  list.push(partition);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
