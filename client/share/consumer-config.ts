/**
 * The share consumer's configuration and its fetch settings with defaults
 * (Kafka's ShareFetchConfig: max.poll.records, fetch.max.wait.ms,
 * fetch.min.bytes, fetch.max.bytes).
 */
import type { CommonClientConfig } from '../cluster.js';
import type { AcknowledgementMode } from './acknowledgement-mode.js';

export interface ShareConsumerConfig extends CommonClientConfig {
  /** group.id of the share group. */
  groupId: string;
  /**
   * share.acknowledgement.mode: 'implicit' (default; every delivered record is
   * accepted on the next poll or commit), 'explicit' (acknowledge() each
   * record), or 'transactional' (KIP-1289: the consumer never acknowledges;
   * acks travel in a producer's transaction via sendShareAcksToTransaction).
   */
  acknowledgementMode?: AcknowledgementMode;
  /**
   * In transactional mode a broker without TxnShareAcknowledge (API 96) makes
   * poll() fail with UnsupportedVersionError. With this set, the consumer logs
   * a warning and works in explicit mode instead (DESIGN §5.5).
   */
  allowExplicitFallback?: boolean;
  /** max.poll.records. Default 500. */
  maxPollRecords?: number;
  /** fetch.max.wait.ms. Default 500. */
  fetchMaxWaitMs?: number;
  /** fetch.min.bytes. Default 1. */
  fetchMinBytes?: number;
  /** fetch.max.bytes. Default 50 MiB. */
  fetchMaxBytes?: number;
  rackId?: string | null;
}

export interface ShareFetchConfig {
  maxPollRecords: number;
  fetchMaxWaitMs: number;
  fetchMinBytes: number;
  fetchMaxBytes: number;
}

export function shareFetchConfig(config: ShareConsumerConfig): ShareFetchConfig {
  return {
    maxPollRecords: config.maxPollRecords ?? 500,
    fetchMaxWaitMs: config.fetchMaxWaitMs ?? 500,
    fetchMinBytes: config.fetchMinBytes ?? 1,
    fetchMaxBytes: config.fetchMaxBytes ?? 50 * 1024 * 1024,
  };
}
