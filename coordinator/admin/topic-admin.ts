/**
 * Topic management at run time — CreateTopics, DeleteTopics,
 * CreatePartitions, topic configs, auto-creation — in a static cluster.
 *
 * kipgen has no controller: every node keeps its own copy of the topic list
 * (`<dataDir>/topics.json`) and derives the same topic ids and leaders from
 * it. So the node a client asks applies the change itself, then sends the
 * same request to every other node of the cluster as a peer
 * (`kipgen-broker-<id>` client id), which applies it without passing it on.
 * Only a request on the inter-broker listener (the primary one) from a
 * principal allowed ClusterAction is taken as a peer's (Kafka authorizes
 * broker-to-broker requests by CLUSTER_ACTION on the cluster, never by a
 * client id, e.g. KafkaApis' authHelper.authorizeClusterOperation): a client
 * that merely names itself `kipgen-broker-1` elsewhere is a client, and its
 * change is passed on.
 * A node that cannot be reached then is logged and misses the change; when
 * it comes back it does not learn it by itself (list the topic in its
 * configuration or repeat the request: a peer request for a topic that
 * already exists alike is a success). Kafka's KRaft controller does not
 * have that gap; kipgen's static cluster trades it for having no controller.
 */
import type { RequestContext, TopicInfo } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode, errorCodeName } from '../errors.js';
import type { LogManager } from '../log/log-manager.js';
import type { PeerConnections } from '../net/peers.js';
import type { ApiMessageCodec } from '../../runtime/index.js';
import { CreateTopicsRequest, CreateTopicsResponse } from '../../generated/index.js';
import { TOPIC_CONFIGS, validateConfigs } from './config-defs.js';

/** Versions used between nodes to pass a change on (the highest each side serves). */
export const PEER_VERSION = { createTopics: 7, deleteTopics: 6, createPartitions: 3, alterConfigs: 1 } as const;

/** Kafka's Topic.validate: at most 249 of [a-zA-Z0-9._-], not "." or "..". */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

export interface TopicAdminSettings {
  /** auto.create.topics.enable (Kafka: true). */
  autoCreateTopics: boolean;
  /** num.partitions: partitions of an auto-created topic or one asked with -1 (Kafka: 1). */
  defaultPartitions: number;
}

export type Outcome = { error: number; message: string } | null;

/** What a peer request looks like: the client id PeerConnections uses. */
const PEER_CLIENT = /^kipgen-broker-(\d+)$/;

export class TopicAdmin {
  constructor(
    readonly cluster: Cluster,
    private readonly logs: LogManager,
    private readonly peers: PeerConnections,
    readonly settings: TopicAdminSettings,
    private readonly log: (line: string) => void,
    /** Whether the request came in as inter-broker traffic: on the inter-broker listener, from a principal allowed ClusterAction. */
    private readonly interBroker: (ctx: RequestContext) => boolean,
  ) {}

  /** True when the request came from another node of this cluster passing a change on. */
  isPeer(ctx: RequestContext): boolean {
    const clientId = ctx.header.clientId;
    const match = clientId === null ? null : PEER_CLIENT.exec(clientId);
    return match !== null && Number(match[1]) !== this.cluster.nodeId && this.cluster.node(Number(match[1])) !== undefined && this.interBroker(ctx);
  }

  /** Why `name` cannot be a new topic, or null. */
  checkNewName(name: string): Outcome {
    if (!isLegalTopicName(name)) {
      return {
        error: ErrorCode.INVALID_TOPIC_EXCEPTION,
        message: `topic name ${JSON.stringify(name)} is illegal: use 1 to 249 of letters, digits, '.', '_' and '-' (not "." or "..")`,
      };
    }
    if (this.cluster.topicByName(name) !== undefined) return { error: ErrorCode.TOPIC_ALREADY_EXISTS, message: `Topic '${name}' already exists.` };
    // Kafka refuses names that differ only by '.' versus '_' (they collide in metric names).
    const folded = name.replace(/\./g, '_');
    const collides = this.cluster.topics().find((t) => t.name.replace(/\./g, '_') === folded);
    if (collides !== undefined) return { error: ErrorCode.INVALID_TOPIC_EXCEPTION, message: `Topic '${name}' collides with existing topic: ${collides.name}` };
    return null;
  }

  /** Checks a CreateTopics entry; the partition count to use, or the error. */
  checkCreate(topic: {
    name: string;
    numPartitions: number;
    replicationFactor: number;
    assignments: unknown[];
    configs: { name: string; value: string | null }[];
  }): { partitions: number; configs: Record<string, string> } | { error: number; message: string } {
    const bad = this.checkNewName(topic.name);
    if (bad !== null) return bad;
    if (topic.assignments.length > 0) {
      return {
        error: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        message: 'kipgen places partitions itself (partition p on node p mod n); manual assignments are not supported',
      };
    }
    if (topic.numPartitions === 0 || topic.numPartitions < -1)
      return { error: ErrorCode.INVALID_PARTITIONS, message: `Number of partitions was set to an invalid non-positive value: ${topic.numPartitions}` };
    if (topic.numPartitions > 10_000)
      return { error: ErrorCode.INVALID_PARTITIONS, message: `Number of partitions ${topic.numPartitions} is above kipgen's limit of 10000` };
    if (topic.replicationFactor === 0 || topic.replicationFactor < -1)
      return { error: ErrorCode.INVALID_REPLICATION_FACTOR, message: `Replication factor must be larger than 0, or -1 to use the default value.` };
    if (topic.replicationFactor > this.cluster.nodes.length) {
      return {
        error: ErrorCode.INVALID_REPLICATION_FACTOR,
        message: `Unable to replicate the partition ${topic.replicationFactor} time(s): The target replication factor of ${topic.replicationFactor} cannot be reached because only ${this.cluster.nodes.length} broker(s) are registered.`,
      };
    }
    const configs: Record<string, string> = {};
    for (const c of topic.configs) {
      if (c.value === null) return { error: ErrorCode.INVALID_CONFIG, message: `Null value not supported for topic configs: ${c.name}` };
      configs[c.name] = c.value;
    }
    const problem = validateConfigs(TOPIC_CONFIGS, 'topic', configs);
    if (problem !== null) return { error: ErrorCode.INVALID_CONFIG, message: problem };
    return { partitions: topic.numPartitions === -1 ? this.settings.defaultPartitions : topic.numPartitions, configs };
  }

  create(name: string, partitions: number, configs: Record<string, string>): TopicInfo {
    const topic = this.cluster.createTopic(name, partitions, configs);
    this.logs.openTopic(topic);
    this.log(`created topic ${name} (${partitions} partition${partitions === 1 ? '' : 's'}, id ${topic.topicId})`);
    return topic;
  }

  delete(name: string): TopicInfo {
    const topic = this.cluster.topicByName(name)!;
    // Logs first: a crash in between leaves a topic with empty logs, never a re-created topic on old data.
    this.logs.dropTopic(topic);
    this.cluster.deleteTopic(name);
    this.log(`deleted topic ${name} (id ${topic.topicId})`);
    return topic;
  }

  grow(name: string, partitions: number): TopicInfo {
    const topic = this.cluster.growTopic(name, partitions);
    this.logs.openTopic(topic);
    this.log(`topic ${name} now has ${partitions} partitions`);
    return topic;
  }

  /** Auto-creation on Metadata (auto.create.topics.enable): a topic of num.partitions, passed on to the peers. */
  async autoCreate(name: string): Promise<Outcome> {
    const bad = this.checkNewName(name);
    if (bad !== null && bad.error !== ErrorCode.TOPIC_ALREADY_EXISTS) return bad;
    if (bad === null) {
      const numPartitions = this.settings.defaultPartitions;
      this.create(name, numPartitions, {});
      const request = CreateTopicsRequest.create({ topics: [{ name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }] });
      await this.forward('auto-created topic', CreateTopicsRequest, request, PEER_VERSION.createTopics, CreateTopicsResponse, (res) =>
        res.topics[0]?.errorCode ? `error ${res.topics[0].errorCode}` : null,
      );
    }
    return null;
  }

  /** Sends a change to every other node; failures are logged (see the module comment). */
  async forward<Req, Res>(
    what: string,
    request: ApiMessageCodec<Req>,
    body: Req,
    version: number,
    response: ApiMessageCodec<Res>,
    failed: (res: Res) => string | null,
  ): Promise<void> {
    const others = this.cluster.nodes.filter((n) => n.nodeId !== this.cluster.nodeId);
    await Promise.all(
      others.map(async (node) => {
        try {
          const connection = await this.peers.get(node.nodeId);
          const answer = await connection.send(request, body, version, response);
          const problem = failed(answer);
          if (problem !== null) this.log(`${what}: node ${node.nodeId} refused the change: ${problem}`);
        } catch (error) {
          this.log(`${what}: node ${node.nodeId} is unreachable and misses the change (repeat the request when it is back): ${(error as Error).message}`);
        }
      }),
    );
  }
}

/** The first refusal in a peer's answer to a forwarded change, for the log; null when it took every entry. */
export function firstError(
  results: readonly { errorCode: number; errorMessage?: string | null; name?: string | null; resourceName?: string }[],
): string | null {
  const bad = results.find((r) => r.errorCode !== 0);
  return bad === undefined ? null : `${bad.name ?? bad.resourceName}: ${errorCodeName(bad.errorCode)} ${bad.errorMessage ?? ''}`.trim();
}

/** Whether `name` is a legal topic name (Kafka's Topic.validate): 1 to 249 of letters, digits, '.', '_' and '-', not "." or "..". */
export function isLegalTopicName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && LEGAL_TOPIC.test(name);
}
