/**
 * describeConfigs and incrementalAlterConfigs (Kafka's KafkaAdminClient of the
 * same names) for TOPIC, BROKER, BROKER_LOGGER and GROUP resources; a share
 * group's configs (share.auto.offset.reset, share.isolation.level, ...) are
 * GROUP configs by name.
 *
 * Routing follows KafkaAdminClient.nodeFor: a named BROKER resource and a
 * BROKER_LOGGER resource go to that broker, one request each for
 * incrementalAlterConfigs and one per broker for describeConfigs; the rest
 * (TOPIC, GROUP, the BROKER "" defaults) go together to any broker. Each
 * resource's error is its entry's; a request that fails as a whole fails the
 * entries it carried, not the others.
 */
import { DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../generated/index.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import { ConfigError, KafkaError, UnsupportedVersionError, errorFromCode } from '../errors.js';
import { deadlineOf, sendWithRetries, type AdminCallOptions, type AdminContext } from './call.js';
import {
  ALTER_CONFIG_OP_TYPES,
  Config,
  configSource,
  configType,
  resourceKey,
  resourceTypeCode,
  type AlterConfigOp,
  type ConfigEntry,
  type ConfigResource,
} from './config-types.js';
import { AdminResult, type EntryError, type EntryOutcome } from './result.js';

export interface DescribeConfigsOptions extends AdminCallOptions {
  /** Each entry's synonyms (where else its value could come from). */
  includeSynonyms?: boolean;
  /** Each entry's documentation (DescribeConfigs v3+). */
  includeDocumentation?: boolean;
}

export interface AlterConfigsOptions extends AdminCallOptions {
  validateOnly?: boolean;
}

/**
 * The broker a resource must be sent to, or null for any (Kafka's nodeFor).
 * A BROKER or BROKER_LOGGER name that is not a broker id is a bad argument.
 */
function nodeFor(resource: ConfigResource): number | null {
  if ((resource.type === 'BROKER' && resource.name !== '') || resource.type === 'BROKER_LOGGER') {
    const id = Number(resource.name);
    if (!/^\d+$/.test(resource.name) || !Number.isSafeInteger(id)) {
      throw new ConfigError(`config resource ${resourceKey(resource)}: a ${resource.type} resource is named by a broker id (e.g. "1")`);
    }
    return id;
  }
  return null;
}

/** Resources grouped by the node they go to (null: any), de-duplicated by type and name, the caller's first object kept. */
function byNode(resources: Iterable<ConfigResource>): Map<number | null, ConfigResource[]> {
  const seen = new Set<string>();
  const groups = new Map<number | null, ConfigResource[]>();
  for (const resource of resources) {
    resourceTypeCode(resource);
    const key = resourceKey(resource);
    if (seen.has(key)) continue;
    seen.add(key);
    const node = nodeFor(resource);
    const group = groups.get(node);
    if (group) group.push(resource);
    else groups.set(node, [resource]);
  }
  return groups;
}

/** A request that failed as a whole fails the entries it carried (Kafka's completeAllExceptionally). */
function asEntryError(error: unknown): EntryError {
  return error instanceof KafkaError || error instanceof UnsupportedVersionError
    ? error
    : new KafkaError((error as Error).message, { cause: error, retriable: false });
}

export async function describeConfigs(
  admin: AdminContext,
  resources: readonly ConfigResource[],
  options: DescribeConfigsOptions = {},
): Promise<AdminResult<ConfigResource, Config>> {
  const deadline = deadlineOf(admin, options);
  const groups = byNode(resources);
  const outcomes = new Map<ConfigResource, EntryOutcome<Config>>();
  for (const group of groups.values()) for (const r of group) outcomes.set(r, { ok: false, error: missing('describeConfigs', r) });
  await Promise.all(
    [...groups].map(async ([node, group]) => {
      try {
        const { response } = await sendWithRetries(
          admin,
          'describeConfigs',
          node ?? 'any',
          deadline,
          DescribeConfigsRequest,
          DescribeConfigsResponse,
          () =>
            DescribeConfigsRequest.create({
              resources: group.map((r) => ({ resourceType: resourceTypeCode(r), resourceName: r.name, configurationKeys: null })),
              includeSynonyms: options.includeSynonyms ?? false,
              includeDocumentation: options.includeDocumentation ?? false,
            }),
          // IncludeDocumentation came in v3; without it the broker would silently leave documentation out.
          { min: options.includeDocumentation ? 3 : undefined },
        );
        for (const result of response.results) {
          const resource = group.find((r) => resourceTypeCode(r) === result.resourceType && r.name === result.resourceName);
          if (resource === undefined) continue;
          if (result.errorCode !== ErrorCode.NONE) {
            outcomes.set(resource, { ok: false, error: errorFromCode(result.errorCode, `describeConfigs of ${resourceKey(resource)}`, result.errorMessage) });
            continue;
          }
          const entries = result.configs.map((c): ConfigEntry => ({
            name: c.name,
            value: c.value,
            source: configSource(c.configSource),
            isSensitive: c.isSensitive,
            isReadOnly: c.readOnly,
            synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value, source: configSource(s.source) })),
            type: configType(c.configType),
            documentation: c.documentation,
          }));
          outcomes.set(resource, { ok: true, value: new Config(entries) });
        }
      } catch (error) {
        for (const r of group) outcomes.set(r, { ok: false, error: asEntryError(error) });
      }
    }),
  );
  return new AdminResult(ordered(resources, outcomes));
}

/**
 * incrementalAlterConfigs: per resource, operations applied in order (SET,
 * DELETE back to the default, APPEND to / SUBTRACT from a list); validateOnly
 * checks without changing anything.
 */
export async function incrementalAlterConfigs(
  admin: AdminContext,
  configs: ReadonlyMap<ConfigResource, readonly AlterConfigOp[]> | ReadonlyArray<readonly [ConfigResource, readonly AlterConfigOp[]]>,
  options: AlterConfigsOptions = {},
): Promise<AdminResult<ConfigResource, void>> {
  const deadline = deadlineOf(admin, options);
  const entries = configs instanceof Map ? [...configs.entries()] : [...(configs as ReadonlyArray<readonly [ConfigResource, readonly AlterConfigOp[]]>)];
  const opsOf = new Map<ConfigResource, readonly AlterConfigOp[]>();
  for (const [resource, ops] of entries) {
    for (const op of ops) {
      if (!ALTER_CONFIG_OP_TYPES.includes(op.opType)) {
        throw new ConfigError(
          `incrementalAlterConfigs of ${resourceKey(resource)}: config ${op.name}: opType must be one of ${ALTER_CONFIG_OP_TYPES.join(', ')}`,
        );
      }
    }
    if (!opsOf.has(resource)) opsOf.set(resource, ops);
  }
  const groups = byNode(opsOf.keys());
  // Kafka sends each resource with a broker of its own in a request of its own, the others together.
  const requests: Array<{ node: number | null; resources: ConfigResource[] }> = [];
  for (const [node, group] of groups) {
    if (node === null) requests.push({ node, resources: group });
    else for (const r of group) requests.push({ node, resources: [r] });
  }
  const outcomes = new Map<ConfigResource, EntryOutcome<void>>();
  for (const { resources } of requests) for (const r of resources) outcomes.set(r, { ok: false, error: missing('incrementalAlterConfigs', r) });
  await Promise.all(
    requests.map(async ({ node, resources }) => {
      try {
        const { response } = await sendWithRetries(
          admin,
          'incrementalAlterConfigs',
          node ?? 'any',
          deadline,
          IncrementalAlterConfigsRequest,
          IncrementalAlterConfigsResponse,
          () =>
            IncrementalAlterConfigsRequest.create({
              resources: resources.map((r) => ({
                resourceType: resourceTypeCode(r),
                resourceName: r.name,
                configs: opsOf.get(r)!.map((op) => ({
                  name: op.name,
                  configOperation: ALTER_CONFIG_OP_TYPES.indexOf(op.opType),
                  value: op.opType === 'DELETE' ? null : (op.value ?? null),
                })),
              })),
              validateOnly: options.validateOnly ?? false,
            }),
        );
        for (const result of response.responses) {
          const resource = resources.find((r) => resourceTypeCode(r) === result.resourceType && r.name === result.resourceName);
          if (resource === undefined) continue;
          outcomes.set(
            resource,
            result.errorCode === ErrorCode.NONE
              ? { ok: true, value: undefined }
              : { ok: false, error: errorFromCode(result.errorCode, `incrementalAlterConfigs of ${resourceKey(resource)}`, result.errorMessage) },
          );
        }
      } catch (error) {
        for (const r of resources) outcomes.set(r, { ok: false, error: asEntryError(error) });
      }
    }),
  );
  return new AdminResult(ordered([...opsOf.keys()], outcomes));
}

function missing(call: string, resource: ConfigResource): EntryError {
  return errorFromCode(ErrorCode.UNKNOWN_SERVER_ERROR, `${call} of ${resourceKey(resource)}`, 'the node response did not contain a result for it');
}

/** The outcomes in the order the caller named the resources. */
function ordered<V>(resources: Iterable<ConfigResource>, outcomes: Map<ConfigResource, EntryOutcome<V>>): Map<ConfigResource, EntryOutcome<V>> {
  const out = new Map<ConfigResource, EntryOutcome<V>>();
  for (const r of resources) {
    const outcome = outcomes.get(r);
    if (outcome !== undefined) out.set(r, outcome);
  }
  return out;
}
