/**
 * KafkaConsumer's configuration (Kafka's ConsumerConfig, names in camelCase)
 * and the defaults Kafka gives each setting, checked once at construction so
 * that a bad value fails with the setting's name instead of on the wire.
 */
import type { CommonClientConfig } from '../cluster.js';
import { ConfigError } from '../errors.js';
import type { PartitionAssignor } from './assignors/assignor.js';

export type AutoOffsetReset = 'earliest' | 'latest' | 'none';
export type IsolationLevel = 'read_committed' | 'read_uncommitted';
export type GroupProtocol = 'classic' | 'consumer';

export interface ConsumerConfig extends CommonClientConfig {
  /** group.id: needed for subscribe() and for commits; assign() works without it. */
  groupId?: string;
  /** group.instance.id: a static member (KIP-345). */
  groupInstanceId?: string | null;
  /** group.protocol: 'classic' (Kafka's default) or 'consumer' (KIP-848). */
  groupProtocol?: GroupProtocol;
  /** enable.auto.commit. Default true when a groupId is set (Kafka's default). */
  enableAutoCommit?: boolean;
  /** auto.commit.interval.ms. Default 5 000. */
  autoCommitIntervalMs?: number;
  /** auto.offset.reset. Default 'latest'. */
  autoOffsetReset?: AutoOffsetReset;
  /** isolation.level. Default 'read_uncommitted'. */
  isolationLevel?: IsolationLevel;
  /** max.poll.records. Default 500. */
  maxPollRecords?: number;
  /** fetch.min.bytes. Default 1. */
  fetchMinBytes?: number;
  /** fetch.max.bytes. Default 52 428 800. */
  fetchMaxBytes?: number;
  /** max.partition.fetch.bytes. Default 1 048 576. */
  maxPartitionFetchBytes?: number;
  /** fetch.max.wait.ms. Default 500. */
  fetchMaxWaitMs?: number;
  /** session.timeout.ms. Default 45 000. */
  sessionTimeoutMs?: number;
  /** heartbeat.interval.ms. Default 3 000. */
  heartbeatIntervalMs?: number;
  /** max.poll.interval.ms (the classic protocol's rebalance timeout). Default 300 000. */
  maxPollIntervalMs?: number;
  /**
   * partition.assignment.strategy: assignors by name, or objects of one's own
   * (where Kafka takes a class name). Default ['range', 'cooperative-sticky'] (Kafka's default).
   */
  partitionAssignmentStrategy?: ReadonlyArray<string | PartitionAssignor>;
  /** client.rack. Default none. */
  clientRack?: string | null;
  /** group.remote.assignor: with groupProtocol 'consumer', the broker's assignor to use ('uniform', 'range'). Default: the broker's choice. */
  groupRemoteAssignor?: string | null;
}

export interface ResolvedConsumerConfig {
  groupId: string | null;
  groupInstanceId: string | null;
  groupProtocol: GroupProtocol;
  enableAutoCommit: boolean;
  autoCommitIntervalMs: number;
  autoOffsetReset: AutoOffsetReset;
  isolationLevel: IsolationLevel;
  maxPollRecords: number;
  fetchMinBytes: number;
  fetchMaxBytes: number;
  maxPartitionFetchBytes: number;
  fetchMaxWaitMs: number;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxPollIntervalMs: number;
  partitionAssignmentStrategy: ReadonlyArray<string | PartitionAssignor>;
  clientRack: string | null;
  groupRemoteAssignor: string | null;
}

function positiveInt(config: ConsumerConfig, name: keyof ConsumerConfig, fallback: number, min = 1): number {
  const value = config[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ConfigError(`consumer config ${String(name)} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

function oneOf<T extends string>(config: ConsumerConfig, name: keyof ConsumerConfig, allowed: readonly T[], fallback: T): T {
  const value = config[name] ?? fallback;
  if (!allowed.includes(value as T)) throw new ConfigError(`consumer config ${String(name)} must be one of ${allowed.join(', ')}, got ${String(value)}`);
  return value as T;
}

export function resolveConsumerConfig(config: ConsumerConfig): ResolvedConsumerConfig {
  const groupId = config.groupId ?? null;
  if (groupId !== null && (typeof groupId !== 'string' || groupId === '')) throw new ConfigError('consumer config groupId must be a non-empty string');
  const strategy = config.partitionAssignmentStrategy ?? ['range', 'cooperative-sticky'];
  const isAssignor = (s: unknown) =>
    typeof s === 'object' && s !== null && typeof (s as PartitionAssignor).name === 'string' && typeof (s as PartitionAssignor).assign === 'function';
  if (!Array.isArray(strategy) || strategy.length === 0 || strategy.some((s) => !(typeof s === 'string' && s !== '') && !isAssignor(s))) {
    throw new ConfigError('consumer config partitionAssignmentStrategy must be a non-empty list of assignor names or PartitionAssignor objects');
  }
  const enableAutoCommit = config.enableAutoCommit ?? groupId !== null;
  if (enableAutoCommit && groupId === null) throw new ConfigError('consumer config enableAutoCommit needs a groupId (there is no group to commit to)');
  const resolved: ResolvedConsumerConfig = {
    groupId,
    groupInstanceId: config.groupInstanceId ?? null,
    groupProtocol: oneOf(config, 'groupProtocol', ['classic', 'consumer'] as const, 'classic'),
    enableAutoCommit,
    autoCommitIntervalMs: positiveInt(config, 'autoCommitIntervalMs', 5_000, 0),
    autoOffsetReset: oneOf(config, 'autoOffsetReset', ['earliest', 'latest', 'none'] as const, 'latest'),
    isolationLevel: oneOf(config, 'isolationLevel', ['read_committed', 'read_uncommitted'] as const, 'read_uncommitted'),
    maxPollRecords: positiveInt(config, 'maxPollRecords', 500),
    fetchMinBytes: positiveInt(config, 'fetchMinBytes', 1, 0),
    fetchMaxBytes: positiveInt(config, 'fetchMaxBytes', 52_428_800, 0),
    maxPartitionFetchBytes: positiveInt(config, 'maxPartitionFetchBytes', 1_048_576),
    fetchMaxWaitMs: positiveInt(config, 'fetchMaxWaitMs', 500, 0),
    sessionTimeoutMs: positiveInt(config, 'sessionTimeoutMs', 45_000),
    heartbeatIntervalMs: positiveInt(config, 'heartbeatIntervalMs', 3_000),
    maxPollIntervalMs: positiveInt(config, 'maxPollIntervalMs', 300_000),
    partitionAssignmentStrategy: [...strategy],
    clientRack: config.clientRack ?? null,
    groupRemoteAssignor: config.groupRemoteAssignor ?? null,
  };
  // Kafka's ConsumerConfig does not check this pair, but a heartbeat slower than the session always times out.
  if (resolved.heartbeatIntervalMs >= resolved.sessionTimeoutMs) {
    throw new ConfigError(
      `consumer config heartbeatIntervalMs (${resolved.heartbeatIntervalMs}) must be lower than sessionTimeoutMs (${resolved.sessionTimeoutMs})`,
    );
  }
  return resolved;
}
