/**
 * The producer's settings (Kafka's ProducerConfig) and the shapes of what it
 * sends and answers, with the defaults and checks applied once at
 * construction.
 */
import type { Registry } from 'prom-client';
import { COMPRESSION_TYPES, compress } from '../../runtime/index.js';
import type { CompressionType, RecordHeader } from '../../runtime/record-batch.js';
import type { CommonClientConfig } from '../cluster.js';
import { ConfigError } from '../errors.js';
import type { Partitioner } from '../partitioner.js';

export interface ProducerConfig extends CommonClientConfig {
  /** transactional.id: enables transactions (and idempotence). */
  transactionalId?: string | null;
  /** enable.idempotence. Default true (forced by a transactionalId). */
  enableIdempotence?: boolean;
  /** acks: 0, 1 or -1/'all'. Default 'all' (required by idempotence). */
  acks?: 0 | 1 | -1 | 'all';
  /** linger.ms. Default 5. */
  lingerMs?: number;
  /** batch.size in bytes. Default 16 384. */
  batchSize?: number;
  /**
   * max.in.flight.requests.per.connection: Produce requests sent to one broker
   * and not yet answered, at most; several batches of one partition may be
   * among them. Default 5; at most 5 for an idempotent producer (its
   * sequence numbers keep the batches in order). With 1, a partition has one
   * batch in flight at a time.
   */
  maxInFlightRequestsPerConnection?: number;
  /** max.request.size: the largest record accepted. Default 1 MiB. */
  maxRequestSize?: number;
  /** delivery.timeout.ms: a record fails if not acknowledged within this. Default 120 000. */
  deliveryTimeoutMs?: number;
  /** max.block.ms: deadline of metadata waits and of transactional calls. Default 60 000. */
  maxBlockMs?: number;
  /**
   * allow.auto.create.topics: a send to a topic the cluster does not have asks
   * the broker to create it (with the broker's defaults), as Kafka's producer
   * does; the broker's auto.create.topics.enable has the last word. Default true.
   */
  allowAutoCreateTopics?: boolean;
  /** transaction.timeout.ms. Default 60 000. Not applied with two-phase commit (KIP-939). */
  transactionTimeoutMs?: number;
  /**
   * transaction.two.phase.commit.enable (KIP-939). Default false. With it
   * the coordinator never aborts this producer's transactions on the
   * timeout, initTransactions({ keepPreparedTxn: true }) keeps a prepared
   * transaction for completeTransaction(state), and close() leaves a
   * prepared transaction open. Needs Transactions V2 on the broker.
   */
  transactionTwoPhaseCommitEnable?: boolean;
  /** compression.type: 'none' (default), 'gzip', 'snappy', 'lz4' or 'zstd'. */
  compressionType?: CompressionType;
  /** The former name of compressionType; used when compressionType is not set. */
  compression?: CompressionType;
  /**
   * compression.gzip.level (1-9, default 6) or compression.zstd.level
   * (-131072..22, default 3), for the codec chosen. lz4 and snappy take none
   * (see the runtime's compression module).
   */
  compressionLevel?: number;
  /** Default: Kafka's (murmur2 for keys, sticky for null keys). */
  partitioner?: Partitioner;
  /** Where the KIP-1289 metrics are registered; default prom-client's global registry; null to skip Prometheus. */
  metricsRegistry?: Registry | null;
}

export type HeaderValue = string | Uint8Array | null;

export interface ProducerRecord {
  topic: string;
  partition?: number;
  key?: Uint8Array | string | null;
  value?: Uint8Array | string | null;
  headers?: Record<string, HeaderValue> | readonly RecordHeader[];
  /** Epoch ms; default now. */
  timestamp?: number | bigint;
}

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0. */
  offset: bigint;
  timestamp: bigint;
}

/** The settings of KafkaProducer.completeTransaction: connection settings, plus what to do on a broker without two-phase commit. */
export type CompleteTransactionConfig = CommonClientConfig & {
  maxBlockMs?: number;
  /**
   * On a broker without two-phase commit on Transactions V2, end whatever transaction is
   * open under the saved producer id and epoch with EndTxn, though under the classic
   * protocol they also name the producer's later transactions. Default false: such a
   * broker makes completeTransaction throw UnsupportedVersionError and end nothing.
   */
  classicProtocolFallback?: boolean;
};

/** ProducerConfig with its defaults applied and checked: what the accumulator, the sender and the facade read. */
export interface ProducerSettings {
  /** The transactional id, or null for a producer without transactions. */
  transactionalId: string | null;
  /** 0, 1 or -1 (all). */
  acks: number;
  /** Sequence numbers and a producer id on every batch (needs acks -1). */
  idempotent: boolean;
  lingerMs: number;
  batchSize: number;
  maxRequestSize: number;
  /** max.in.flight.requests.per.connection. */
  maxInFlight: number;
  deliveryTimeoutMs: number;
  maxBlockMs: number;
  allowAutoCreateTopics: boolean;
  transactionTimeoutMs: number;
  compression: CompressionType;
  compressionLevel: number | undefined;
  enable2Pc: boolean;
}

/** Kafka's ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION_FOR_IDEMPOTENCE: the broker keeps the last five batches per producer to spot duplicates. */
export const MAX_IN_FLIGHT_FOR_IDEMPOTENCE = 5;

/**
 * The settings of `config`, or ConfigError for a combination Kafka's
 * ProducerConfig refuses: acks other than 'all' with idempotence asked for
 * (explicitly or by a transactional id). Idempotence by default quietly
 * yields to such acks, as in Kafka (ProducerConfig.postProcessAndValidateIdempotenceConfigs);
 * more than 5 requests in flight is refused for an idempotent producer,
 * by default or not, as there.
 */
export function producerSettings(config: ProducerConfig): ProducerSettings {
  const transactionalId = typeof config.transactionalId === 'string' && config.transactionalId.length > 0 ? config.transactionalId : null;
  const acks = config.acks === 'all' || config.acks === undefined ? -1 : config.acks;
  const idempotent = transactionalId !== null || (config.enableIdempotence ?? true);
  if (idempotent && acks !== -1) {
    if (transactionalId !== null || config.enableIdempotence === true) {
      throw new ConfigError(`acks must be 'all' for an idempotent or transactional producer (got ${config.acks})`);
    }
  }
  const maxInFlight = config.maxInFlightRequestsPerConnection ?? 5;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw new ConfigError(`maxInFlightRequestsPerConnection must be an integer of at least 1; got ${String(config.maxInFlightRequestsPerConnection)}`);
  }
  // Kafka checks this whenever enable.idempotence is on, by default included, even where acks then turn idempotence off.
  if (idempotent && maxInFlight > MAX_IN_FLIGHT_FOR_IDEMPOTENCE) {
    throw new ConfigError(
      `maxInFlightRequestsPerConnection must be at most ${MAX_IN_FLIGHT_FOR_IDEMPOTENCE} for an idempotent or transactional producer (set enableIdempotence: false for more); got ${maxInFlight}`,
    );
  }
  const settings: ProducerSettings = {
    transactionalId,
    acks,
    idempotent: idempotent && acks === -1,
    lingerMs: config.lingerMs ?? 5,
    batchSize: config.batchSize ?? 16384,
    maxRequestSize: config.maxRequestSize ?? 1024 * 1024,
    maxInFlight,
    deliveryTimeoutMs: config.deliveryTimeoutMs ?? 120_000,
    maxBlockMs: config.maxBlockMs ?? 60_000,
    allowAutoCreateTopics: config.allowAutoCreateTopics ?? true,
    transactionTimeoutMs: config.transactionTimeoutMs ?? 60_000,
    compression: config.compressionType ?? config.compression ?? 'none',
    compressionLevel: config.compressionLevel,
    enable2Pc: config.transactionTwoPhaseCommitEnable === true,
  };
  checkCompression(settings.compression, settings.compressionLevel);
  return settings;
}

/**
 * Fails at construction, not at the first send, for an unknown codec, a level
 * the codec does not take, or a codec whose optional library is not installed.
 */
function checkCompression(type: CompressionType, level: number | undefined): void {
  if (!COMPRESSION_TYPES.includes(type)) {
    throw new ConfigError(`compressionType must be one of ${COMPRESSION_TYPES.join(', ')}; got ${String(type)}`);
  }
  try {
    compress(type, new Uint8Array(0), level);
  } catch (error) {
    throw new ConfigError(`compressionType ${type}${level === undefined ? '' : ` level ${level}`}: ${(error as Error).message}`);
  }
}
