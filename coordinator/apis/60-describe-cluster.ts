/**
 * DescribeCluster (key 60): the cluster id, the controller and the brokers, for
 * Admin.describeCluster.
 *
 * Kafka: KafkaApis.handleDescribeCluster.
 * - kipgen nodes are brokers: endpoint type 2 (controllers, v1+) is
 *   UNSUPPORTED_ENDPOINT_TYPE. kipgen has no controller; the first node is named
 *   as one, as clients expect an id.
 * - No rack, nothing fenced.
 * - clusterAuthorizedOperations (when asked): every cluster operation without an
 *   authorizer, as Kafka's AuthHelper.authorizedOperations; the rule narrows it to
 *   what the requester may do.
 * Rule: anyone may describe the cluster, as Kafka's AuthHelper.computeDescribeClusterResponse
 * answers every principal; DESCRIBE on the cluster decides only the authorized
 * operations asked for (0, none, without it).
 */
import { DescribeClusterRequest } from '../../generated/DescribeClusterRequest.js';
import { DescribeClusterResponse } from '../../generated/DescribeClusterResponse.js';
import { AclOperation as Op, CLUSTER_NAME, operationsField, ResourceType as Res, SUPPORTED_OPERATIONS } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** clusterAuthorizedOperations when they are not computed. */
const NO_OPERATIONS = -2147483648;
/** DescribeClusterRequest.EndpointType: brokers (1) or controllers (2), v1+. */
const BROKER_ENDPOINTS = 1;

export default defineApi({
  request: DescribeClusterRequest,
  response: DescribeClusterResponse,
  authorize: async (request, check, _ctx, next) => {
    const response = await next(request);
    if (request.includeClusterAuthorizedOperations && response.errorCode === ErrorCode.NONE) {
      response.clusterAuthorizedOperations = check.allow(Res.CLUSTER, CLUSTER_NAME, Op.DESCRIBE) ? check.authorizedOperations(Res.CLUSTER, CLUSTER_NAME) : 0;
    }
    return response;
  },
  handler:
    ({ cluster }) =>
    async (request, ctx) => {
      if (ctx.apiVersion >= 1 && request.endpointType !== BROKER_ENDPOINTS) {
        return DescribeClusterResponse.create({
          errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
          errorMessage: `kipgen nodes are brokers; endpoint type ${request.endpointType} is not served`,
          endpointType: request.endpointType,
          clusterId: cluster.clusterId,
        });
      }
      return DescribeClusterResponse.create({
        errorCode: 0,
        endpointType: BROKER_ENDPOINTS,
        clusterId: cluster.clusterId,
        controllerId: cluster.nodes[0]!.nodeId,
        brokers: cluster.nodes.map((n) => ({ brokerId: n.nodeId, host: n.host, port: n.port, rack: null, isFenced: false })),
        clusterAuthorizedOperations: request.includeClusterAuthorizedOperations ? operationsField(SUPPORTED_OPERATIONS[Res.CLUSTER]!) : NO_OPERATIONS,
      });
    },
});
