/**
 * createTopics, deleteTopics, createPartitions and listTopics (Kafka's
 * KafkaAdminClient of the same names). Topic changes go to the controller
 * (ControllerNodeProvider), listTopics to any broker; each topic's error is
 * its own entry's. A name the client cannot send (empty) fails its entry
 * without a request (topicNameIsUnrepresentable). Kafka's retry on
 * THROTTLING_QUOTA_EXCEEDED (retryOnQuotaViolation) is not done: kipgen's broker
 * has no quotas, and such an entry fails with that error.
 */
import {
  CreatePartitionsRequest,
  CreatePartitionsResponse,
  CreateTopicsRequest,
  CreateTopicsResponse,
  DeleteTopicsRequest,
  DeleteTopicsResponse,
  MetadataRequest,
  MetadataResponse,
} from '../../generated/index.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import { ZERO_UUID } from '../../runtime/uuid.js';
import { ConfigError, UnsupportedVersionError, errorFromCode } from '../errors.js';
import { deadlineOf, remainingMs, sendWithRetries, uniqueBy, type AdminCallOptions, type AdminContext } from './call.js';
import { Config, configSource, type ConfigEntry } from './config-types.js';
import { unrepresentable } from './errors.js';
import { AdminResult, type EntryError, type EntryOutcome } from './result.js';

/** Kafka's NewTopic: partitions and replication factor (absent: the broker's defaults), or explicit replica assignments. */
export interface NewTopic {
  name: string;
  numPartitions?: number;
  replicationFactor?: number;
  /** Partition → broker ids of its replicas; excludes numPartitions and replicationFactor. */
  replicasAssignments?: ReadonlyMap<number, readonly number[]> | Readonly<Record<number, readonly number[]>>;
  configs?: Readonly<Record<string, string>>;
}

export interface CreateTopicsOptions extends AdminCallOptions {
  /** Check the request without creating anything. */
  validateOnly?: boolean;
}

/** What CreateTopics answers for a created topic (Kafka's CreateTopicsResult.TopicMetadataAndConfig). */
export interface CreatedTopic {
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
  config: Config;
  /**
   * Why the fields above are not known although the topic was created: the
   * broker could not describe its configs (TopicConfigErrorCode), or answered
   * at a version before 5. Then they are ZERO / -1 / empty.
   */
  metadataError: EntryError | null;
}

/** Kafka's NewPartitions: the new total count, and optionally the replicas of each new partition. */
export interface NewPartitions {
  totalCount: number;
  newAssignments?: ReadonlyArray<readonly number[]>;
}

export interface CreatePartitionsOptions extends AdminCallOptions {
  validateOnly?: boolean;
}

/** Kafka's TopicListing. */
export interface TopicListing {
  name: string;
  topicId: string;
  isInternal: boolean;
}

export interface ListTopicsOptions extends AdminCallOptions {
  /** Include internal topics (__consumer_offsets, ...). */
  listInternal?: boolean;
}

/** Kafka's TopicCollection: topics by name, or by id (deleteTopics, describeTopics). */
export type TopicCollection = readonly string[] | { readonly topicIds: readonly string[] };

const isByIds = (topics: TopicCollection): topics is { readonly topicIds: readonly string[] } => !Array.isArray(topics);

/** Does any entry of a controller's answer say NOT_CONTROLLER? */
const anyNotController = (entries: ReadonlyArray<{ errorCode: number }>): boolean => entries.some((e) => e.errorCode === ErrorCode.NOT_CONTROLLER);

function replicaAssignments(topic: NewTopic): Array<{ partitionIndex: number; brokerIds: number[] }> {
  const given = topic.replicasAssignments;
  if (given === undefined) return [];
  const entries = given instanceof Map ? [...given.entries()] : Object.entries(given).map(([p, ids]) => [Number(p), ids] as const);
  return entries.map(([partitionIndex, brokerIds]) => ({ partitionIndex: Number(partitionIndex), brokerIds: [...brokerIds] }));
}

export async function createTopics(
  admin: AdminContext,
  newTopics: readonly NewTopic[],
  options: CreateTopicsOptions = {},
): Promise<AdminResult<string, CreatedTopic>> {
  const deadline = deadlineOf(admin, options);
  const outcomes = new Map<string, EntryOutcome<CreatedTopic>>();
  const toSend: NewTopic[] = [];
  for (const topic of uniqueBy(newTopics, (t) => t.name)) {
    // Kafka's NewTopic cannot be built with both; here it is a bad argument.
    if (topic.replicasAssignments !== undefined && (topic.numPartitions !== undefined || topic.replicationFactor !== undefined)) {
      throw new ConfigError(`createTopics: topic ${topic.name} has replicasAssignments and numPartitions or replicationFactor; give one or the other`);
    }
    if (!topic.name) outcomes.set(topic.name, { ok: false, error: unrepresentable('topic name', topic.name) });
    else {
      outcomes.set(topic.name, { ok: false, error: noAnswer('createTopics', topic.name) });
      toSend.push(topic);
    }
  }
  if (toSend.length === 0) return new AdminResult(outcomes);
  const { response, version } = await sendWithRetries(
    admin,
    'createTopics',
    'controller',
    deadline,
    CreateTopicsRequest,
    CreateTopicsResponse,
    () =>
      CreateTopicsRequest.create({
        topics: toSend.map((t) => {
          const assignments = replicaAssignments(t);
          return {
            name: t.name,
            numPartitions: assignments.length > 0 ? -1 : (t.numPartitions ?? -1),
            replicationFactor: assignments.length > 0 ? -1 : (t.replicationFactor ?? -1),
            assignments,
            configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
          };
        }),
        timeoutMs: remainingMs(deadline),
        validateOnly: options.validateOnly ?? false,
      }),
    { notController: (r) => anyNotController(r.topics) },
  );
  for (const result of response.topics) {
    if (!outcomes.has(result.name)) continue;
    if (result.errorCode !== ErrorCode.NONE) {
      outcomes.set(result.name, { ok: false, error: errorFromCode(result.errorCode, `createTopics of topic ${result.name}`, result.errorMessage) });
      continue;
    }
    outcomes.set(result.name, { ok: true, value: createdTopic(result, version) });
  }
  return new AdminResult(outcomes);
}

/** Kafka's handling of a CreatableTopicResult without error (KafkaAdminClient.getCreateTopicsCall). */
function createdTopic(result: CreateTopicsResponse['topics'][number], version: number): CreatedTopic {
  const unknown = (error: EntryError): CreatedTopic => ({
    topicId: ZERO_UUID,
    numPartitions: -1,
    replicationFactor: -1,
    config: new Config([]),
    metadataError: error,
  });
  if (result.topicConfigErrorCode !== ErrorCode.NONE)
    return unknown(errorFromCode(result.topicConfigErrorCode, `describing the configs of new topic ${result.name}`));
  if (result.numPartitions === -1) {
    return unknown(new UnsupportedVersionError(`CreateTopics v${version} does not answer the topic's metadata and configs (v5+ does)`));
  }
  const entries = (result.configs ?? []).map((c): ConfigEntry => ({
    name: c.name,
    value: c.value,
    source: configSource(c.configSource),
    isSensitive: c.isSensitive,
    isReadOnly: c.readOnly,
    synonyms: [],
    type: 'UNKNOWN',
    documentation: null,
  }));
  return {
    topicId: result.topicId,
    numPartitions: result.numPartitions,
    replicationFactor: result.replicationFactor,
    config: new Config(entries),
    metadataError: null,
  };
}

/** The entry error when a broker's answer leaves an entry out (Kafka's completeUnrealizedFutures). */
function noAnswer(call: string, entry: string): EntryError {
  return errorFromCode(ErrorCode.UNKNOWN_SERVER_ERROR, `${call} of ${entry}`, 'the controller response did not contain a result for it');
}

/** deleteTopics by names, or by ids (`{ topicIds }`, DeleteTopics v6+); one entry per name or id. */
export async function deleteTopics(admin: AdminContext, topics: TopicCollection, options: AdminCallOptions = {}): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const byIds = isByIds(topics);
  const keys = uniqueBy(byIds ? topics.topicIds : topics, (k) => k);
  const outcomes = new Map<string, EntryOutcome<void>>();
  const toSend: string[] = [];
  for (const key of keys) {
    if (byIds ? key === ZERO_UUID || key === '' : key === '') outcomes.set(key, { ok: false, error: unrepresentable(byIds ? 'topic ID' : 'topic name', key) });
    else {
      outcomes.set(key, { ok: false, error: noAnswer('deleteTopics', `topic ${key}`) });
      toSend.push(key);
    }
  }
  if (toSend.length === 0) return new AdminResult(outcomes);
  const { response } = await sendWithRetries(
    admin,
    'deleteTopics',
    'controller',
    deadline,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    // Names travel in TopicNames up to v5 and in Topics from v6 (Kafka's DeleteTopicsRequest.Builder.build).
    (v) =>
      DeleteTopicsRequest.create({
        topics: byIds ? toSend.map((topicId) => ({ name: null, topicId })) : v >= 6 ? toSend.map((name) => ({ name, topicId: ZERO_UUID })) : [],
        topicNames: !byIds && v < 6 ? toSend : [],
        timeoutMs: remainingMs(deadline),
      }),
    { min: byIds ? 6 : undefined, notController: (r) => anyNotController(r.responses) },
  );
  for (const result of response.responses) {
    const key = byIds ? result.topicId : result.name;
    if (key === null || !outcomes.has(key)) continue;
    outcomes.set(
      key,
      result.errorCode === ErrorCode.NONE
        ? { ok: true, value: undefined }
        : { ok: false, error: errorFromCode(result.errorCode, `deleteTopics of topic ${key}`, result.errorMessage) },
    );
  }
  return new AdminResult(outcomes);
}

export async function createPartitions(
  admin: AdminContext,
  newPartitions: ReadonlyMap<string, NewPartitions> | Readonly<Record<string, NewPartitions>>,
  options: CreatePartitionsOptions = {},
): Promise<AdminResult<string, void>> {
  const deadline = deadlineOf(admin, options);
  const entries: Array<[string, NewPartitions]> =
    newPartitions instanceof Map ? [...(newPartitions as ReadonlyMap<string, NewPartitions>).entries()] : Object.entries(newPartitions);
  const outcomes = new Map<string, EntryOutcome<void>>();
  for (const [name] of entries) outcomes.set(name, { ok: false, error: noAnswer('createPartitions', `topic ${name}`) });
  if (entries.length === 0) return new AdminResult(outcomes);
  const { response } = await sendWithRetries(
    admin,
    'createPartitions',
    'controller',
    deadline,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    () =>
      CreatePartitionsRequest.create({
        topics: entries.map(([name, p]) => ({
          name,
          count: p.totalCount,
          assignments: p.newAssignments === undefined ? null : p.newAssignments.map((brokerIds: readonly number[]) => ({ brokerIds: [...brokerIds] })),
        })),
        timeoutMs: remainingMs(deadline),
        validateOnly: options.validateOnly ?? false,
      }),
    { notController: (r) => anyNotController(r.results) },
  );
  for (const result of response.results) {
    if (!outcomes.has(result.name)) continue;
    outcomes.set(
      result.name,
      result.errorCode === ErrorCode.NONE
        ? { ok: true, value: undefined }
        : { ok: false, error: errorFromCode(result.errorCode, `createPartitions of topic ${result.name}`, result.errorMessage) },
    );
  }
  return new AdminResult(outcomes);
}

/** Every topic the principal may describe, by name (Kafka's ListTopicsResult.namesToListings), internal ones only when asked. */
export async function listTopics(admin: AdminContext, options: ListTopicsOptions = {}): Promise<Map<string, TopicListing>> {
  const deadline = deadlineOf(admin, options);
  const { response } = await sendWithRetries(
    admin,
    'listTopics',
    'any',
    deadline,
    MetadataRequest,
    MetadataResponse,
    () => MetadataRequest.create({ topics: null, allowAutoTopicCreation: false }),
    { min: 1, topLevelError: (r) => ({ code: r.errorCode, message: null }) },
  );
  const listings = new Map<string, TopicListing>();
  for (const topic of response.topics) {
    if (topic.errorCode !== ErrorCode.NONE || topic.name === null) continue;
    if (topic.isInternal && !options.listInternal) continue;
    listings.set(topic.name, { name: topic.name, topicId: topic.topicId, isInternal: topic.isInternal });
  }
  return listings;
}
