/**
 * describeTopics (Kafka's KafkaAdminClient.describeTopics): each topic's id,
 * partitions with their leader, replicas, in-sync and offline replicas, and
 * the operations the principal may do on it when asked.
 *
 * Kafka describes topics named by name with DescribeTopicPartitions where the
 * broker has it (paginated), else with Metadata; by id always with Metadata.
 * kipgen's generated codecs do not include DescribeTopicPartitions (API 75), so
 * both go through Metadata (generateDescribeTopicsCallWithMetadataApi /
 * handleDescribeTopicsByIds), which gives the same description but for the
 * ELR fields that only DescribeTopicPartitions carries.
 * A topic's error is its entry's, not retried, as Kafka's.
 */
import { MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { authorizedOperations, type AclOperation, type Node } from './acl-types.js';
import { deadlineOf, sendWithRetries, uniqueBy, type AdminCallOptions, type AdminContext } from './call.js';
import { entryError, unrepresentable } from './errors.js';
import { AdminResult, type EntryOutcome } from './result.js';
import type { TopicCollection } from './topics.js';

/** Kafka's TopicPartitionInfo, with the offline replicas Metadata names (Kafka's PartitionInfo.offlineReplicas). */
export interface TopicPartitionInfo {
  partition: number;
  /** Null when the partition has no leader. */
  leader: Node | null;
  replicas: Node[];
  isr: Node[];
  offlineReplicas: Node[];
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
        error: entryError(byIds ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `describeTopics of ${key}`),
      });
    }
  }
  if (toSend.length === 0) return new AdminResult(outcomes);
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
      outcomes.set(key, { ok: false, error: entryError(code, what, 'not in the Metadata response') });
      continue;
    }
    if (topic.errorCode !== ErrorCode.NONE || topic.name === null) {
      outcomes.set(key, { ok: false, error: entryError(topic.errorCode || ErrorCode.UNKNOWN_TOPIC_ID, what) });
      continue;
    }
    const partitions = topic.partitions
      .map((p): TopicPartitionInfo => ({
        partition: p.partitionIndex,
        leader: p.leaderId < 0 ? null : node(p.leaderId),
        replicas: p.replicaNodes.map(node),
        isr: p.isrNodes.map(node),
        offlineReplicas: p.offlineReplicas.map(node),
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
