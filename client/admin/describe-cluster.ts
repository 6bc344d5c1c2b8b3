/**
 * describeCluster (Kafka's KafkaAdminClient.describeCluster): the cluster id,
 * the controller, the brokers and, when asked, the operations the principal
 * may do on the cluster. DescribeCluster to any broker; a broker without it
 * is asked with Metadata instead, as Kafka falls back
 * (handleUnsupportedVersionException → useMetadataRequest).
 */
import { DescribeClusterRequest, DescribeClusterResponse, MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { UnsupportedVersionError } from '../errors.js';
import { authorizedOperations, type AclOperation, type Node } from './acl-types.js';
import { deadlineOf, sendWithRetries, type AdminCallOptions, type AdminContext } from './call.js';

export interface DescribeClusterOptions extends AdminCallOptions {
  includeAuthorizedOperations?: boolean;
}

/** Kafka's DescribeClusterResult, resolved. */
export interface ClusterDescription {
  clusterId: string | null;
  /** Null when the cluster names none. */
  controller: Node | null;
  nodes: Node[];
  /** Null unless includeAuthorizedOperations was asked. */
  authorizedOperations: AclOperation[] | null;
}

/** DescribeClusterRequest.EndpointType BROKER (v1+). */
const BROKER_ENDPOINTS = 1;

export async function describeCluster(admin: AdminContext, options: DescribeClusterOptions = {}): Promise<ClusterDescription> {
  const deadline = deadlineOf(admin, options);
  const include = options.includeAuthorizedOperations ?? false;
  let response: DescribeClusterResponse;
  try {
    ({ response } = await sendWithRetries(
      admin,
      'describeCluster',
      'any',
      deadline,
      DescribeClusterRequest,
      DescribeClusterResponse,
      () => DescribeClusterRequest.create({ includeClusterAuthorizedOperations: include, endpointType: BROKER_ENDPOINTS, includeFencedBrokers: false }),
      { topLevelError: (r) => ({ code: r.errorCode, message: r.errorMessage }) },
    ));
  } catch (error) {
    if (!(error instanceof UnsupportedVersionError)) throw error;
    return describeWithMetadata(admin, deadline, include);
  }
  const nodes = response.brokers.map((b): Node => ({ id: b.brokerId, host: b.host, port: b.port, rack: b.rack }));
  return {
    clusterId: response.clusterId,
    controller: nodes.find((n) => n.id === response.controllerId) ?? null,
    nodes,
    authorizedOperations: include ? authorizedOperations(response.clusterAuthorizedOperations) : null,
  };
}

async function describeWithMetadata(admin: AdminContext, deadline: number, include: boolean): Promise<ClusterDescription> {
  const { response } = await sendWithRetries(
    admin,
    'describeCluster (Metadata)',
    'any',
    deadline,
    MetadataRequest,
    MetadataResponse,
    () => MetadataRequest.create({ topics: [], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: include }),
    { min: 1 },
  );
  const nodes = response.brokers.map((b): Node => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
  return {
    clusterId: response.clusterId,
    controller: nodes.find((n) => n.id === response.controllerId) ?? null,
    nodes,
    authorizedOperations: include ? authorizedOperations(response.clusterAuthorizedOperations) : null,
  };
}
