/**
 * The static cluster: which nodes exist, which topics exist with which ids,
 * and who leads each partition. There is no controller: every node derives
 * the same answers from the same configuration.
 *
 * - Leader of partition p of any topic: `nodes[p % nodes.length]`, nodes in
 *   the order of the configuration. `__share_group_state` has one partition
 *   per node, so its partition i is led by nodes[i] (DESIGN §6).
 * - Topic ids are derived from (clusterId, topic name, times deleted), so
 *   that every node of the cluster agrees on them without talking, and
 *   persisted in `<dataDir>/topics.json` on first use: a restart keeps the ids
 *   it had even if the derivation or cluster id changes. Topics created,
 *   grown, reconfigured or deleted at run time are persisted there too
 *   (coordinator/admin/ applies the change on every node).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ZERO_UUID, type TimestampType } from '../runtime/index.js';
import type { ClusterView, NodeEndpoint, TopicCompressionType, TopicInfo } from './broker-context.js';
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
  topics: { name: string; partitions: number }[];
  transactionStatePartitions: number;
  consumerOffsetsPartitions: number;
}

interface PersistedTopic {
  name: string;
  topicId: string;
  partitions: number;
  /** CreatePartitions raised the count at run time: a configured count below it is not an error. */
  grown?: boolean;
  /** Topic configuration set by CreateTopics / IncrementalAlterConfigs (absent: all defaults). */
  configs?: Record<string, string>;
}

interface PersistedTopics {
  topics: PersistedTopic[];
  /** How many times each name was deleted: a re-created topic gets a new id, as in Kafka. */
  deletions?: Record<string, number>;
}

export class Cluster implements ClusterView {
  readonly nodeId: number;
  readonly nodes: NodeEndpoint[];
  readonly clusterId: string;
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<string, TopicInfo>();
  private readonly configs = new Map<string, Record<string, string>>();
  private readonly deletions: Record<string, number>;
  private readonly grown = new Set<string>();
  private readonly file: string;

  constructor(init: ClusterInit) {
    this.nodeId = init.nodeId;
    this.nodes = init.nodes;
    this.clusterId = init.clusterId;
    const file = path.join(init.dataDir, 'topics.json');
    this.file = file;
    const { topics: persisted, deletions } = readPersisted(file);
    this.deletions = deletions;
    const wanted: (TopicConfig & { internal: boolean })[] = [
      { name: TRANSACTION_STATE_TOPIC, partitions: init.transactionStatePartitions, internal: true },
      { name: CONSUMER_OFFSETS_TOPIC, partitions: init.consumerOffsetsPartitions, internal: true },
      { name: SHARE_GROUP_STATE_TOPIC, partitions: init.nodes.length, internal: true },
      ...init.topics.map((t) => ({ ...t, internal: false })),
    ];
    let changed = false;
    for (const want of wanted) {
      const before = persisted.get(want.name);
      // Fewer partitions than on disk is a configuration error, unless CreatePartitions added them at run time.
      if (before !== undefined && want.partitions < before.partitions && before.grown !== true) {
        throw new Error(
          `topic ${want.name} has ${before.partitions} partitions in ${file}; the configuration asks for ${want.partitions}, and partitions cannot be removed`,
        );
      }
      const topicId = before?.topicId ?? this.idFor(want.name);
      // A configured topic keeps the partitions CreatePartitions gave it beyond the configured count.
      const partitions = Math.max(want.partitions, before?.partitions ?? 0);
      if (before === undefined || before.partitions !== partitions) changed = true;
      // The configuration's codec (`--topic name:p:codec`) overrides one stored by IncrementalAlterConfigs.
      const configs = { ...before?.configs, ...compressionConfigs(want) };
      if (Object.keys(configs).length > 0) this.configs.set(want.name, configs);
      if (before?.grown === true) this.grown.add(want.name);
      this.add({ name: want.name, topicId, partitions, internal: want.internal });
    }
    // Topics created at run time (CreateTopics, auto-creation) or by an earlier configuration.
    for (const topic of persisted.values()) {
      if (this.byName.has(topic.name)) continue;
      if (topic.configs !== undefined) this.configs.set(topic.name, topic.configs);
      if (topic.grown === true) this.grown.add(topic.name);
      this.add({ name: topic.name, topicId: topic.topicId, partitions: topic.partitions, internal: topic.name.startsWith('__') });
    }
    if (changed) this.persist();
  }

  /** The id a new topic of this name gets: derived, so that every node agrees without a controller. */
  private idFor(name: string): string {
    const deleted = this.deletions[name] ?? 0;
    return deriveTopicId(this.clusterId, deleted === 0 ? name : `${name}\u0000deleted ${deleted}`);
  }

  private persist(): void {
    const topics: PersistedTopic[] = this.topics().map((t) => {
      const configs = this.configs.get(t.name);
      return {
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions,
        ...(this.grown.has(t.name) ? { grown: true } : {}),
        ...(configs && Object.keys(configs).length > 0 ? { configs } : {}),
      };
    });
    writeFileAtomic(this.file, JSON.stringify({ topics, deletions: this.deletions } satisfies PersistedTopics, null, 2) + '\n');
  }

  /** Adds a data topic and persists it (fsync + rename) before returning. */
  createTopic(name: string, partitions: number, configs: Record<string, string>): TopicInfo {
    if (this.byName.has(name)) throw new Error(`topic ${name} already exists`);
    if (Object.keys(configs).length > 0) this.configs.set(name, { ...configs });
    const topic = this.add({ name, topicId: this.idFor(name), partitions, internal: false });
    this.persist();
    return topic;
  }

  /** Removes a topic and persists that; the caller deletes its logs. */
  deleteTopic(name: string): TopicInfo {
    const topic = this.byName.get(name);
    if (topic === undefined) throw new Error(`topic ${name} does not exist`);
    this.byName.delete(name);
    this.byId.delete(topic.topicId);
    this.configs.delete(name);
    this.grown.delete(name);
    this.deletions[name] = (this.deletions[name] ?? 0) + 1;
    this.persist();
    return topic;
  }

  /** Raises a topic's partition count and persists it. */
  growTopic(name: string, partitions: number): TopicInfo {
    const before = this.byName.get(name);
    if (before === undefined) throw new Error(`topic ${name} does not exist`);
    if (partitions < before.partitions) throw new Error(`topic ${name} has ${before.partitions} partitions; they cannot be removed`);
    const topic = this.add({ ...before, partitions });
    this.grown.add(name);
    this.persist();
    return topic;
  }

  /** The configuration set on a topic (keys absent are at their defaults). */
  topicConfigs(name: string): Readonly<Record<string, string>> {
    return this.configs.get(name) ?? {};
  }

  /** Replaces the configuration set on a topic, and persists it. */
  setTopicConfigs(name: string, configs: Record<string, string>): void {
    if (!this.byName.has(name)) throw new Error(`topic ${name} does not exist`);
    this.configs.set(name, { ...configs });
    this.add(this.byName.get(name)!);
    this.persist();
  }

  /** Registers a topic, its codec, timestamp type and batch limit taken from its configuration (compression.type and the codec's level, message.timestamp.type, max.message.bytes). */
  private add(base: Omit<TopicInfo, 'compressionType' | 'compressionLevel' | 'messageTimestampType' | 'maxMessageBytes'>): TopicInfo {
    const configs = this.configs.get(base.name) ?? {};
    // Only the identity is taken from `base`, which may be the TopicInfo registered before: what the configuration
    // decides is derived again, so that a setting removed (a codec's level) does not survive from the old entry.
    const identity = { name: base.name, topicId: base.topicId, partitions: base.partitions, internal: base.internal };
    const topic: TopicInfo = {
      ...identity,
      ...topicCompression(configs),
      messageTimestampType: topicTimestampType(configs),
      maxMessageBytes: topicMaxMessageBytes(configs),
    };
    this.byName.set(topic.name, topic);
    this.byId.set(topic.topicId, topic);
    return topic;
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

function readPersisted(file: string): { topics: Map<string, PersistedTopic>; deletions: Record<string, number> } {
  const out = new Map<string, PersistedTopic>();
  if (!fs.existsSync(file)) return { topics: out, deletions: {} };
  let parsed: PersistedTopics;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as PersistedTopics;
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}); it holds the topic ids, restore it or remove the data directory`);
  }
  for (const topic of parsed.topics ?? []) out.set(topic.name, topic);
  return { topics: out, deletions: { ...(parsed.deletions ?? {}) } };
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

/** A configured topic's codec as the topic configs that IncrementalAlterConfigs would set. */
function compressionConfigs(topic: Pick<TopicConfig, 'compressionType' | 'compressionLevel'>): Record<string, string> {
  if (topic.compressionType === undefined) return {};
  const configs: Record<string, string> = { 'compression.type': topic.compressionType };
  if (topic.compressionLevel !== undefined) configs[`compression.${topic.compressionType}.level`] = String(topic.compressionLevel);
  return configs;
}

/**
 * compression.type and, for the codecs that take one here (gzip, zstd), its
 * level: what the produce path recompresses into (produce/batch-validation.ts).
 */
function topicCompression(configs: Readonly<Record<string, string>>): Pick<TopicInfo, 'compressionType' | 'compressionLevel'> {
  const type = (configs['compression.type'] ?? 'producer') as TopicCompressionType;
  const level = type === 'gzip' || type === 'zstd' ? configs[`compression.${type}.level`] : undefined;
  return level === undefined ? { compressionType: type } : { compressionType: type, compressionLevel: Number(level) };
}

/**
 * message.timestamp.type (config-defs.ts accepts only these two values); unset
 * is Kafka's default, CreateTime. kipgen has no broker-level
 * log.message.timestamp.type, so there is no broker default to fall back to.
 */
function topicTimestampType(configs: Readonly<Record<string, string>>): TimestampType {
  return configs['message.timestamp.type'] === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime';
}

/**
 * max.message.bytes (config-defs.ts checks it is an int32 ≥ 0); unset is
 * Kafka's default, 1048588 (its broker's message.max.bytes; kipgen has no
 * broker-level setting to fall back to).
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;
function topicMaxMessageBytes(configs: Readonly<Record<string, string>>): number {
  const set = configs['max.message.bytes'];
  return set === undefined ? DEFAULT_MAX_MESSAGE_BYTES : Number(set);
}
