/**
 * Admin's transaction tools (KIP-664): describeTransactions,
 * listTransactions, describeProducers, abortTransaction. Together they find
 * and abort a hanging transaction — one a partition still holds open (its
 * last stable offset stuck) after its producer and coordinator moved on —
 * and they are the recovery tooling for KIP-939 prepared (two-phase)
 * transactions: list the ones in PrepareCommit/Ongoing, describe them, and
 * abort a partition's leftover by hand.
 *
 * Kafka: DescribeTransactionsHandler (to the transactional id's coordinator),
 * ListTransactionsHandler (to every broker: AllBrokersStrategy),
 * DescribeProducersHandler (to each partition's leader: PartitionLeaderStrategy,
 * or to the brokerId given), AbortTransactionHandler (WriteTxnMarkers with the
 * given producer id, epoch and coordinator epoch, transactionResult false, to the
 * partition's leader).
 * - NOT_LEADER_OR_FOLLOWER (unless a brokerId was given), UNKNOWN_TOPIC_OR_PARTITION
 *   and a leader not yet known are retried after a metadata refresh until the deadline.
 * - abortTransaction needs CLUSTER_ACTION on the cluster (WriteTxnMarkers is a
 *   broker-to-broker API): CLUSTER_AUTHORIZATION_FAILED otherwise, as in Kafka.
 */
import {
  DescribeProducersRequest,
  DescribeProducersResponse,
  DescribeTransactionsRequest,
  DescribeTransactionsResponse,
  ListTransactionsRequest,
  ListTransactionsResponse,
  WriteTxnMarkersRequest,
  WriteTxnMarkersResponse,
} from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import { topicPartitionKey, type TopicPartition } from '../consumer/topic-partition.js';
import { Errors, errorFromCode, KafkaError } from '../errors.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { AllBrokersResult, perEntry, toAllBrokers, toCoordinator } from './per-entry.js';
import { AdminResult } from './result.js';

/** Kafka's org.apache.kafka.clients.admin.TransactionState. */
export type TransactionState =
  'ONGOING' | 'PREPARE_ABORT' | 'PREPARE_COMMIT' | 'COMPLETE_ABORT' | 'COMPLETE_COMMIT' | 'EMPTY' | 'PREPARE_EPOCH_FENCE' | 'UNKNOWN';

const STATE_NAMES: Record<TransactionState, string> = {
  ONGOING: 'Ongoing',
  PREPARE_ABORT: 'PrepareAbort',
  PREPARE_COMMIT: 'PrepareCommit',
  COMPLETE_ABORT: 'CompleteAbort',
  COMPLETE_COMMIT: 'CompleteCommit',
  EMPTY: 'Empty',
  PREPARE_EPOCH_FENCE: 'PrepareEpochFence',
  UNKNOWN: 'Unknown',
};

/** Kafka's TransactionState.parse: UNKNOWN for a name it does not know. */
function parseTransactionState(name: string): TransactionState {
  return (Object.keys(STATE_NAMES) as TransactionState[]).find((s) => STATE_NAMES[s] === name) ?? 'UNKNOWN';
}

/** Kafka's TransactionDescription. */
export interface TransactionDescription {
  coordinatorId: number;
  state: TransactionState;
  producerId: bigint;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** Undefined when no transaction has started (-1 on the wire). */
  transactionStartTimeMs: number | undefined;
  /** The partitions in the transaction that the caller may describe. */
  topicPartitions: TopicPartition[];
}

/** Kafka's TransactionListing. */
export interface TransactionListing {
  transactionalId: string;
  producerId: bigint;
  state: TransactionState;
}

/** Kafka's ListTransactionsOptions. */
export interface ListTransactionsOptions extends AdminCallOptions {
  filterStates?: TransactionState[];
  filterProducerIds?: bigint[];
  /** Only transactions running longer than this (ListTransactions v1+, KIP-994). */
  filterOnDuration?: number;
  /** Only transactional ids this regular expression matches whole (ListTransactions v2+, KIP-1152). */
  filterOnTransactionalIdPattern?: string;
}

/** Kafka's ProducerState (of DescribeProducersResult). */
export interface ProducerState {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  /** Undefined before the producer's first marker. */
  coordinatorEpoch: number | undefined;
  /** The first offset of its open transaction; undefined when none is open. */
  currentTransactionStartOffset: bigint | undefined;
}

export interface PartitionProducerState {
  activeProducers: ProducerState[];
}

export interface DescribeProducersOptions extends AdminCallOptions {
  /** Ask this broker instead of each partition's leader (a follower's view); NOT_LEADER_OR_FOLLOWER is then an error. */
  brokerId?: number;
}

/** Kafka's AbortTransactionSpec: what DescribeProducers says of the hanging transaction. */
export interface AbortTransactionSpec {
  topicPartition: TopicPartition;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
}

export async function describeTransactions(
  admin: Admin,
  transactionalIds: readonly string[],
  options: AdminCallOptions = {},
): Promise<AdminResult<string, TransactionDescription>> {
  const deadline = deadlineOf(admin, options);
  return new AdminResult(
    await perEntry(transactionalIds, async (transactionalId): Promise<TransactionDescription> => {
      const { response, nodeId } = await toCoordinator(
        admin,
        `DescribeTransactions (${transactionalId})`,
        CoordinatorType.TRANSACTION,
        transactionalId,
        { request: DescribeTransactionsRequest, response: DescribeTransactionsResponse },
        () => DescribeTransactionsRequest.create({ transactionalIds: [transactionalId] }),
        (r) => ({ code: r.transactionStates.find((s) => s.transactionalId === transactionalId)?.errorCode ?? Errors.UNKNOWN_SERVER_ERROR }),
        { deadline },
      );
      const s = response.transactionStates.find((x) => x.transactionalId === transactionalId)!;
      return {
        coordinatorId: nodeId,
        state: parseTransactionState(s.transactionState),
        producerId: s.producerId,
        producerEpoch: s.producerEpoch,
        transactionTimeoutMs: s.transactionTimeoutMs,
        transactionStartTimeMs: s.transactionStartTimeMs < 0n ? undefined : Number(s.transactionStartTimeMs),
        topicPartitions: s.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
      };
    }),
  );
}

const FIRST_DURATION_FILTER_VERSION = 1;
const FIRST_PATTERN_VERSION = 2;

export async function listTransactions(admin: Admin, options: ListTransactionsOptions = {}): Promise<AllBrokersResult<TransactionListing>> {
  const deadline = deadlineOf(admin, options);
  const duration = options.filterOnDuration ?? -1;
  const pattern = options.filterOnTransactionalIdPattern ?? null;
  const min = pattern !== null && pattern !== '' ? FIRST_PATTERN_VERSION : duration >= 0 ? FIRST_DURATION_FILTER_VERSION : undefined;
  return toAllBrokers(admin, deadline, (nodeId) =>
    admin.cluster.retry(`ListTransactions to node ${nodeId}`, deadline, async () => {
      const { response } = await admin.cluster.send(
        nodeId,
        ListTransactionsRequest,
        ListTransactionsResponse,
        () =>
          ListTransactionsRequest.create({
            stateFilters: (options.filterStates ?? []).map((s) => STATE_NAMES[s]),
            producerIdFilters: options.filterProducerIds ?? [],
            durationFilter: BigInt(duration),
            transactionalIdPattern: pattern,
          }),
        { deadline, min },
      );
      // COORDINATOR_LOAD_IN_PROGRESS is a retriable code: the retry sends it again (ListTransactionsHandler).
      if (response.errorCode !== Errors.NONE) throw errorFromCode(response.errorCode, `ListTransactions to node ${nodeId}`);
      return response.transactionStates.map((s) => ({
        transactionalId: s.transactionalId,
        producerId: s.producerId,
        state: parseTransactionState(s.transactionState),
      }));
    }),
  );
}

/** The leader of a partition from fresh metadata; retriable while it is unknown. */
async function leaderOf(admin: Admin, tp: TopicPartition, deadline: number): Promise<number> {
  const topic = await admin.cluster.topic(tp.topic, deadline);
  const partition = topic.partitions.find((p) => p.partition === tp.partition);
  if (partition === undefined) {
    admin.cluster.invalidateMetadata();
    throw new KafkaError(`partition ${topicPartitionKey(tp)} is not in the cluster's metadata (UNKNOWN_TOPIC_OR_PARTITION)`, {
      code: Errors.UNKNOWN_TOPIC_OR_PARTITION,
      retriable: true,
    });
  }
  if (partition.leader < 0) {
    admin.cluster.invalidateMetadata();
    throw new KafkaError(`partition ${topicPartitionKey(tp)} has no leader now (LEADER_NOT_AVAILABLE)`, { code: Errors.LEADER_NOT_AVAILABLE, retriable: true });
  }
  return partition.leader;
}

/** Codes after which the partition's leader is looked up again (Kafka's unmapped partitions). */
const LEADER_MOVED_CODES: ReadonlySet<number> = new Set([
  Errors.NOT_LEADER_OR_FOLLOWER,
  Errors.REPLICA_NOT_AVAILABLE,
  Errors.BROKER_NOT_AVAILABLE,
  Errors.UNKNOWN_TOPIC_OR_PARTITION,
]);

async function describeProducersOf(admin: Admin, tp: TopicPartition, options: DescribeProducersOptions, deadline: number): Promise<PartitionProducerState> {
  const what = `DescribeProducers (${topicPartitionKey(tp)})`;
  return admin.cluster.retry(what, deadline, async () => {
    const nodeId = options.brokerId ?? (await leaderOf(admin, tp, deadline));
    const { response } = await admin.cluster.send(
      nodeId,
      DescribeProducersRequest,
      DescribeProducersResponse,
      () => DescribeProducersRequest.create({ topics: [{ name: tp.topic, partitionIndexes: [tp.partition] }] }),
      { deadline },
    );
    const p = response.topics.find((t) => t.name === tp.topic)?.partitions.find((x) => x.partitionIndex === tp.partition);
    if (p === undefined) throw new KafkaError(`${what}: the broker did not answer the partition`);
    if (p.errorCode !== Errors.NONE) {
      const error = errorFromCode(p.errorCode, `${what} on node ${nodeId}`, p.errorMessage);
      if (!LEADER_MOVED_CODES.has(p.errorCode) || (options.brokerId !== undefined && p.errorCode === Errors.NOT_LEADER_OR_FOLLOWER)) throw error;
      admin.cluster.invalidateMetadata();
      throw new KafkaError(error.message, { code: p.errorCode, retriable: true });
    }
    return {
      activeProducers: p.activeProducers.map((s) => ({
        producerId: s.producerId,
        producerEpoch: s.producerEpoch,
        lastSequence: s.lastSequence,
        lastTimestamp: Number(s.lastTimestamp),
        coordinatorEpoch: s.coordinatorEpoch < 0 ? undefined : s.coordinatorEpoch,
        currentTransactionStartOffset: s.currentTxnStartOffset < 0n ? undefined : s.currentTxnStartOffset,
      })),
    };
  });
}

/** Results are keyed by `topicPartitionKey` (`topic-3`). */
export async function describeProducers(
  admin: Admin,
  partitions: readonly TopicPartition[],
  options: DescribeProducersOptions = {},
): Promise<AdminResult<string, PartitionProducerState>> {
  const deadline = deadlineOf(admin, options);
  const byKey = new Map(partitions.map((tp) => [topicPartitionKey(tp), tp]));
  return new AdminResult(await perEntry(byKey.keys(), (key) => describeProducersOf(admin, byKey.get(key)!, options, deadline)));
}

export async function abortTransaction(admin: Admin, spec: AbortTransactionSpec, options: AdminCallOptions = {}): Promise<void> {
  const deadline = deadlineOf(admin, options);
  const tp = spec.topicPartition;
  const what = `WriteTxnMarkers (abort producer ${spec.producerId} epoch ${spec.producerEpoch} on ${topicPartitionKey(tp)})`;
  await admin.cluster.retry(what, deadline, async () => {
    const nodeId = await leaderOf(admin, tp, deadline);
    const { response } = await admin.cluster.send(
      nodeId,
      WriteTxnMarkersRequest,
      WriteTxnMarkersResponse,
      () =>
        WriteTxnMarkersRequest.create({
          markers: [
            {
              producerId: spec.producerId,
              producerEpoch: spec.producerEpoch,
              coordinatorEpoch: spec.coordinatorEpoch,
              transactionResult: false,
              topics: [{ name: tp.topic, partitionIndexes: [tp.partition] }],
            },
          ],
        }),
      { deadline },
    );
    // Exactly the one marker, topic and partition sent, as AbortTransactionHandler checks.
    const markers = response.markers;
    const partitions = markers.length === 1 && markers[0]!.producerId === spec.producerId ? markers[0]!.topics : [];
    const answered = partitions.length === 1 && partitions[0]!.name === tp.topic ? partitions[0]!.partitions : [];
    if (answered.length !== 1 || answered[0]!.partitionIndex !== tp.partition) {
      throw new KafkaError(
        `${what}: the answer does not hold exactly this marker and partition: ${JSON.stringify(markers, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );
    }
    const code = answered[0]!.errorCode;
    if (code === Errors.NONE) return;
    if (LEADER_MOVED_CODES.has(code)) {
      admin.cluster.invalidateMetadata();
      throw new KafkaError(`${what}: node ${nodeId} answered ${errorFromCode(code, what).message}`, { code, retriable: true });
    }
    throw errorFromCode(code, `${what} on node ${nodeId}`);
  });
}
