/**
 * The static cluster: which nodes exist, which topics exist with which ids,
 * and who leads each partition. There is no controller: every node derives
 * the same answers from the same configuration.
 *
 * - Leader of partition p of any topic: `nodes[p % nodes.length]`, nodes in
 *   the order of the configuration. `__share_group_state` has one partition
 *   per node, so its partition i is led by nodes[i] (DESIGN §6).
 * - Topic ids are derived from (clusterId, topic name), so that every node of
 *   the cluster agrees on them without talking, and persisted in
 *   `<dataDir>/topics.json` on first use: a restart keeps the ids it had even
 *   if the derivation or cluster id changes.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ZERO_UUID } from '../runtime/index.js';
import type { ClusterView, NodeEndpoint, TopicInfo } from './broker-context.js';
import type { TopicConfig } from './config.js';
import { syncDirectory } from './log/segment.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';
export const CONSUMER_OFFSETS_TOPIC = '__consumer_offsets';
export const SHARE_GROUP_STATE_TOPIC = '__share_group_state';

/** Java's String.hashCode over UTF-16 code units. */
export function javaStringHashCode(value: string): number {
  let hash = 0;
  for (let i = 0; i < value.length; i++) hash = (Math.imul(hash, 31) + value.charCodeAt(i)) | 0;
  return hash;
}

/** Kafka's Utils.abs: Math.abs, except that Integer.MIN_VALUE maps to 0. */
function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

/** `abs(javaStringHashCode(key)) % partitions`, as Kafka picks a coordinator partition (DESIGN §6). */
export function partitionForKey(key: string, partitions: number): number {
  return kafkaAbs(javaStringHashCode(key)) % partitions;
}

/** A topic id derived from the cluster id and the name: 16 bytes of SHA-256, never zero, never starting with '-'. */
export function deriveTopicId(clusterId: string, name: string): string {
  for (let salt = 0; ; salt++) {
    const digest = createHash('sha256').update(`${clusterId}\u0000${name}\u0000${salt}`).digest();
    const id = digest.subarray(0, 16).toString('base64url');
    if (id !== ZERO_UUID && !id.startsWith('-')) return id;
  }
}

export interface ClusterInit {
  nodeId: number;
  nodes: NodeEndpoint[];
  clusterId: string;
  dataDir: string;
  topics: TopicConfig[];
  transactionStatePartitions: number;
  consumerOffsetsPartitions: number;
}

interface PersistedTopics {
  topics: { name: string; topicId: string; partitions: number }[];
}

export class Cluster implements ClusterView {
  readonly nodeId: number;
  readonly nodes: NodeEndpoint[];
  readonly clusterId: string;
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();

  constructor(init: ClusterInit) {
    this.nodeId = init.nodeId;
    this.nodes = init.nodes;
    this.clusterId = init.clusterId;
    const file = path.join(init.dataDir, 'topics.json');
    const persisted = readPersisted(file);
    const wanted: (TopicConfig & { internal: boolean })[] = [
      { name: TRANSACTION_STATE_TOPIC, partitions: init.transactionStatePartitions, internal: true },
      { name: CONSUMER_OFFSETS_TOPIC, partitions: init.consumerOffsetsPartitions, internal: true },
      { name: SHARE_GROUP_STATE_TOPIC, partitions: init.nodes.length, internal: true },
      ...init.topics.map((t) => ({ ...t, internal: false })),
    ];
    let changed = false;
    for (const want of wanted) {
      const before = persisted.get(want.name);
      if (before !== undefined && want.partitions < before.partitions) {
        throw new Error(
          `topic ${want.name} has ${before.partitions} partitions in ${file}; the configuration asks for ${want.partitions}, and partitions cannot be removed`,
        );
      }
      const topicId = before?.topicId ?? deriveTopicId(init.clusterId, want.name);
      if (before === undefined || before.partitions !== want.partitions) changed = true;
      persisted.set(want.name, { name: want.name, topicId, partitions: want.partitions });
      this.add({
        name: want.name,
        topicId,
        partitions: want.partitions,
        internal: want.internal,
        compressionType: want.compressionType ?? 'producer',
        compressionLevel: want.compressionLevel,
      });
    }
    // Topics created by an earlier run and no longer configured keep existing (there is no deletion).
    for (const topic of persisted.values()) {
      if (!this.byName.has(topic.name)) this.add({ ...topic, internal: topic.name.startsWith('__'), compressionType: 'producer' });
    }
    if (changed) writePersisted(file, [...persisted.values()]);
  }

  private add(topic: TopicInfo): void {
    this.byName.set(topic.name, topic);
    this.byId.set(topic.topicId, topic);
  }

  node(nodeId: number): NodeEndpoint | undefined {
    return this.nodes.find((n) => n.nodeId === nodeId);
  }

  get self(): NodeEndpoint {
    return this.node(this.nodeId)!;
  }

  topics(): readonly TopicInfo[] {
    return [...this.byName.values()];
  }

  topicByName(name: string): TopicInfo | undefined {
    return this.byName.get(name);
  }

  topicById(topicId: string): TopicInfo | undefined {
    return this.byId.get(topicId);
  }

  leaderOf(_topic: string, partition: number): number {
    return this.nodes[partition % this.nodes.length]!.nodeId;
  }

  isLocalLeader(topic: string, partition: number): boolean {
    return this.leaderOf(topic, partition) === this.nodeId;
  }

  shareStatePartitionFor(_topic: string, partition: number): number {
    // __share_group_state partition i is led by nodes[i]; the data partition is led by nodes[partition % n].
    return partition % this.nodes.length;
  }

  /** The `__transaction_state` partition of a transactional id. */
  transactionPartitionFor(transactionalId: string): number {
    return partitionForKey(transactionalId, this.byName.get(TRANSACTION_STATE_TOPIC)!.partitions);
  }

  /** The `__consumer_offsets` partition of a group. */
  offsetsPartitionFor(groupId: string): number {
    return partitionForKey(groupId, this.byName.get(CONSUMER_OFFSETS_TOPIC)!.partitions);
  }

  /** The partitions of a topic this node leads. */
  localPartitions(topic: TopicInfo): number[] {
    const out: number[] = [];
    for (let p = 0; p < topic.partitions; p++) if (this.isLocalLeader(topic.name, p)) out.push(p);
    return out;
  }
}

function readPersisted(file: string): Map<string, { name: string; topicId: string; partitions: number }> {
  const out = new Map<string, { name: string; topicId: string; partitions: number }>();
  if (!fs.existsSync(file)) return out;
  let parsed: PersistedTopics;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as PersistedTopics;
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}); it holds the topic ids, restore it or remove the data directory`);
  }
  for (const topic of parsed.topics ?? []) out.set(topic.name, topic);
  return out;
}

/** Write-to-temp, fsync, rename, fsync dir: the file is either old or new after a crash. */
export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDirectory(path.dirname(file));
}

function writePersisted(file: string, topics: { name: string; topicId: string; partitions: number }[]): void {
  writeFileAtomic(file, JSON.stringify({ topics } satisfies PersistedTopics, null, 2) + '\n');
}
