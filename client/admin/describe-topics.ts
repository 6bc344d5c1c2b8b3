/**
 * describeTopics (Kafka's KafkaAdminClient.describeTopics): each topic's id,
 * partitions with their leader, replicas, in-sync and offline replicas, and
 * the operations the principal may do on it when asked.
 *
 * As Kafka: topics named by name with DescribeTopicPartitions (API 75,
 * paginated by a cursor, with ELR) where the broker has it, else with Metadata
 * (handleDescribeTopicsByNamesWithDescribeTopicPartitionsApi, falling back to
 * generateDescribeTopicsCallWithMetadataApi on UnsupportedVersionException);
 * by id always with Metadata (handleDescribeTopicsByIds). kipgen's broker has
 * no API 75, so against it names go through Metadata too.
 * A topic's error is its entry's, not retried, as Kafka's.
 */
import { DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { UnsupportedVersionError, errorFromCode } from '../errors.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { authorizedOperations, type AclOperation, type Node } from './acl-types.js';
import { describeCluster } from './describe-cluster.js';
import { deadlineOf, sendWithRetries, uniqueBy, type AdminCallOptions, type AdminContext } from './call.js';
import { unrepresentable } from './errors.js';
import { AdminResult, type EntryOutcome } from './result.js';
import type { TopicCollection } from './topics.js';

/** Kafka's TopicPartitionInfo, with the offline replicas the broker names (Kafka's PartitionInfo.offlineReplicas). */
export interface TopicPartitionInfo {
  partition: number;
  /** Null when the partition has no leader. */
  leader: Node | null;
  replicas: Node[];
  isr: Node[];
  offlineReplicas: Node[];
  /** Eligible leader replicas (KIP-966): from DescribeTopicPartitions; empty from Metadata. */
  elr: Node[];
  lastKnownElr: Node[];
}

/** Kafka's TopicDescription. */
export interface TopicDescription {
  name: string;
  topicId: string;
  isInternal: boolean;
  /** Sorted by partition. */
  partitions: TopicPartitionInfo[];
  /** Null unless includeAuthorizedOperations was asked. */
  authorizedOperations: AclOperation[] | null;
}

export interface DescribeTopicsOptions extends AdminCallOptions {
  includeAuthorizedOperations?: boolean;
  /** DescribeTopicPartitions' page size (Kafka's partitionSizeLimitPerResponse). Default 2000. */
  partitionSizeLimitPerResponse?: number;
}

/** Metadata asks for topics by id from v12 (Kafka's MetadataRequest.Builder refuses ids before). */
const METADATA_BY_ID_VERSION = 12;

export async function describeTopics(
  admin: AdminContext,
  topics: TopicCollection,
  options: DescribeTopicsOptions = {},
): Promise<AdminResult<string, TopicDescription>> {
  const deadline = deadlineOf(admin, options);
  const byIds = !Array.isArray(topics);
  const keys = uniqueBy(byIds ? (topics as { topicIds: readonly string[] }).topicIds : (topics as readonly string[]), (k) => k);
  const outcomes = new Map<string, EntryOutcome<TopicDescription>>();
  const toSend: string[] = [];
  for (const key of keys) {
    if (key === '' || (byIds && key === ZERO_UUID)) outcomes.set(key, { ok: false, error: unrepresentable(byIds ? 'topic id' : 'topic name', key) });
    else {
      toSend.push(key);
      outcomes.set(key, {
        ok: false,
        error: errorFromCode(byIds ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `describeTopics of ${key}`),
      });
    }
  }
  if (toSend.length === 0) return new AdminResult(outcomes);
  if (!byIds) {
    try {
      await withDescribeTopicPartitions(admin, toSend, options, deadline, outcomes);
      return new AdminResult(outcomes);
    } catch (error) {
      if (!(error instanceof UnsupportedVersionError)) throw error;
    }
  }
  const includeAuthorizedOperations = options.includeAuthorizedOperations ?? false;
  const { response } = await sendWithRetries(
    admin,
    'describeTopics',
    'any',
    deadline,
    MetadataRequest,
    MetadataResponse,
    () =>
      MetadataRequest.create({
        topics: toSend.map((k) => (byIds ? { topicId: k, name: null } : { topicId: ZERO_UUID, name: k })),
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: includeAuthorizedOperations,
      }),
    // v4 is the first that can refuse auto-creation (Kafka falls back to all topics before it; kipgen's brokers have v4+).
    { min: byIds ? METADATA_BY_ID_VERSION : 4, topLevelError: (r) => ({ code: r.errorCode, message: null }) },
  );
  const nodes = new Map(response.brokers.map((b) => [b.nodeId, { id: b.nodeId, host: b.host, port: b.port, rack: b.rack } satisfies Node]));
  // Kafka's MetadataResponse.buildCluster: a replica id no broker entry names is a Node with no address.
  const node = (id: number): Node => nodes.get(id) ?? { id, host: '', port: -1, rack: null };
  for (const key of toSend) {
    const topic = response.topics.find((t) => (byIds ? t.topicId === key : t.name === key));
    const what = `describeTopics of topic ${byIds ? 'id ' : ''}${key}`;
    if (topic === undefined) {
      const code = byIds ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      outcomes.set(key, { ok: false, error: errorFromCode(code, what, 'not in the Metadata response') });
      continue;
    }
    if (topic.errorCode !== ErrorCode.NONE || topic.name === null) {
      outcomes.set(key, { ok: false, error: errorFromCode(topic.errorCode || ErrorCode.UNKNOWN_TOPIC_ID, what) });
      continue;
    }
    const partitions = topic.partitions
      .map((p): TopicPartitionInfo => ({
        partition: p.partitionIndex,
        leader: p.leaderId < 0 ? null : node(p.leaderId),
        replicas: p.replicaNodes.map(node),
        isr: p.isrNodes.map(node),
        offlineReplicas: p.offlineReplicas.map(node),
        elr: [],
        lastKnownElr: [],
      }))
      .sort((a, b) => a.partition - b.partition);
    outcomes.set(key, {
      ok: true,
      value: {
        name: topic.name,
        topicId: topic.topicId,
        isInternal: topic.isInternal,
        partitions,
        authorizedOperations: includeAuthorizedOperations ? authorizedOperations(topic.topicAuthorizedOperations) : null,
      },
    });
  }
  return new AdminResult(outcomes);
}

/**
 * DescribeTopicPartitions, page by page: the topics still wanted, sorted, with
 * the cursor the last answer gave; a topic is complete when the cursor has
 * moved past it. The brokers' addresses come from describeCluster, as Kafka's.
 * UnsupportedVersionError when the broker lacks the API (the caller falls back).
 */
async function withDescribeTopicPartitions(
  admin: AdminContext,
  names: readonly string[],
  options: DescribeTopicsOptions,
  deadline: number,
  outcomes: Map<string, EntryOutcome<TopicDescription>>,
): Promise<void> {
  const remaining = new Set([...names].sort());
  const described = new Map<string, TopicDescription>();
  const limit = options.partitionSizeLimitPerResponse ?? 2000;
  let cursor: { topicName: string; partitionIndex: number } | null = null;
  let nodes: Map<number, Node> | null = null;
  const node = (id: number): Node => nodes?.get(id) ?? { id, host: '', port: -1, rack: null };
  while (remaining.size > 0) {
    const sentCursor: { topicName: string; partitionIndex: number } | null = cursor;
    const { response }: { response: DescribeTopicPartitionsResponse } = await sendWithRetries(
      admin,
      'describeTopics',
      'any',
      deadline,
      DescribeTopicPartitionsRequest,
      DescribeTopicPartitionsResponse,
      (): DescribeTopicPartitionsRequest =>
        DescribeTopicPartitionsRequest.create({ topics: [...remaining].map((name) => ({ name })), responsePartitionLimit: limit, cursor: sentCursor }),
    );
    nodes ??= new Map((await describeCluster(admin, { timeoutMs: Math.max(0, deadline - Date.now()) })).nodes.map((n) => [n.id, n]));
    cursor = response.nextCursor;
    for (const topic of response.topics) {
      const name = topic.name;
      if (name === null || !remaining.has(name)) continue;
      if (topic.errorCode !== ErrorCode.NONE) {
        outcomes.set(name, { ok: false, error: errorFromCode(topic.errorCode, `describeTopics of topic ${name}`) });
        remaining.delete(name);
        continue;
      }
      let d = described.get(name);
      if (d === undefined) {
        d = {
          name,
          topicId: topic.topicId,
          isInternal: topic.isInternal,
          partitions: [],
          authorizedOperations: options.includeAuthorizedOperations ? authorizedOperations(topic.topicAuthorizedOperations) : null,
        };
        described.set(name, d);
      }
      for (const p of topic.partitions) {
        d.partitions.push({
          partition: p.partitionIndex,
          leader: p.leaderId < 0 ? null : node(p.leaderId),
          replicas: p.replicaNodes.map(node),
          isr: p.isrNodes.map(node),
          offlineReplicas: p.offlineReplicas.map(node),
          elr: (p.eligibleLeaderReplicas ?? []).map(node),
          lastKnownElr: (p.lastKnownElr ?? []).map(node),
        });
      }
    }
    for (const [name, d] of described) {
      if (!remaining.has(name) || (cursor !== null && cursor.topicName === name)) continue;
      d.partitions.sort((a, b) => a.partition - b.partition);
      outcomes.set(name, { ok: true, value: d });
      remaining.delete(name);
    }
    // Without a cursor every topic asked for was answered; one left out is unknown to the broker.
    if (cursor === null) {
      for (const name of remaining)
        outcomes.set(name, { ok: false, error: errorFromCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `describeTopics of topic ${name}`) });
      remaining.clear();
    }
  }
}
