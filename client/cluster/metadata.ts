/**
 * The client's cluster metadata (Kafka's Metadata): topics by name and by id
 * with their partitions' leaders, fetched with Metadata requests and kept until
 * metadata.max.age.ms or until a caller marks them stale (a leader moved);
 * the brokers it names become the NetworkClient's nodes. A topic the broker
 * refused (an ACL) or said does not exist is remembered, for the errors of
 * the waits that follow.
 */
import { MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { Errors, errorFromCode, isRetriableCode, KafkaError } from '../errors.js';
import type { NetworkClient } from './network-client.js';
import type { Retrier } from './retry.js';

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  errorCode: number;
  /** Node ids, as Kafka's PartitionInfo names Nodes: every replica, the in-sync ones, the offline ones. */
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicMetadata {
  name: string;
  topicId: string;
  /** An internal topic (__consumer_offsets, __transaction_state, ...): pattern subscriptions leave them out. */
  isInternal: boolean;
  partitions: PartitionInfo[];
}

export class Metadata {
  private readonly topicsByName = new Map<string, TopicMetadata>();
  private readonly topicsById = new Map<string, TopicMetadata>();
  /** Topics the last Metadata answered with a non-retriable error (TOPIC_AUTHORIZATION_FAILED, ...). */
  private readonly topicErrors = new Map<string, number>();
  /** Topics the last Metadata said do not exist (UNKNOWN_TOPIC_OR_PARTITION): for the message of a wait that times out. */
  private readonly absentTopics = new Set<string>();
  private fetchedAt = 0;
  /** Every topic the last all-topics Metadata named (for listTopics and pattern subscriptions). */
  private everyTopic: TopicMetadata[] = [];
  /** The controller the last Metadata named (Kafka's MetadataResponse.controller), -1 when none. */
  private controllerId = -1;

  constructor(
    private readonly network: NetworkClient,
    private readonly retrier: Retrier,
    private readonly timings: { requestTimeoutMs: number; metadataMaxAgeMs: number },
  ) {}

  /**
   * Fetches metadata for `topics` (all topics when null), retrying within the
   * deadline. `allowAutoTopicCreation` asks the broker to create missing topics
   * (Kafka's producer does, per allow.auto.create.topics; the broker decides,
   * per its auto.create.topics.enable).
   */
  async refresh(topics: readonly string[] | null, deadline = Date.now() + this.timings.requestTimeoutMs, allowAutoTopicCreation = false): Promise<void> {
    await this.retrier.retry('Metadata', deadline, async () => {
      const nodeId = this.network.anyNode();
      const { response } = await this.network.send(
        nodeId,
        MetadataRequest,
        MetadataResponse,
        () =>
          MetadataRequest.create({
            topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
            allowAutoTopicCreation,
          }),
        { deadline },
      );
      if (response.errorCode) throw errorFromCode(response.errorCode, 'Metadata');
      const named = this.apply(response);
      if (topics === null) this.everyTopic = named;
    });
  }

  private apply(response: MetadataResponse): TopicMetadata[] {
    const named: TopicMetadata[] = [];
    for (const broker of response.brokers) this.network.setNode(broker.nodeId, broker.host, broker.port, true);
    this.controllerId = response.controllerId;
    for (const topic of response.topics) {
      if (topic.name !== null) {
        if (topic.errorCode !== Errors.NONE && !isRetriableCode(topic.errorCode)) this.topicErrors.set(topic.name, topic.errorCode);
        else this.topicErrors.delete(topic.name);
        if (topic.errorCode === Errors.UNKNOWN_TOPIC_OR_PARTITION) this.absentTopics.add(topic.name);
        else this.absentTopics.delete(topic.name);
      }
      if (topic.errorCode !== Errors.NONE || topic.name === null) continue;
      const metadata: TopicMetadata = {
        name: topic.name,
        topicId: topic.topicId,
        isInternal: topic.isInternal,
        partitions: topic.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            leader: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            errorCode: p.errorCode,
            replicas: [...p.replicaNodes],
            isr: [...p.isrNodes],
            offlineReplicas: [...p.offlineReplicas],
          }))
          .sort((a, b) => a.partition - b.partition),
      };
      const old = this.topicsByName.get(topic.name);
      if (old && old.topicId !== metadata.topicId) this.topicsById.delete(old.topicId);
      this.topicsByName.set(topic.name, metadata);
      if (metadata.topicId !== ZERO_UUID) this.topicsById.set(metadata.topicId, metadata);
      named.push(metadata);
    }
    this.fetchedAt = Date.now();
    return named;
  }

  /** Every topic in the cluster, from a Metadata request for all topics sent now (Kafka's TopicMetadataFetcher.getAllTopicMetadata). */
  async allTopics(deadline?: number): Promise<TopicMetadata[]> {
    await this.refresh(null, deadline);
    return this.everyTopic;
  }

  /**
   * Metadata of one topic, fetched if unknown or stale; waits (retrying) while
   * the topic or its leaders are unknown. `allowAutoTopicCreation`: see refresh.
   */
  async topic(name: string, deadline = Date.now() + this.timings.requestTimeoutMs, allowAutoTopicCreation = false): Promise<TopicMetadata> {
    const cached = this.topicsByName.get(name);
    if (cached && Date.now() - this.fetchedAt < this.timings.metadataMaxAgeMs) return cached;
    return this.retrier.retry(`Metadata for topic ${name}`, deadline, async () => {
      await this.refresh([name], deadline, allowAutoTopicCreation);
      const topic = this.topicsByName.get(name);
      const refused = this.topicErrors.get(name);
      // Not retried: waiting does not grant an ACL.
      if (!topic && refused !== undefined) throw errorFromCode(refused, `Metadata for topic ${name}`);
      if (!topic) {
        throw new KafkaError(`topic ${name} is not in the cluster's metadata (UNKNOWN_TOPIC_OR_PARTITION)`, {
          code: Errors.UNKNOWN_TOPIC_OR_PARTITION,
          retriable: true,
        });
      }
      return topic;
    });
  }

  /** The error code the last Metadata gave `topic` when it was not retriable (TOPIC_AUTHORIZATION_FAILED, ...), else undefined. */
  refusedCode(topic: string): number | undefined {
    return this.topicErrors.get(topic);
  }

  /**
   * The controller's node id (Kafka's AdminMetadataManager.controller, which
   * KafkaAdminClient's ControllerNodeProvider routes topic changes to), from
   * metadata fetched now when the last one is stale or named none.
   */
  async controller(deadline = Date.now() + this.timings.requestTimeoutMs): Promise<number> {
    if (this.controllerId < 0 || Date.now() - this.fetchedAt >= this.timings.metadataMaxAgeMs) await this.refresh([], deadline);
    if (this.controllerId < 0) throw new KafkaError('the cluster named no controller (NOT_CONTROLLER)', { code: Errors.NOT_CONTROLLER, retriable: true });
    return this.controllerId;
  }

  /** Forget the controller after NOT_CONTROLLER (Kafka's handleNotControllerError: update the metadata, retry). */
  invalidateController(): void {
    this.controllerId = -1;
  }

  /** Whether the last Metadata that named `topic` said it does not exist. */
  saidAbsent(topic: string): boolean {
    return this.absentTopics.has(topic);
  }

  /** A cached topic by id (no I/O). */
  topicById(topicId: string): TopicMetadata | undefined {
    return this.topicsById.get(topicId);
  }

  /** A cached topic by name (no I/O). */
  cachedTopic(name: string): TopicMetadata | undefined {
    return this.topicsByName.get(name);
  }

  /** Resolves topic ids to metadata, fetching all topics if some are unknown. */
  async topicsByIds(topicIds: readonly string[], deadline?: number): Promise<Map<string, TopicMetadata>> {
    if (topicIds.some((id) => !this.topicsById.has(id))) await this.refresh(null, deadline);
    const out = new Map<string, TopicMetadata>();
    for (const id of topicIds) {
      const topic = this.topicsById.get(id);
      if (topic) out.set(id, topic);
    }
    return out;
  }

  /** Forget cached metadata so the next lookup fetches it (Kafka's Metadata.requestUpdate). */
  invalidate(): void {
    this.fetchedAt = 0;
  }
}
