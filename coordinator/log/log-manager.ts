/**
 * Opens and recovers the log of every partition this node leads, under
 * `<dataDir>/<topic>-<partition>/`. Internal topics are durable (fsync before
 * an append resolves); data topics are written to the page cache, which
 * survives `kill -9` (Kafka also leaves flushing to the OS by default).
 */
import type { Cluster } from '../cluster.js';
import { PartitionLog } from './partition-log.js';

export class LogManager {
  private readonly logs = new Map<string, PartitionLog>();

  constructor(
    private readonly cluster: Cluster,
    dataDir: string,
    segmentBytes: number,
    log: (line: string) => void,
  ) {
    const started = Date.now();
    for (const topic of cluster.topics()) {
      for (const partition of cluster.localPartitions(topic)) {
        const partitionLog = PartitionLog.open(dataDir, topic.name, topic.topicId, partition, {
          segmentBytes,
          durable: topic.internal,
          log,
        });
        this.logs.set(key(topic.name, partition), partitionLog);
      }
    }
    log(`recovered ${this.logs.size} partition logs in ${Date.now() - started} ms from ${dataDir}`);
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
