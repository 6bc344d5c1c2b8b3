/**
 * CreateAcls (key 30): adds ACL bindings (auth/authorizer.ts, kept in acls.json).
 *
 * Kafka: KafkaApis.handleCreateAcls, AclApis, StandardAuthorizer.createAcls.
 * - A binding the authorizer refuses (authorizer.ts, invalidBinding)
 *   is INVALID_REQUEST with the reason; the others are created.
 * - Without an authorizer (authorizer.enabled off): SECURITY_DISABLED, as Kafka.
 * Rule: ALTER on the cluster; without it every creation is answered
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import { CreateAclsRequest } from '../../generated/CreateAclsRequest.js';
import { CreateAclsResponse } from '../../generated/CreateAclsResponse.js';
import { ACLS_DISABLED, AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: CreateAclsRequest,
  response: CreateAclsResponse,
  authorize: async (request, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.ALTER)) return next(request);
    return CreateAclsResponse.create({
      results: request.creations.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized to ALTER the cluster' })),
    });
  },
  handler:
    ({ authorizer }) =>
    async (request) => {
      if (!authorizer)
        return CreateAclsResponse.create({
          throttleTimeMs: 0,
          results: request.creations.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ACLS_DISABLED })),
        });
      const refusals = authorizer.create(
        request.creations.map((c) => ({
          resourceType: c.resourceType,
          resourceName: c.resourceName,
          patternType: c.resourcePatternType,
          principal: c.principal,
          host: c.host,
          operation: c.operation,
          permissionType: c.permissionType,
        })),
      );
      return CreateAclsResponse.create({
        throttleTimeMs: 0,
        results: refusals.map((why) => (why === null ? { errorCode: 0, errorMessage: null } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why })),
      });
    },
});
