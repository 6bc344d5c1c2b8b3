/**
 * IncrementalAlterConfigs (key 44): SET / DELETE / APPEND / SUBTRACT on the configs
 * of topics and groups, validateOnly; a change applied on this node is passed on
 * to the other nodes (admin/topic-admin.ts).
 *
 * Kafka: KafkaApis.handleIncrementalAlterConfigsRequest (ControllerApis in
 * KRaft), ConfigAdminManager.
 * - BROKER: every kipgen setting is static (read at start), so any change is
 *   INVALID_REQUEST, as Kafka refuses its non-dynamic settings; another node's id
 *   is INVALID_REQUEST with Kafka's message.
 * - A resource named twice is INVALID_REQUEST; a config key named twice, an unknown
 *   config, APPEND/SUBTRACT on a non-list or an invalid value is INVALID_CONFIG.
 * - Other resource types are INVALID_REQUEST: kipgen alters TOPIC and GROUP.
 * Rule: ALTER_CONFIGS on the resource (the cluster for a broker); a denied one is
 * answered with its resource's AUTHORIZATION_FAILED code.
 */
import { IncrementalAlterConfigsRequest, type AlterConfigsResource } from '../../generated/IncrementalAlterConfigsRequest.js';
import {
  createAlterConfigsResourceResponse,
  IncrementalAlterConfigsResponse,
  type AlterConfigsResourceResponseInit,
} from '../../generated/IncrementalAlterConfigsResponse.js';
import { GROUP_CONFIGS, TOPIC_CONFIGS } from '../admin/config-defs.js';
import { applyOps, ConfigResourceType } from '../admin/config-entries.js';
import { firstError, PEER_VERSION } from '../admin/topic-admin.js';
import { AclOperation as Op } from '../auth/acl.js';
import { configResource, splitEntries } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: IncrementalAlterConfigsRequest,
  response: IncrementalAlterConfigsResponse,
  authorize: async (request, check, _ctx, next) =>
    splitEntries(request, next, {
      entries: request.resources,
      allowed: (r) => {
        const { type, name } = configResource(r.resourceType, r.resourceName);
        return check.allow(type, name, Op.ALTER_CONFIGS);
      },
      keep: (resources) => ({ ...request, resources }),
      empty: () => IncrementalAlterConfigsResponse.create(),
      answerDenied: (response, denied) =>
        response.responses.push(
          ...denied.map((r) =>
            createAlterConfigsResourceResponse({
              errorCode: configResource(r.resourceType, r.resourceName).denied,
              errorMessage: 'not authorized',
              resourceType: r.resourceType,
              resourceName: r.resourceName,
            }),
          ),
        ),
    }),
  handler:
    ({ config, topicAdmin: admin, cluster, groupConfigs: groups }) =>
    async (request, ctx) => {
      const peer = admin.isPeer(ctx);
      const applied: AlterConfigsResource[] = [];
      const seen = new Set<string>();
      const responses = request.resources.map((r): AlterConfigsResourceResponseInit => {
        const result = (errorCode: number, errorMessage: string | null): AlterConfigsResourceResponseInit => ({
          errorCode,
          errorMessage,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
        });
        const key = `${r.resourceType}\u0000${r.resourceName}`;
        if (seen.has(key)) return result(ErrorCode.INVALID_REQUEST, 'Duplicate resource in request.');
        seen.add(key);
        switch (r.resourceType) {
          case ConfigResourceType.TOPIC: {
            if (cluster.topicByName(r.resourceName) === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic ${r.resourceName}`);
            const next = applyOps(TOPIC_CONFIGS, 'topic', cluster.topicConfigs(r.resourceName), r.configs);
            if (typeof next === 'string') return result(ErrorCode.INVALID_CONFIG, next);
            if (!request.validateOnly) {
              cluster.setTopicConfigs(r.resourceName, next);
              applied.push(r);
            }
            return result(0, null);
          }
          case ConfigResourceType.GROUP: {
            if (r.resourceName === '') return result(ErrorCode.INVALID_GROUP_ID, 'group id is empty');
            const next = applyOps(GROUP_CONFIGS, 'group', groups.overrides(r.resourceName), r.configs);
            if (typeof next === 'string') return result(ErrorCode.INVALID_CONFIG, next);
            const problem = groups.check(r.resourceName, next);
            if (problem !== null) return result(ErrorCode.INVALID_CONFIG, problem);
            if (!request.validateOnly) {
              groups.set(r.resourceName, next);
              applied.push(r);
            }
            return result(0, null);
          }
          case ConfigResourceType.BROKER: {
            if (r.resourceName !== '' && r.resourceName !== String(config.nodeId)) {
              return result(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${config.nodeId} or empty string, but received ${r.resourceName}`);
            }
            const names = r.configs.map((c) => c.name);
            return result(
              ErrorCode.INVALID_REQUEST,
              `Cannot update these configs dynamically: ${names.join(', ')} (kipgen's broker settings are static: set them in the broker configuration)`,
            );
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
    },
});
