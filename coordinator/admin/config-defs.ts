/**
 * The configuration keys kipgen knows for TOPIC and GROUP resources, with
 * Kafka 4.x's defaults, types and validation: what DescribeConfigs lists and
 * what CreateTopics / IncrementalAlterConfigs accept. An unknown key or a bad
 * value is INVALID_CONFIG, as Kafka answers.
 *
 * Topic configs are stored and reported; the broker honours compression.type
 * and its levels, message.timestamp.type, max.message.bytes, and flush.messages
 * / flush.ms (the partition logs, log/flush.ts), not the others. DescribeConfigs
 * reports Kafka's default for an unset flush.messages / flush.ms, not the
 * broker's logFlush* setting it falls back to. Group configs are honoured: consumer.* by the group coordinator,
 * share.* by the share coordinator (KIP-932).
 */

/** DescribeConfigsResponse ConfigType. */
export const ConfigType = { BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 } as const;

/** DescribeConfigsResponse ConfigSource. */
export const ConfigSource = {
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  GROUP_CONFIG: 8,
} as const;

export interface ConfigDef {
  readonly name: string;
  readonly type: number;
  readonly defaultValue: string;
  readonly doc: string;
  /** Why `value` is not acceptable, or null when it is. */
  validate(value: string): string | null;
}

const LONG_MAX = '9223372036854775807';

function intDef(name: string, defaultValue: string, min: bigint, max: bigint, doc: string, type: number = ConfigType.INT): ConfigDef {
  return {
    name,
    type,
    defaultValue,
    doc,
    validate: (value) => {
      if (!/^-?\d+$/.test(value.trim())) return `${name} must be an integer, got ${JSON.stringify(value)}`;
      const n = BigInt(value.trim());
      if (n < min || n > max) return `${name} must be in [${min}, ${max}], got ${value}`;
      return null;
    },
  };
}

function oneOf(name: string, defaultValue: string, values: readonly string[], doc: string): ConfigDef {
  return {
    name,
    type: ConfigType.STRING,
    defaultValue,
    doc,
    validate: (value) => (values.includes(value) ? null : `${name} must be one of ${values.join(', ')}; got ${JSON.stringify(value)}`),
  };
}

function listOf(name: string, defaultValue: string, values: readonly string[] | null, doc: string): ConfigDef {
  return {
    name,
    type: ConfigType.LIST,
    defaultValue,
    doc,
    validate: (value) => {
      if (values === null) return null;
      const bad = value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => !values.includes(v));
      return bad.length === 0 ? null : `${name} accepts ${values.join(', ')}; got ${bad.join(', ')}`;
    },
  };
}

function boolDef(name: string, defaultValue: string, doc: string): ConfigDef {
  return {
    name,
    type: ConfigType.BOOLEAN,
    defaultValue,
    doc,
    validate: (v) => (v === 'true' || v === 'false' ? null : `${name} must be true or false, got ${JSON.stringify(v)}`),
  };
}

function doubleDef(name: string, defaultValue: string, min: number, max: number, doc: string): ConfigDef {
  return {
    name,
    type: ConfigType.DOUBLE,
    defaultValue,
    doc,
    validate: (v) => {
      const n = Number(v);
      return v.trim() !== '' && Number.isFinite(n) && n >= min && n <= max ? null : `${name} must be a number in [${min}, ${max}], got ${JSON.stringify(v)}`;
    },
  };
}

const I32 = 2147483647n;
const I64 = 9223372036854775807n;

/** Topic-level configs (Kafka's LogConfig), Kafka 4.x defaults. */
export const TOPIC_CONFIGS: readonly ConfigDef[] = [
  listOf('cleanup.policy', 'delete', ['delete', 'compact'], 'What happens to old segments: deleted, compacted, or both.'),
  oneOf(
    'compression.type',
    'producer',
    ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
    'The codec batches are stored in; producer keeps what the producer sent.',
  ),
  intDef('compression.gzip.level', '-1', -1n, 9n, 'gzip level when compression.type is gzip.'),
  intDef('compression.lz4.level', '9', 1n, 17n, 'lz4 level when compression.type is lz4.'),
  intDef('compression.zstd.level', '3', -131072n, 22n, 'zstd level when compression.type is zstd.'),
  intDef('delete.retention.ms', '86400000', 0n, I64, 'How long delete tombstones are kept in compacted topics.', ConfigType.LONG),
  intDef('file.delete.delay.ms', '60000', 0n, I64, 'Delay before a deleted segment file is removed.', ConfigType.LONG),
  intDef('flush.messages', LONG_MAX, 1n, I64, 'Messages between forced fsyncs.', ConfigType.LONG),
  intDef('flush.ms', LONG_MAX, 0n, I64, 'Milliseconds between forced fsyncs.', ConfigType.LONG),
  intDef('index.interval.bytes', '4096', 0n, I32, 'Bytes between offset index entries.'),
  intDef('local.retention.bytes', '-2', -2n, I64, 'Local retention by size with tiered storage.', ConfigType.LONG),
  intDef('local.retention.ms', '-2', -2n, I64, 'Local retention by time with tiered storage.', ConfigType.LONG),
  intDef('max.compaction.lag.ms', LONG_MAX, 1n, I64, 'Longest time a record stays uncompacted.', ConfigType.LONG),
  intDef('max.message.bytes', '1048588', 0n, I32, 'Largest record batch the topic accepts.'),
  intDef('message.timestamp.after.max.ms', '3600000', 0n, I64, 'How far in the future a CreateTime timestamp may be.', ConfigType.LONG),
  intDef('message.timestamp.before.max.ms', LONG_MAX, 0n, I64, 'How far in the past a CreateTime timestamp may be.', ConfigType.LONG),
  oneOf('message.timestamp.type', 'CreateTime', ['CreateTime', 'LogAppendTime'], 'Whether record timestamps are the producer’s or the broker’s.'),
  doubleDef('min.cleanable.dirty.ratio', '0.5', 0, 1, 'Share of a log that must be dirty before compaction runs.'),
  intDef('min.compaction.lag.ms', '0', 0n, I64, 'Shortest time a record stays uncompacted.', ConfigType.LONG),
  intDef('min.insync.replicas', '1', 1n, I32, 'Replicas that must acknowledge an acks=all write.'),
  boolDef('preallocate', 'false', 'Preallocate segment files.'),
  boolDef('remote.storage.enable', 'false', 'Tiered storage for this topic.'),
  intDef('retention.bytes', '-1', -1n, I64, 'Largest size a partition keeps before deleting old segments; -1 for no limit.', ConfigType.LONG),
  intDef('retention.ms', '604800000', -1n, I64, 'How long records are kept; -1 for ever.', ConfigType.LONG),
  intDef('segment.bytes', '1073741824', 1048576n, I32, 'Size of a segment file.'),
  intDef('segment.index.bytes', '10485760', 4n, I32, 'Size of a segment’s offset index.'),
  intDef('segment.jitter.ms', '0', 0n, I64, 'Random jitter subtracted from segment.ms.', ConfigType.LONG),
  intDef('segment.ms', '604800000', 1n, I64, 'Time after which a segment is rolled.', ConfigType.LONG),
  boolDef('unclean.leader.election.enable', 'false', 'Let an out-of-sync replica become leader.'),
];

/**
 * Group configs (Kafka's GroupConfig). The share.* ones are KIP-932's and
 * are read by the share coordinator; their ranges are Kafka's default
 * broker-wide bounds (group.share.min/max.*).
 */
export const GROUP_CONFIGS: readonly ConfigDef[] = [
  intDef('consumer.session.timeout.ms', '45000', 45000n, 60000n, 'How long a consumer-group member may go without a heartbeat.'),
  // Kafka's GroupConfig bounds it by the broker's group.consumer.min/max.heartbeat.interval.ms: GroupConfigs.check does.
  intDef('consumer.heartbeat.interval.ms', '5000', 1n, 0x7fffffffn, 'How often consumer-group members heartbeat.'),
  intDef('share.session.timeout.ms', '45000', 45000n, 60000n, 'How long a share-group member may go without a heartbeat.'),
  intDef('share.heartbeat.interval.ms', '5000', 5000n, 15000n, 'How often share-group members heartbeat.'),
  intDef('share.record.lock.duration.ms', '30000', 15000n, 60000n, 'How long a delivered record stays acquired by its consumer.'),
  intDef('share.delivery.count.limit', '5', 2n, 10n, 'Deliveries after which a record is archived.'),
  {
    name: 'share.auto.offset.reset',
    type: ConfigType.STRING,
    defaultValue: 'latest',
    doc: 'Where a new share partition starts: latest or earliest.',
    // Kafka 4.1 also accepts by_duration:<ISO-8601 duration>; kipgen's share coordinator cannot look offsets up by time yet, so it refuses it rather than ignore it.
    validate: (v) =>
      v === 'latest' || v === 'earliest'
        ? null
        : v.startsWith('by_duration:')
          ? `share.auto.offset.reset ${v} is not supported by kipgen (latest or earliest)`
          : `share.auto.offset.reset must be latest or earliest; got ${JSON.stringify(v)}`,
  },
  oneOf(
    'share.isolation.level',
    'read_uncommitted',
    ['read_committed', 'read_uncommitted'],
    'Whether share consumers see records of open and aborted transactions.',
  ),
];

export function configDef(defs: readonly ConfigDef[], name: string): ConfigDef | undefined {
  return defs.find((d) => d.name === name);
}

/** Checks every key and value; the first problem as a message, or null. */
export function validateConfigs(defs: readonly ConfigDef[], kind: string, configs: Readonly<Record<string, string>>): string | null {
  for (const [name, value] of Object.entries(configs)) {
    const def = configDef(defs, name);
    if (def === undefined) return `unknown ${kind} config name: ${name}`;
    const problem = def.validate(value);
    if (problem !== null) return problem;
  }
  return null;
}
