/**
 * KafkaShareConsumer (KIP-932) with KIP-1289's `transactional` acknowledgement
 * mode: ShareGroupHeartbeat membership in the background, ShareFetch with share
 * sessions to each partition leader, acknowledgements piggybacked on fetches or
 * sent with ShareAcknowledge.
 */
import {
  ShareAcknowledgeRequest,
  ShareAcknowledgeResponse,
  ShareFetchRequest,
  ShareFetchResponse,
  ShareGroupHeartbeatRequest,
  ShareGroupHeartbeatResponse,
  TxnShareAcknowledgeRequest,
} from '../generated/index.js';
import { NetworkError } from '../connection/connection.js';
import { decodeRecordBatches } from '../runtime/record-batch.js';
import { ClusterClient, CoordinatorType, groupBy, randomUuid, sleep, type CommonClientConfig } from './cluster.js';
import { startAtLogEndNote } from './share-start-note.js';
import {
  ClientClosedError,
  ConfigError,
  errorCodeName,
  Errors,
  errorFromCode,
  IllegalStateError,
  isRetriableCode,
  KafkaError,
  UnsupportedVersionError,
} from './errors.js';
import {
  acknowledgeTypeCode,
  ShareGroupMetadata,
  type AcknowledgeType,
  type ShareConsumerRecord,
} from './share-acknowledgements.js';
import { attachDeliveries, TransactionalDeliveries } from './transactional-deliveries.js';

export type AcknowledgementMode = 'implicit' | 'explicit' | 'transactional';

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

/** Result of committing acknowledgements: per topic-partition, null or the error. */
export type AcknowledgementCommitResult = Map<string, Error | null>;
export type AcknowledgementCommitCallback = (result: AcknowledgementCommitResult, error: Error | null) => void;

interface AckBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeTypes: number[];
}

interface TopicPartitionRef {
  topicId: string;
  topic: string;
  partition: number;
}

interface NodeSession {
  epoch: number;
  /** `topicId:partition` in the session. */
  partitions: Set<string>;
  lock: Promise<void>;
}

const tpKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;
const MAX_EPOCH = 2 ** 31 - 1;
/** AcknowledgeType RELEASE on the wire. */
const ACK_RELEASE = 2;

export class KafkaShareConsumer {
  readonly groupId: string;
  readonly memberId: string = randomUuid();
  private readonly cluster: ClusterClient;
  private readonly configuredMode: AcknowledgementMode;
  private mode: AcknowledgementMode;
  private readonly allowFallback: boolean;
  /**
   * Whether poll() remembers the records it delivered (for acknowledge(),
   * implicit acceptance and the explicit-mode check): not in transactional
   * mode without fallback, where the consumer never acknowledges records.
   */
  private readonly tracksDelivered: boolean;
  /** Transactional mode: what poll() handed out in the open transaction (DESIGN §5.8). */
  private readonly deliveries: TransactionalDeliveries | null;
  private readonly cfg: {
    maxPollRecords: number;
    fetchMaxWaitMs: number;
    fetchMinBytes: number;
    fetchMaxBytes: number;
    rackId: string | null;
  };

  private subscription: string[] = [];
  private subscriptionChanged = false;
  private memberEpoch = 0;
  private heartbeatIntervalMs = 5000;
  private heartbeatRunning: Promise<void> | null = null;
  private heartbeatWake: (() => void) | null = null;
  private leaving = false;
  private fatalError: Error | null = null;
  private assignmentIds: Array<{ topicId: string; partitions: number[] }> = [];
  private assigned: TopicPartitionRef[] = [];
  private assignmentWaiters: Array<() => void> = [];

  private readonly sessions = new Map<number, NodeSession>();
  /** Records delivered and not yet acknowledged, by `topicId:partition:offset`. */
  private readonly delivered = new Map<string, ShareConsumerRecord>();
  /** Acks waiting to be sent, per `topicId:partition`: offset → type (0 = GAP). */
  private readonly pendingAcks = new Map<string, { ref: TopicPartitionRef; offsets: Map<bigint, number> }>();
  private commitCallback: AcknowledgementCommitCallback | null = null;
  private started: Promise<void> | null = null;
  private polling = false;
  private closed = false;
  /** Whether the first fetch with an assignment has been looked at (share-start-note.ts). */
  private firstFetchSeen = false;

  constructor(config: ShareConsumerConfig) {
    if (!config.groupId) throw new ConfigError('a share consumer needs a groupId');
    const mode = config.acknowledgementMode ?? 'implicit';
    if (!['implicit', 'explicit', 'transactional'].includes(mode)) {
      throw new ConfigError(
        `acknowledgementMode must be 'implicit', 'explicit' or 'transactional', not ${JSON.stringify(mode)}`,
      );
    }
    this.groupId = config.groupId;
    this.configuredMode = mode;
    this.mode = mode;
    this.allowFallback = config.allowExplicitFallback ?? false;
    this.tracksDelivered = mode !== 'transactional' || this.allowFallback;
    this.cluster = new ClusterClient(config, `share-consumer-${config.groupId}`);
    this.deliveries =
      mode === 'transactional'
        ? new TransactionalDeliveries(
            (w) => this.addAck({ topicId: w.topicId, topic: w.topic, partition: w.partition }, w.offset, ACK_RELEASE),
            `share consumer ${this.cluster.clientId} (member ${this.memberId} of group ${config.groupId})`,
          )
        : null;
    this.cfg = {
      maxPollRecords: config.maxPollRecords ?? 500,
      fetchMaxWaitMs: config.fetchMaxWaitMs ?? 500,
      fetchMinBytes: config.fetchMinBytes ?? 1,
      fetchMaxBytes: config.fetchMaxBytes ?? 50 * 1024 * 1024,
      rackId: config.rackId ?? null,
    };
  }

  /** The acknowledgement mode in effect ('explicit' after an opted-in fallback). */
  get acknowledgementMode(): AcknowledgementMode {
    return this.mode;
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
    this.subscription = [...new Set(topics)].sort();
    this.subscriptionChanged = true;
    this.heartbeatWake?.();
    // Start connecting now; failures surface on poll().
    void this.ensureStarted().catch(() => {});
  }

  /** Leaves the group's subscription. */
  unsubscribe(): void {
    this.checkOpen();
    this.subscription = [];
    this.subscriptionChanged = true;
    this.heartbeatWake?.();
  }

  subscriptionTopics(): string[] {
    return [...this.subscription];
  }

  /** The partitions the group assigned to this member. */
  assignment(): Array<{ topic: string; topicId: string; partition: number }> {
    return this.assigned.map((a) => ({ ...a }));
  }

  /** For sendShareAcksToTransaction: group id, member id and member epoch (generation). */
  groupMetadata(): ShareGroupMetadata {
    const metadata = new ShareGroupMetadata(this.groupId, this.memberId, this.memberEpoch);
    // The producer that acknowledges with it reports its transaction ends to this consumer (DESIGN §5.8).
    if (this.deliveries && this.mode === 'transactional') attachDeliveries(metadata, this.deliveries);
    return metadata;
  }

  setAcknowledgementCommitCallback(callback: AcknowledgementCommitCallback | null): void {
    this.commitCallback = callback;
  }

  private ensureStarted(): Promise<void> {
    if (!this.started) {
      this.started = (async () => {
        const deadline = Date.now() + this.cluster.requestTimeoutMs;
        await this.cluster.refreshMetadata(this.subscription.length > 0 ? this.subscription : [], deadline);
        if (this.configuredMode === 'transactional')
          await this.checkTransactionalSupport(this.cluster.anyNode(), deadline);
        this.heartbeatRunning ??= this.heartbeatLoop();
      })();
      this.started.catch(() => (this.started = null));
    }
    return this.started;
  }

  /** Transactional mode needs TxnShareAcknowledge (API 96): fail fast, or fall back when opted in. */
  private async checkTransactionalSupport(nodeId: number, deadline?: number): Promise<void> {
    if (this.mode !== 'transactional') return;
    const has96 = await this.cluster.supports(nodeId, TxnShareAcknowledgeRequest.apiKey, 0, deadline);
    if (has96) return;
    const what = `broker ${this.cluster.describeMissingApi(nodeId, TxnShareAcknowledgeRequest, 'KIP-1289')}; acknowledgementMode 'transactional' needs it`;
    if (!this.allowFallback) {
      const error = new UnsupportedVersionError(
        `${what}. Upgrade the broker, or set allowExplicitFallback: true to use explicit acknowledgements without exactly-once guarantees.`,
      );
      this.fatalError = error;
      throw error;
    }
    this.cluster.logger.warn(
      `share consumer ${this.cluster.clientId}: ${what}; falling back to 'explicit' acknowledgements (allowExplicitFallback). ` +
        'Acknowledgements are no longer atomic with a transaction.',
    );
    this.mode = 'explicit';
  }

  // -------------------------------------------------------------------------
  // Membership

  private async heartbeatLoop(): Promise<void> {
    let failures = 0;
    while (!this.closed && !this.leaving) {
      let wait: number;
      try {
        if (this.subscription.length > 0 || this.memberEpoch > 0) {
          await this.heartbeat();
          failures = 0;
        }
        // Read after the response: it may have set a new interval, which times the very next heartbeat
        // (Kafka's AbstractHeartbeatRequestManager resets its timer to the response's heartbeatIntervalMs).
        wait = this.heartbeatIntervalMs;
      } catch (error) {
        failures++;
        if (error instanceof KafkaError && !error.retriable && !(error instanceof NetworkError)) {
          if (!this.closed) {
            this.fatalError = error;
            this.cluster.logger.error(`share consumer ${this.cluster.clientId}: heartbeat failed: ${error.message}`);
          }
          this.wakeAssignmentWaiters();
          return;
        }
        wait = this.cluster.backoff(failures);
      }
      if (this.subscriptionChanged) wait = 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.heartbeatWake = done;
      });
      this.heartbeatWake = null;
    }
  }

  private async heartbeat(leave = false, deadline = Date.now() + this.cluster.requestTimeoutMs): Promise<void> {
    const sendSubscription = this.subscriptionChanged || this.memberEpoch === 0;
    const subscription = this.subscription;
    const epoch = leave ? -1 : this.memberEpoch;
    const { response } = await this.cluster.coordinatorRequest(
      'ShareGroupHeartbeat',
      CoordinatorType.GROUP,
      this.groupId,
      ShareGroupHeartbeatRequest,
      ShareGroupHeartbeatResponse,
      () =>
        ShareGroupHeartbeatRequest.create({
          groupId: this.groupId,
          memberId: this.memberId,
          memberEpoch: epoch,
          rackId: this.cfg.rackId,
          subscribedTopicNames: leave ? null : sendSubscription ? subscription : null,
        }),
      (r) => r.errorCode,
      { deadline },
    );
    if (leave) return;
    if (sendSubscription && subscription === this.subscription) this.subscriptionChanged = false;
    const code = response.errorCode;
    if (code === Errors.UNKNOWN_MEMBER_ID || code === Errors.FENCED_MEMBER_EPOCH) {
      // Rejoin from scratch with the same member id.
      this.cluster.logger.warn(
        `share consumer ${this.cluster.clientId}: ${response.errorMessage ?? 'fenced'}; rejoining the group`,
      );
      this.memberEpoch = 0;
      this.subscriptionChanged = true;
      this.deliveries?.membershipLost(errorCodeName(code), code);
      await this.setAssignment([]);
      return; // the loop rejoins at once (subscriptionChanged)
    }
    if (code !== 0) throw errorFromCode(code, `ShareGroupHeartbeat (group ${this.groupId})`, response.errorMessage);
    this.memberEpoch = response.memberEpoch;
    if (response.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = response.heartbeatIntervalMs;
    if (response.assignment) await this.setAssignment(response.assignment.topicPartitions);
  }

  private async setAssignment(topicPartitions: Array<{ topicId: string; partitions: number[] }>): Promise<void> {
    this.assignmentIds = topicPartitions.map((t) => ({
      topicId: t.topicId,
      partitions: [...t.partitions].sort((a, b) => a - b),
    }));
    const topics = await this.cluster.topicsByIds(this.assignmentIds.map((t) => t.topicId)).catch(() => new Map());
    const refs: TopicPartitionRef[] = [];
    for (const t of this.assignmentIds) {
      const meta = topics.get(t.topicId);
      if (!meta) {
        this.cluster.logger.warn(
          `share consumer ${this.cluster.clientId}: assigned topic id ${t.topicId} is not in the metadata yet`,
        );
        continue;
      }
      for (const partition of t.partitions) refs.push({ topicId: t.topicId, topic: meta.name, partition });
    }
    this.assigned = refs;
    this.wakeAssignmentWaiters();
  }

  private wakeAssignmentWaiters(): void {
    const waiters = this.assignmentWaiters;
    this.assignmentWaiters = [];
    for (const wake of waiters) wake();
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
    if (this.mode === 'transactional') {
      throw new IllegalStateError(
        "acknowledge() is not allowed in acknowledgementMode 'transactional': acknowledgements travel in a producer's transaction — " +
          "call producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata())",
      );
    }
    if (this.mode === 'implicit') {
      throw new IllegalStateError(
        "acknowledge() is not allowed in acknowledgementMode 'implicit' (records are accepted on the next poll); set acknowledgementMode: 'explicit'",
      );
    }
    const code = acknowledgeTypeCode(type);
    const key = `${tpKey(record.topicId, record.partition)}:${record.offset}`;
    if (!this.delivered.has(key)) {
      throw new IllegalStateError(
        `record ${record.topic}-${record.partition}@${record.offset} was not delivered by this consumer's last poll, or was already acknowledged and committed`,
      );
    }
    this.addAck({ topicId: record.topicId, topic: record.topic, partition: record.partition }, record.offset, code);
  }

  private addAck(ref: TopicPartitionRef, offset: bigint, code: number): void {
    const key = tpKey(ref.topicId, ref.partition);
    let entry = this.pendingAcks.get(key);
    if (!entry) {
      entry = { ref, offsets: new Map() };
      this.pendingAcks.set(key, entry);
    }
    entry.offsets.set(offset, code);
  }

  /** Implicit mode: every delivered record not yet acknowledged is accepted. */
  private acceptAllDelivered(): void {
    for (const record of this.delivered.values()) {
      const entry = this.pendingAcks.get(tpKey(record.topicId, record.partition));
      if (entry?.offsets.has(record.offset)) continue;
      this.addAck(record, record.offset, 1);
    }
  }

  /** Takes the pending acks of the partitions led by `nodeId` (or all), as wire batches. */
  private takeAcks(
    filter: (ref: TopicPartitionRef) => boolean,
  ): Map<string, { ref: TopicPartitionRef; batches: AckBatch[] }> {
    const out = new Map<string, { ref: TopicPartitionRef; batches: AckBatch[] }>();
    for (const [key, entry] of this.pendingAcks) {
      if (!filter(entry.ref)) continue;
      this.pendingAcks.delete(key);
      const offsets = [...entry.offsets].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const batches: AckBatch[] = [];
      for (const [offset, type] of offsets) {
        const last = batches[batches.length - 1];
        if (last && last.lastOffset + 1n === offset && last.acknowledgeTypes[0] === type) last.lastOffset = offset;
        else batches.push({ firstOffset: offset, lastOffset: offset, acknowledgeTypes: [type] });
      }
      for (const [offset] of offsets) this.delivered.delete(`${key}:${offset}`);
      out.set(key, { ref: entry.ref, batches });
    }
    return out;
  }

  private leaderOf(ref: TopicPartitionRef): number {
    return this.cluster.topicById(ref.topicId)?.partitions.find((p) => p.partition === ref.partition)?.leader ?? -1;
  }

  /**
   * Sends the pending acknowledgements now and waits for the result: per
   * topic-partition (`topic-partition`), null or the error. Implicit mode
   * accepts every delivered record first.
   */
  async commitSync(timeoutMs = this.cluster.requestTimeoutMs): Promise<AcknowledgementCommitResult> {
    this.checkOpen();
    this.checkCommitAllowed('commitSync()');
    if (this.mode === 'implicit') this.acceptAllDelivered();
    return this.sendAcknowledgements(Date.now() + timeoutMs, false);
  }

  /** Like commitSync, without waiting; the result goes to the acknowledgement commit callback. */
  commitAsync(): void {
    this.checkOpen();
    this.checkCommitAllowed('commitAsync()');
    if (this.mode === 'implicit') this.acceptAllDelivered();
    void this.sendAcknowledgements(Date.now() + this.cluster.requestTimeoutMs, false).catch(() => {});
  }

  private checkCommitAllowed(call: string): void {
    if (this.mode === 'transactional') {
      throw new IllegalStateError(
        `${call} is not allowed in acknowledgementMode 'transactional': commit the producer's transaction that carries the acknowledgements (sendShareAcksToTransaction + commitTransaction)`,
      );
    }
  }

  private async sendAcknowledgements(deadline: number, closing: boolean): Promise<AcknowledgementCommitResult> {
    const result: AcknowledgementCommitResult = new Map();
    const byNode = groupBy(this.takeAcks(() => true).values(), (item) => this.leaderOf(item.ref));
    // Sessions without acks are closed too when closing.
    if (closing) for (const node of this.sessions.keys()) if (!byNode.has(node)) byNode.set(node, []);
    await Promise.all(
      [...byNode].map(async ([nodeId, items]) => {
        const session = this.sessions.get(nodeId);
        const fail = (error: Error): void => {
          for (const item of items) result.set(`${item.ref.topic}-${item.ref.partition}`, error);
        };
        if (nodeId < 0)
          return fail(
            new KafkaError(
              'the partition has no known leader; acknowledgements dropped (the records will be redelivered)',
              { retriable: true },
            ),
          );
        if (!session || session.epoch === 0) {
          if (items.length > 0)
            fail(
              new KafkaError(
                'no share session with the leader; the acquisition locks were released and the records will be redelivered',
                { code: Errors.SHARE_SESSION_NOT_FOUND },
              ),
            );
          return;
        }
        await this.withSession(nodeId, async (s) => {
          const epoch = closing ? -1 : s.epoch;
          const memberEpoch = this.memberEpoch;
          try {
            const { response } = await this.cluster.send(
              nodeId,
              ShareAcknowledgeRequest,
              ShareAcknowledgeResponse,
              () =>
                ShareAcknowledgeRequest.create({
                  groupId: this.groupId,
                  memberId: this.memberId,
                  shareSessionEpoch: epoch,
                  topics: [...groupBy(items, (item) => item.ref.topicId)].map(([topicId, list]) => ({
                    topicId,
                    partitions: list.map((i) => ({
                      partitionIndex: i.ref.partition,
                      acknowledgementBatches: i.batches,
                    })),
                  })),
                }),
              { deadline, timeoutMs: Math.max(1, deadline - Date.now()) },
            );
            if (response.errorCode !== 0) {
              this.onSessionError(nodeId, response.errorCode);
              if (response.errorCode === Errors.UNKNOWN_MEMBER_ID && !closing) this.rejoinAfterUnknownMember(memberEpoch);
              return fail(
                errorFromCode(
                  response.errorCode,
                  `ShareAcknowledge to ${this.cluster.describeNode(nodeId)}`,
                  response.errorMessage,
                ),
              );
            }
            s.epoch = closing ? 0 : nextEpoch(s.epoch);
            if (closing) this.sessions.delete(nodeId);
            for (const item of items) {
              const part = response.responses
                .find((t) => t.topicId === item.ref.topicId)
                ?.partitions.find((p) => p.partitionIndex === item.ref.partition);
              const code = part?.errorCode ?? 0;
              result.set(
                `${item.ref.topic}-${item.ref.partition}`,
                code === 0
                  ? null
                  : errorFromCode(code, `acknowledging ${item.ref.topic}-${item.ref.partition}`, part?.errorMessage),
              );
            }
          } catch (error) {
            this.sessions.delete(nodeId);
            fail(error as Error);
          }
        });
      }),
    );
    const firstError = [...result.values()].find((e) => e !== null) ?? null;
    if (result.size > 0) this.commitCallback?.(result, firstError);
    return result;
  }

  private onSessionError(nodeId: number, code: number): void {
    // UNKNOWN_MEMBER_ID: the group coordinator expired us (or we left); the broker dropped the session too.
    if (
      code === Errors.SHARE_SESSION_NOT_FOUND ||
      code === Errors.INVALID_SHARE_SESSION_EPOCH ||
      code === Errors.UNKNOWN_MEMBER_ID
    ) {
      const session = this.sessions.get(nodeId);
      if (session) {
        session.epoch = 0;
        session.partitions.clear();
      }
    }
  }

  /**
   * A ShareFetch or ShareAcknowledge answered UNKNOWN_MEMBER_ID: the group
   * coordinator no longer has this member (session timeout), and the broker
   * acquires nothing for it until it joins again. Rejoin now (heartbeat with
   * epoch 0) rather than at the next heartbeat, and fetch nothing meanwhile:
   * with no assignment poll() waits for the rejoin's. `sentWithEpoch` is the
   * member epoch when the request was sent: if a heartbeat has moved it since
   * (already rejoined), nothing is done.
   */
  private rejoinAfterUnknownMember(sentWithEpoch: number): void {
    if (this.closed || this.leaving || sentWithEpoch <= 0 || this.memberEpoch !== sentWithEpoch) return;
    this.cluster.logger.warn(
      `share consumer ${this.cluster.clientId}: member ${this.memberId} is not in group ${this.groupId} any more (UNKNOWN_MEMBER_ID on a share request); rejoining the group`,
    );
    this.memberEpoch = 0;
    this.subscriptionChanged = true;
    this.deliveries?.membershipLost('UNKNOWN_MEMBER_ID on a share request', Errors.UNKNOWN_MEMBER_ID);
    this.assignmentIds = [];
    this.assigned = [];
    this.heartbeatWake?.();
  }

  /** Serializes the requests of one share session (each one moves its epoch). */
  private async withSession<T>(nodeId: number, fn: (session: NodeSession) => Promise<T>): Promise<T> {
    let session = this.sessions.get(nodeId);
    if (!session) {
      session = { epoch: 0, partitions: new Set(), lock: Promise.resolve() };
      this.sessions.set(nodeId, session);
    }
    const s = session;
    const run = s.lock.then(() => fn(s));
    s.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
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
    if (this.subscription.length === 0)
      throw new IllegalStateError('poll() needs a subscription: call subscribe(topics) first');
    if (this.polling)
      throw new IllegalStateError(
        'poll() is already running on this consumer; a share consumer is not safe for concurrent use',
      );
    this.polling = true;
    try {
      const deadline = Date.now() + Math.max(0, timeoutMs);
      if (this.fatalError) throw this.fatalError;
      await this.ensureStarted();
      if (this.fatalError) throw this.fatalError;
      if (this.mode === 'implicit') this.acceptAllDelivered();
      else if (this.mode === 'explicit') {
        const unacked = [...this.delivered.values()].filter(
          (r) => !this.pendingAcks.get(tpKey(r.topicId, r.partition))?.offsets.has(r.offset),
        );
        if (unacked.length > 0) {
          throw new IllegalStateError(
            `in acknowledgementMode 'explicit' every record must be acknowledged before the next poll(); ${unacked.length} record(s) are not (first: ${unacked[0]!.topic}-${unacked[0]!.partition}@${unacked[0]!.offset})`,
          );
        }
      } else {
        // Transactional: what was delivered stays acquired until the producer's transaction ends (or the lock expires).
        this.delivered.clear();
      }
      for (;;) {
        if (this.assigned.length === 0) {
          await this.waitForAssignment(deadline);
          if (this.fatalError) throw this.fatalError;
        }
        let records = await this.fetchOnce(deadline);
        if (this.deliveries && this.mode === 'transactional' && records.length > 0) {
          // A record whose earlier delivery is in the open transaction is not handed out again (DESIGN §5.8).
          const fetched = records.length;
          records = this.deliveries.admit(records);
          for (const record of records) attachDeliveries(record, this.deliveries);
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

  private async waitForAssignment(deadline: number): Promise<void> {
    const wait = deadline - Date.now();
    if (wait <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.assignmentWaiters = self.assignmentWaiters.filter((w) => w !== done);
        resolve();
      }
      this.assignmentWaiters.push(done);
    });
  }

  private async fetchOnce(deadline: number): Promise<ShareConsumerRecord[]> {
    const byNode = groupBy(this.assigned, (ref) => Math.max(this.leaderOf(ref), -1));
    const missingLeader = byNode.delete(-1);
    if (missingLeader) await this.cluster.refreshMetadata(null, deadline).catch(() => {});
    // Sessions with nodes that lead none of our partitions any more: forget their partitions.
    for (const nodeId of this.sessions.keys()) if (!byNode.has(nodeId)) byNode.set(nodeId, []);
    const maxWait = Math.max(0, Math.min(this.cfg.fetchMaxWaitMs, deadline - Date.now()));
    const results = await Promise.all([...byNode].map(([nodeId, refs]) => this.fetchFromNode(nodeId, refs, maxWait)));
    const records = results.flat();
    if (!this.firstFetchSeen && this.assigned.length > 0) {
      this.firstFetchSeen = true;
      if (records.length === 0) this.noteStartAtLogEnd([...this.assigned]);
    }
    return records;
  }

  /**
   * The first fetch brought nothing: if the group starts at the log end of
   * partitions that hold records (share.auto.offset.reset=latest, Kafka's
   * default), say so once, naming the config. In the background: poll() does not wait.
   */
  private noteStartAtLogEnd(refs: TopicPartitionRef[]): void {
    startAtLogEndNote(this.cluster, this.groupId, refs, (ref) => this.leaderOf(ref)).then(
      (line) => {
        if (line !== undefined && !this.closed) this.cluster.logger.warn(`share consumer ${this.cluster.clientId}: ${line}`);
      },
      (error: Error) => this.cluster.logger.debug(`share consumer ${this.cluster.clientId}: checking where the group starts failed: ${error.message}`),
    );
  }

  private async fetchFromNode(
    nodeId: number,
    refs: TopicPartitionRef[],
    maxWaitMs: number,
  ): Promise<ShareConsumerRecord[]> {
    if (this.configuredMode === 'transactional') {
      try {
        await this.checkTransactionalSupport(nodeId);
      } catch (error) {
        if (error instanceof UnsupportedVersionError) throw error;
        return [];
      }
    }
    return this.withSession(nodeId, async (session) => {
      const wanted = new Set(refs.map((r) => tpKey(r.topicId, r.partition)));
      const forgotten = [...session.partitions].filter((k) => !wanted.has(k));
      if (refs.length === 0 && session.epoch === 0) return [];
      const isNew = session.epoch === 0;
      const acks = isNew ? new Map() : this.takeAcks((ref) => this.leaderOf(ref) === nodeId);
      const toSend = [
        ...refs.map((ref) => ({ ref, batches: acks.get(tpKey(ref.topicId, ref.partition))?.batches ?? [] })),
        // Acks for partitions no longer assigned to us but still led by this node.
        ...[...acks].filter(([key]) => !wanted.has(key)).map(([, item]) => item),
      ];
      const byTopic = groupBy(toSend, (entry) => entry.ref.topicId);
      const forgottenByTopic = groupBy(
        forgotten.map((key) => key.split(':') as [string, string]),
        ([topicId]) => topicId,
      );
      let response: ShareFetchResponse;
      const memberEpoch = this.memberEpoch;
      try {
        ({ response } = await this.cluster.send(
          nodeId,
          ShareFetchRequest,
          ShareFetchResponse,
          () =>
            ShareFetchRequest.create({
              groupId: this.groupId,
              memberId: this.memberId,
              shareSessionEpoch: session.epoch,
              maxWaitMs,
              minBytes: this.cfg.fetchMinBytes,
              maxBytes: this.cfg.fetchMaxBytes,
              maxRecords: this.cfg.maxPollRecords,
              batchSize: this.cfg.maxPollRecords,
              topics: [...byTopic].map(([topicId, entries]) => ({
                topicId,
                partitions: entries.map(({ ref, batches }) => ({
                  partitionIndex: ref.partition,
                  partitionMaxBytes: 0,
                  acknowledgementBatches: batches,
                })),
              })),
              forgottenTopicsData: isNew
                ? []
                : [...forgottenByTopic].map(([topicId, keys]) => ({ topicId, partitions: keys.map(([, p]) => Number(p)) })),
            }),
          { timeoutMs: this.cluster.requestTimeoutMs + maxWaitMs },
        ));
      } catch (error) {
        // The connection is gone, and with it the session and its locks.
        session.epoch = 0;
        session.partitions.clear();
        this.reportAcks(acks, error as Error);
        if (error instanceof UnsupportedVersionError) throw error;
        if (!(error instanceof NetworkError))
          this.cluster.logger.warn(
            `ShareFetch to ${this.cluster.describeNode(nodeId)} failed: ${(error as Error).message}`,
          );
        await sleep(this.cluster.backoff(1), this.cluster.closeSignal);
        return [];
      }
      if (response.errorCode !== 0) {
        this.onSessionError(nodeId, response.errorCode);
        const error = errorFromCode(
          response.errorCode,
          `ShareFetch to ${this.cluster.describeNode(nodeId)}`,
          response.errorMessage,
        );
        this.reportAcks(acks, error);
        if (response.errorCode === Errors.UNKNOWN_MEMBER_ID) {
          this.rejoinAfterUnknownMember(memberEpoch);
          // Still assigned only if a heartbeat already rejoined meanwhile: retry after a short backoff, never spin.
          if (this.assigned.length > 0) await sleep(this.cluster.backoff(1), this.cluster.closeSignal);
          return [];
        }
        if (!isRetriableCode(response.errorCode)) throw error;
        await sleep(this.cluster.backoff(1), this.cluster.closeSignal);
        return [];
      }
      session.epoch = nextEpoch(session.epoch);
      session.partitions = wanted;
      const records: ShareConsumerRecord[] = [];
      const ackResult: AcknowledgementCommitResult = new Map();
      for (const topic of response.responses) {
        const meta = this.cluster.topicById(topic.topicId);
        for (const part of topic.partitions) {
          const ref: TopicPartitionRef = {
            topicId: topic.topicId,
            topic: meta?.name ?? topic.topicId,
            partition: part.partitionIndex,
          };
          const key = tpKey(ref.topicId, ref.partition);
          if (acks.has(key)) {
            ackResult.set(
              `${ref.topic}-${ref.partition}`,
              part.acknowledgeErrorCode === 0
                ? null
                : errorFromCode(
                    part.acknowledgeErrorCode,
                    `acknowledging ${ref.topic}-${ref.partition}`,
                    part.acknowledgeErrorMessage,
                  ),
            );
          }
          if (part.errorCode !== 0) {
            if (
              part.errorCode === Errors.NOT_LEADER_OR_FOLLOWER ||
              part.errorCode === Errors.UNKNOWN_TOPIC_OR_PARTITION ||
              part.errorCode === Errors.UNKNOWN_TOPIC_ID
            ) {
              this.cluster.invalidateMetadata();
              void this.cluster.refreshMetadata(null).catch(() => {});
            } else {
              this.cluster.logger.warn(
                `ShareFetch ${ref.topic}-${ref.partition}: ${part.errorMessage ?? part.errorCode}`,
              );
            }
            continue;
          }
          records.push(...this.decodePartition(ref, part.records, part.acquiredRecords));
        }
      }
      if (ackResult.size > 0) this.commitCallback?.(ackResult, [...ackResult.values()].find((e) => e !== null) ?? null);
      return records;
    });
  }

  private reportAcks(acks: Map<string, { ref: TopicPartitionRef; batches: AckBatch[] }>, error: Error): void {
    if (acks.size === 0) return;
    const result: AcknowledgementCommitResult = new Map();
    for (const { ref } of acks.values()) result.set(`${ref.topic}-${ref.partition}`, error);
    this.commitCallback?.(result, error);
  }

  private decodePartition(
    ref: TopicPartitionRef,
    bytes: Uint8Array | null,
    acquired: Array<{ firstOffset: bigint; lastOffset: bigint; deliveryCount: number }>,
  ): ShareConsumerRecord[] {
    if (acquired.length === 0) return [];
    const out: ShareConsumerRecord[] = [];
    const found = new Set<bigint>();
    /** Offset ranges of the complete batches in the response: an acquired offset in one of them with no data record is a gap. */
    const covered: Array<{ from: bigint; to: bigint }> = [];
    const ranges = [...acquired].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
    const rangeOf = (offset: bigint) => ranges.find((r) => offset >= r.firstOffset && offset <= r.lastOffset);
    const deliveredKey = `${tpKey(ref.topicId, ref.partition)}:`;
    if (bytes && bytes.length > 0) {
      const { batches } = decodeRecordBatches(bytes);
      for (const batch of batches) {
        covered.push({ from: batch.baseOffset, to: batch.lastOffset });
        if (batch.isControl) continue;
        for (const record of batch.records) {
          const range = rangeOf(record.offset);
          if (!range || found.has(record.offset)) continue;
          found.add(record.offset);
          const delivered: ShareConsumerRecord = {
            topic: ref.topic,
            topicId: ref.topicId,
            partition: ref.partition,
            offset: record.offset,
            timestamp: record.timestamp,
            key: record.key,
            value: record.value,
            headers: record.headers,
            deliveryCount: range.deliveryCount,
          };
          out.push(delivered);
          if (this.tracksDelivered) this.delivered.set(`${deliveredKey}${record.offset}`, delivered);
        }
      }
    }
    // Acquired offsets that are positively not records — inside a complete batch of the response but not one of
    // its data records (a control record, a record removed by compaction) — are acknowledged as GAP. An acquired
    // offset that no batch of the response covers (bytes cut short, a batch not sent) may be a real record: it is
    // left alone, so that its lock expires and it is delivered again. Archiving it (GAP → ARCHIVED) would lose it;
    // in transactional mode no one would ever process it.
    const isCovered = (o: bigint) => covered.some((c) => o >= c.from && o <= c.to);
    for (const range of ranges) {
      const span = range.lastOffset - range.firstOffset + 1n;
      if (span > 100000n) continue;
      for (let o = range.firstOffset; o <= range.lastOffset; o++) if (!found.has(o) && isCovered(o)) this.addAck(ref, o, 0);
    }
    return out;
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
      if (this.mode === 'implicit') this.acceptAllDelivered();
      if (this.mode === 'transactional') {
        // Keep GAP acks only; record acks belong to transactions.
        for (const [key, entry] of this.pendingAcks) {
          for (const [o, t] of entry.offsets) if (t !== 0) entry.offsets.delete(o);
          if (entry.offsets.size === 0) this.pendingAcks.delete(key);
        }
      }
      this.leaving = true;
      this.heartbeatWake?.();
      await this.sendAcknowledgements(deadline, true).catch(() => {});
      if (this.memberEpoch > 0 || (this.memberEpoch === 0 && this.heartbeatRunning)) {
        await this.heartbeat(true, deadline).catch((error: unknown) =>
          this.cluster.logger.debug(`leaving share group ${this.groupId} failed: ${(error as Error).message}`),
        );
      }
    } finally {
      this.closed = true;
      this.wakeAssignmentWaiters();
      await this.cluster.close();
      await this.heartbeatRunning?.catch(() => {});
    }
  }
}

function nextEpoch(epoch: number): number {
  return epoch >= MAX_EPOCH ? 1 : epoch + 1;
}
