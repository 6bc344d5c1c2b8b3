/**
 * Raw connections authenticated as a user, and ACL management through
 * CreateAcls / DescribeAcls / DeleteAcls, for the authorization tests.
 */
import { authenticate } from '../../client/sasl/authenticate.js';
import { AclOperation, AclPermission, PatternType, ResourceType } from '../../coordinator/auth/acl.js';
import {
  ApiVersionsRequest,
  CreateAclsRequest,
  CreateAclsResponse,
  DeleteAclsRequest,
  DeleteAclsResponse,
  DescribeAclsRequest,
  DescribeAclsResponse,
} from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { USERS, type SecureBroker } from './support.js';

export { AclOperation as Op, AclPermission as Perm, PatternType, ResourceType as Res };

export async function connectAs(secure: SecureBroker, user: keyof typeof USERS): Promise<KafkaConnection> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: secure.broker.ports.get('SASL_PLAINTEXT')!, requestTimeoutMs: 5_000 });
  const versions = (await c.send(ApiVersionsRequest, ApiVersionsRequest.create(), 3)) as {
    apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[];
  };
  const range = (key: number): readonly [number, number] | undefined => {
    const k = versions.apiKeys.find((a) => a.apiKey === key);
    return k ? [k.minVersion, k.maxVersion] : undefined;
  };
  await authenticate(c, { mechanism: 'SCRAM-SHA-256', username: user, password: USERS[user] }, { handshake: range(17), authenticate: range(36) });
  return c;
}

export interface Grant {
  principal: string;
  resourceType: number;
  resourceName: string;
  operation: number;
  permissionType?: number;
  patternType?: number;
  host?: string;
}

export async function createAcls(c: KafkaConnection, grants: Grant[]): Promise<CreateAclsResponse> {
  return c.send(
    CreateAclsRequest,
    CreateAclsRequest.create({
      creations: grants.map((g) => ({
        resourceType: g.resourceType,
        resourceName: g.resourceName,
        resourcePatternType: g.patternType ?? PatternType.LITERAL,
        principal: g.principal,
        host: g.host ?? '*',
        operation: g.operation,
        permissionType: g.permissionType ?? AclPermission.ALLOW,
      })),
    }),
    3,
    CreateAclsResponse,
  );
}

export async function describeAcls(c: KafkaConnection, principal: string | null): Promise<DescribeAclsResponse> {
  return c.send(
    DescribeAclsRequest,
    DescribeAclsRequest.create({
      resourceTypeFilter: ResourceType.ANY,
      resourceNameFilter: null,
      patternTypeFilter: PatternType.ANY,
      principalFilter: principal,
      hostFilter: null,
      operation: AclOperation.ANY,
      permissionType: AclPermission.ANY,
    }),
    3,
    DescribeAclsResponse,
  );
}

export async function deleteAcls(c: KafkaConnection, principal: string): Promise<DeleteAclsResponse> {
  return c.send(
    DeleteAclsRequest,
    DeleteAclsRequest.create({
      filters: [
        {
          resourceTypeFilter: ResourceType.ANY,
          resourceNameFilter: null,
          patternTypeFilter: PatternType.ANY,
          principalFilter: principal,
          hostFilter: null,
          operation: AclOperation.ANY,
          permissionType: AclPermission.ANY,
        },
      ],
    }),
    3,
    DeleteAclsResponse,
  );
}
