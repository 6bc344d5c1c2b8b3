/**
 * DescribeAcls (key 29): the ACL bindings matching a filter, grouped by resource
 * pattern (auth/authorizer.ts).
 *
 * Kafka: KafkaApis.handleDescribeAcls, AclApis, StandardAuthorizer.acls.
 * - Without an authorizer (authorizer.enabled off): SECURITY_DISABLED, as Kafka.
 * Rule: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import { DescribeAclsRequest } from '../../generated/DescribeAclsRequest.js';
import { DescribeAclsResponse, type DescribeAclsResourceInit } from '../../generated/DescribeAclsResponse.js';
import { aclFilterOf, ACLS_DISABLED, AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: DescribeAclsRequest,
  response: DescribeAclsResponse,
  authorize: async (request, check, _ctx, next) => {
    requirePermission(check, Res.CLUSTER, CLUSTER_NAME, Op.DESCRIBE, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ authorizer }) =>
    async (request) => {
      if (!authorizer)
        return DescribeAclsResponse.create({ throttleTimeMs: 0, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ACLS_DISABLED, resources: [] });
      const byResource = new Map<string, DescribeAclsResourceInit & { acls: NonNullable<DescribeAclsResourceInit['acls']> }>();
      for (const b of authorizer.describe(aclFilterOf(request))) {
        const key = `${b.resourceType}\u0000${b.patternType}\u0000${b.resourceName}`;
        let entry = byResource.get(key);
        if (!entry) byResource.set(key, (entry = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
        entry.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
      }
      return DescribeAclsResponse.create({ throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: [...byResource.values()] });
    },
});
