/**
 * KafkaShareConsumer (KIP-932) with KIP-1289's `transactional` acknowledgement
 * mode. The public face over share/, as Kafka's ShareConsumerImpl is over its
 * managers: membership (share/membership.ts, ShareGroupHeartbeat in the
 * background), share sessions (share/session.ts), ShareFetch
 * (share/share-fetcher.ts, acknowledgements piggybacked) and ShareAcknowledge
 * (share/acknowledgement-sender.ts), the in-flight records
 * (share/in-flight-records.ts). What stays here is the application's
 * contract: the rules of each acknowledgement mode, and in transactional mode
 * what poll() may hand out in the open transaction (share/transactional-deliveries.ts).
 */
import { ClusterClient, randomUuid } from './cluster.js';
import { ClientClosedError, ConfigError, IllegalStateError } from './errors.js';
import { ACKNOWLEDGE_TYPE_CODES, acknowledgeTypeCode, ShareGroupMetadata, type AcknowledgeType, type ShareConsumerRecord } from './share/acknowledgements.js';
import { AcknowledgementModeState, parseAcknowledgementMode, type AcknowledgementMode } from './share/acknowledgement-mode.js';
import { AcknowledgementSender } from './share/acknowledgement-sender.js';
import { shareFetchConfig, type ShareConsumerConfig } from './share/consumer-config.js';
import { InFlightRecords } from './share/in-flight-records.js';
import { ShareMembership } from './share/membership.js';
import { ShareSessions } from './share/session.js';
import { TransactionalPrefetch } from './share/prefetch.js';
import { ShareFetcher } from './share/share-fetcher.js';
import { attachDeliveries, TransactionalDeliveries } from './share/transactional-deliveries.js';
import { firstError, type AcknowledgementCommitCallback, type AcknowledgementCommitResult, type AckResultListener } from './share/types.js';

export type { AcknowledgementMode } from './share/acknowledgement-mode.js';
export type { ShareConsumerConfig } from './share/consumer-config.js';
export type { AcknowledgementCommitCallback, AcknowledgementCommitResult } from './share/types.js';

export class KafkaShareConsumer {
  readonly groupId: string;
  readonly memberId: string = randomUuid();
  private readonly cluster: ClusterClient;
  private readonly mode: AcknowledgementModeState;
  /** Transactional mode: what poll() handed out in the open transaction (DESIGN §5.8). */
  private readonly deliveries: TransactionalDeliveries | null;
  /** Transactional mode: the next batch, fetched while the application works on the last one. */
  private readonly prefetch: TransactionalPrefetch | null;
  private readonly membership: ShareMembership;
  private readonly inFlight: InFlightRecords;
  private readonly fetcher: ShareFetcher;
  private readonly acknowledgements: AcknowledgementSender;
  private commitCallback: AcknowledgementCommitCallback | null = null;
  /** Set when the consumer cannot go on (a heartbeat failed for good, a broker cannot do transactional mode). */
  private fatalError: Error | null = null;
  private started: Promise<void> | null = null;
  private polling = false;
  private closed = false;

  constructor(config: ShareConsumerConfig) {
    if (!config.groupId) throw new ConfigError('a share consumer needs a groupId');
    const mode = parseAcknowledgementMode(config.acknowledgementMode);
    this.groupId = config.groupId;
    this.cluster = new ClusterClient(config, `share-consumer-${config.groupId}`);
    const fail = (error: Error): void => {
      this.fatalError = error;
    };
    this.mode = new AcknowledgementModeState(mode, config.allowExplicitFallback ?? false, this.cluster, fail);
    this.inFlight = new InFlightRecords(this.mode.tracksDelivered);
    this.deliveries =
      mode === 'transactional'
        ? new TransactionalDeliveries(
            (w) => this.inFlight.add({ topicId: w.topicId, topic: w.topic, partition: w.partition }, w.offset, ACKNOWLEDGE_TYPE_CODES.release),
            `share consumer ${this.cluster.clientId} (member ${this.memberId} of group ${config.groupId})`,
          )
        : null;
    this.membership = new ShareMembership(this.cluster, this.groupId, this.memberId, config.rackId ?? null, {
      onLost: (reason, code) => {
        this.prefetch?.discard();
        this.deliveries?.membershipLost(reason, code);
      },
      onFatal: fail,
    });
    const sessions = new ShareSessions();
    const onAckResult: AckResultListener = (result) => this.commitCallback?.(result, firstError(result));
    const parts = { cluster: this.cluster, membership: this.membership, sessions, inFlight: this.inFlight, onAckResult };
    this.fetcher = new ShareFetcher({
      ...parts,
      mode: this.mode,
      config: shareFetchConfig(config),
      isClosed: () => this.closed,
    });
    this.acknowledgements = new AcknowledgementSender(parts);
    this.prefetch =
      this.deliveries !== null ? new TransactionalPrefetch(() => this.fetcher.fetchOnce(Date.now() + this.cluster.requestTimeoutMs), this.deliveries) : null;
  }

  /** The acknowledgement mode in effect ('explicit' after an opted-in fallback). */
  get acknowledgementMode(): AcknowledgementMode {
    return this.mode.current;
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientClosedError(`share consumer ${this.cluster.clientId}`);
  }

  /** Joins the share group subscribed to `topics` (replacing an earlier subscription). */
  subscribe(topics: readonly string[]): void {
    this.checkOpen();
    if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string' || t === '')) {
      throw new ConfigError('subscribe() takes a list of topic names');
    }
    this.membership.subscribe([...new Set(topics)].sort());
    // Start connecting now; failures surface on poll().
    void this.ensureStarted().catch(() => {});
  }

  /** Leaves the group's subscription. */
  unsubscribe(): void {
    this.checkOpen();
    this.membership.subscribe([]);
  }

  subscriptionTopics(): string[] {
    return [...this.membership.subscription];
  }

  /** The partitions the group assigned to this member. */
  assignment(): Array<{ topic: string; topicId: string; partition: number }> {
    return this.membership.assignment.map((a) => ({ ...a }));
  }

  /** For sendShareAcksToTransaction: group id, member id and member epoch (generation). */
  groupMetadata(): ShareGroupMetadata {
    const metadata = new ShareGroupMetadata(this.groupId, this.memberId, this.membership.epoch);
    // The producer that acknowledges with it reports its transaction ends to this consumer (DESIGN §5.8).
    if (this.deliveries && this.mode.current === 'transactional') attachDeliveries(metadata, this.deliveries);
    return metadata;
  }

  setAcknowledgementCommitCallback(callback: AcknowledgementCommitCallback | null): void {
    this.commitCallback = callback;
  }

  private ensureStarted(): Promise<void> {
    if (!this.started) {
      this.started = (async () => {
        const deadline = Date.now() + this.cluster.requestTimeoutMs;
        const subscription = this.membership.subscription;
        await this.cluster.refreshMetadata(subscription.length > 0 ? subscription : [], deadline);
        if (this.mode.configured === 'transactional') await this.mode.checkTransactionalSupport(this.cluster.anyNode(), deadline);
        this.membership.start();
      })();
      this.started.catch(() => (this.started = null));
    }
    return this.started;
  }

  // -------------------------------------------------------------------------
  // Acknowledgements

  /**
   * Acknowledges a record delivered by poll() ('accept' by default). Explicit
   * mode only: implicit mode accepts everything on the next poll, and in
   * transactional mode acknowledgements go through the producer.
   */
  acknowledge(record: ShareConsumerRecord, type: AcknowledgeType = 'accept'): void {
    this.checkOpen();
    if (this.mode.current === 'transactional') {
      throw new IllegalStateError(
        "acknowledge() is not allowed in acknowledgementMode 'transactional': acknowledgements travel in a producer's transaction — " +
          "call producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata())",
      );
    }
    if (this.mode.current === 'implicit') {
      throw new IllegalStateError(
        "acknowledge() is not allowed in acknowledgementMode 'implicit' (records are accepted on the next poll); set acknowledgementMode: 'explicit'",
      );
    }
    const code = acknowledgeTypeCode(type);
    if (!this.inFlight.wasDelivered(record)) {
      throw new IllegalStateError(
        `record ${record.topic}-${record.partition}@${record.offset} was not delivered by this consumer's last poll, or was already acknowledged and committed`,
      );
    }
    this.inFlight.add({ topicId: record.topicId, topic: record.topic, partition: record.partition }, record.offset, code);
  }

  /**
   * Sends the pending acknowledgements now and waits for the result: per
   * topic-partition (`topic-partition`), null or the error. Implicit mode
   * accepts every delivered record first.
   */
  async commitSync(timeoutMs = this.cluster.requestTimeoutMs): Promise<AcknowledgementCommitResult> {
    this.checkOpen();
    this.checkCommitAllowed('commitSync()');
    if (this.mode.current === 'implicit') this.inFlight.acceptAllDelivered();
    return this.acknowledgements.send(Date.now() + timeoutMs, false);
  }

  /** Like commitSync, without waiting; the result goes to the acknowledgement commit callback. */
  commitAsync(): void {
    this.checkOpen();
    this.checkCommitAllowed('commitAsync()');
    if (this.mode.current === 'implicit') this.inFlight.acceptAllDelivered();
    void this.acknowledgements.send(Date.now() + this.cluster.requestTimeoutMs, false).catch(() => {});
  }

  private checkCommitAllowed(call: string): void {
    if (this.mode.current === 'transactional') {
      throw new IllegalStateError(
        `${call} is not allowed in acknowledgementMode 'transactional': commit the producer's transaction that carries the acknowledgements (sendShareAcksToTransaction + commitTransaction)`,
      );
    }
  }

  // -------------------------------------------------------------------------
  // poll

  /**
   * Fetches records, waiting up to `timeoutMs`. Implicit mode first accepts
   * what the last poll delivered; explicit mode requires it all acknowledged;
   * transactional mode leaves it acquired for the producer's transaction.
   */
  async poll(timeoutMs: number): Promise<ShareConsumerRecord[]> {
    this.checkOpen();
    if (this.membership.subscription.length === 0) throw new IllegalStateError('poll() needs a subscription: call subscribe(topics) first');
    if (this.polling) throw new IllegalStateError('poll() is already running on this consumer; a share consumer is not safe for concurrent use');
    this.polling = true;
    try {
      const deadline = Date.now() + Math.max(0, timeoutMs);
      if (this.fatalError) throw this.fatalError;
      await this.ensureStarted();
      if (this.fatalError) throw this.fatalError;
      if (this.mode.current === 'implicit') this.inFlight.acceptAllDelivered();
      else if (this.mode.current === 'explicit') {
        const unacked = this.inFlight.unacknowledged();
        if (unacked.length > 0) {
          throw new IllegalStateError(
            `in acknowledgementMode 'explicit' every record must be acknowledged before the next poll(); ${unacked.length} record(s) are not (first: ${unacked[0]!.topic}-${unacked[0]!.partition}@${unacked[0]!.offset})`,
          );
        }
      } else {
        // Transactional: what was delivered stays acquired until the producer's transaction ends (or the lock expires).
        this.inFlight.forgetDelivered();
      }
      const transactional = this.deliveries !== null && this.mode.current === 'transactional';
      let prefetched = transactional && this.prefetch ? await this.prefetch.take() : [];
      for (;;) {
        if (this.membership.assignment.length === 0 && prefetched.length === 0) {
          await this.membership.waitForAssignment(deadline);
          if (this.fatalError) throw this.fatalError;
        }
        let records = prefetched.length > 0 ? prefetched : await this.fetcher.fetchOnce(deadline);
        prefetched = [];
        if (transactional && records.length > 0) {
          // A record whose earlier delivery is in the open transaction is not handed out again (DESIGN §5.8).
          const fetched = records.length;
          records = this.deliveries!.admit(records);
          for (const record of records) attachDeliveries(record, this.deliveries!);
          // The next batch is fetched while the application works on this one (share/prefetch.ts).
          if (records.length > 0) this.prefetch?.start();
          // Return now when some were withheld: fetching on until the deadline would acquire them again each time
          // their lock runs out, spending their delivery count.
          if (records.length < fetched) return records;
        }
        if (records.length > 0 || Date.now() >= deadline || this.closed) return records;
      }
    } finally {
      this.polling = false;
    }
  }

  // -------------------------------------------------------------------------
  // close

  /**
   * Closes the share sessions (sending pending acknowledgements; in implicit
   * mode delivered records are accepted first; other acquired records are
   * released), leaves the group (epoch −1) and closes the connections.
   */
  async close(timeoutMs = this.cluster.requestTimeoutMs): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + timeoutMs;
    try {
      if (this.started) await this.started.catch(() => {});
      // Its records stay acquired until the session closes, which releases them.
      await this.prefetch?.settled();
      if (this.mode.current === 'implicit') this.inFlight.acceptAllDelivered();
      // Record acks belong to transactions.
      if (this.mode.current === 'transactional') this.inFlight.keepGapsOnly();
      this.membership.stopHeartbeats();
      await this.acknowledgements.send(deadline, true).catch(() => {});
      await this.membership.leave(deadline);
    } finally {
      this.closed = true;
      this.membership.close();
      await this.cluster.close();
      await this.membership.stopped();
    }
  }
}
