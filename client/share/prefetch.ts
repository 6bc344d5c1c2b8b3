/**
 * Transactional mode: the next batch is fetched while the application works
 * on the last one and commits its transaction, so the next poll() does not
 * wait for a ShareFetch round trip. As Kafka's share consumer, whose poll()
 * asks for a fetch and returns what the buffer already holds
 * (ShareConsumerImpl.poll, ShareConsumeRequestManager.fetch), one fetch runs
 * ahead of the application, never more.
 *
 * Records acquired by the prefetch belong to no transaction until a poll()
 * hands them out (transactional-deliveries.ts admits them then); when they
 * arrive they are screened against the transaction open then
 * (TransactionalDeliveries.screen), so that none is handed out into a
 * transaction that holds an earlier delivery of it.
 */
import type { ShareConsumerRecord } from './acknowledgements.js';
import type { TransactionalDeliveries } from './transactional-deliveries.js';

export class TransactionalPrefetch {
  private inFlight: Promise<void> | null = null;
  private buffered: ShareConsumerRecord[] = [];
  private error: unknown = null;
  /** Bumped by discard(): a prefetch that arrives after it is dropped. */
  private generation = 0;

  constructor(
    private readonly fetch: () => Promise<ShareConsumerRecord[]>,
    private readonly deliveries: TransactionalDeliveries,
  ) {}

  /** Starts the next fetch unless one runs or its records wait for a poll. */
  start(): void {
    if (this.inFlight !== null || this.buffered.length > 0 || this.error !== null) return;
    const generation = this.generation;
    this.inFlight = this.fetch()
      .then(
        (records) => {
          const kept = this.deliveries.screen(records);
          if (generation === this.generation) this.buffered = kept;
        },
        (error: unknown) => {
          if (generation === this.generation) this.error = error;
        },
      )
      .finally(() => (this.inFlight = null));
  }

  /** What the prefetch brought, once it arrived ([] when none ran); its error, as the poll's own fetch would throw it. */
  async take(): Promise<ShareConsumerRecord[]> {
    if (this.inFlight !== null) await this.inFlight;
    if (this.error !== null) {
      const error = this.error;
      this.error = null;
      throw error;
    }
    return this.buffered.splice(0);
  }

  /** Waits for a prefetch in flight (before close). */
  async settled(): Promise<void> {
    if (this.inFlight !== null) await this.inFlight;
  }

  /** The membership was lost: what was fetched under it is the group's again, not this member's. */
  discard(): void {
    this.generation++;
    this.buffered = [];
  }
}
