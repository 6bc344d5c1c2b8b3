/**
 * DeleteAcls (key 31): removes the ACL bindings matching each filter and answers
 * them per filter (auth/authorizer.ts).
 *
 * Kafka: KafkaApis.handleDeleteAcls, AclApis, StandardAuthorizer.deleteAcls.
 * - Without an authorizer (authorizer.enabled off): SECURITY_DISABLED, as Kafka.
 * Rule: ALTER on the cluster; without it every filter is answered
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import { DeleteAclsRequest } from '../../generated/DeleteAclsRequest.js';
import { DeleteAclsResponse } from '../../generated/DeleteAclsResponse.js';
import { aclFilterOf, ACLS_DISABLED, AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: DeleteAclsRequest,
  response: DeleteAclsResponse,
  authorize: async (request, check, _ctx, next) => {
    if (check.allow(Res.CLUSTER, CLUSTER_NAME, Op.ALTER)) return next(request);
    return DeleteAclsResponse.create({
      filterResults: request.filters.map(() => ({
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: 'not authorized to ALTER the cluster',
        matchingAcls: [],
      })),
    });
  },
  handler:
    ({ authorizer }) =>
    async (request) => {
      if (!authorizer) {
        return DeleteAclsResponse.create({
          throttleTimeMs: 0,
          filterResults: request.filters.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ACLS_DISABLED, matchingAcls: [] })),
        });
      }
      const removed = authorizer.delete(request.filters.map(aclFilterOf));
      return DeleteAclsResponse.create({
        throttleTimeMs: 0,
        filterResults: removed.map((bindings) => ({
          errorCode: 0,
          errorMessage: null,
          matchingAcls: bindings.map((b) => ({ errorCode: 0, errorMessage: null, ...b })),
        })),
      });
    },
});
