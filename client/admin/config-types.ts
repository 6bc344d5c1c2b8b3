/**
 * Kafka's config vocabulary for Admin (org.apache.kafka.clients.admin.ConfigEntry,
 * Config, ConfigResource, AlterConfigOp) by name, with the codes they travel as.
 */
import { ConfigError } from '../errors.js';

/** Kafka's ConfigResource.Type, by its wire code. */
export const CONFIG_RESOURCE_TYPES = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;
export type ConfigResourceType = keyof typeof CONFIG_RESOURCE_TYPES;

/** Kafka's ConfigResource: a topic, a broker (its id; "" for the cluster-wide defaults), a broker's loggers, or a group (share group configs are set here). */
export interface ConfigResource {
  type: ConfigResourceType;
  name: string;
}

/** Kafka's ConfigEntry.ConfigSource, indexed by the wire code (DescribeConfigsResponse.ConfigSource). */
export const CONFIG_SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'DYNAMIC_CLIENT_METRICS_CONFIG',
  'DYNAMIC_GROUP_CONFIG',
] as const;
export type ConfigSource = (typeof CONFIG_SOURCES)[number];

/** Kafka's ConfigEntry.ConfigType, indexed by the wire code. */
export const CONFIG_TYPES = ['UNKNOWN', 'BOOLEAN', 'STRING', 'INT', 'SHORT', 'LONG', 'DOUBLE', 'LIST', 'CLASS', 'PASSWORD'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

/** Kafka's ConfigEntry.ConfigSynonym: where else the value could come from, highest precedence first. */
export interface ConfigSynonym {
  name: string;
  value: string | null;
  source: ConfigSource;
}

/** Kafka's ConfigEntry. `value` is null for a sensitive one. */
export interface ConfigEntry {
  name: string;
  value: string | null;
  source: ConfigSource;
  isSensitive: boolean;
  isReadOnly: boolean;
  /** Empty unless includeSynonyms was asked. */
  synonyms: ConfigSynonym[];
  type: ConfigType;
  /** Null unless includeDocumentation was asked. */
  documentation: string | null;
}

/** Kafka's Config: a resource's entries. */
export class Config {
  constructor(readonly entries: readonly ConfigEntry[]) {}

  /** The entry named `name`, or undefined. */
  get(name: string): ConfigEntry | undefined {
    return this.entries.find((e) => e.name === name);
  }
}

/** Kafka's AlterConfigOp.OpType, by wire code. */
export const ALTER_CONFIG_OP_TYPES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'] as const;
export type AlterConfigOpType = (typeof ALTER_CONFIG_OP_TYPES)[number];

/** Kafka's AlterConfigOp: SET a value, DELETE (back to the default), APPEND to / SUBTRACT from a list. */
export interface AlterConfigOp {
  name: string;
  /** Ignored (sent as null) for DELETE. */
  value?: string | null;
  opType: AlterConfigOpType;
}

export const configSource = (code: number): ConfigSource => CONFIG_SOURCES[code] ?? 'UNKNOWN';
export const configType = (code: number): ConfigType => CONFIG_TYPES[code] ?? 'UNKNOWN';

/** `TOPIC orders`: Kafka's ConfigResource.toString, for messages and de-duplication. */
export function resourceKey(resource: ConfigResource): string {
  return `${resource.type} ${resource.name}`;
}

/** The wire code of a resource type; TypeError naming the resource for a type Kafka does not have. */
export function resourceTypeCode(resource: ConfigResource): number {
  const code = CONFIG_RESOURCE_TYPES[resource.type];
  if (code === undefined) {
    throw new ConfigError(`config resource ${JSON.stringify(resource)}: type must be one of ${Object.keys(CONFIG_RESOURCE_TYPES).join(', ')}`);
  }
  return code;
}
