/**
 * Admin APIs: CreateTopics (19), DeleteTopics (20), DescribeConfigs (32),
 * CreatePartitions (37), IncrementalAlterConfigs (44), DescribeCluster (60).
 * Changes are applied on this node, then passed to the other nodes
 * (topic-admin.ts says how and what a static cluster gives up for it).
 */
import { randomBytes } from 'node:crypto';
import {
  CreatePartitionsRequest,
  CreatePartitionsResponse,
  CreateTopicsRequest,
  CreateTopicsResponse,
  DeleteTopicsRequest,
  DeleteTopicsResponse,
  DescribeClusterResponse,
  DescribeConfigsResponse,
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../generated/index.js';
import { ZERO_UUID } from '../../runtime/index.js';
import type { Handler } from '../broker-context.js';
import type { BrokerConfig } from '../config.js';
import { ErrorCode, errorCodeName } from '../errors.js';
import { ConfigSource, ConfigType, GROUP_CONFIGS, TOPIC_CONFIGS, configDef, type ConfigDef } from './config-defs.js';
import type { GroupConfigs } from './group-configs.js';
import { PEER_VERSION, type TopicAdmin } from './topic-admin.js';

/** ConfigResource.Type */
export const ResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;
const OP_SET = 0;
const OP_DELETE = 1;
const OP_APPEND = 2;
const OP_SUBTRACT = 3;
const NO_OPERATIONS = -2147483648;

interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
  configType: number;
  documentation: string | null;
}

function entry(def: { name: string; type: number; doc: string }, value: string, source: number, readOnly: boolean, synonyms: boolean, docs: boolean): ConfigEntry {
  return {
    name: def.name,
    value,
    readOnly,
    configSource: source,
    isSensitive: false,
    synonyms: synonyms ? [{ name: def.name, value, source }] : [],
    configType: def.type,
    documentation: docs ? def.doc : null,
  };
}

function topicEntries(admin: TopicAdmin, name: string, synonyms = false, docs = false): ConfigEntry[] {
  const set = admin.cluster.topicConfigs(name);
  return TOPIC_CONFIGS.map((def) => {
    const own = set[def.name];
    return entry(def, own ?? def.defaultValue, own !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG, false, synonyms, docs);
  });
}

/** The broker settings DescribeConfigs shows for this node: static (set at start), hence read-only. */
function brokerEntries(config: BrokerConfig, admin: TopicAdmin, groups: GroupConfigs): { def: { name: string; type: number; doc: string }; value: string }[] {
  const b = (name: string, type: number, value: string | number | boolean, doc: string) => ({ def: { name, type, doc }, value: String(value) });
  return [
    b('node.id', ConfigType.INT, config.nodeId, 'This node’s id.'),
    b('broker.id', ConfigType.INT, config.nodeId, 'This node’s id (the older name).'),
    b('log.dirs', ConfigType.STRING, config.dataDir, 'Where partition logs and coordinator state are stored.'),
    b('auto.create.topics.enable', ConfigType.BOOLEAN, admin.settings.autoCreateTopics, 'Create a topic when Metadata asks for one that does not exist.'),
    b('num.partitions', ConfigType.INT, admin.settings.defaultPartitions, 'Partitions of an auto-created topic, or of one created with -1.'),
    b('default.replication.factor', ConfigType.INT, 1, 'kipgen keeps one replica per partition.'),
    b('offsets.topic.num.partitions', ConfigType.INT, config.consumerOffsetsPartitions, 'Partitions of __consumer_offsets.'),
    b('transaction.state.log.num.partitions', ConfigType.INT, config.transactionStatePartitions, 'Partitions of __transaction_state.'),
    b('transaction.max.timeout.ms', ConfigType.INT, config.transactionMaxTimeoutMs, 'Longest transaction timeout a producer may ask for.'),
    b('producer.id.expiration.ms', ConfigType.INT, config.producerIdExpirationMs, 'How long a partition keeps the state of a producer id with no open transaction after its last write.'),
    b('producer.id.expiration.check.interval.ms', ConfigType.INT, config.producerIdExpirationCheckIntervalMs, 'How often the partitions look for expired producer ids.'),
    b('transactional.id.expiration.ms', ConfigType.INT, config.transactionalIdExpirationMs, 'How long the transaction coordinator keeps a transactional id with no transaction open after its last state change.'),
    b(
      'transaction.remove.expired.transaction.cleanup.interval.ms',
      ConfigType.INT,
      config.transactionRemoveExpiredTransactionCleanupIntervalMs,
      'How often the transaction coordinator looks for expired transactional ids.',
    ),
    b('socket.request.max.bytes', ConfigType.INT, config.maxFrameBytes, 'Largest request frame accepted.'),
    b('queued.max.request.bytes', ConfigType.LONG, config.queuedMaxRequestBytes, 'What all requests in flight may cost, as decoded (-1: unbounded).'),
    b('log.segment.bytes', ConfigType.INT, config.segmentBytes, 'Size at which a new segment file is started.'),
    b('group.share.record.lock.duration.ms', ConfigType.INT, groups.brokerDefault('share.record.lock.duration.ms'), 'Default acquisition lock of a share-group record.'),
    b('group.share.delivery.count.limit', ConfigType.INT, groups.brokerDefault('share.delivery.count.limit'), 'Default delivery count limit of share groups.'),
    b('group.share.session.timeout.ms', ConfigType.INT, groups.brokerDefault('share.session.timeout.ms'), 'Default session timeout of share-group members.'),
    b('group.share.heartbeat.interval.ms', ConfigType.INT, groups.brokerDefault('share.heartbeat.interval.ms'), 'Default heartbeat interval of share-group members.'),
  ];
}

export function adminHandlers(admin: TopicAdmin, groups: GroupConfigs, config: BrokerConfig): Map<number, Handler> {
  const cluster = admin.cluster;
  const handlers = new Map<number, Handler>();

  handlers.set(19, async (req, ctx) => {
    const v = ctx.apiVersion;
    const peer = admin.isPeer(ctx);
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const created: { name: string; numPartitions: number; replicationFactor: number; assignments: never[]; configs: { name: string; value: string }[] }[] = [];
    const topics = req.topics.map((t: any) => {
      // An empty config list, not null, as Kafka's CreatableTopicResult leaves it (v5+).
      const failed = (error: number, message: string) => ({ name: t.name, topicId: ZERO_UUID, errorCode: error, errorMessage: message, topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: [] });
      if (counts.get(t.name)! > 1) return failed(ErrorCode.INVALID_REQUEST, 'Found multiple entries for this topic.');
      const existing = cluster.topicByName(t.name);
      // A peer passing on a creation this node already has (e.g. a repeated request) is a success.
      if (peer && existing !== undefined && existing.partitions === t.numPartitions) {
        return { name: t.name, topicId: existing.topicId, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0, numPartitions: existing.partitions, replicationFactor: 1, configs: null };
      }
      const checked = admin.checkCreate(t);
      if ('error' in checked) return failed(checked.error, checked.message);
      // validateOnly still names an id, one never used: Kafka's ReplicationControlManager.createTopic draws it
      // (Uuid.randomUuid) before deciding not to commit the topic.
      let topicId = randomBytes(16).toString('base64url');
      if (!req.validateOnly) {
        topicId = admin.create(t.name, checked.partitions, checked.configs).topicId;
        created.push({ name: t.name, numPartitions: checked.partitions, replicationFactor: -1, assignments: [], configs: Object.entries(checked.configs).map(([name, value]) => ({ name, value })) });
      }
      const configs = v >= 5 ? topicEntriesFor(checked.configs) : null;
      return { name: t.name, topicId, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0, numPartitions: checked.partitions, replicationFactor: 1, configs };
    });
    if (!peer && created.length > 0) {
      await admin.forward('CreateTopics', CreateTopicsRequest, CreateTopicsRequest.create({ topics: created, timeoutMs: req.timeoutMs }), PEER_VERSION.createTopics, CreateTopicsResponse, (res) => firstError(res.topics));
    }
    return CreateTopicsResponse.create({ topics });
  });

  /** The configuration a new topic will have (for CreateTopics v5+, validateOnly included). */
  function topicEntriesFor(set: Record<string, string>): { name: string; value: string; readOnly: boolean; configSource: number; isSensitive: boolean }[] {
    return TOPIC_CONFIGS.map((def) => ({
      name: def.name,
      value: set[def.name] ?? def.defaultValue,
      readOnly: false,
      configSource: set[def.name] !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
    }));
  }

  handlers.set(20, async (req, ctx) => {
    const v = ctx.apiVersion;
    const peer = admin.isPeer(ctx);
    const wanted: { name: string | null; topicId: string }[] = v >= 6 ? req.topics : req.topicNames.map((name: string) => ({ name, topicId: ZERO_UUID }));
    const deleted: string[] = [];
    const responses = wanted.map((w) => {
      const byId = w.name === null;
      const topic = byId ? cluster.topicById(w.topicId) : cluster.topicByName(w.name!);
      const result = (errorCode: number, errorMessage: string | null) => ({ name: topic?.name ?? w.name ?? null, topicId: topic?.topicId ?? w.topicId, errorCode, errorMessage: v >= 5 ? errorMessage : null });
      if (topic === undefined) {
        // A peer passing on a deletion this node already did is a success.
        if (peer && !byId) return result(0, null);
        return byId ? result(ErrorCode.UNKNOWN_TOPIC_ID, `unknown topic id ${w.topicId}`) : result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      }
      // Kafka refuses to delete its internal topics; so does kipgen (deviation in the code: INVALID_REQUEST, with the reason).
      if (topic.internal) return result(ErrorCode.INVALID_REQUEST, `${topic.name} is an internal topic and cannot be deleted`);
      if (deleted.includes(topic.name)) return result(0, null);
      admin.delete(topic.name);
      deleted.push(topic.name);
      return result(0, null);
    });
    if (!peer && deleted.length > 0) {
      await admin.forward(
        'DeleteTopics',
        DeleteTopicsRequest,
        DeleteTopicsRequest.create({ topics: deleted.map((name) => ({ name, topicId: ZERO_UUID })), timeoutMs: req.timeoutMs }),
        PEER_VERSION.deleteTopics,
        DeleteTopicsResponse,
        (res) => firstError(res.responses),
      );
    }
    return DeleteTopicsResponse.create({ responses });
  });

  handlers.set(37, async (req, ctx) => {
    const peer = admin.isPeer(ctx);
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const grown: { name: string; count: number; assignments: null }[] = [];
    const results = req.topics.map((t: any) => {
      const result = (errorCode: number, errorMessage: string | null) => ({ name: t.name, errorCode, errorMessage });
      if (counts.get(t.name)! > 1) return result(ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.');
      const topic = cluster.topicByName(t.name);
      if (topic === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      if (topic.internal) return result(ErrorCode.INVALID_REQUEST, `${t.name} is an internal topic; its partition count is set in the broker configuration`);
      if (peer && t.count === topic.partitions) return result(0, null);
      if (t.count < topic.partitions) return result(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${topic.partitions} partitions, which is higher than the requested ${t.count}.`);
      if (t.count === topic.partitions) return result(ErrorCode.INVALID_PARTITIONS, `Topic already has ${topic.partitions} partitions.`);
      if (t.count > 10_000) return result(ErrorCode.INVALID_PARTITIONS, `Number of partitions ${t.count} is above kipgen's limit of 10000`);
      if (t.assignments !== null) return result(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'kipgen places partitions itself (partition p on node p mod n); manual assignments are not supported');
      if (!req.validateOnly) {
        admin.grow(t.name, t.count);
        grown.push({ name: t.name, count: t.count, assignments: null });
      }
      return result(0, null);
    });
    if (!peer && grown.length > 0) {
      await admin.forward('CreatePartitions', CreatePartitionsRequest, CreatePartitionsRequest.create({ topics: grown, timeoutMs: req.timeoutMs, validateOnly: false }), PEER_VERSION.createPartitions, CreatePartitionsResponse, (res) => firstError(res.results));
    }
    return CreatePartitionsResponse.create({ results });
  });

  handlers.set(32, async (req, ctx) => {
    const v = ctx.apiVersion;
    const synonyms = v >= 1 && req.includeSynonyms === true;
    const docs = v >= 3 && req.includeDocumentation === true;
    const results = req.resources.map((r: any) => {
      const keys: string[] | null = r.configurationKeys;
      const result = (errorCode: number, errorMessage: string | null, configs: ConfigEntry[]) => ({
        errorCode,
        errorMessage,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        configs: keys === null ? configs : configs.filter((c) => keys.includes(c.name)),
      });
      switch (r.resourceType) {
        case ResourceType.TOPIC: {
          if (cluster.topicByName(r.resourceName) === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${r.resourceName}`, []);
          return result(0, null, topicEntries(admin, r.resourceName, synonyms, docs));
        }
        case ResourceType.BROKER: {
          if (r.resourceName !== '' && r.resourceName !== String(config.nodeId)) {
            return result(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${config.nodeId} or empty string, but received ${r.resourceName}`, []);
          }
          const source = r.resourceName === '' ? ConfigSource.DEFAULT_CONFIG : ConfigSource.STATIC_BROKER_CONFIG;
          return result(0, null, brokerEntries(config, admin, groups).map((b) => entry(b.def, b.value, source, true, synonyms, docs)));
        }
        case ResourceType.GROUP: {
          if (r.resourceName === '') return result(ErrorCode.INVALID_GROUP_ID, 'group id is empty', []);
          const own = groups.overrides(r.resourceName);
          return result(
            0,
            null,
            GROUP_CONFIGS.map((def) => {
              const value = groups.value(r.resourceName, def.name);
              const source = own[def.name] !== undefined ? ConfigSource.GROUP_CONFIG : value === def.defaultValue ? ConfigSource.DEFAULT_CONFIG : ConfigSource.STATIC_BROKER_CONFIG;
              return entry(def, value, source, false, synonyms, docs);
            }),
          );
        }
        default:
          return result(ErrorCode.INVALID_REQUEST, `kipgen describes TOPIC (2), BROKER (4) and GROUP (32) resources, not type ${r.resourceType}`, []);
      }
    });
    return DescribeConfigsResponse.create({ results });
  });

  handlers.set(44, async (req, ctx) => {
    const peer = admin.isPeer(ctx);
    const applied: any[] = [];
    const seen = new Set<string>();
    const responses = req.resources.map((r: any) => {
      const result = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName });
      const key = `${r.resourceType}\u0000${r.resourceName}`;
      if (seen.has(key)) return result(ErrorCode.INVALID_REQUEST, 'Duplicate resource in request.');
      seen.add(key);
      switch (r.resourceType) {
        case ResourceType.TOPIC: {
          if (cluster.topicByName(r.resourceName) === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${r.resourceName}`);
          const next = applyOps(TOPIC_CONFIGS, 'topic', cluster.topicConfigs(r.resourceName), r.configs);
          if (typeof next === 'string') return result(ErrorCode.INVALID_CONFIG, next);
          if (!req.validateOnly) {
            cluster.setTopicConfigs(r.resourceName, next);
            applied.push(r);
          }
          return result(0, null);
        }
        case ResourceType.GROUP: {
          if (r.resourceName === '') return result(ErrorCode.INVALID_GROUP_ID, 'group id is empty');
          const next = applyOps(GROUP_CONFIGS, 'group', groups.overrides(r.resourceName), r.configs);
          if (typeof next === 'string') return result(ErrorCode.INVALID_CONFIG, next);
          const problem = groups.check(r.resourceName, next);
          if (problem !== null) return result(ErrorCode.INVALID_CONFIG, problem);
          if (!req.validateOnly) {
            groups.set(r.resourceName, next);
            applied.push(r);
          }
          return result(0, null);
        }
        case ResourceType.BROKER: {
          if (r.resourceName !== '' && r.resourceName !== String(config.nodeId)) {
            return result(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${config.nodeId} or empty string, but received ${r.resourceName}`);
          }
          // Every broker setting of kipgen is static (read at start); Kafka answers the same for its static ones.
          const names = (r.configs as { name: string }[]).map((c) => c.name);
          return result(ErrorCode.INVALID_REQUEST, `Cannot update these configs dynamically: ${names.join(', ')} (kipgen's broker settings are static: set them in the broker configuration)`);
        }
        default:
          return result(ErrorCode.INVALID_REQUEST, `kipgen alters TOPIC (2) and GROUP (32) resources, not type ${r.resourceType}`);
      }
    });
    if (!peer && applied.length > 0) {
      await admin.forward(
        'IncrementalAlterConfigs',
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsRequest.create({ resources: applied, validateOnly: false }),
        PEER_VERSION.alterConfigs,
        IncrementalAlterConfigsResponse,
        (res) => firstError(res.responses),
      );
    }
    return IncrementalAlterConfigsResponse.create({ responses });
  });

  handlers.set(60, async (req, ctx) => {
    if (ctx.apiVersion >= 1 && req.endpointType !== 1) {
      return DescribeClusterResponse.create({ errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: `kipgen nodes are brokers; endpoint type ${req.endpointType} is not served`, endpointType: req.endpointType, clusterId: cluster.clusterId });
    }
    return DescribeClusterResponse.create({
      errorCode: 0,
      endpointType: 1,
      clusterId: cluster.clusterId,
      controllerId: cluster.nodes[0]!.nodeId,
      brokers: cluster.nodes.map((n) => ({ brokerId: n.nodeId, host: n.host, port: n.port, rack: null, isFenced: false })),
      clusterAuthorizedOperations: NO_OPERATIONS,
    });
  });

  return handlers;
}

/** The configs after IncrementalAlterConfigs' operations, or why they cannot apply. */
function applyOps(defs: readonly ConfigDef[], kind: string, current: Readonly<Record<string, string>>, ops: { name: string; configOperation: number; value: string | null }[]): Record<string, string> | string {
  const next: Record<string, string> = { ...current };
  const names = new Set<string>();
  for (const op of ops) {
    if (names.has(op.name)) return `Error due to duplicate config keys: ${op.name}`;
    names.add(op.name);
    const def = configDef(defs, op.name);
    if (def === undefined) return `unknown ${kind} config name: ${op.name}`;
    switch (op.configOperation) {
      case OP_SET:
        if (op.value === null) return `Null value not supported for: ${op.name}`;
        next[op.name] = op.value;
        break;
      case OP_DELETE:
        delete next[op.name];
        break;
      case OP_APPEND:
      case OP_SUBTRACT: {
        if (def.type !== ConfigType.LIST) return `Config value append/subtract is not allowed for config key ${op.name}, which is not a list`;
        const items = (next[op.name] ?? def.defaultValue).split(',').map((s) => s.trim()).filter((s) => s !== '');
        const given = (op.value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
        const result = op.configOperation === OP_APPEND ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
        next[op.name] = result.join(',');
        break;
      }
      default:
        return `unknown config operation ${op.configOperation} for ${op.name}`;
    }
    if (next[op.name] !== undefined) {
      const problem = def.validate(next[op.name]!);
      if (problem !== null) return problem;
    }
  }
  return next;
}

function firstError(results: { errorCode: number; errorMessage?: string | null; name?: string | null; resourceName?: string }[]): string | null {
  const bad = results.find((r) => r.errorCode !== 0);
  return bad === undefined ? null : `${bad.name ?? bad.resourceName}: ${errorCodeName(bad.errorCode)} ${bad.errorMessage ?? ''}`.trim();
}
