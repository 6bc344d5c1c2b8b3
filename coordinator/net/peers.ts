/**
 * Broker-to-broker connections (WriteTxnMarkers, transaction verification),
 * one per peer, opened on first use and reopened after a failure. Uses the
 * shared connection/connection.ts client.
 */
import { KafkaConnection } from '../../connection/connection.js';
import type { Cluster } from '../cluster.js';

export class PeerConnections {
  private readonly open = new Map<number, Promise<KafkaConnection>>();
  private closed = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly requestTimeoutMs: number,
  ) {}

  /** The connection to `nodeId`; rejects with NetworkError when it cannot be opened. */
  get(nodeId: number): Promise<KafkaConnection> {
    if (this.closed) return Promise.reject(new Error('broker is shutting down'));
    const existing = this.open.get(nodeId);
    if (existing !== undefined) return existing;
    const node = this.cluster.node(nodeId);
    if (node === undefined) return Promise.reject(new Error(`node ${nodeId} is not in the cluster`));
    const connecting = KafkaConnection.connect({
      host: node.host,
      port: node.port,
      clientId: `kipgen-broker-${this.cluster.nodeId}`,
      connectTimeoutMs: Math.min(this.requestTimeoutMs, 5_000),
      requestTimeoutMs: this.requestTimeoutMs,
    });
    this.open.set(nodeId, connecting);
    connecting.then(
      (connection) => connection.once('close', () => this.forget(nodeId, connecting)),
      () => this.forget(nodeId, connecting),
    );
    return connecting;
  }

  private forget(nodeId: number, which: Promise<KafkaConnection>): void {
    if (this.open.get(nodeId) === which) this.open.delete(nodeId);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (c) => c.close(),
          () => undefined,
        ),
      ),
    );
  }
}
