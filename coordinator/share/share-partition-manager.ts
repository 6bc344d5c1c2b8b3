import type { BrokerContext, PartitionReader, TransactionalProducer } from '../broker-context.js';
import { BrokerError } from '../errors.js';
import { validateAckBatches, validateTxnAckBatches, type WireAckBatch } from './acknowledgements.js';
import type { Clock } from './clock.js';
import type { GroupShareSettings, ShareConfig } from './share-config.js';
import { ErrorCode, ShareError } from './share-error.js';
import { LogRead } from './log-window.js';
import { SerialQueue } from './serial-queue.js';
import { SharePartition, sharePartitionKeyString, type AcquiredRange, type SharePartitionKey, type StagedAck, type StateChange } from './share-partition.js';
import { ShareStateStore } from './share-state-store.js';
import type { StateLog } from './state-log.js';

/**
 * The share partitions this node leads, and every operation on them that the
 * share APIs need: it finds the data partition, runs the state machine, writes
 * what changed (fsynced per the flush settings) and only then answers. All of it runs on one
 * SerialQueue, so each operation sees and leaves a consistent state. If a
 * write fails, the in-memory state is rebuilt from the log, as after a
 * restart, so that memory never claims what the disk does not hold.
 */

export interface PartitionRef {
  topicId: string;
  partition: number;
}

export interface PartitionError {
  errorCode: number;
  errorMessage: string | null;
}

export interface FetchedPartition extends PartitionRef, PartitionError {
  records: Uint8Array | null;
  acquired: AcquiredRange[];
}

export interface AckRequestPartition extends PartitionRef {
  batches: readonly WireAckBatch[];
}

export interface TxnAckRequestPartition extends PartitionRef {
  batches: readonly { firstOffset: bigint; lastOffset: bigint; acknowledgeType: number }[];
}

export type ShareBroker = Pick<BrokerContext, 'nodeId' | 'cluster' | 'partition' | 'log'>;

export interface SharePartitionManagerOptions {
  broker: ShareBroker;
  stateLog: StateLog;
  clock: Clock;
  config: ShareConfig;
  /** The share settings a group's own configs set (KIP-932 group configs); absent keys follow `config`. */
  groupSettings?: (groupId: string) => Partial<GroupShareSettings>;
}

/** A rewrite's failed write (else null), and the partitions it left alone: a transaction holds acknowledgements there. */
export type StateRewrite = { failure: PartitionError | null; pending: SharePartitionKey[] };

const OK: PartitionError = { errorCode: ErrorCode.NONE, errorMessage: null };

export class SharePartitionManager {
  private readonly partitions = new Map<string, SharePartition>();
  private readonly store: ShareStateStore;
  private readonly queue = new SerialQueue();
  private readonly availabilityListeners = new Set<() => void>();
  private readonly broker: ShareBroker;
  private readonly clock: Clock;
  private readonly config: ShareConfig;
  private readonly groupSettings: (groupId: string) => Partial<GroupShareSettings>;
  /** One limits object per group, shared by its share partitions and updated in place when its configs change. */
  private readonly limits = new Map<string, { deliveryCountLimit: number; recordLockDurationMs: number; maxRecordLocks: number }>();

  constructor(options: SharePartitionManagerOptions) {
    this.broker = options.broker;
    this.clock = options.clock;
    this.config = options.config;
    this.groupSettings = options.groupSettings ?? (() => ({}));
    this.store = new ShareStateStore(options.stateLog, {
      snapshotUpdateRecords: options.config.snapshotUpdateRecords,
      now: () => options.clock.now(),
    });
  }

  /** Rebuilds every share partition from `__share_group_state`: committed state, plus pending acks as TX_PENDING. */
  recover(): Promise<void> {
    return this.queue.run(() => this.reload());
  }

  /** Where the data partition of `ref` lives: its reader here, or the error to answer with. */
  locate(ref: PartitionRef): { reader: PartitionReader } | PartitionError {
    const topic = this.broker.cluster.topicById(ref.topicId);
    if (topic === undefined || topic.internal) return error(ErrorCode.UNKNOWN_TOPIC_ID, `unknown topic id ${ref.topicId}`);
    if (!Number.isInteger(ref.partition) || ref.partition < 0 || ref.partition >= topic.partitions) {
      return error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${topic.name} has no partition ${ref.partition}`);
    }
    const reader = this.broker.partition(ref.topicId, ref.partition);
    if (reader === undefined) {
      return error(ErrorCode.NOT_LEADER_OR_FOLLOWER, `node ${this.broker.nodeId} does not lead ${topic.name}-${ref.partition}`);
    }
    return { reader };
  }

  /** The node leading a data partition (for CurrentLeader), or −1. */
  leaderOf(ref: PartitionRef): number {
    const topic = this.broker.cluster.topicById(ref.topicId);
    return topic === undefined ? -1 : this.broker.cluster.leaderOf(topic.name, ref.partition);
  }

  /**
   * ShareAcknowledge / the acknowledgements of a ShareFetch: each partition
   * all or nothing, each partition answered on its own.
   */
  acknowledge(groupId: string, memberId: string, requests: readonly AckRequestPartition[], allowRenew: boolean): Promise<PartitionError[]> {
    return this.queue.run(async () => {
      const now = this.clock.now();
      this.limitsFor(groupId);
      const results: PartitionError[] = [];
      const writes: { key: SharePartitionKey; sp: SharePartition; changes: StateChange[]; index: number }[] = [];
      for (const [index, request] of requests.entries()) {
        const located = this.locate(request);
        if (!('reader' in located)) {
          results.push(located);
          continue;
        }
        const key = { groupId, topicId: request.topicId, partition: request.partition };
        try {
          const ranges = validateAckBatches(request.batches, allowRenew);
          const sp = this.partitions.get(sharePartitionKeyString(key));
          if (sp === undefined) throw new ShareError(ErrorCode.INVALID_RECORD_STATE, 'no records of this partition were acquired');
          // Expired locks are persisted even when the acknowledgement itself is refused (their delivery counts must survive).
          const write = { key, sp, changes: sp.expireLocks(now), index };
          writes.push(write);
          write.changes.push(...sp.acknowledge(memberId, ranges, now));
          results.push(OK);
        } catch (caught) {
          results.push(errorOf(caught));
        }
      }
      const failure = await this.persist(writes);
      if (failure !== null) for (const { index } of writes) if (results[index] === OK) results[index] = failure;
      if (writes.some((w) => w.changes.some((c) => c.state === 'AVAILABLE'))) this.announceAvailable();
      return results;
    });
  }

  /**
   * Acquires records for `memberId` from each partition, at most `maxRecords`
   * in all and about `maxBytes` of batches (at least one batch per partition
   * that has records, as Kafka's fetch does).
   */
  fetch(groupId: string, memberId: string, refs: readonly PartitionRef[], maxRecords: number, maxBytes: number): Promise<FetchedPartition[]> {
    return this.queue.run(async () => {
      const now = this.clock.now();
      const settings = this.settingsFor(groupId);
      const results: FetchedPartition[] = [];
      const expired: { key: SharePartitionKey; sp: SharePartition; changes: StateChange[] }[] = [];
      let recordsLeft = maxRecords;
      let bytesLeft = maxBytes;
      for (const ref of refs) {
        const result: FetchedPartition = { ...ref, ...OK, records: null, acquired: [] };
        results.push(result);
        const located = this.locate(ref);
        if (!('reader' in located)) {
          Object.assign(result, located);
          continue;
        }
        if (recordsLeft <= 0) continue;
        const { reader } = located;
        const key = { groupId, topicId: ref.topicId, partition: ref.partition };
        try {
          // read_committed stops at the last stable offset and skips aborted transactions; read_uncommitted reads to the high watermark.
          const upTo = settings.isolationLevel === 'read_committed' ? reader.lastStableOffset() : reader.highWatermark();
          const sp = this.partitionFor(key, settings.autoOffsetReset === 'latest' ? upTo : reader.logStartOffset());
          // Written after the loop: expired locks, and records the acquisition archived at the delivery-count limit.
          const changes = sp.expireLocks(now);
          expired.push({ key, sp, changes });
          sp.moveStartTo(reader.logStartOffset());
          const from = sp.nextFetchOffset();
          if (from >= upTo) continue;
          const fetched = LogRead.index(reader.read(from, Math.max(bytesLeft, 1), settings.isolationLevel), from, upTo);
          const acquired = sp.acquire(memberId, fetched.window, recordsLeft, now, changes);
          result.acquired = acquired;
          result.records = fetched.recordsFor(acquired);
          for (const r of acquired) recordsLeft -= Number(r.lastOffset - r.firstOffset + 1n);
          bytesLeft -= result.records?.length ?? 0;
        } catch (caught) {
          Object.assign(result, errorOf(caught));
        }
      }
      // Expired locks are state changes like any other; a failure to persist them does not fail the fetch.
      if ((await this.persist(expired)) !== null) for (const r of results) Object.assign(r, { records: null, acquired: [] });
      return results;
    });
  }

  /**
   * TxnShareAcknowledge: checks each partition, writes the acceptable ones as
   * one transactional batch (the broker checks the producer's transaction),
   * and only then pins the records TX_PENDING. Returns per-partition errors,
   * and a request-level error when the write itself was refused.
   *
   * A retry of acknowledgements already pending for this producer id and
   * epoch with the same types (SharePartition.planTransactional) succeeds
   * without a second write. `memberError` is the request-level answer of the
   * member checks (unknown member, generation ahead) that the handler made: it
   * is given unless the whole request is such a retry, whose member was
   * checked when it was first stored (membership is not kept across restarts).
   */
  stageTransactional(
    producer: TransactionalProducer,
    groupId: string,
    memberId: string | null,
    requests: readonly TxnAckRequestPartition[],
    memberError: PartitionError | null = null,
  ): Promise<{ errorCode: number; errorMessage: string | null; partitions: PartitionError[] }> {
    return this.queue.run(async () => {
      const now = this.clock.now();
      this.limitsFor(groupId);
      const failAll = (failure: PartitionError) => ({ ...failure, partitions: requests.map(() => failure) });
      try {
        this.store.checkProducerEpoch(producer.producerId, producer.producerEpoch);
      } catch (caught) {
        return failAll(errorOf(caught));
      }
      const results: PartitionError[] = [];
      // A partition listed twice names its offsets twice in one request: neither entry is staged (not the first
      // one alone, as a one-pass check would), as KafkaApis refuses overlapping batches with INVALID_REQUEST.
      const counts = new Map<string, number>();
      for (const r of requests) {
        const id = sharePartitionKeyString({ groupId, topicId: r.topicId, partition: r.partition });
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      const plans: { key: SharePartitionKey; sp: SharePartition; staged: StagedAck[]; repeated: number; index: number }[] = [];
      const expired: { key: SharePartitionKey; sp: SharePartition; changes: StateChange[] }[] = [];
      for (const [index, request] of requests.entries()) {
        const located = this.locate(request);
        if (!('reader' in located)) {
          // The share state of a partition lives with its leader (DESIGN §6): elsewhere, this node is not its coordinator.
          results.push(located.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ? { ...located, errorCode: ErrorCode.NOT_COORDINATOR } : located);
          continue;
        }
        const key = { groupId, topicId: request.topicId, partition: request.partition };
        try {
          const id = sharePartitionKeyString(key);
          if (counts.get(id)! > 1) throw new ShareError(ErrorCode.INVALID_REQUEST, 'the partition appears twice in the request');
          const ranges = validateTxnAckBatches(request.batches);
          const sp = this.partitions.get(id);
          if (sp === undefined) throw new ShareError(ErrorCode.INVALID_RECORD_STATE, 'no records of this partition were acquired');
          expired.push({ key, sp, changes: sp.expireLocks(now) });
          plans.push({ key, sp, ...sp.planTransactional(producer, memberId, ranges, now), index });
          results.push(OK);
        } catch (caught) {
          results.push(errorOf(caught));
        }
      }
      const expiryFailure = await this.persist(expired);
      if (expiryFailure !== null) return { ...expiryFailure, partitions: results.map((r) => (r === OK ? expiryFailure : r)) };
      const pureRetry = results.every((r) => r === OK) && plans.every((p) => p.staged.length === 0) && plans.some((p) => p.repeated > 0);
      if (memberError !== null && !pureRetry) return failAll(memberError);
      try {
        await this.store.writeTransactional(
          producer,
          plans.map((p) => ({ key: p.key, startOffset: p.sp.startOffset, staged: p.staged })),
        );
      } catch (caught) {
        const failure = errorOf(caught);
        if (!(caught instanceof BrokerError)) this.reload(); // an I/O failure: trust only the log
        for (const { index } of plans) results[index] = failure;
        return { ...failure, partitions: results };
      }
      for (const { sp, staged } of plans) sp.applyTransactional(producer, staged);
      return { ...OK, partitions: results };
    });
  }

  /**
   * A COMMIT/ABORT marker for this producer is in the log: resolve its pending
   * acks, with the delivery-count limit in force now (the group's config may
   * have changed since the acks were staged). The marker alone makes the
   * transactional update count (commit: Accept → ACKNOWLEDGED, Reject →
   * ARCHIVED, Release → AVAILABLE) or releases its records with their delivery
   * counts (abort; ShareStateStore.resolve); neither applies a limit.
   *
   * So one thing is written, on commit as on abort: the records whose state
   * the marker alone does not give — a Release or an abort archived because
   * the delivery count reached the limit — as a ShareUpdate. Without it the
   * log would say AVAILABLE while this node had archived them, the next write
   * would move the start offset past them with no terminal state (an auditor
   * such as the chaos checker counts them as lost), and a restart would bring
   * them back. Idempotent. A crash between the marker and this write brings
   * the records back AVAILABLE at or over the limit; the next fetch archives
   * them and writes that (SharePartition.acquire).
   */
  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): Promise<void> {
    return this.queue.run(async () => {
      this.store.completeTransaction(producerId, producerEpoch, commit);
      const unwritten: { key: SharePartitionKey; sp: SharePartition; changes: StateChange[] }[] = [];
      for (const sp of this.partitions.values()) {
        if (!sp.hasPendingFor(producerId)) continue;
        this.limitsFor(sp.key.groupId);
        const changes = this.store.unwritten(sp.key, sp.completeTransaction(producerId, producerEpoch, commit));
        if (changes.length > 0) unwritten.push({ key: sp.key, sp, changes });
      }
      // A failed write reloads the state from the log (marker included): the records come back AVAILABLE, and the next fetch archives them.
      if (unwritten.length > 0) await this.persist(unwritten);
      this.announceAvailable();
    });
  }

  /**
   * Releases the member's acquired records (it left, timed out, closed its
   * share session or lost its connection); only in `refs` when given
   * (partitions forgotten by a ShareFetch).
   */
  releaseMember(groupId: string, memberId: string, refs?: readonly PartitionRef[]): Promise<void> {
    return this.queue.run(async () => {
      this.limitsFor(groupId);
      const wanted = refs === undefined ? null : new Set(refs.map((r) => sharePartitionKeyString({ groupId, ...r })));
      const writes: { key: SharePartitionKey; sp: SharePartition; changes: StateChange[] }[] = [];
      for (const [id, sp] of this.partitions) {
        if (sp.key.groupId !== groupId || (wanted !== null && !wanted.has(id))) continue;
        writes.push({ key: sp.key, sp, changes: sp.releaseMember(memberId) });
      }
      await this.persist(writes);
      if (writes.some((w) => w.changes.length > 0)) this.announceAvailable();
    });
  }

  /** Lock expiry for every share partition (the background task). */
  expireLocks(): Promise<void> {
    return this.queue.run(async () => {
      const now = this.clock.now();
      for (const groupId of new Set([...this.partitions.values()].map((sp) => sp.key.groupId))) this.limitsFor(groupId);
      const writes = [...this.partitions.values()].map((sp) => ({ key: sp.key, sp, changes: sp.expireLocks(now) }));
      await this.persist(writes);
      if (writes.some((w) => w.changes.length > 0)) this.announceAvailable();
    });
  }

  /** Calls `listener` whenever records may have become AVAILABLE (released, expired, aborted); returns the unsubscribe function. */
  onAvailable(listener: () => void): () => void {
    this.availabilityListeners.add(listener);
    return () => this.availabilityListeners.delete(listener);
  }

  /** A snapshot of every share partition's state, and the transactions with pending acks. */
  describe(): {
    partitions: { key: SharePartitionKey; state: ReturnType<SharePartition['describe']> }[];
    pendingTransactions: ReturnType<ShareStateStore['pendingProducers']>;
  } {
    const partitions = [...this.partitions.values()]
      .map((sp) => ({ key: sp.key, state: sp.describe() }))
      .sort((a, b) => sharePartitionKeyString(a.key).localeCompare(sharePartitionKeyString(b.key)));
    return { partitions, pendingTransactions: this.store.pendingProducers() };
  }

  /**
   * AlterShareGroupOffsets: each share partition starts over at its new start offset with nothing in flight,
   * persisted before memory changes (Kafka re-initializes its state: InitializeShareGroupState).
   */
  initializeState(partitions: readonly { key: SharePartitionKey; startOffset: bigint }[]): Promise<StateRewrite> {
    return this.rewrite(partitions, async (free) => {
      await this.store.initializeState(free);
      return () =>
        free.forEach((p) => this.partitions.set(sharePartitionKeyString(p.key), new SharePartition(p.key, this.limitsFor(p.key.groupId), p.startOffset)));
    });
  }

  /** DeleteShareGroupOffsets: forgets the share partitions, so that the next fetch starts per share.auto.offset.reset (Kafka: DeleteShareGroupState). */
  deleteState(keys: readonly SharePartitionKey[]): Promise<StateRewrite> {
    return this.rewrite(
      keys.map((key) => ({ key })),
      async (free) => {
        await this.store.deleteState(free.map((f) => f.key).filter((k) => this.store.view(k) !== undefined));
        return () => free.forEach((f) => this.partitions.delete(sharePartitionKeyString(f.key)));
      },
    );
  }

  /** Waits for queued work (tests and shutdown). */
  drain(): Promise<void> {
    return this.queue.drain();
  }

  // -------------------------------------------------------------------------

  /**
   * The share settings in force for a group: its own configs over the
   * coordinator's. Also brings the group's shared limits object up to date
   * (limitsFor).
   */
  settingsFor(groupId: string): GroupShareSettings {
    const own = this.groupSettings(groupId);
    const limits = this.limitsFor(groupId);
    return {
      autoOffsetReset: own.autoOffsetReset ?? this.config.autoOffsetReset,
      isolationLevel: own.isolationLevel ?? this.config.isolationLevel,
      recordLockDurationMs: limits.recordLockDurationMs,
      deliveryCountLimit: limits.deliveryCountLimit,
    };
  }

  /**
   * The group's limits object, shared by its share partitions, brought up to
   * date with the group's configs. Every operation that may apply a limit
   * (acquire, release, lock expiry, a marker) calls it first, so that a
   * changed delivery-count limit or lock duration applies from that moment on,
   * as Kafka reads group configs when it needs them: a commit resolved with a
   * limit read only at the last fetch kept records AVAILABLE that the new
   * limit archives.
   */
  private limitsFor(groupId: string): { deliveryCountLimit: number; recordLockDurationMs: number; maxRecordLocks: number } {
    const own = this.groupSettings(groupId);
    const deliveryCountLimit = own.deliveryCountLimit ?? this.config.deliveryCountLimit;
    const recordLockDurationMs = own.recordLockDurationMs ?? this.config.recordLockDurationMs;
    let limits = this.limits.get(groupId);
    if (limits === undefined) {
      limits = { deliveryCountLimit, recordLockDurationMs, maxRecordLocks: this.config.maxRecordLocks };
      this.limits.set(groupId, limits);
    } else {
      limits.deliveryCountLimit = deliveryCountLimit;
      limits.recordLockDurationMs = recordLockDurationMs;
    }
    return limits;
  }

  /** The share partition of `key`, created on first fetch at `start` (share.auto.offset.reset: the log start or end). */
  private partitionFor(key: SharePartitionKey, start: bigint): SharePartition {
    const id = sharePartitionKeyString(key);
    let sp = this.partitions.get(id);
    if (sp === undefined) {
      sp = new SharePartition(key, this.limitsFor(key.groupId), start);
      this.partitions.set(id, sp);
    }
    return sp;
  }

  /** Writes the changes of an operation; on failure rebuilds from the log and returns the error to answer with. */
  private async persist(writes: readonly { key: SharePartitionKey; sp: SharePartition; changes: readonly StateChange[] }[]): Promise<PartitionError | null> {
    // A partition never written before needs a write only once something changed; a known one also
    // when only its start offset moved (the store skips it if it did not).
    const partitions = writes
      .filter((w) => w.changes.length > 0 || this.store.view(w.key) !== undefined)
      .map((w) => ({ key: w.key, startOffset: w.sp.startOffset, changes: w.changes }));
    if (partitions.length === 0) return null;
    try {
      await this.store.writeChanges(partitions);
      return null;
    } catch (caught) {
      this.broker.log(`share coordinator: writing share state failed, reloading it from the log: ${(caught as Error).message}`);
      this.reload();
      return errorOf(caught, ErrorCode.KAFKA_STORAGE_ERROR);
    }
  }

  /**
   * Writes, then changes memory, the share partitions that hold no acknowledgements of an open transaction
   * (KIP-1289: their marker must apply to the state they were staged on); on a failed write rebuilds from the log.
   */
  private rewrite<P extends { key: SharePartitionKey }>(all: readonly P[], write: (free: P[]) => Promise<() => void>): Promise<StateRewrite> {
    return this.queue.run(async () => {
      const pending = all.filter((p) =>
        this.partitions
          .get(sharePartitionKeyString(p.key))
          ?.describe()
          .ranges.some((r) => r.pending !== undefined),
      );
      try {
        (await write(all.filter((p) => !pending.includes(p))))();
      } catch (caught) {
        this.reload();
        return { failure: errorOf(caught, ErrorCode.KAFKA_STORAGE_ERROR), pending: [] };
      }
      return { failure: null, pending: pending.map((p) => p.key) };
    });
  }

  private reload(): void {
    this.partitions.clear();
    for (const { key, state, pending } of this.store.recover()) {
      const sp = SharePartition.restore(key, this.limitsFor(key.groupId), state.startOffset, state.restoredRanges(), pending);
      this.partitions.set(sharePartitionKeyString(key), sp);
    }
  }

  private announceAvailable(): void {
    for (const listener of this.availabilityListeners) listener();
  }
}

function error(errorCode: number, errorMessage: string): PartitionError {
  return { errorCode, errorMessage };
}

function errorOf(caught: unknown, fallback: number = ErrorCode.UNKNOWN_SERVER_ERROR): PartitionError {
  if (caught instanceof BrokerError) return { errorCode: caught.code, errorMessage: caught.message };
  return { errorCode: fallback, errorMessage: caught instanceof Error ? caught.message : String(caught) };
}
