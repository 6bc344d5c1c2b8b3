/**
 * DescribeConfigs (key 32): the configs of topics (set values and Kafka's
 * defaults), of this broker (its static settings, read-only) and of groups
 * (KIP-848/932 group configs), with synonyms and documentation when asked.
 *
 * Kafka: KafkaApis.handleDescribeConfigsRequest, ConfigHelper.describeConfigs.
 * - BROKER: "" (the cluster-wide defaults) or this node's id; another id is
 *   INVALID_REQUEST with Kafka's message. kipgen's broker settings are static, so
 *   a named broker's are STATIC_BROKER_CONFIG.
 * - GROUP: a group's own value is GROUP_CONFIG; one equal to Kafka's default is
 *   DEFAULT_CONFIG, else STATIC_BROKER_CONFIG (the broker's default).
 * - Other resource types (BROKER_LOGGER, CLIENT_METRICS) are INVALID_REQUEST: kipgen
 *   has none.
 * - v1+ synonyms (IncludeSynonyms), v3+ documentation (IncludeDocumentation).
 * Rule: DESCRIBE_CONFIGS on the resource (the cluster for a broker); a denied one
 * is answered with its resource's AUTHORIZATION_FAILED code.
 */
import { DescribeConfigsRequest } from '../../generated/DescribeConfigsRequest.js';
import { createDescribeConfigsResult, DescribeConfigsResponse, type DescribeConfigsResultInit } from '../../generated/DescribeConfigsResponse.js';
import { brokerEntries, ConfigResourceType, entry, topicEntries, type ConfigEntry } from '../admin/config-entries.js';
import { ConfigSource, GROUP_CONFIGS } from '../admin/config-defs.js';
import { AclOperation as Op } from '../auth/acl.js';
import { configResource, splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The first version with synonyms, and the first with documentation. */
const FIRST_SYNONYMS_VERSION = 1;
const FIRST_DOCUMENTATION_VERSION = 3;

export default defineApi({
  request: DescribeConfigsRequest,
  response: DescribeConfigsResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.resources,
      allowed: (r) => {
        const { type, name } = configResource(r.resourceType, r.resourceName);
        return check.allow(type, name, Op.DESCRIBE_CONFIGS);
      },
      keep: (resources) => ({ ...request, resources }),
      empty: () => DescribeConfigsResponse.create(),
      answerDenied: (response, denied) =>
        response.results.push(
          ...denied.map((r) =>
            createDescribeConfigsResult({
              errorCode: configResource(r.resourceType, r.resourceName).denied,
              errorMessage: 'not authorized',
              resourceType: r.resourceType,
              resourceName: r.resourceName,
              configs: [],
            }),
          ),
        ),
    }),
  handler:
    ({ config, topicAdmin: admin, cluster, groupConfigs: groups }) =>
    async (request, ctx) => {
      const v = ctx.apiVersion;
      const synonyms = v >= FIRST_SYNONYMS_VERSION && request.includeSynonyms;
      const docs = v >= FIRST_DOCUMENTATION_VERSION && request.includeDocumentation;
      const results = request.resources.map((r): DescribeConfigsResultInit => {
        const keys = r.configurationKeys;
        const result = (errorCode: number, errorMessage: string | null, configs: ConfigEntry[]): DescribeConfigsResultInit => ({
          errorCode,
          errorMessage,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: keys === null ? configs : configs.filter((c) => keys.includes(c.name)),
        });
        switch (r.resourceType) {
          case ConfigResourceType.TOPIC: {
            if (cluster.topicByName(r.resourceName) === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${r.resourceName}`, []);
            return result(0, null, topicEntries(admin, r.resourceName, synonyms, docs));
          }
          case ConfigResourceType.BROKER: {
            if (r.resourceName !== '' && r.resourceName !== String(config.nodeId)) {
              return result(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${config.nodeId} or empty string, but received ${r.resourceName}`, []);
            }
            const source = r.resourceName === '' ? ConfigSource.DEFAULT_CONFIG : ConfigSource.STATIC_BROKER_CONFIG;
            return result(
              0,
              null,
              brokerEntries(config, admin, groups).map((b) => entry(b.def, b.value, source, true, synonyms, docs)),
            );
          }
          case ConfigResourceType.GROUP: {
            if (r.resourceName === '') return result(ErrorCode.INVALID_GROUP_ID, 'group id is empty', []);
            const own = groups.overrides(r.resourceName);
            return result(
              0,
              null,
              GROUP_CONFIGS.map((def) => {
                const value = groups.value(r.resourceName, def.name);
                const source =
                  own[def.name] !== undefined
                    ? ConfigSource.GROUP_CONFIG
                    : value === def.defaultValue
                      ? ConfigSource.DEFAULT_CONFIG
                      : ConfigSource.STATIC_BROKER_CONFIG;
                return entry(def, value, source, false, synonyms, docs);
              }),
            );
          }
          default:
            return result(ErrorCode.INVALID_REQUEST, `kipgen describes TOPIC (2), BROKER (4) and GROUP (32) resources, not type ${r.resourceType}`, []);
        }
      });
      return DescribeConfigsResponse.create({ results });
    },
});
