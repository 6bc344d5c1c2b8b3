/**
 * Admin: Kafka's `Admin` interface, promise-based. A thin face: each method
 * hands off to a module of admin/ that builds the requests, routes them (any
 * broker, the controller, a partition's leader or a group's coordinator, as
 * Kafka's KafkaAdminClient does) and turns the answers into an AdminResult
 * (admin/result.ts), one outcome per entry.
 */
import { ClusterClient } from './cluster.js';
import type { CommonClientConfig } from './cluster/config.js';

export { AdminResult, type EntryOutcome } from './admin/result.js';

export interface AdminConfig extends CommonClientConfig {
  /** default.api.timeout.ms: how long one Admin call may take in all, retries included. Default 60 000. */
  defaultApiTimeoutMs?: number;
}

export class Admin {
  /** @internal The connections and metadata this Admin's calls go through. */
  readonly cluster: ClusterClient;
  /** @internal */
  readonly defaultApiTimeoutMs: number;

  constructor(config: AdminConfig) {
    this.cluster = new ClusterClient(config, 'adminclient-1');
    this.defaultApiTimeoutMs = config.defaultApiTimeoutMs ?? 60_000;
  }

  /** Closes the connections; calls in flight reject. */
  async close(): Promise<void> {
    await this.cluster.close();
  }
}
