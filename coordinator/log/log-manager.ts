/**
 * Opens and recovers the log of every partition this node leads, under
 * `<dataDir>/<topic>-<partition>/`. Internal topics are durable (fsync before
 * an append resolves); data topics are written to the page cache, which
 * survives `kill -9` (Kafka also leaves flushing to the OS by default).
 */
import * as fs from 'node:fs';
import type { TopicInfo } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { PartitionLog } from './partition-log.js';

export class LogManager {
  private readonly logs = new Map<string, PartitionLog>();

  constructor(
    private readonly cluster: Cluster,
    private readonly dataDir: string,
    private readonly segmentBytes: number,
    private readonly log: (line: string) => void,
  ) {
    const started = Date.now();
    for (const topic of cluster.topics()) this.openTopic(topic);
    log(`recovered ${this.logs.size} partition logs in ${Date.now() - started} ms from ${dataDir}`);
  }

  /** Opens (creating) the logs of this node's partitions of `topic` that are not open yet: after CreateTopics or CreatePartitions. */
  openTopic(topic: TopicInfo): void {
    for (const partition of this.cluster.localPartitions(topic)) {
      if (this.logs.has(key(topic.name, partition))) continue;
      const partitionLog = PartitionLog.open(this.dataDir, topic.name, topic.topicId, partition, {
        segmentBytes: this.segmentBytes,
        durable: topic.internal,
        log: this.log,
      });
      this.logs.set(key(topic.name, partition), partitionLog);
    }
  }

  /** Closes and removes the logs of a deleted topic (DeleteTopics): its data is gone, as in Kafka. */
  dropTopic(topic: TopicInfo): void {
    for (let partition = 0; partition < topic.partitions; partition++) {
      const partitionLog = this.logs.get(key(topic.name, partition));
      if (partitionLog === undefined) continue;
      this.logs.delete(key(topic.name, partition));
      partitionLog.close();
      fs.rmSync(partitionLog.dir, { recursive: true, force: true });
    }
  }

  /** The log of a partition this node leads, by topic name. */
  get(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(key(topic, partition));
  }

  /** The log of a partition this node leads, by topic name or topic id. */
  find(topicNameOrId: string, partition: number): PartitionLog | undefined {
    const byName = this.logs.get(key(topicNameOrId, partition));
    if (byName !== undefined) return byName;
    const topic = this.cluster.topicById(topicNameOrId);
    return topic === undefined ? undefined : this.logs.get(key(topic.name, partition));
  }

  all(): PartitionLog[] {
    return [...this.logs.values()];
  }

  close(): void {
    for (const log of this.logs.values()) {
      try {
        log.flushSync();
      } finally {
        log.close();
      }
    }
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
