/**
 * Configurations as DescribeConfigs and CreateTopics show them (each entry with its
 * source, type, synonyms and documentation), and IncrementalAlterConfigs'
 * operations on a set of configs: the admin domain of configs, apart from the
 * wire shaping of apis/19, 32 and 44.
 */
import type { BrokerConfig } from '../config.js';
import { ConfigSource, ConfigType, configDef, TOPIC_CONFIGS, type ConfigDef } from './config-defs.js';
import type { GroupConfigs } from './group-configs.js';
import type { TopicAdmin } from './topic-admin.js';

/** ConfigResource.Type */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;

/** IncrementalAlterConfigs' AlterConfigOp.OpType. */
const OP_SET = 0;
const OP_DELETE = 1;
const OP_APPEND = 2;
const OP_SUBTRACT = 3;

/** The definition a shown entry names: a config definition, or one of the broker's settings. */
export interface ShownConfig {
  readonly name: string;
  readonly type: number;
  readonly doc: string;
}

/** A config as DescribeConfigs answers it (DescribeConfigsResourceResult). */
export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
  configType: number;
  documentation: string | null;
}

/** One entry as DescribeConfigs shows it. */
export function entry(def: ShownConfig, value: string, source: number, readOnly: boolean, synonyms: boolean, docs: boolean): ConfigEntry {
  return {
    name: def.name,
    value,
    readOnly,
    configSource: source,
    isSensitive: false,
    synonyms: synonyms ? [{ name: def.name, value, source }] : [],
    configType: def.type,
    documentation: docs ? def.doc : null,
  };
}

/** A topic's configs: its own values, Kafka's defaults for the others. */
export function topicEntries(admin: TopicAdmin, name: string, synonyms = false, docs = false): ConfigEntry[] {
  const set = admin.cluster.topicConfigs(name);
  return TOPIC_CONFIGS.map((def) => {
    const own = set[def.name];
    return entry(def, own ?? def.defaultValue, own !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG, false, synonyms, docs);
  });
}

/** The broker settings DescribeConfigs shows for this node: static (set at start), hence read-only. */
export function brokerEntries(config: BrokerConfig, admin: TopicAdmin, groups: GroupConfigs): { def: ShownConfig; value: string }[] {
  const b = (name: string, type: number, value: string | number | boolean, doc: string) => ({ def: { name, type, doc }, value: String(value) });
  return [
    b('node.id', ConfigType.INT, config.nodeId, 'This node’s id.'),
    b('broker.id', ConfigType.INT, config.nodeId, 'This node’s id (the older name).'),
    b('log.dirs', ConfigType.STRING, config.dataDir, 'Where partition logs and coordinator state are stored.'),
    b('auto.create.topics.enable', ConfigType.BOOLEAN, admin.settings.autoCreateTopics, 'Create a topic when Metadata asks for one that does not exist.'),
    b('num.partitions', ConfigType.INT, admin.settings.defaultPartitions, 'Partitions of an auto-created topic, or of one created with -1.'),
    b('default.replication.factor', ConfigType.INT, 1, 'kipgen keeps one replica per partition.'),
    b('offsets.topic.num.partitions', ConfigType.INT, config.consumerOffsetsPartitions, 'Partitions of __consumer_offsets.'),
    b('transaction.state.log.num.partitions', ConfigType.INT, config.transactionStatePartitions, 'Partitions of __transaction_state.'),
    b('transaction.max.timeout.ms', ConfigType.INT, config.transactionMaxTimeoutMs, 'Longest transaction timeout a producer may ask for.'),
    b(
      'producer.id.expiration.ms',
      ConfigType.INT,
      config.producerIdExpirationMs,
      'How long a partition keeps the state of a producer id with no open transaction after its last write.',
    ),
    b(
      'producer.id.expiration.check.interval.ms',
      ConfigType.INT,
      config.producerIdExpirationCheckIntervalMs,
      'How often the partitions look for expired producer ids.',
    ),
    b(
      'transactional.id.expiration.ms',
      ConfigType.INT,
      config.transactionalIdExpirationMs,
      'How long the transaction coordinator keeps a transactional id with no transaction open after its last state change.',
    ),
    b(
      'transaction.remove.expired.transaction.cleanup.interval.ms',
      ConfigType.INT,
      config.transactionRemoveExpiredTransactionCleanupIntervalMs,
      'How often the transaction coordinator looks for expired transactional ids.',
    ),
    b('socket.request.max.bytes', ConfigType.INT, config.maxFrameBytes, 'Largest request frame accepted.'),
    b('queued.max.request.bytes', ConfigType.LONG, config.queuedMaxRequestBytes, 'What all requests in flight may cost, as decoded (-1: unbounded).'),
    b('log.segment.bytes', ConfigType.INT, config.segmentBytes, 'Size at which a new segment file is started.'),
    b(
      'group.share.record.lock.duration.ms',
      ConfigType.INT,
      groups.brokerDefault('share.record.lock.duration.ms'),
      'Default acquisition lock of a share-group record.',
    ),
    b('group.share.delivery.count.limit', ConfigType.INT, groups.brokerDefault('share.delivery.count.limit'), 'Default delivery count limit of share groups.'),
    b('group.share.session.timeout.ms', ConfigType.INT, groups.brokerDefault('share.session.timeout.ms'), 'Default session timeout of share-group members.'),
    b(
      'group.share.heartbeat.interval.ms',
      ConfigType.INT,
      groups.brokerDefault('share.heartbeat.interval.ms'),
      'Default heartbeat interval of share-group members.',
    ),
  ];
}

/** The configuration a new topic will have (for CreateTopics v5+, validateOnly included). */
export function topicEntriesFor(
  set: Readonly<Record<string, string>>,
): { name: string; value: string; readOnly: boolean; configSource: number; isSensitive: boolean }[] {
  return TOPIC_CONFIGS.map((def) => ({
    name: def.name,
    value: set[def.name] ?? def.defaultValue,
    readOnly: false,
    configSource: set[def.name] !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG,
    isSensitive: false,
  }));
}

/** The configs after IncrementalAlterConfigs' operations, or why they cannot apply. */
export function applyOps(
  defs: readonly ConfigDef[],
  kind: string,
  current: Readonly<Record<string, string>>,
  ops: readonly { name: string; configOperation: number; value: string | null }[],
): Record<string, string> | string {
  const next: Record<string, string> = { ...current };
  const names = new Set<string>();
  for (const op of ops) {
    if (names.has(op.name)) return `Error due to duplicate config keys: ${op.name}`;
    names.add(op.name);
    const def = configDef(defs, op.name);
    if (def === undefined) return `unknown ${kind} config name: ${op.name}`;
    switch (op.configOperation) {
      case OP_SET:
        if (op.value === null) return `Null value not supported for: ${op.name}`;
        next[op.name] = op.value;
        break;
      case OP_DELETE:
        delete next[op.name];
        break;
      case OP_APPEND:
      case OP_SUBTRACT: {
        if (def.type !== ConfigType.LIST) return `Config value append/subtract is not allowed for config key ${op.name}, which is not a list`;
        const items = (next[op.name] ?? def.defaultValue)
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
        const given = (op.value ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
        const result = op.configOperation === OP_APPEND ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
        next[op.name] = result.join(',');
        break;
      }
      default:
        return `unknown config operation ${op.configOperation} for ${op.name}`;
    }
    if (next[op.name] !== undefined) {
      const problem = def.validate(next[op.name]!);
      if (problem !== null) return problem;
    }
  }
  return next;
}
